"""What a corpus reader does with a malformed item: raise, or skip it and report it."""

import warnings

from ..errors import CorpusFormatError, CorpusWarning


def skip_or_raise(error: CorpusFormatError, skip_errors: bool, errors: list | None, item: str) -> None:
    """Raise ``error`` (with the ``__cause__`` it carries) unless ``skip_errors``; else warn
    that an ``item`` was skipped and append the error to ``errors`` when a list is given."""
    if not skip_errors:
        raise error from error.__cause__
    warnings.warn(f"skipped a {item}: {error}", CorpusWarning, stacklevel=3)  # at the reader's caller
    if errors is not None:
        errors.append(error)
