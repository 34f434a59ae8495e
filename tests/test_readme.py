"""README.md stays a newcomer's page: short, the start that CI runs, one example per main
use, and links to the rest (docs/index.md). Its code blocks run in
tests/test_doc_examples.py, with the other pages'."""

import re

from data_paths import ROOT
from doc_blocks import MD_MODEL, blocks

README = ROOT / "README.md"
MAX_LINES = 250


def text() -> str:
    return README.read_text(encoding="utf-8")


def test_the_readme_is_short():
    assert len(text().splitlines()) <= MAX_LINES


def test_the_readme_starts_with_what_ci_runs():
    """The fenced blocks after the markers that .ci/run reads: install, demo, every test on two
    workers; then the lint."""
    found = {block.directive: block.code.splitlines() for block in blocks(README) if block.directive}
    assert found["ci: install and test"] == [
        'python3 -m venv .venv && . .venv/bin/activate && pip install -U pip && pip install -e ".[dev]"',
        "spacy-convkernels demo",
        "python -m pytest -n 2 --dist loadscope",
    ]
    assert found["ci: lint"] == ["ruff check . && ruff format --check . && cython-lint spacy_convkernels && mypy"]
    first_shell = next(block for block in blocks(README) if block.language == "sh")
    assert first_shell.directive == "ci: install and test"  # tests/test_cli_demo.py reads the first sh block


def test_one_example_per_main_use():
    headings = re.findall(r"^## (.*)$", text(), re.M)
    assert headings == [
        "Start",
        "Install and test",
        "Kernels in Python",
        "In a spaCy pipeline",
        "Kernels in scikit-learn",
        "Sentence similarity",
        "Training with `spacy train`",
        "Command line",
        "Documentation",
    ]
    examples = {block.heading for block in blocks(README) if block.runs_here}
    assert examples == {
        "Kernels in Python",
        "In a spaCy pipeline",
        "Kernels in scikit-learn",
        "Sentence similarity",
        "Command line",
    }
    assert "KernelTransformer" in text() and "GridSearchCV" in text()


def test_the_readme_says_where_the_model_and_the_data_come_from():
    readme = text()
    assert f"python -m spacy download {MD_MODEL}" in readme
    assert "SPACY_CONVKERNELS_SHARED" in readme and ".ci/run" in readme and "-rsx" in readme
    assert "shared/models" not in "".join(block.code for block in blocks(README))


def test_the_readme_links_the_docs():
    readme = text()
    for target in (
        "docs/index.md",
        "docs/api.md",
        "docs/results/",
        "docs/guide/question_classification.md",
        "docs/guide/relations_jsonl.md",
        "docs/relations_jsonl.md",
        "docs/guide/sklearn.md",
        "docs/guide/similarity.md",
        "docs/guide/cli.md",
        "docs/guide/scaling.md",
        "docs/testing.md",
    ):
        assert f"]({target})" in readme, target
