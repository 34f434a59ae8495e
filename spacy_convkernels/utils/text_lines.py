"""The numbered lines of a UTF-8 text file or its ``.gz``, as every reader of the package
(corpora, word-vector files) takes them."""

import gzip
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

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
