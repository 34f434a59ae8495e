"""The README's examples run and print what the README says."""
import contextlib
import io
import os
import re

from conftest import ROOT, SHARED, need_shared


def _run_readme_block(heading: str) -> str:
    """Run the first python block under ``heading`` from the repository root, with
    ``../shared`` standing for wherever the shared data are; return its output."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    code = re.search(rf"## {heading}.*?```python\n(.*?)```", text, re.S).group(1)
    code = code.replace('"../shared/', f'"{SHARED}/')
    printed = io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(code, "README.md", "exec"), {})
    finally:
        os.chdir(cwd)
    return code, printed.getvalue()


def test_readme_example_runs():
    code, printed = _run_readme_block("Example")
    claimed = re.findall(r"# (\d\.\d+)\.\.\.", code)
    values = [float(line) for line in printed.split()]
    assert len(values) == len(claimed) == 3
    for value, claim in zip(values, claimed):
        assert abs(value - float(claim)) < 1e-4


def test_readme_spacy_example_runs():
    need_shared("models/en_core_web_md-3.8.0")
    _, printed = _run_readme_block("In a spaCy pipeline")
    lines = printed.splitlines()
    assert len(lines) == 3 and lines[0].startswith("(SYNT##root") and 0 < float(lines[2]) < 1


def test_readme_amr_example_runs():
    need_shared("data/bio-amr")
    code, _ = _run_readme_block("Interactions in AMR graphs")
    assert "SubsequencePathKernel" in code
