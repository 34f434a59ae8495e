"""The README's example runs and prints what the README says."""
import contextlib
import io
import os
import re

from conftest import ROOT


def test_readme_example_runs():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    code = re.search(r"## Example\s+```python\n(.*?)```", text, re.S).group(1)
    printed = io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(code, "README.md", "exec"), {})
    finally:
        os.chdir(cwd)
    claimed = re.findall(r"# (\d\.\d+)\.\.\.", code)
    values = [float(line) for line in printed.getvalue().split()]
    assert len(values) == len(claimed) == 3
    for value, claim in zip(values, claimed):
        assert abs(value - float(claim)) < 1e-4
