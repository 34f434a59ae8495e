"""SPTK and CSPTK: against plain-Python references with random similarity tables, and PTK."""

import numpy as np
import pytest
import reference_kernels as ref
from random_trees import ALPHABET, random_pairs
from smoothed_data import CASES, PAIRS, VECTORS, reference_sigma, sigma_key

from spacy_convkernels.kernels import (
    CompositionalSmoothedPartialTreeKernel,
    InvalidParameterError,
    PartialTreeKernel,
    SmoothedPartialTreeKernel,
)

CASE_IDS = ["sptk", "sptk-diluted", "sptk-exclusive", "csptk", "csptk-options", "csptk-dilution", "csptk-exclusive"]


@pytest.mark.parametrize("kernel, sigma", CASES, ids=CASE_IDS)
def test_the_reference_skips_only_node_pairs_sigma_makes_zero(kernel, sigma):
    """With match=sigma_key the reference sums fewer node pairs and gives the same values."""
    params = dict(lam=kernel.lam, mu=kernel.mu, terminal_factor=kernel.terminal_factor, threshold=kernel.threshold)
    small = [(a, b) for a, b in PAIRS[:80] if a.n_nodes + b.n_nodes < 100]
    pairs = small + [(a, a) for a, _ in small]
    assert len(small) >= 40
    matched = [ref.smoothed_partial_tree(x, y, sigma, **params, match=sigma_key) for x, y in pairs]
    every_pair = [ref.smoothed_partial_tree(x, y, sigma, **params) for x, y in pairs]
    assert matched == pytest.approx(every_pair, rel=1e-12, abs=1e-300)
    assert sum(v > 0 for v in matched) > len(small) // 2


@pytest.mark.slow
@pytest.mark.parametrize(
    "kernel, sigma",
    CASES,
    ids=CASE_IDS,
)
def test_compiled_equals_reference(kernel, sigma):
    params = dict(lam=kernel.lam, mu=kernel.mu, terminal_factor=kernel.terminal_factor, threshold=kernel.threshold)
    X = [t for pair in PAIRS for t in pair]
    index = [(2 * k, 2 * k + 1) for k in range(len(PAIRS))]
    values = np.array(
        [
            [ref.smoothed_partial_tree(x, y, sigma, **params, match=sigma_key) for x, y in ((a, b), (a, a), (b, b))]
            for a, b in PAIRS
        ]
    )
    assert np.count_nonzero(values[:, 0]) > 120
    np.testing.assert_allclose(kernel.pairs(X, index, normalize=False), values[:, 0], rtol=1e-9, atol=1e-12)
    normalized = np.array([ref.normalize(*row) for row in values])
    np.testing.assert_allclose(kernel.pairs(X, index), normalized, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(kernel.gram(X[:30], n_jobs=2), kernel.gram(X[:30], X[:30], n_jobs=1), rtol=1e-12)


def test_the_similarities_really_smooth():
    """Smoothing changes values where labels differ but are similar: the references are not trivial."""
    sigma = reference_sigma(compositional=True)
    assert 0 < sigma("LEX##dog::n", "LEX##cat::n") < 1
    assert sigma("LEX##run::v", "LEX##walk::v") == 1.0  # one row, KeLP's semantics
    assert reference_sigma(shared_rows="diluted")("LEX##run::v", "LEX##walk::v") == pytest.approx(2**-0.5)
    assert reference_sigma(shared_rows="exclusive")("LEX##run::v", "LEX##eat::v") == 0.0
    assert sigma("LEX##red::j", "LEX##blue::j") == 0.0  # negative cosine
    assert sigma("LEX##dog::n", "LEX##run::v") == 0.0  # different POS
    assert sigma("LEX##zzz::n", "LEX##dog::n") == 0.0  # no vector: exact match only
    assert sigma("COMP##root<*::*,run::v>", "COMP##root<*::*,walk::v>") == 1.0
    diluted = reference_sigma(compositional=True, shared_rows="diluted")
    assert 0 < diluted("COMP##root<*::*,run::v>", "COMP##root<*::*,walk::v>") < 1  # each keeps its own part
    assert (
        reference_sigma(compositional=True, shared_rows="exclusive")(
            "COMP##root<*::*,run::v>", "COMP##root<*::*,walk::v>"
        )
        == 0.0
    )  # "*" copies run / walk: nothing shared
    sptk, _ = CASES[0]
    ptk = PartialTreeKernel(0.4, mu=0.4, terminal_factor=0.2)
    X = [t for pair in PAIRS[:40] for t in pair]
    assert np.abs(sptk.gram(X) - ptk.gram(X)).max() > 0.05


@pytest.mark.slow
def test_identity_similarity_is_ptk():
    pairs = random_pairs(seed=5, n_pairs=150, labels=ALPHABET)
    X = [t for pair in pairs for t in pair]
    for lam, mu, tf in ((0.4, 0.4, 1.0), (0.9, 0.6, 5.0)):
        sptk = SmoothedPartialTreeKernel(lam, mu=mu, terminal_factor=tf)
        ptk = PartialTreeKernel(lam, mu=mu, terminal_factor=tf)
        np.testing.assert_allclose(sptk.gram(X, normalize=False), ptk.gram(X, normalize=False), rtol=1e-12)


def test_parameters_are_checked():
    tree = PAIRS[0][0]
    for kernel in (
        SmoothedPartialTreeKernel(threshold=-1, vectors=VECTORS),
        SmoothedPartialTreeKernel(vectors=VECTORS, shared_rows="sometimes"),
        SmoothedPartialTreeKernel(vectors=VECTORS, shared_rows="diluted", dilution=-0.5),
        CompositionalSmoothedPartialTreeKernel(vectors=VECTORS, alpha=float("nan")),
        SmoothedPartialTreeKernel(lam=0),
    ):
        with pytest.raises(InvalidParameterError):
            kernel.gram([tree])


def test_changing_parameters_rebuilds_the_table():
    kernel = SmoothedPartialTreeKernel(0.4, mu=0.4, terminal_factor=0.2, threshold=0.01, vectors=VECTORS)
    X = [t for pair in PAIRS[:20] for t in pair]
    before = kernel.gram(X)
    kernel.set_params(shared_rows="diluted")
    after = kernel.gram(X)
    fresh = SmoothedPartialTreeKernel(
        0.4, mu=0.4, terminal_factor=0.2, threshold=0.01, vectors=VECTORS, shared_rows="diluted"
    ).gram(X)
    np.testing.assert_allclose(after, fresh, rtol=1e-12)
    assert np.abs(before - after).max() > 0


def test_shared_row_rules_keep_the_kernel_positive_semidefinite():
    X = [t for pair in PAIRS[:60] for t in pair if t.n_nodes < 60]
    for shared_rows in ("kelp", "diluted", "exclusive"):
        for kernel in (
            SmoothedPartialTreeKernel(
                0.4, mu=0.4, terminal_factor=1.0, threshold=0.0, vectors=VECTORS, shared_rows=shared_rows
            ),
            CompositionalSmoothedPartialTreeKernel(
                0.4, mu=0.4, terminal_factor=1.0, threshold=0.0, vectors=VECTORS, lexical=True, shared_rows=shared_rows
            ),
        ):
            assert np.linalg.eigvalsh(kernel.gram(X)).min() > -1e-8, (kernel, shared_rows)


@pytest.mark.slow
def test_nonstationary_label_weights_equal_reference():
    weights = {"LEX##dog::n": 0.0, "POS##NN": 0.5, "COMP##root<*::*,run::v>": 2.0, "SYNT##nsubj": 0.0}
    sigma = reference_sigma(compositional=True)
    kernel = CompositionalSmoothedPartialTreeKernel(
        0.5, mu=0.4, terminal_factor=1.0, threshold=0.01, vectors=VECTORS, lexical=True, label_weights=weights
    )
    pairs_ = PAIRS[:80]
    X = [t for pair in pairs_ for t in pair]
    index = [(2 * k, 2 * k + 1) for k in range(len(pairs_))]
    expected = [ref.smoothed_partial_tree(a, b, sigma, 0.5, 0.4, 1.0, 0.01, label_weights=weights) for a, b in pairs_]
    np.testing.assert_allclose(kernel.pairs(X, index, normalize=False), expected, rtol=1e-9, atol=1e-12)
    plain = CompositionalSmoothedPartialTreeKernel(
        0.5, mu=0.4, terminal_factor=1.0, threshold=0.01, vectors=VECTORS, lexical=True
    )
    assert np.abs(plain.pairs(X, index, normalize=False) - expected).max() > 1e-3
