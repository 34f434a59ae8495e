"""The numbered lines of a corpus file (:mod:`spacy_convkernels.text_lines`), with the
errors every reader raises."""

from collections.abc import Iterator
from pathlib import Path

from tqdm.auto import tqdm

from ..errors import CorpusFileError, CorpusFormatError
from ..text_lines import Unreadable, numbered_lines

__all__ = ["Unreadable", "corpus_error", "corpus_lines"]


def corpus_lines(path: Path, progress: bool = False) -> Iterator[tuple[int, str | Unreadable]]:
    """:func:`numbered_lines` of a corpus: a file that cannot be opened raises
    :class:`~spacy_convkernels.CorpusFileError`; ``progress`` shows a tqdm bar of the
    lines read."""
    try:
        lines = numbered_lines(path)
    except OSError as error:
        raise CorpusFileError(f"cannot open the file ({error.strerror or error})", path) from error
    return tqdm(lines, desc=path.name, unit=" lines", disable=not progress)


def corpus_error(message: str, path: Path, line: int, cause: BaseException | None = None) -> CorpusFormatError:
    """A :class:`~spacy_convkernels.CorpusFormatError` with ``cause`` as its ``__cause__``."""
    error = CorpusFormatError(message, path, line)
    error.__cause__ = cause
    return error
