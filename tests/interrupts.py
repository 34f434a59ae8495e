"""Subprocesses that are sent Ctrl-C (SIGINT) in tests."""

import signal
from collections.abc import Iterator
from contextlib import contextmanager


def default_sigint() -> None:
    """``preexec_fn`` of such a subprocess: SIGINT back to its default action, so that Python
    in the child installs its KeyboardInterrupt handler even when the test run itself
    ignores SIGINT (a run started in the background by a shell without job control, as
    ``cmd &`` in a script: its children inherit the ignored signal)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextmanager
def python_sigint() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt for the block (Python's own handler), whatever the
    test run inherited."""
    earlier = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, earlier)
