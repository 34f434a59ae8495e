"""The numbered lines of a corpus file (:mod:`spacy_convkernels.utils.text_lines`), with the
errors every reader raises."""

from collections.abc import Iterator
from pathlib import Path

from tqdm.auto import tqdm

from ..errors import CorpusFileError, CorpusFormatError
from ..utils.text_lines import Unreadable, numbered_lines

__all__ = ["Unreadable", "corpus_error", "corpus_lines"]


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
