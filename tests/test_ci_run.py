""".ci/run: it stops at once, saying why, in a clone without the project's shared data;
it runs README.md's commands, its lint, and the fast tests as a newcomer runs them."""

import json
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


def run_ci_on_a_toy_repo(tmp_path, install_and_test: str, lint: str, files: dict | None = None):
    """.ci/run on a repository of its own (its README.md's blocks, ``files`` beside them),
    the shared folder there; the finished process."""
    repo, shared = tmp_path / "repo", tmp_path / "shared"
    (repo / ".ci").mkdir(parents=True)
    shared.mkdir()
    (repo / ".ci" / "run").write_text((ROOT / ".ci" / "run").read_text())
    # a stand-in for the installed lane (its wheel build and installs take minutes): it logs its call
    (repo / ".ci" / "installed").write_text('echo "{\\"installed\\": $#}" >> "${TOY_LOG:-/dev/null}"\n')
    fence = "```"
    (repo / "README.md").write_text(
        f"<!-- ci: install and test -->\n{fence}sh\n{install_and_test}{fence}\n\n"
        f"<!-- ci: lint -->\n{fence}sh\n{lint}{fence}\n"
    )
    for name, text in (files or {}).items():
        (repo / name).write_text(text)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "ci"]):
        subprocess.run(git + command, cwd=repo, check=True, capture_output=True)
    environment = {**os.environ, "SPACY_CONVKERNELS_SHARED": str(shared)}
    return subprocess.run(
        ["bash", str(repo / ".ci" / "run")], capture_output=True, text=True, env=environment, timeout=120
    )


@pytest.mark.slow  # .ci/run makes a virtual environment (pip in it) before the lint
@pytest.mark.skipif(sys.platform == "win32", reason="a bash script")
def test_a_failing_command_inside_an_and_list_stops_ci(tmp_path):
    """A lint line whose first command fails (`false && true`, as `ruff check . && mypy`
    with a ruff error) stops the run before the tests: bash's set -e alone lets it pass."""
    ran = tmp_path / "tests-ran"
    result = run_ci_on_a_toy_repo(tmp_path, f"echo pip install\necho pytest > {ran}\n", "false && true\n")
    assert result.returncode != 0
    assert not ran.exists(), "the tests ran after the lint failed"


# a stand-in for pytest in the toy repository (``python -m pytest`` finds it in the export): it
# logs to TOY_LOG its arguments, CI and whether the shared folder is found as data_paths.py finds it
TOY_PYTEST = """import json, os, sys
from pathlib import Path

shared = Path(os.environ.get("SPACY_CONVKERNELS_SHARED", Path(__file__).resolve().parent.parent / "shared"))
with open(os.environ["TOY_LOG"], "a") as log:
    log.write(json.dumps({"args": sys.argv[1:], "ci": os.environ.get("CI"), "shared": shared.exists()}) + "\\n")
"""


@pytest.mark.slow  # .ci/run makes a virtual environment (pip in it)
@pytest.mark.skipif(sys.platform == "win32", reason="a bash script")
def test_ci_runs_the_fast_tests_as_a_newcomer_and_the_installed_lane_before_the_full_run(tmp_path, monkeypatch):
    """After the lint, the fast tests run without CI=true and with no shared folder
    reachable, as in a fresh clone; then the installed lane (.ci/installed, given the
    export, the work folder and the shared folder); then README.md's pytest line, with
    CI=true and the shared folder."""
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("TOY_LOG", str(log))
    lint = """echo '{"lint": true}' >> "$TOY_LOG"\n"""
    result = run_ci_on_a_toy_repo(
        tmp_path, "echo pip install\npython -m pytest -n 2\n", lint, files={"pytest.py": TOY_PYTEST}
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lint_run, newcomer, installed, full = [json.loads(line) for line in log.read_text().splitlines()]
    assert lint_run == {"lint": True} and installed == {"installed": 3}
    assert newcomer["args"][newcomer["args"].index("-m") + 1] == "not slow"
    assert newcomer["ci"] is None and not newcomer["shared"]
    assert full == {"args": ["-n", "2"], "ci": "true", "shared": True}


def test_the_files_scheduled_first_exist():
    from conftest import LONGEST_FILES

    assert [name for name in LONGEST_FILES if not (ROOT / "tests" / name).is_file()] == []
