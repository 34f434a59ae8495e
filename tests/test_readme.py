"""The README's examples run and print what the README says."""
import contextlib
import io
import os
import re

import numpy as np

from conftest import ROOT, SHARED, need_shared


def _run_readme_block(heading: str):
    """Run the first python block under ``heading`` from the repository root, with
    ``../shared`` standing for wherever the shared data are; return its code, its output
    and the names it defined."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    code = re.search(rf"## {heading}.*?```python\n(.*?)```", text, re.S).group(1)
    code = code.replace('"../shared/', f'"{SHARED}/')
    printed = io.StringIO()
    names = {}
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(code, "README.md", "exec"), names)
    finally:
        os.chdir(cwd)
    return code, printed.getvalue(), names


def test_readme_example_runs():
    code, printed, _ = _run_readme_block("Example")
    claimed = re.findall(r"# (\d\.\d+)\.\.\.", code)
    values = [float(line) for line in printed.split()]
    assert len(values) == len(claimed) == 3
    for value, claim in zip(values, claimed):
        assert abs(value - float(claim)) < 1e-4


def test_readme_spacy_example_runs():
    need_shared("models/en_core_web_md-3.8.0")
    _, printed, _ = _run_readme_block("In a spaCy pipeline")
    lines = printed.splitlines()
    assert len(lines) == 3 and lines[0].startswith("(SYNT##root") and 0 < float(lines[2]) < 1


def test_readme_amr_example_runs():
    need_shared("data/bio-amr")
    _, _, names = _run_readme_block("Interactions in AMR graphs")
    G, candidates = names["G"], names["candidates"]
    assert len(candidates) > 50 and G.shape == (len(candidates), len(candidates))
    np.testing.assert_allclose(G, G.T)
    assert np.allclose(np.diag(G), 1.0) and G.min() >= 0 and (G < 0.999).mean() > 0.5
