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


@pytest.mark.slow  # .ci/run makes a virtual environment (pip in it) before the lint
@pytest.mark.skipif(sys.platform == "win32", reason="a bash script")
def test_a_failing_command_inside_an_and_list_stops_ci(tmp_path):
    """A lint line whose first command fails (`false && true`, as `ruff check . && mypy`
    with a ruff error) stops the run before the tests: bash's set -e alone lets it pass."""
    repo, shared, ran = tmp_path / "repo", tmp_path / "shared", tmp_path / "tests-ran"
    (repo / ".ci").mkdir(parents=True)
    shared.mkdir()
    (repo / ".ci" / "run").write_text((ROOT / ".ci" / "run").read_text())
    fence = "```"
    (repo / "README.md").write_text(
        f"<!-- ci: install and test -->\n{fence}sh\necho pip install\necho pytest > {ran}\n{fence}\n\n"
        f"<!-- ci: lint -->\n{fence}sh\nfalse && true\n{fence}\n"
    )
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "ci"]):
        subprocess.run(git + command, cwd=repo, check=True, capture_output=True)
    environment = {**os.environ, "SPACY_CONVKERNELS_SHARED": str(shared)}
    result = subprocess.run(
        ["bash", str(repo / ".ci" / "run")], capture_output=True, text=True, env=environment, timeout=120
    )
    assert result.returncode != 0
    assert not ran.exists(), "the tests ran after the lint failed"


def test_the_files_scheduled_first_exist():
    from conftest import LONGEST_FILES

    assert [name for name in LONGEST_FILES if not (ROOT / "tests" / name).is_file()] == []
