import os
from pathlib import Path

import pytest
from data_paths import need_shared
from hypothesis import settings

# CI draws the same examples on every run (hypothesis' derandomize), so a red CI is
# reproducible; local runs keep exploring new examples.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI", "").lower() == "true":
    settings.load_profile("ci")


if os.environ.get("SPACY_CONVKERNELS_TOP_DOWN") == "1":  # every pair of trees evaluated top-down
    from spacy_convkernels.kernels._tree_kernels import set_stored_pairs

    set_stored_pairs(0)


@pytest.fixture
def qc_dir() -> Path:
    return need_shared("data/trec-qc-kelp")
