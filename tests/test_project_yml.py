"""project.yml (spaCy's projects, weasel) reproduces docs/results (issue 38, point 3): it
passes weasel's validation, every script it runs exists, every results page is some
command's output, and every benchmark script of bench/ is run by some command."""

import shlex

import pytest
from data_paths import ROOT

weasel_util = pytest.importorskip("weasel.util")

# pages written by hand from the JSON of the commands that output it
HAND_WRITTEN = {
    "relations.md": [
        "relations_conll04.json",
        "relations_ge.json",
        "relations_ge_refit.json",
        "relations_initialize.json",
    ]
}
# modules the scripts import
NOT_COMMANDS = {"common.py", "locations.py", "spacy_train.py"}


@pytest.fixture(scope="module")
def project() -> dict:
    return weasel_util.load_project_config(ROOT)  # validated against weasel's schema


def scripts(project: dict) -> list[list[str]]:
    return [shlex.split(line) for command in project["commands"] for line in command["script"]]


def test_every_command_runs_a_file_that_exists(project):
    for words in scripts(project):
        if words[0] != "python":
            continue
        if words[1] == "-m":
            module = words[2]
            assert module.startswith(("spacy", "bench.")), words
            if module.startswith("bench."):
                assert (ROOT / module.replace(".", "/") / "__init__.py").exists(), words
        else:
            assert (ROOT / words[1]).is_file(), words


def test_every_results_page_is_made_by_a_command(project):
    outputs = {output for command in project["commands"] for output in command.get("outputs", [])}
    for page in sorted((ROOT / "docs" / "results").glob("*.md")):
        name = f"docs/results/{page.name}"
        if page.name in HAND_WRITTEN:
            assert all(f"docs/results/{json}" in outputs for json in HAND_WRITTEN[page.name])
        else:
            assert name in outputs, f"no command of project.yml outputs {name}"


def test_every_benchmark_script_is_a_command(project):
    run = {words[1] for words in scripts(project) if words[0] == "python" and words[1].startswith("bench/")}
    for script in sorted((ROOT / "bench").glob("*.py")):
        if script.name not in NOT_COMMANDS:
            assert f"bench/{script.name}" in run, f"no command of project.yml runs bench/{script.name}"


def test_deps_and_outputs_in_the_repository_exist(project):
    """What a command reads from the repository (not the shared data, not the work folder) is there."""
    work = project["vars"]["work"]
    for command in project["commands"]:
        for path in command.get("deps", []):
            if not path.startswith(("..", work)) and path not in {
                o for c in project["commands"] for o in c.get("outputs", [])
            }:
                assert (ROOT / path).exists(), f"{command['name']}: {path}"


def test_the_workflows_name_commands_and_all_names_every_results_command(project):
    names = {command["name"] for command in project["commands"]}
    for workflow in project["workflows"].values():
        assert set(workflow) <= names
    results = {
        c["name"] for c in project["commands"] if any(o.startswith("docs/results/") for o in c.get("outputs", []))
    }
    assert results <= set(project["workflows"]["all"])
