"""Where the tests find their data: the bundled samples and the project's ../shared."""

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ROOT / "spacy_convkernels" / "data"  # the bundled samples
SHARED = Path(os.environ.get("SPACY_CONVKERNELS_SHARED", ROOT.parent / "shared"))


def need_shared(relative: str) -> Path:
    """A path under ../shared; skips the test when it is absent, fails it under CI=true."""
    path = SHARED / relative
    if not path.exists():
        message = f"{path} is absent (the shared data of the project)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message + "; CI=true requires it")
        pytest.skip(message)
    return path
