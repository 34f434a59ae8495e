"""The spaCy files the commands read: pipelines (``--model`` of ``trees``, ``demo``,
``lexicon``, ``evaluate bionlp``; the model of ``evaluate relations``) through
:func:`load_pipeline`, DocBins (``trees``, ``evaluate relations``) through :func:`read_docbin`."""

from pathlib import Path

from ..errors import CorpusFormatError, ModelFileError


def load_pipeline(model: str | Path, **settings):
    """``spacy.load(model, **settings)``. A pipeline that cannot be loaded (not there, or a
    damaged file: its tokenizer, strings, ``meta.json``, a component's) raises one
    :class:`ModelFileError` naming the model and, where spaCy's error tells, the file; a
    component of this package names its own file."""
    import spacy

    from ..saved_arrays import READING_ERRORS

    try:
        return spacy.load(model, **settings)
    except ModelFileError:
        raise
    except READING_ERRORS as error:
        file = _file_of(error)
        where = f": {file} is damaged" if file is not None else ""
        reason = " ".join(f"{type(error).__name__}: {error}".split())[:300]
        raise ModelFileError(f"cannot load the spaCy pipeline {model}{where} ({reason})", source=str(model)) from error


def read_docbin(path: Path, vocab) -> list:
    """The Docs of a ``.spacy`` DocBin. Anything else (a single saved Doc, a damaged or
    truncated file) raises a :class:`CorpusFormatError` naming the file."""
    from spacy.tokens import DocBin

    from ..saved_arrays import READING_ERRORS

    try:
        return list(DocBin().from_disk(path).get_docs(vocab))
    except READING_ERRORS as error:  # spaCy's E1014, msgpack's and zlib's errors are ValueErrors
        reason = " ".join(f"{type(error).__name__}: {error}".split())[:300]
        raise CorpusFormatError(f"not a spaCy DocBin ({reason})", path, 1) from error


def _file_of(error: BaseException) -> Path | None:
    """The path spaCy was reading when ``error`` was raised: a path among the locals of
    the innermost Python frame of its traceback that has one (an existing file first; a
    component's folder when its reader is compiled)."""
    found = None
    frame = error.__traceback__
    while frame is not None:
        paths = [value for value in frame.tb_frame.f_locals.values() if isinstance(value, Path)]
        if paths:
            found = next((path for path in paths if path.is_file()), paths[-1])
        frame = frame.tb_next
    return found
