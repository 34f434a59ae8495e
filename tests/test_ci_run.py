""".ci/run stops at once, saying why, in a clone without the project's shared data."""

import os
import subprocess
import sys

import pytest
from data_paths import ROOT


@pytest.mark.skipif(sys.platform == "win32", reason="a bash script")
def test_ci_run_stops_without_the_shared_data(tmp_path):
    environment = {**os.environ, "SPACY_CONVKERNELS_SHARED": str(tmp_path / "absent")}
    result = subprocess.run(
        ["bash", str(ROOT / ".ci" / "run")], capture_output=True, text=True, env=environment, timeout=60
    )
    assert result.returncode == 1
    assert f"{tmp_path / 'absent'} is absent: set SPACY_CONVKERNELS_SHARED" in result.stderr
    assert "CI: running" not in result.stdout  # before any virtual environment is made
