"""Run a Python script in a subprocess that can cap its own address space: the script
calls ``limit_address_space(megabytes)`` once its tables are warm, allowing that much
above what the process maps then."""

import json
import os
import subprocess
import sys

from data_paths import ROOT

PRELUDE = """
import resource


def limit_address_space(megabytes):
    size = int(open("/proc/self/status").read().split("VmSize:")[1].split()[0]) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (size + (megabytes << 20), resource.getrlimit(resource.RLIMIT_AS)[1]))
"""


def run_limited(script: str, *arguments, timeout: float) -> subprocess.CompletedProcess:
    """``script`` (with ``limit_address_space`` defined) run with ``arguments``, the
    repository on its path."""
    return subprocess.run(
        [sys.executable, "-c", PRELUDE + script, *map(str, arguments)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def refused_in_one_line(script: str, *arguments, output, message: str) -> None:
    """``script`` run limited (it prints [status, stderr, seconds] as JSON) refused its
    input: status 1, one error line starting with ``message``, no ``output``, in < 10 s
    (0.1 s here, the command's lazy imports included)."""
    done = run_limited(script, *arguments, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    status, err, seconds = json.loads(done.stdout)
    assert status == 1 and err.count("\n") == 1 and not output.exists(), err
    assert err.startswith(message), err
    assert seconds < 10
