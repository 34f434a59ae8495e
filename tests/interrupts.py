"""Subprocesses that are sent Ctrl-C (SIGINT) in tests."""

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

TESTS = Path(__file__).resolve().parent


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


def assert_interruptible(script: str, *args: str) -> None:
    """Run ``python -c script *args TESTS`` (the package importable), wait for its line
    "started" and send SIGINT a second later: within 3 s it must print "interrupted",
    then "usable" (what it computes after the interruption is right) and exit 0."""
    proc = subprocess.Popen(
        [sys.executable, "-c", script, *args, str(TESTS)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(TESTS.parent)},
        preexec_fn=default_sigint,
    )
    try:
        assert proc.stdout.readline().strip() == "started"
        time.sleep(1.0)
        proc.send_signal(signal.SIGINT)
        sent = time.monotonic()
        line = proc.stdout.readline().strip()
        delay = time.monotonic() - sent
        rest, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert line == "interrupted", err[-2000:]
    assert delay < 3.0
    assert rest.strip() == "usable" and proc.returncode == 0, err[-2000:]
