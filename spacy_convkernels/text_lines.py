"""The numbered lines of a UTF-8 text file or its ``.gz``, as every reader of the package
(corpora, word-vector files) takes them."""

import gzip
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple


class Unreadable(NamedTuple):
    """Why a line could not be read: ``cause`` is the original exception; ``final`` when
    the rest of the file is lost with it (a broken or truncated stream)."""

    message: str
    cause: BaseException
    final: bool


def numbered_lines(path: Path) -> Iterator[tuple[int, str | Unreadable]]:
    """Open ``path`` (gzip when it ends in ``.gz``; an ``OSError`` when it cannot be
    opened) and iterate (1-based number, line) pairs: the line as text without its line
    end, a UTF-8 byte-order mark dropped, or an :class:`Unreadable` in its place. Only
    ``\\n`` ends a line. A broken stream gives a final :class:`Unreadable` numbered as
    the line it would have been."""
    gzipped = path.suffix == ".gz"
    handle = (gzip.open if gzipped else open)(path, "rb")
    return _lines(handle, "gzip data" if gzipped else "file")


def _lines(handle, what: str):
    number = 0
    with handle:
        try:
            for number, raw in enumerate(handle, start=1):
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as error:
                    yield (
                        number,
                        Unreadable(f"not UTF-8 text ({error.reason} at byte {error.start} of the line)", error, False),
                    )
                    continue
                if number == 1 and line.startswith("\ufeff"):
                    line = line[1:]
                yield number, line.rstrip("\r\n")
        except (OSError, EOFError, zlib.error) as error:  # gzip.BadGzipFile is an OSError
            yield number + 1, Unreadable(f"unreadable {what} ({type(error).__name__}: {error})", error, True)
