import os
from pathlib import Path

import data_paths
import pytest
from data_paths import need_shared
from hypothesis import settings
from threadpoolctl import threadpool_limits

# CI draws the same examples on every run (hypothesis' derandomize), so a red CI is
# reproducible; local runs keep exploring new examples.
settings.register_profile("ci", derandomize=True)
if data_paths.in_ci():
    settings.load_profile("ci")


if os.environ.get("SPACY_CONVKERNELS_TOP_DOWN") == "1":  # every pair of trees evaluated top-down
    from spacy_convkernels.kernels._tree_kernels import set_stored_pairs

    set_stored_pairs(0)

# the fixtures that read ../shared: a test that uses one, even through another fixture, is
# marked ``shared`` here; a test that calls need_shared itself carries the marker in its file
SHARED_FIXTURES = ("qc_dir", "md_model")
# the fixtures that make a test slow: a test that uses one is marked ``slow`` here
SLOW_FIXTURES = ("dask_client",)  # a two-worker Dask LocalCluster (test_distributed.py)
# pytest-xdist's --dist loadscope hands out whole test files in collection order, a batch
# to each worker before any has run: the longest files (by CPU time in a full run, 20 to
# 300 s on 2 cores) go first, so that no worker is left alone with a long file at the end
LONGEST_FILES = (
    "test_doc_examples.py",
    "test_reference_kernels.py",
    "test_debug_data.py",
    "test_smoothed_kernels.py",
    "test_engine_limits.py",
    "test_transformer_pipelines.py",
    "test_saved_models.py",
    "test_standoff.py",
    "test_relation_extractor.py",
    "test_cli_outputs.py",
    "test_klsh.py",
    "test_kernel_textcat.py",
    "test_relation_configs.py",
)


def pytest_configure(config):
    """Each pytest-xdist worker computes on its share of the cores (OpenMP, BLAS, and the
    commands it starts, through OMP_NUM_THREADS), as scikit-learn's own conftest does: two
    workers of two threads on two cores made every parallel region wait for a descheduled
    thread, 50 ms for a Gram of 30 small trees instead of 2."""
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if workers is not None:
        share = max((os.cpu_count() or 1) // int(workers), 1)
        threadpool_limits(share)
        os.environ["OMP_NUM_THREADS"] = str(share)


@pytest.fixture
def qc_dir() -> Path:
    return need_shared("data/trec-qc-kelp")


@pytest.fixture(scope="session")
def md_model() -> Path:
    """The folder of en_core_web_md 3.8.0 in ../shared."""
    return need_shared("models/en_core_web_md-3.8.0")


def pytest_collection_modifyitems(items):
    rank = {name: position for position, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest keep their order
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if any(name in fixtures for name in SHARED_FIXTURES):
            item.add_marker(pytest.mark.shared)
        if any(name in fixtures for name in SLOW_FIXTURES):
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """Before the test's fixtures: tell need_shared which test asks (it checks the marker)."""
    data_paths.current_test = item


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item):
    data_paths.current_test = None
