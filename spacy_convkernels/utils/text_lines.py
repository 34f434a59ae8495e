"""The numbered lines of a UTF-8 text file or its ``.gz``, as every reader of the package
takes them (:func:`numbered_lines`; word-vector files), and those of a corpus file with
the errors every corpus reader raises (:func:`corpus_lines`, :func:`corpus_error`)."""

import gzip
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from tqdm.auto import tqdm

from ..errors import CorpusFileError, CorpusFormatError

MAX_LINE_BYTES = 10 << 20  # 10 MiB: a line longer than this is refused, never held whole in memory
_CHUNK = 1 << 20  # what an over-long line is skipped by


class Unreadable(NamedTuple):
    """Why a line could not be read: ``cause`` is the original exception; ``final`` when
    the rest of the file is lost with it (a broken or truncated stream)."""

    message: str
    cause: BaseException
    final: bool


class _LineTooLong(ValueError):
    """The ``cause`` of an :class:`Unreadable` line longer than :data:`MAX_LINE_BYTES`."""


def numbered_lines(path: Path) -> Iterator[tuple[int, str | Unreadable]]:
    """Open ``path`` (gzip when it ends in ``.gz``; an ``OSError`` when it cannot be
    opened) and iterate (1-based number, line) pairs: the line as text without its line
    end, a UTF-8 byte-order mark at its start dropped (a file's, or one of files joined
    together), or an :class:`Unreadable` in its place. Only ``\\n`` ends a line. A line
    longer than :data:`MAX_LINE_BYTES` is an :class:`Unreadable` too (a
    :class:`_LineTooLong`), read in bounded memory and passed over. A broken stream
    gives a final :class:`Unreadable` numbered as the line it would have been."""
    gzipped = path.suffix == ".gz"
    handle = (gzip.open if gzipped else open)(path, "rb")
    return _lines(handle, "gzip data" if gzipped else "file")


def _lines(handle, what: str):
    number = 0
    with handle:
        try:
            while raw := handle.readline(MAX_LINE_BYTES + 1):
                number += 1
                if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                    error = _LineTooLong(f"a line longer than {MAX_LINE_BYTES:,d} bytes")
                    yield number, Unreadable(f"{error} (MAX_LINE_BYTES; not a line-based file?)", error, False)
                    _skip_line(handle)  # only when the reader goes on
                    continue
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as error:
                    yield (
                        number,
                        Unreadable(f"not UTF-8 text ({error.reason} at byte {error.start} of the line)", error, False),
                    )
                    continue
                yield number, line.removeprefix("\ufeff").rstrip("\r\n")
        except (OSError, EOFError, zlib.error) as error:  # gzip.BadGzipFile is an OSError
            yield number + 1, Unreadable(f"unreadable {what} ({type(error).__name__}: {error})", error, True)


def _skip_line(handle) -> None:
    """Read on to the end of the current line, a chunk at a time."""
    while (chunk := handle.readline(_CHUNK)) and not chunk.endswith(b"\n"):
        pass


class _CarriageReturn(ValueError):
    """The ``cause`` of an :class:`Unreadable` line holding a carriage return."""


def corpus_lines(
    path: Path, progress: bool = False, *, inner_cr: bool = True
) -> Iterator[tuple[int, str | Unreadable]]:
    """:func:`numbered_lines` of a corpus: a file that cannot be opened raises
    :class:`~spacy_convkernels.CorpusFileError`; ``progress`` shows a tqdm bar of the
    lines read. With ``inner_cr=False`` (formats where a ``\\r`` cannot be text), a line
    holding a carriage return (not its ``\\r\\n`` end) is an :class:`Unreadable`: the file
    may end its lines with ``\\r`` alone, which would make it one line."""
    try:
        lines = numbered_lines(path)
    except OSError as error:
        raise CorpusFileError(f"cannot open the file ({error.strerror or error})", path) from error
    lines = tqdm(lines, desc=path.name, unit=" lines", disable=not progress)
    return lines if inner_cr else _refusing_cr(lines)


def _refusing_cr(lines):
    for number, line in lines:
        if not isinstance(line, Unreadable) and "\r" in line:
            error = _CarriageReturn("a carriage return inside the line")
            line = Unreadable(f"{error} (lines end in \\n or \\r\\n: convert a file with \\r line ends)", error, False)
        yield number, line


def corpus_error(message: str, path: Path, line: int, cause: BaseException | None = None) -> CorpusFormatError:
    """A :class:`~spacy_convkernels.CorpusFormatError` with ``cause`` as its ``__cause__``."""
    error = CorpusFormatError(message, path, line)
    error.__cause__ = cause
    return error
