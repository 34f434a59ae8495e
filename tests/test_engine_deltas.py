"""The engine's table of node-pair Deltas (``_driver.deltas``, what explain reads): it sums
to the kernel, equals the Deltas of the plain-Python references, and is refused past its size."""

import math

import numpy as np
import pytest
import reference_kernels as ref
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracles import ORACLES
from random_trees import ALPHABET, trees
from smoothed_data import CASES as SMOOTHED_CASES
from smoothed_data import LABELS as SMOOTH_LABELS
from smoothed_data import VECTORS

from spacy_convkernels import InvalidParameterError, Tree
from spacy_convkernels.kernels import (
    CompositionalSmoothedPartialTreeKernel,
    PartialTreeKernel,
    SmoothedPartialTreeKernel,
    SubsequencePathKernel,
    SubsetTreeKernel,
    SubtreeKernel,
    ZelenkoTreeKernel,
)
from spacy_convkernels.kernels._driver import DELTA_CELLS, deltas
from spacy_convkernels.kernels.base import _engine_settings
from spacy_convkernels.kernels.kinds import KIND_TRAITS
from spacy_convkernels.structures.paths import PathTuples

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


def engine_deltas(kernel, a, b) -> np.ndarray:
    spec, tables = kernel._configuration()
    packed = kernel._pack([a, b], spec, tables)
    return deltas(_engine_settings(spec, tables), packed, packed, 0, 1)


decay = st.floats(0.1, 1.2)
weights = st.none() | st.dictionaries(st.sampled_from(ALPHABET), st.sampled_from([0.0, 0.5, 2.0]), max_size=3)
smooth_weights = st.none() | st.dictionaries(st.sampled_from(SMOOTH_LABELS), st.sampled_from([0.0, 0.5]), max_size=3)
KERNELS = st.one_of(
    st.builds(SubtreeKernel, decay, variant=st.sampled_from(["textbook", "kelp"]), label_weights=weights),
    st.builds(SubsetTreeKernel, decay, label_weights=weights),
    st.builds(PartialTreeKernel, decay, mu=decay, terminal_factor=st.floats(0, 2), label_weights=weights),
    st.builds(SmoothedPartialTreeKernel, decay, mu=decay, terminal_factor=st.floats(0, 2), label_weights=weights),
)
SMOOTHED_KERNELS = st.one_of(
    st.builds(SmoothedPartialTreeKernel, decay, mu=decay, threshold=st.floats(0, 0.9), label_weights=smooth_weights),
    st.builds(
        CompositionalSmoothedPartialTreeKernel,
        decay,
        mu=decay,
        lexical=st.booleans(),
        syntactic_restriction=st.booleans(),
        label_weights=smooth_weights,
    ),
).map(lambda kernel: kernel.set_params(vectors=VECTORS))


def _sums_to_the_kernel(kernel, a, b):
    table = engine_deltas(kernel, a, b)
    assert table.shape == (a.n_nodes, b.n_nodes)
    raw = kernel(a, b, normalize=False)
    assert table.sum() == pytest.approx(raw, rel=1e-9, abs=1e-300)
    inverse = [0.0 if k == 0 else 1.0 / math.sqrt(k) for k in kernel.diag([a, b])]  # the kernel's r(x)
    normalized = table.sum() * inverse[0] * inverse[1]
    assert normalized == pytest.approx(kernel(a, b), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize(
    "kind", [k for k, traits in KIND_TRAITS.items() if traits.sums_of_deltas], ids=lambda kind: kind.name
)
def test_every_kind_that_sums_deltas_exports_them(kind):
    """Every such kind of the table, on its oracle's pairs (``oracles.py``)."""
    kernel, _, pairs = ORACLES[kind]
    for a, b in pairs[:12]:
        _sums_to_the_kernel(kernel, a, b)


@SETTINGS
@given(kernel=KERNELS, a=trees(ALPHABET), b=trees(ALPHABET))
@pytest.mark.slow
def test_the_deltas_sum_to_the_kernel(kernel, a, b):
    _sums_to_the_kernel(kernel, a, b)


@pytest.mark.slow
@SETTINGS
@given(kernel=SMOOTHED_KERNELS, a=trees(SMOOTH_LABELS), b=trees(SMOOTH_LABELS))
def test_the_smoothed_deltas_sum_to_the_kernel(kernel, a, b):
    _sums_to_the_kernel(kernel, a, b)


WEIGHTS = {"A##y": 0.0, "B##x": 0.5, "w": 1.5}
# each kernel with the reference's Delta for the same parameters
REFERENCE_DELTAS = [
    (SubtreeKernel(lam=0.7), ref.subtree_textbook_delta(0.7)),
    (SubtreeKernel(lam=0.4, variant="kelp", label_weights=WEIGHTS), ref.production_delta(0.4, 0.0, WEIGHTS)),
    (SubsetTreeKernel(lam=0.4), ref.production_delta(0.4, 1.0)),
    (SubsetTreeKernel(lam=1.0, label_weights=WEIGHTS), ref.production_delta(1.0, 1.0, WEIGHTS)),
    (
        PartialTreeKernel(lam=0.9, mu=0.7, terminal_factor=5.0),
        ref.smoothed_partial_delta(ref.content_sigma, 0.9, 0.7, 5.0, threshold=1.0),
    ),
    (
        PartialTreeKernel(lam=0.4, mu=0.4, label_weights=WEIGHTS),
        ref.smoothed_partial_delta(ref.content_sigma, 0.4, 0.4, 1.0, threshold=1.0, label_weights=WEIGHTS),
    ),
]
IDS = ["st-textbook", "st-kelp-weighted", "sst", "sst-lam1-weighted", "ptk-tf5", "ptk-weighted"]


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(a=trees(ALPHABET, max_leaves=14), b=trees(ALPHABET, max_leaves=14))
@pytest.mark.parametrize("kernel, reference", REFERENCE_DELTAS, ids=IDS)
def test_the_deltas_equal_the_reference(kernel, reference, a, b):
    expected = np.array(ref.delta_table(reference, a, b))
    np.testing.assert_allclose(engine_deltas(kernel, a, b), expected, rtol=1e-9, atol=1e-300)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(a=trees(SMOOTH_LABELS, max_leaves=14), b=trees(SMOOTH_LABELS, max_leaves=14))
@pytest.mark.parametrize("kernel, sigma", SMOOTHED_CASES[:1] + SMOOTHED_CASES[3:5], ids=["sptk", "csptk", "csptk-2"])
def test_the_smoothed_deltas_equal_the_reference(kernel, sigma, a, b):
    params = dict(lam=kernel.lam, mu=kernel.mu, terminal_factor=kernel.terminal_factor, threshold=kernel.threshold)
    expected = np.array(ref.delta_table(ref.smoothed_partial_delta(sigma, **params), a, b))
    np.testing.assert_allclose(engine_deltas(kernel, a, b), expected, rtol=1e-9, atol=1e-300)


def test_pairs_past_the_table_size_and_other_kinds_are_refused():
    a, b = Tree("r", [Tree("x")] * 2047), Tree("r", [Tree("x")] * 2048)  # 2048 and 2049 nodes
    assert a.n_nodes * a.n_nodes == DELTA_CELLS
    assert engine_deltas(PartialTreeKernel(), a, a).sum() == pytest.approx(PartialTreeKernel()(a, a, normalize=False))
    with pytest.raises(InvalidParameterError, match="Delta table of trees of 2048 and 2049 nodes"):
        engine_deltas(PartialTreeKernel(), a, b)
    with pytest.raises(InvalidParameterError, match="Delta table of trees of 2049 and 2048 nodes"):
        SubsetTreeKernel().explain(b, a)
    with pytest.raises(InvalidParameterError, match="not ZELENKO_TREE"):
        engine_deltas(ZelenkoTreeKernel(), Tree("x/y"), Tree("x/y"))
    with pytest.raises(InvalidParameterError, match="not SUBSEQUENCE_PATH"):
        engine_deltas(SubsequencePathKernel(), PathTuples([("", "b")]), PathTuples([("", "b")]))
