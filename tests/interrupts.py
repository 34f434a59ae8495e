"""Subprocesses that are sent Ctrl-C (SIGINT) in tests."""

import signal


def default_sigint() -> None:
    """``preexec_fn`` of such a subprocess: SIGINT back to its default action, so that Python
    in the child installs its KeyboardInterrupt handler even when the test run itself
    ignores SIGINT (a run started in the background by a shell without job control, as
    ``cmd &`` in a script: its children inherit the ignored signal)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
