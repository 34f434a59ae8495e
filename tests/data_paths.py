"""What the tests need and where they find it: the bundled samples, the project's ../shared
and the optional extras; one rule for all: what is absent skips the test, and fails it
under CI=true when CI is meant to have it."""

import importlib
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ROOT / "spacy_convkernels" / "data"  # the bundled samples
SHARED = Path(os.environ.get("SPACY_CONVKERNELS_SHARED", ROOT.parent / "shared"))

# the test being run (set by conftest.py before its fixtures), so that need_shared can
# check that a test which reads ../shared carries the ``shared`` marker
current_test = None


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def skip_unless_ci(message: str, ci_reason: str, *, module_level: bool = False):
    """Skip with ``message``; under CI=true fail instead, saying ``ci_reason`` (why CI has it)."""
    if in_ci():
        pytest.fail(f"{message}; {ci_reason}", pytrace=False)
    pytest.skip(message, allow_module_level=module_level)


def need_shared(relative: str) -> Path:
    """A path under ../shared; skips the test when it is absent, fails it under CI=true.

    A test that calls it must be marked ``shared`` (``pytest -m "not shared"`` leaves it
    out); one that is not fails here, whether the data are there or not."""
    if current_test is not None and current_test.get_closest_marker("shared") is None:
        pytest.fail(f"{current_test.nodeid} reads ../shared ({relative}) but is not marked shared", pytrace=False)
    path = SHARED / relative
    if not path.exists():
        skip_unless_ci(f"{path} is absent (the shared data of the project)", "CI=true requires it")
    return path


def require_extra(module: str, extra: str | None, *, module_level: bool = False):
    """Import and return ``module`` of an optional extra of pyproject.toml (``extra``; None
    for a package in no extra); skip the test (or the module) when it is absent. Under
    CI=true, which installs the ``dev`` extra, a missing module of an extra fails."""
    try:
        return importlib.import_module(module)
    except ImportError:
        if extra is None:
            pytest.skip(f"{module} is not installed (in no extra of the package)", allow_module_level=module_level)
        skip_unless_ci(
            f"{module} is not installed (the {extra} extra)",
            "CI=true installs it with the dev extra (pip install -e '.[dev]')",
            module_level=module_level,
        )
