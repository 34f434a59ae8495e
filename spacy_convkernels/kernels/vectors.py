"""Word vectors for node similarities, from a spaCy table or a file.

Every source becomes one :class:`WordVectors`: keys (words, or KeLP's ``lemma::p``)
mapped to rows of distinct unit vectors. Keys whose vectors are identical share a row,
whichever source they came from: a pruned table such as en_core_web_md's maps many
words onto one vector (685k keys, 20k rows, 10k distinct vectors), and a shared row says
nothing about the meaning of the words on it.
"""

import hashlib
import math
import os
import re
from collections.abc import Iterable
from functools import cached_property
from pathlib import Path

import numpy as np

from ..errors import ModelFileError, VectorsError
from ..structures.labels import join_key, split_key
from ..utils.saved_arrays import index_array, npy_array, real_array
from ..utils.text_lines import Unreadable, numbered_lines


class WordVectors:
    """Unit vectors by key; ``rows[key]`` indexes ``matrix``, one row per distinct vector.

    A read-only handle: copies (``copy.deepcopy``, scikit-learn's ``clone``) share it by
    reference, and it pickles as the source's distinct vectors (float32, as spaCy and
    the text formats store them) with its keys in one string, from which the unit
    vectors are made again exactly.

    Parameters
    ----------
    keys : dict of str to int
        The row of ``matrix`` of each key.
    matrix : ndarray of shape (n_rows, dim)
        Distinct unit vectors, float64; made read-only.
    raw : ndarray of shape (n_rows, dim) or None
        The distinct source vectors the rows were scaled from (float32), when known.

    Attributes
    ----------
    rows : dict of str to int
        ``keys``: the row of each key.
    matrix, raw : ndarray
        As given.
    """

    def __init__(self, keys: dict[str, int], matrix: np.ndarray, raw: np.ndarray | None = None):
        if not isinstance(matrix, np.ndarray) or matrix.ndim != 2 or matrix.dtype.kind != "f":
            raise VectorsError(f"the vectors must be a 2-d array of real floating-point numbers, got {_kind(matrix)}")
        if raw is not None and (not isinstance(raw, np.ndarray) or raw.shape != matrix.shape):
            raise VectorsError(f"the source vectors must be an array of the matrix's shape {matrix.shape}")
        if not all(isinstance(row, int) and not isinstance(row, bool) for row in keys.values()):
            raise VectorsError("the row of every key must be an integer")
        if keys and not 0 <= min(keys.values()) <= max(keys.values()) < len(matrix):
            raise VectorsError(f"the rows of the keys must be in [0, {len(matrix)}), the rows of the matrix")
        for name, array in (("matrix", matrix), ("source vectors", raw)):
            bad = _first_nonfinite_row(array) if array is not None else None
            if bad is not None:
                raise VectorsError(f"row {bad} of the {name}{_key_of(keys, bad)} holds NaN or infinite values")
        self.rows = keys
        self.matrix = matrix
        self.raw = raw
        self.matrix.flags.writeable = False

    def __deepcopy__(self, memo) -> "WordVectors":
        return self

    def __copy__(self) -> "WordVectors":
        return self

    def __reduce__(self):
        keys = list(self.rows)
        rows = np.fromiter(self.rows.values(), dtype=np.int32, count=len(keys))
        if self.raw is None:
            return _restore, ("\n".join(keys), rows, self.matrix, None)
        return _restore, ("\n".join(keys), rows, None, self.raw)

    @cached_property
    def lemmas_per_row(self) -> np.ndarray:
        """How many lemmas (lower-cased, KeLP's ``::p`` removed) each row holds."""
        lemma_rows = {(split_key(key)[0].lower(), row) for key, row in self.rows.items()}
        return np.bincount(np.fromiter((row for _, row in lemma_rows), dtype=np.int64), minlength=len(self.matrix))

    @classmethod
    def from_arrays(cls, keys: Iterable[str], vectors: np.ndarray) -> "WordVectors":
        """Keys with one vector each: vectors are normalized, identical ones merged, zero ones dropped."""
        keys = list(keys)
        try:
            vectors = np.asarray(vectors)
        except ValueError as error:  # ragged rows
            raise VectorsError(f"word vectors must be a matrix of numbers ({error})") from error
        if vectors.dtype.kind not in "fiu":
            raise VectorsError(f"word vectors must be real numbers, got {vectors.dtype} values")
        if vectors.ndim != 2 or len(vectors) != len(keys):
            raise VectorsError(f"{len(keys)} keys need a matrix of {len(keys)} rows, got shape {vectors.shape}")
        bad = _first_nonfinite_row(vectors)
        if bad is not None:
            raise VectorsError(f"the vector of {keys[bad]!r} (row {bad}) holds NaN or infinite values")
        beyond = np.flatnonzero((np.abs(vectors) > FLOAT32_MAX).any(axis=1))  # no cast to inf (and its warning)
        if len(beyond):
            row = int(beyond[0])
            value = vectors[row][np.abs(vectors[row]) > FLOAT32_MAX][0]
            raise VectorsError(f"the vector of {keys[row]!r} (row {row}) holds {value:g}, {_BEYOND}")
        vectors = vectors.astype(np.float32)
        nonzero = np.flatnonzero((vectors != 0).any(axis=1))  # a sum of large values would overflow
        distinct, row_of = np.unique(vectors[nonzero], axis=0, return_inverse=True)
        rows: dict[str, int] = {}
        for k, row in zip(nonzero.tolist(), row_of.reshape(-1).tolist()):
            rows.setdefault(keys[k], row)
        return cls(rows, _unit_rows(distinct), distinct)

    @classmethod
    def load(cls, source) -> "WordVectors":
        """From a spaCy ``Vocab`` or ``Vectors``, a ``WordVectors``, or a path: a KeLP word
        space or word2vec/GloVe text file (``.txt``, ``.txt.gz``, ``.vec``), or a ``.npy``
        matrix with its keys, one per line, in a ``.keys`` file beside it. A file that
        cannot be read, or a malformed line, raises :class:`VectorsError` naming the file
        and line."""
        if isinstance(source, WordVectors):
            return source
        if hasattr(source, "vectors") and hasattr(source, "strings"):  # a spaCy Vocab
            return _from_spacy(source.vectors, source.strings)
        if hasattr(source, "key2row"):  # a spaCy Vectors table
            return _from_spacy(source, source.strings)
        if isinstance(source, (str, Path)):
            path = Path(source)
            if not path.exists():
                raise VectorsError(f"no word-vector file at {path}")
            if path.suffix == ".npy":
                try:
                    return cls.from_arrays(*_read_npy(path))
                except VectorsError as error:
                    if str(path) in str(error):
                        raise
                    raise VectorsError(f"{path}: {error}") from error
            return cls.from_arrays(*_read_text(path))
        raise VectorsError(f"cannot take word vectors from {type(source).__name__}")

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The table as arrays to save with a model (:meth:`from_saved_arrays` reads them):
        the keys (UTF-8, one per line), the row of each, the distinct source vectors."""
        return {
            "vector_keys": np.frombuffer("\n".join(self.rows).encode(), dtype=np.uint8),
            "vector_rows": np.fromiter(self.rows.values(), dtype=np.int64, count=len(self.rows)),
            "vectors": self.matrix if self.raw is None else self.raw,
        }

    @classmethod
    def from_saved_arrays(cls, keys: np.ndarray, rows: np.ndarray, vectors: np.ndarray) -> "WordVectors":
        """The table of :meth:`to_arrays`, each array checked as saved arrays are
        (:mod:`~spacy_convkernels.utils.saved_arrays`; a ModelFileError when one is not)."""
        vectors = real_array(vectors, name="vectors", shape=(None, None))
        if not (vectors != 0).any(axis=1).all():
            raise ModelFileError("vectors holds a zero vector")
        text = index_array(keys, name="vector_keys", shape=(None,), size=256).astype(np.uint8).tobytes().decode()
        names = text.split("\n") if text else []
        rows = index_array(rows, name="vector_rows", shape=(len(names),), size=len(vectors))
        return cls(dict(zip(names, rows.tolist())), _unit_rows(vectors), vectors)

    def row(self, key: str) -> int:
        """The row of ``key``, -1 when it has no vector."""
        return self.rows.get(key, -1)

    def lexical_row(self, lemma: str, pos: str) -> int:
        """The row of a lemma with its POS initial: ``lemma::p`` (KeLP's keys), else ``lemma``."""
        row = self.rows.get(join_key(lemma, pos), -1)
        return row if row >= 0 else self.rows.get(lemma, -1)


#: The largest magnitude of a word vector's value: the source vectors are float32.
FLOAT32_MAX = float(np.finfo(np.float32).max)
_BEYOND = f"beyond float32's range (magnitudes up to {FLOAT32_MAX:.7g}), in which word vectors are kept"


def _first_nonfinite_row(array: np.ndarray) -> int | None:
    """The first row of a 2-d array that holds NaN or an infinity, None when every value is finite."""
    if array.dtype.kind != "f":
        return None
    rows = np.flatnonzero(~np.isfinite(array).all(axis=1))
    return int(rows[0]) if len(rows) else None


def _key_of(keys: dict[str, int], row: int) -> str:
    """`` (key 'dog')``: a key of ``row``, or nothing when no key maps to it."""
    key = next((key for key, at in keys.items() if at == row), None)
    return "" if key is None else f" (key {key!r})"


def _kind(value) -> str:
    return f"{value.dtype} array of shape {value.shape}" if isinstance(value, np.ndarray) else type(value).__name__


def _from_spacy(vectors, strings) -> WordVectors:
    """The table of a spaCy ``Vectors``, made once per content: a pipeline binds one table
    to each of its kernels (a textcat's blocks, a relation model's), and making it takes
    seconds for en_core_web_md's 685k keys."""
    if vectors.shape[0] == 0:
        raise VectorsError("the spaCy vectors table is empty")
    data = np.asarray(vectors.data.get() if hasattr(vectors.data, "get") else vectors.data)
    content = hashlib.blake2b(np.ascontiguousarray(data).tobytes(), digest_size=16)
    content.update(np.fromiter(vectors.key2row.keys(), dtype=np.uint64, count=len(vectors.key2row)).tobytes())
    content.update(np.fromiter(vectors.key2row.values(), dtype=np.int64, count=len(vectors.key2row)).tobytes())
    fingerprint = (content.digest(), data.dtype.str, data.shape, id(strings), len(strings))
    if fingerprint not in _SPACY_TABLES:
        table = WordVectors.from_arrays([str(i) for i in range(len(data))], data)
        rows = {}
        for key, row in vectors.key2row.items():
            distinct = table.rows.get(str(row), -1)
            if distinct >= 0 and key in strings:
                rows[strings[key]] = distinct
        _SPACY_TABLES.clear()  # one table is kept: a process rarely holds two vector tables
        _SPACY_TABLES[fingerprint] = WordVectors(rows, table.matrix, table.raw)
    return _SPACY_TABLES[fingerprint]


_SPACY_TABLES: dict[tuple, WordVectors] = {}


def _unit_rows(raw: np.ndarray) -> np.ndarray:
    """The rows of ``raw`` scaled to unit length, in float64."""
    raw = raw.astype(np.float64)
    return raw / np.linalg.norm(raw, axis=1, keepdims=True)


def _restore(keys: str, rows: np.ndarray, matrix: np.ndarray | None, raw: np.ndarray | None) -> WordVectors:
    """A :class:`WordVectors` from its pickled form (``WordVectors.__reduce__``)."""
    if matrix is None:
        assert raw is not None  # __reduce__ pickles the matrix or the source vectors
        matrix = _unit_rows(raw)
    names = keys.split("\n") if keys else []
    return WordVectors(dict(zip(names, rows.tolist())), matrix, raw)


class VectorsParameter:
    """The ``vectors`` parameter of a kernel: a spaCy ``Vocab`` or ``Vectors`` given to it
    is held as a :class:`WordVectors` handle (so cloning the kernel shares the table and
    pickling it stores the table once, as an array); paths and None are kept as given and
    read when the kernel first needs them."""

    def __set_name__(self, owner, name: str):
        self.name = "_" + name

    def __get__(self, kernel, owner=None):
        return self if kernel is None else kernel.__dict__.get(self.name)

    def __set__(self, kernel, value):
        is_spacy = hasattr(value, "key2row") or (hasattr(value, "vectors") and hasattr(value, "strings"))
        kernel.__dict__[self.name] = WordVectors.load(value) if is_spacy else value


def _lines(path: Path):
    """The numbered lines of a text file (see :func:`numbered_lines`), every problem a VectorsError."""
    try:
        lines = numbered_lines(path)
    except OSError as error:
        raise VectorsError(f"cannot open {path} ({error.strerror or error})") from error
    for number, line in lines:
        if isinstance(line, Unreadable):
            hint = "; binary word2vec files are not read, convert them to text" if not line.final else ""
            raise VectorsError(f"{path}, line {number}: {line.message}{hint}") from line.cause
        yield number, line


def vector_files(source: str | Path) -> list[Path]:
    """Every file :meth:`WordVectors.load` reads of a path: a ``.npy`` matrix and the
    ``.keys`` file beside it, else the file itself (the inputs a command declares)."""
    path = Path(source)
    return [path, _keys_file(path)] if path.suffix == ".npy" else [path]


def _keys_file(path: Path) -> Path:
    return path.with_suffix(".keys")


def _read_npy(path: Path) -> tuple[list, np.ndarray]:
    """Keys and vectors of a ``.npy`` matrix and the ``.keys`` file beside it."""
    keys_path = _keys_file(path)
    if not keys_path.exists():
        raise VectorsError(f"{path} needs its keys, one per line, in {keys_path}")
    keys = [line for _, line in _lines(keys_path)]
    try:
        with open(path, "rb") as file:
            matrix = npy_array(file, size=os.fstat(file.fileno()).st_size, name=path.name)
    except (OSError, ValueError, EOFError) as error:
        raise VectorsError(f"{path} is not a readable .npy matrix ({error})") from error
    if not (np.issubdtype(matrix.dtype, np.floating) or np.issubdtype(matrix.dtype, np.integer)):
        raise VectorsError(f"{path} holds {matrix.dtype} values, not numbers")
    return keys, matrix


_HEADER = re.compile(r"[0-9]+[ \t]+[0-9]+")
_FIELDS = re.compile(r"[ \t]+")


def _read_text(path: Path) -> tuple[list, np.ndarray]:
    """Keys and vectors of a text file: KeLP (``key<TAB>weight<TAB>count<TAB>v1,v2,...``) or
    word2vec/GloVe (``key v1 v2 ...``, spaces or tabs), either with an optional first
    line of exactly two integers giving the count and the dimension."""
    keys, rows, size, origin = [], [], None, ""
    for number, line in _lines(path):
        fields = line.split("\t")
        if len(fields) == 4 and "," in fields[3]:  # KeLP's word space
            key, values = fields[0], fields[3].split(",")
        else:
            line = line.strip(" \t")
            if not line:
                continue
            if number == 1 and _HEADER.fullmatch(line):
                size, origin = int(_FIELDS.split(line)[1]), " (the header's dimension)"
                continue
            key, *values = _FIELDS.split(line)
        where = f"{path}, line {number}"
        try:
            vector = [float(v) for v in values]
        except ValueError:
            raise VectorsError(f"{where}: the vector of {key!r} holds a non-number") from None
        if not all(map(math.isfinite, vector)):
            raise VectorsError(f"{where}: the vector of {key!r} holds NaN or infinite values")
        beyond = next((v for v in vector if abs(v) > FLOAT32_MAX), None)
        if beyond is not None:
            raise VectorsError(f"{where}: the vector of {key!r} holds {beyond:g}, {_BEYOND}")
        if size is None:
            size, origin = len(vector), f" (the vector on line {number})"
        if len(vector) != size or not vector:
            raise VectorsError(f"{where}: {len(vector)} values for {key!r} where {size} were expected{origin}")
        keys.append(key)
        rows.append(vector)
    if not keys:
        raise VectorsError(f"{path} holds no vectors")
    return keys, np.array(rows, dtype=np.float32)
