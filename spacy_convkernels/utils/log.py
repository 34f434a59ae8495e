"""The package's logger, ``spacy_convkernels``: what a long step tells while it runs (a
component's initialize: the training data it found, the Gram's rows, each fold, what it
chose).

It writes to standard error at INFO, formatted as spaCy's own logger, so that ``spacy
train`` and ``spacy debug data`` show it without ``--verbose``;
``logging.getLogger("spacy_convkernels").setLevel(logging.WARNING)`` silences it. Its
records also reach the root logger's handlers, as any logger's do."""

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager

logger = logging.getLogger("spacy_convkernels")


class _StandardError(logging.StreamHandler):
    """A handler writing to the standard error of the moment (``sys.stderr`` when the
    record is emitted, not when the handler was made), as a captured one is."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:  # StreamHandler.__init__ sets it; the current one is always used
        pass


if not any(isinstance(handler, _StandardError) for handler in logger.handlers):
    _handler = _StandardError()
    _handler.setFormatter(logging.Formatter("[%(asctime)s] [%(levelname)s] %(message)s"))
    logger.addHandler(_handler)
    logger.setLevel(logging.INFO)


@contextmanager
def quiet() -> Iterator[None]:
    """The logger at WARNING for the block (a caller that prints its own summary), as before after it."""
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)
