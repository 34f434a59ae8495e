"""What a saved model holds, sealed with content hashes and checked when it is read back.

A model's saved state is a dict of named values (arrays, lists of strings, numbers).
:func:`sealed` adds ``"hashes"``: the SHA-256 of every value with its name (of an array,
its dtype, shape and bytes; of anything else, its canonical JSON). :func:`unsealed`
recomputes them on loading, so that one flipped byte, or landmarks swapped for other
valid trees, is refused instead of changing every prediction. Each value is then checked for its type, shape and
range (:func:`real_array`, :func:`index_array`, :func:`texts`): real floating-point arrays
hold finite values of magnitude below :data:`LIMIT`. :func:`reading` turns whatever goes
wrong while a file is read into one :class:`~spacy_convkernels.errors.ModelFileError`
naming it. A saved state holds values, never the name of another file to open.
:func:`npz_arrays` and :func:`npy_array` read ``.npz`` and ``.npy`` files only once the
sizes their headers declare are checked (:data:`MAX_NPZ_EXPANSION`).
"""

import hashlib
import json
import math
import re
import tokenize
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from ..errors import ConvKernelsError, ModelFileError

#: Every saved real number is of magnitude below this (a Nyström normalization, SVM
#: coefficients and intercepts, KLSH hyperplanes, n-gram weights): a larger one is not a
#: value a fit gives, and would overflow to inf, then NaN, in the products of prediction.
LIMIT = 1e150
HASHES = "hashes"
#: The most bytes the compressed members of an ``.npz`` may expand to, all together.
#: ``nystroem fit`` stores its arrays uncompressed (``np.savez``), so its models load
#: whatever their size; a member of deflated zeros (3.2 MB expanding to 3.2 GB) is refused
#: from its zip header, before it is read.
MAX_NPZ_EXPANSION = 32 << 20
#: The zip methods an ``.npz`` member may use: numpy's. ``zipfile`` inflates a deflated
#: member a bounded chunk at a time and stops at its declared size; a bzip2 or LZMA
#: member it decompresses a read's worth at once (4 KB of bzip2 can give gigabytes).
_NPZ_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}
_NPY_HEADERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}

#: What reading a damaged file may raise: msgpack's and json's errors are ValueErrors
#: (``ExtraData``, ``UnicodeDecodeError`` too), a truncated ``.npz`` an EOFError, a
#: flipped byte in it ``BadZipFile`` (a wrong CRC-32), ``zlib.error`` or
#: NotImplementedError (an unknown compression method), a damaged ``.npy`` header
#: ``tokenize.TokenError``, a damaged tokenizer rule ``re.error``, spaCy's deserializers
#: AttributeError or KeyError.
READING_ERRORS = (
    zipfile.BadZipFile,
    zlib.error,
    tokenize.TokenError,
    re.error,
    NotImplementedError,
    ConvKernelsError,
    ValueError,
    TypeError,
    KeyError,
    IndexError,
    AttributeError,
    EOFError,
    OSError,
    OverflowError,
    RecursionError,
)


def content_hash(value, name: str = "") -> str:
    """SHA-256 of ``name`` and an array's dtype, shape and bytes, or another value's canonical JSON."""
    digest = hashlib.sha256(f"{name}\n".encode())
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject:
            raise ModelFileError("an array of Python objects")
        digest.update(f"array {value.dtype.str} {value.shape} ".encode())
        digest.update(np.ascontiguousarray(value).tobytes())
    else:
        digest.update(b"json ")
        digest.update(json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=True).encode())
    return digest.hexdigest()


def sealed(state: dict) -> dict:
    """``state`` with the content hash of each of its values under ``"hashes"``."""
    return {**state, HASHES: {name: content_hash(value, name) for name, value in state.items()}}


def unsealed(state) -> dict:
    """The values of a :func:`sealed` state, each checked against its content hash."""
    if not isinstance(state, dict):
        raise ModelFileError(f"not a saved state (a {type(state).__name__})")
    hashes = state.get(HASHES)
    values = {name: value for name, value in state.items() if name != HASHES}
    if not isinstance(hashes, dict):
        raise ModelFileError("no content hashes (saved by an earlier version, or damaged): save the model again")
    if set(hashes) != set(values):
        missing = sorted(map(str, set(hashes) ^ set(values)))
        raise ModelFileError(f"its values and their content hashes disagree ({', '.join(missing)[:200]})")
    for name, value in values.items():
        try:
            found = content_hash(value, str(name))
        except (TypeError, ValueError):  # a value JSON cannot write (bytes)
            found = None
        if found != hashes[name]:
            raise ModelFileError(f"{name} does not match its content hash: the file was changed or damaged")
    return values


def real_array(value, *, name: str, shape: tuple, limit: float = LIMIT) -> np.ndarray:
    """``value``, a real floating-point array of ``shape`` (None: any length) whose values
    are finite and of magnitude below ``limit``."""
    if not isinstance(value, np.ndarray) or value.dtype.kind != "f":
        raise ModelFileError(f"{name} is not an array of real floating-point numbers ({_kind(value)})")
    _check_shape(value, name, shape)
    if not np.isfinite(value).all():
        raise ModelFileError(f"{name} holds values that are not finite (NaN or inf)")
    if value.size and float(np.abs(value).max()) >= limit:
        raise ModelFileError(f"{name} holds values of magnitude {limit:g} or more")
    return value


def index_array(value, *, name: str, shape: tuple, size: int) -> np.ndarray:
    """``value``, an integer array of ``shape`` (None: any length) of indices in [0, size)."""
    if not isinstance(value, np.ndarray) or value.dtype.kind not in "iu":
        raise ModelFileError(f"{name} is not an array of integers ({_kind(value)})")
    _check_shape(value, name, shape)
    if value.size and not (0 <= value.min() and value.max() < size):
        raise ModelFileError(f"{name} holds indices outside [0, {size})")
    return value


def texts(value, *, name: str, count: int | None = None) -> list[str]:
    """``value``, a list of ``count`` (None: any number of) strings."""
    if not isinstance(value, list) or not all(isinstance(text, str) for text in value):
        raise ModelFileError(f"{name} is not a list of strings ({_kind(value)})")
    if count is not None and len(value) != count:
        raise ModelFileError(f"{name} holds {len(value)} strings, {count} expected")
    return value


def npz_arrays(archive: zipfile.ZipFile) -> dict[str, np.ndarray]:
    """The arrays of an open ``.npz`` archive by name, never unpickled. Before any is
    read, every member's zip header is checked (stored or deflated, a stored one holding
    the bytes it declares, the deflated ones expanding to :data:`MAX_NPZ_EXPANSION` bytes
    at most), then its ``.npy`` header (:func:`npy_array`)."""
    expanded = 0
    for member in archive.infolist():
        name = member.filename
        if member.compress_type not in _NPZ_METHODS:
            methods = " or ".join(_NPZ_METHODS.values())
            raise ModelFileError(f"{name} is compressed with zip method {member.compress_type}, not {methods}")
        if member.compress_type == zipfile.ZIP_STORED and member.file_size != member.compress_size:
            raise ModelFileError(f"{name} declares {member.file_size:,} bytes and stores {member.compress_size:,}")
        if member.compress_type == zipfile.ZIP_DEFLATED:
            expanded += member.file_size
        if expanded > MAX_NPZ_EXPANSION:
            raise ModelFileError(
                f"the compressed members up to {name} expand to {expanded:,} bytes, more than the "
                f"{MAX_NPZ_EXPANSION:,} of saved_arrays.MAX_NPZ_EXPANSION (nystroem fit stores arrays uncompressed)"
            )
    arrays = {}
    for member in archive.infolist():
        with archive.open(member) as stream:
            arrays[member.filename.removesuffix(".npy")] = npy_array(
                stream, size=member.file_size, name=member.filename
            )
    return arrays


def npy_array(stream, *, size: int, name: str) -> np.ndarray:
    """The array of an ``.npy`` ``stream`` of ``size`` bytes (a file, an ``.npz`` member),
    never unpickled, read once the shape and dtype of its header are found to fill those
    bytes (a header of 100,000 x 100,000 floats on a file of 1 KB had numpy ask for 74.5
    GiB); a :class:`ModelFileError` naming it otherwise."""
    check_npy_header(stream, size=size, name=name)
    stream.seek(0)
    return np.lib.format.read_array(stream, allow_pickle=False)


def check_npy_header(stream, *, size: int, name: str) -> None:
    """Raise :class:`ModelFileError` unless the ``.npy`` header at the start of ``stream``
    (of ``size`` bytes) declares an array of numbers that fills exactly those bytes; the
    array itself is not read."""
    version = np.lib.format.read_magic(stream)
    if version not in _NPY_HEADERS:
        raise ModelFileError(f"{name} is in .npy format version {version[0]}.{version[1]}, not 1.0 or 2.0")
    shape, _, dtype = _NPY_HEADERS[version](stream)
    if dtype.hasobject:
        raise ModelFileError(f"{name} is an array of Python objects, which is never unpickled")
    declared, held = math.prod(shape) * dtype.itemsize, size - stream.tell()
    if declared != held:
        raise ModelFileError(f"{name} declares {shape} {dtype} values ({declared:,} bytes) and holds {held:,} bytes")


@contextmanager
def reading(source: str) -> Iterator[None]:
    """Raise whatever goes wrong inside as one :class:`ModelFileError` naming ``source``
    (a component and its file): ``SOURCE is missing``, ``cannot be read`` (a directory, no
    permission) or ``is damaged: why``. An error that already names its source goes
    through as it is."""
    try:
        yield
    except ModelFileError as error:
        if error.source is not None:
            raise
        raise ModelFileError(f"{source} is damaged: {error}", source=source) from error
    except FileNotFoundError as error:
        raise ModelFileError(f"{source} is missing", source=source) from error
    except (IsADirectoryError, PermissionError) as error:
        raise ModelFileError(f"{source} cannot be read ({error.strerror})", source=source) from error
    except READING_ERRORS as error:
        if isinstance(error, KeyError):
            reason = f"no {error}"
        elif isinstance(error, ConvKernelsError):
            reason = str(error)
        else:
            reason = f"{type(error).__name__}: {error}"
        raise ModelFileError(f"{source} is damaged: {reason[:300]}", source=source) from error


def _check_shape(value: np.ndarray, name: str, shape: tuple) -> None:
    if value.ndim != len(shape) or any(n is not None and n != m for n, m in zip(shape, value.shape)):
        wanted = "(" + ", ".join("any" if n is None else str(n) for n in shape) + ")"
        raise ModelFileError(f"{name} has shape {value.shape}, {wanted} expected")


def _kind(value) -> str:
    return f"{value.dtype} array" if isinstance(value, np.ndarray) else type(value).__name__
