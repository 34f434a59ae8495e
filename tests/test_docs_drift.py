"""docs/benchmarks.md and the benchmarks' conventions cannot drift from the scripts (issue
28, point 6): every script is listed, reads the project's data through bench/locations.py
and writes with its --results/--docs flags; docs/layout.md names every module and folder."""

import ast
import importlib.util
import re

import pytest
from data_paths import ROOT, SHARED

BENCH = ROOT / "bench"
SCRIPTS = sorted(BENCH.glob("*.py"))


def listed_benchmarks() -> str:
    """Where the scripts are listed: docs/benchmarks.md, and a spaCy project's project.yml
    when bench/ has become one (its commands run the scripts)."""
    pages = [ROOT / "docs" / "benchmarks.md", ROOT / "project.yml", BENCH / "project.yml"]
    return "\n".join(page.read_text(encoding="utf-8") for page in pages if page.exists())


def layout() -> str:
    """The tree of docs/layout.md."""
    text = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    return re.search(r"^```text\n(.*?)^```", text, re.S | re.M).group(1)


def flags(tree: ast.AST) -> set[str]:
    """The options a script gives to argparse."""
    return {
        arg.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "add_argument"
        for arg in node.args
        if isinstance(arg, ast.Constant) and str(arg.value).startswith("--")
    }


def test_every_benchmark_is_listed():
    listed = listed_benchmarks()
    missing = [script.name for script in SCRIPTS if f"bench/{script.name}" not in listed]
    assert not missing, f"docs/benchmarks.md does not name {missing}"


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda script: script.name)
def test_a_benchmark_keeps_to_the_convention(script):
    tree = ast.parse(script.read_text(encoding="utf-8"))
    assert not flags(tree) & {"--json", "--out", "--landmarks-json", "--from-json"}, (
        "results go to --results, pages to --docs, redrawing is --report-only"
    )
    if script.name != "locations.py":
        spelled = [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and node.value == "shared"]
        assert not spelled, "the project's data folder is bench/locations.py's SHARED"
        assert "SPACY_CONVKERNELS_SHARED" not in script.read_text(encoding="utf-8")


def test_the_benchmarks_find_the_data_where_the_tests_do():
    spec = importlib.util.spec_from_file_location("bench_locations", BENCH / "locations.py")
    locations = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(locations)
    assert locations.SHARED == SHARED and locations.ROOT == ROOT


def test_the_layout_names_every_module_and_folder():
    """docs/layout.md names every module of the package (the engine's too) and every
    folder of the repository, so a new one is described where a newcomer looks."""
    words = set(re.findall(r"[\w.]+", layout()))
    package = ROOT / "spacy_convkernels"
    modules = {path.stem for suffix in ("*.py", "*.pyx") for path in package.rglob(suffix)} - {"__init__", "__main__"}
    folders = {path.name for path in package.iterdir() if path.is_dir() and not path.name.startswith("__")}
    folders |= {path.name for path in ROOT.iterdir() if path.is_dir() and not path.name.startswith((".", "_"))}
    folders -= {"build", "spacy_convkernels.egg-info"}
    missing = sorted(name for name in modules | folders if name not in words and f"{name}.py" not in words)
    assert not missing, f"docs/layout.md does not name {missing}"


def test_results_live_in_docs_results_and_guides_in_docs():
    """The benchmarks' JSON, tables and plots are in docs/results/; docs/ holds guides."""
    assert not list(BENCH.glob("*.json")), "a benchmark's JSON belongs in docs/results/"
    assert not list((ROOT / "docs").glob("*.png")), "a benchmark's plot belongs in docs/results/"
    generated = {path.stem for path in (ROOT / "docs" / "results").glob("*.json")}
    guides = {path.stem for path in (ROOT / "docs").rglob("*.md") if "results" not in path.parts}
    assert not generated & guides, "a page drawn from a benchmark's JSON belongs in docs/results/"


def test_a_results_page_holds_each_generated_part_between_its_markers():
    """Every ``<!-- NAME -->`` of a results page is closed by its ``<!-- /NAME -->`` before the
    next part opens, and every part a script fills (``fill_page``) is marked on its page."""
    opened = re.compile(r"^<!-- (?!/)(.+?) -->$", re.M)
    for page in sorted((ROOT / "docs" / "results").glob("*.md")):
        text = page.read_text(encoding="utf-8")
        for match in opened.finditer(text):
            rest = text[match.end() :]
            close = rest.find(f"\n<!-- /{match.group(1)} -->")
            assert close >= 0, f"{page.name}: <!-- {match.group(1)} --> is never closed"
            assert not opened.search(rest[:close]), f"{page.name}: a part opens inside {match.group(1)}"


def test_fill_page_replaces_the_marked_parts_and_keeps_the_rest(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    spec = importlib.util.spec_from_file_location("bench_common", BENCH / "common.py")
    common = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(common)
    page = tmp_path / "page.md"
    page.write_text("# Title\n\nProse.\n<!-- table -->\n| old |\n<!-- /table -->\nMore prose.\n", encoding="utf-8")
    common.fill_page(page, {"table": ["| a |", "|---|", "| 1 |"]})
    assert page.read_text(encoding="utf-8") == (
        "# Title\n\nProse.\n<!-- table -->\n| a |\n|---|\n| 1 |\n<!-- /table -->\nMore prose.\n"
    )
    with pytest.raises(SystemExit, match="'figures'"):
        common.fill_page(page, {"figures": ["1"]})
    assert "| 1 |" in page.read_text(encoding="utf-8")  # a refused part writes nothing
