"""Run a Python script in a subprocess that can cap its own address space: the script
calls ``limit_address_space(megabytes)`` once its tables are warm, allowing that much
above what the process maps then."""

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
