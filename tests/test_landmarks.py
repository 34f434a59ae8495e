"""Landmark selection (approx/landmarks.py): every method, on kernel columns or a precomputed Gram."""

import math

import numpy as np
import pytest
from data_paths import CORPORA

from spacy_convkernels.approx import Nystroem
from spacy_convkernels.approx.landmarks import (
    LANDMARK_METHODS,
    GramColumns,
    StructureColumns,
    pivoted_cholesky_landmarks,
    ridge_leverage_landmarks,
    select_landmarks,
)
from spacy_convkernels.corpora import read_klp
from spacy_convkernels.kernels import InvalidParameterError, PartialTreeKernel

SAMPLE = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"
METHODS = tuple(LANDMARK_METHODS)
RANDOMIZED = ("uniform", "kmeans++", "ridge_leverage")


@pytest.fixture(scope="module")
def trees():
    """The 60 GRCT trees of the sample, with duplicates removed (59 distinct)."""
    found = {}
    for example in read_klp(SAMPLE):
        found.setdefault(str(example.trees["grct"]), example.trees["grct"])
    return list(found.values())


@pytest.fixture(scope="module")
def kernel():
    return PartialTreeKernel(0.4, mu=0.4, terminal_factor=5)  # positive definite on distinct GRCT trees


@pytest.fixture(scope="module")
def gram(kernel, trees):
    return kernel.gram(trees)


# pivoted Cholesky ------------------------------------------------------------------------


@pytest.mark.slow
def test_pivoted_cholesky_with_every_structure_reproduces_the_gram(kernel, trees, gram):
    n = len(trees)
    assert np.linalg.eigvalsh(gram)[0] > 1e-4  # a full-rank Gram: no pivot is skipped
    indices, factor = pivoted_cholesky_landmarks(GramColumns(gram), n, 0, return_factor=True)
    assert sorted(indices) == list(range(n)) and factor.shape == (n, n)
    np.testing.assert_allclose(factor @ factor.T, gram, rtol=0, atol=1e-10)
    Z = Nystroem(kernel, n_components=n, landmark_init="pivoted_cholesky", random_state=0).fit_transform(trees)
    np.testing.assert_allclose(Z @ Z.T, gram, rtol=0, atol=1e-10)


def test_pivoted_cholesky_takes_the_largest_residual(gram):
    """Each pivot is the structure of largest diag(K - K~) for the pivots before it,
    K~ = K[:, S] K[S, S]^-1 K[S, :], recomputed from scratch."""
    indices, factor = pivoted_cholesky_landmarks(GramColumns(gram), 12, 3, return_factor=True)
    for k in range(1, 12):
        S = indices[:k]
        residual = np.diag(gram) - np.einsum("ij,jk,ik->i", gram[:, S], np.linalg.inv(gram[np.ix_(S, S)]), gram[:, S])
        assert residual[indices[k]] == pytest.approx(residual.max(), abs=1e-12)
    S = indices[:12]
    approx = gram[:, S] @ np.linalg.solve(gram[np.ix_(S, S)], gram[S])
    np.testing.assert_allclose(factor @ factor.T, approx, atol=1e-10)


def test_pivoted_cholesky_breaks_ties_by_random_state():
    """A normalized kernel's diagonal is all ties: the first pivot follows random_state,
    and duplicates of a pivot (residual 0) are never taken while others remain."""
    rng = np.random.RandomState(0)
    points = rng.normal(size=(30, 40))
    points /= np.linalg.norm(points, axis=1, keepdims=True)
    points = np.concatenate([points, points[:5]])  # five duplicates
    source = GramColumns(points @ points.T)
    first = {int(pivoted_cholesky_landmarks(source, 1, seed)[0]) for seed in range(10)}
    assert len(first) > 3
    chosen = pivoted_cholesky_landmarks(source, 30, 1)
    assert len(set(chosen)) == 30 and len({i % 30 for i in chosen}) == 30  # no duplicate of a pivot
    full = pivoted_cholesky_landmarks(source, 35, 1)  # rank 30: the last 5 are drawn among the rest
    np.testing.assert_array_equal(full[:30], chosen)
    assert sorted(full) == list(range(35))


# ridge leverage scores --------------------------------------------------------------------


def reference_recursive_rls(K: np.ndarray, s: int, rng) -> np.ndarray:
    """Algorithm 3 of Musco & Musco (2017) written plainly from the authors' MATLAB code
    (recursiveNystrom.m): explicit inverse, levels from the smallest up."""
    n = K.shape[0]
    oversamp = max(math.log(s), 1.0)
    k = max(1, math.ceil(s / (4 * oversamp)))
    n_levels = max(math.ceil(math.log(n / s) / math.log(2)), 1)
    perm = rng.permutation(n)
    l_size = [n]
    for _ in range(n_levels):
        l_size.append(math.ceil(l_size[-1] / 2))
    samp = np.arange(l_size[-1])
    r_ind = perm[samp]
    weights = np.ones(len(r_ind))
    k_diag = np.diag(K)
    for level in range(n_levels - 1, -1, -1):
        r_ind_curr = perm[: l_size[level]]
        KS = K[np.ix_(r_ind_curr, r_ind)]
        SKS = KS[samp]
        floor = 1e-5 * np.mean(k_diag[r_ind_curr])
        if k >= len(samp):
            lam = floor
        else:
            weighted = np.diag(weights) @ SKS @ np.diag(weights)
            top = np.sort(np.abs(np.linalg.eigvalsh(weighted)))[::-1][:k]
            lam = max((np.sum(np.diag(SKS) * weights**2) - np.sum(top)) / k, floor)
        R = np.linalg.inv(SKS + np.diag(lam * weights ** (-2.0)))
        levs = np.maximum(0, k_diag[r_ind_curr] - np.sum((KS @ R) * KS, axis=1)) / lam
        if level != 0:
            levs = np.minimum(1, oversamp * levs)
            samp = np.flatnonzero(rng.random_sample(l_size[level]) < levs)
            weights = np.sqrt(1.0 / levs[samp])
        else:
            levs = np.minimum(1, levs)
            samp = rng.choice(n, s, replace=False, p=levs / levs.sum())
        r_ind = perm[samp]
    return r_ind


def rbf_gram(n: int, seed: int) -> np.ndarray:
    points = np.random.RandomState(seed).normal(size=(n, 5))
    squared = np.sum((points[:, None] - points[None]) ** 2, axis=2)
    return np.exp(-squared / 4)


@pytest.mark.parametrize("n, s", [(400, 40), (300, 100), (150, 90)])
def test_ridge_leverage_matches_a_plain_numpy_reference(n, s):
    K = rbf_gram(n, seed=n)
    for seed in range(3):
        ours = ridge_leverage_landmarks(GramColumns(K), s, np.random.RandomState(seed))
        theirs = reference_recursive_rls(K, s, np.random.RandomState(seed))
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.slow
@pytest.mark.parametrize("n_outliers, s", [(6, 12), (4, 20), (6, 30)])
def test_ridge_leverage_picks_outliers_as_often_as_exact_scores_would(n_outliers, s):
    """300 points in a tight cluster and outliers each alone in its own direction. At the
    paper's lambda (the tail of K's spectrum beyond k = ceil(s / (4 ln s)), over k) an
    outlier's exact ridge leverage is some 50 times a cluster point's; drawing s landmarks
    by the exact scores takes a share of the outliers that the recursive estimates should
    match (uniform: s / n)."""
    rng = np.random.RandomState(0)
    points = np.zeros((300 + n_outliers, 4 + n_outliers))
    points[:300, 0] = 1
    points[:300, 1:4] = 0.05 * rng.normal(size=(300, 3))
    points[300 + np.arange(n_outliers), 4 + np.arange(n_outliers)] = 1
    K = points @ points.T
    k = math.ceil(s / (4 * math.log(s)))
    lam = np.sort(np.linalg.eigvalsh(K))[:-k].sum() / k
    tau = np.diag(K @ np.linalg.inv(K + lam * np.eye(len(K))))
    assert tau[300:].min() > 15 * tau[:300].max() and tau[300:].min() > 40 * tau[:300].mean()
    p = np.minimum(1, tau) / np.minimum(1, tau).sum()

    def outliers_taken(chosen):
        return np.sum(chosen >= 300) / n_outliers

    expected = np.mean([outliers_taken(rng.choice(len(K), s, replace=False, p=p)) for _ in range(2000)])
    found = {
        method: np.mean([outliers_taken(select_landmarks(GramColumns(K), s, method, seed)) for seed in range(40)])
        for method in ("ridge_leverage", "uniform")
    }
    assert found["ridge_leverage"] == pytest.approx(expected, abs=0.08)
    assert found["uniform"] < found["ridge_leverage"] / 5


# every method -------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("method", METHODS)
def test_landmarks_are_deterministic_under_random_state(method, kernel, trees):
    def chosen(seed):
        return Nystroem(kernel, n_components=15, landmark_init=method, random_state=seed).fit(trees).component_indices_

    first = chosen(4)
    assert len(set(first)) == 15
    np.testing.assert_array_equal(first, chosen(4))
    np.testing.assert_array_equal(first, chosen(np.random.RandomState(4)))
    if method in RANDOMIZED:
        assert any(not np.array_equal(first, chosen(seed)) for seed in (5, 6))


@pytest.mark.slow
@pytest.mark.parametrize("method", METHODS)
def test_kernel_and_precomputed_gram_choose_the_same_landmarks(method, kernel, trees, gram):
    """The estimator's kernel columns and a precomputed Gram drive the same code."""
    for seed in range(3):
        from_kernel = select_landmarks(StructureColumns(kernel, trees), 20, method, seed)
        from_gram = select_landmarks(GramColumns(gram), 20, method, seed)
        np.testing.assert_array_equal(from_kernel, from_gram)


def test_kernel_columns_are_the_gram(kernel, trees, gram):
    source = StructureColumns(kernel, trees)
    np.testing.assert_array_equal(source.diagonal(), np.ones(len(trees)))
    np.testing.assert_allclose(source.columns([3, 0, 7]), gram[:, [3, 0, 7]], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(source.columns([5], rows=[9, 2]), gram[np.ix_([9, 2], [5])], rtol=1e-13)
    raw = StructureColumns(kernel, trees, normalize=False)
    np.testing.assert_allclose(raw.columns([1, 2]), kernel.gram(trees, trees[1:3], normalize=False), rtol=1e-13)
    np.testing.assert_allclose(raw.diagonal(), kernel.diag(trees), rtol=1e-13)


@pytest.mark.parametrize("method", METHODS)
def test_every_method_fits_structures_that_repeat(method, kernel, trees):
    """Duplicated structures (a singular landmark Gram) never fail: one feature per kept
    eigenvalue, at most the 12 distinct structures."""
    X = trees[:12] * 3
    for n_components in (12, 20, 36):
        model = Nystroem(kernel, n_components=n_components, landmark_init=method, random_state=0).fit(X)
        Z = model.transform(X)
        distinct = len({str(t) for t in model.components_})
        assert Z.shape == (36, model.n_features_out_) and 1 <= model.n_features_out_ <= distinct
        assert np.all(np.isfinite(Z))
        if method == "pivoted_cholesky":  # 12 distinct structures span everything: exact
            np.testing.assert_allclose(Z @ Z.T, kernel.gram(X), atol=1e-9)


def test_bad_method_and_gram():
    with pytest.raises(InvalidParameterError, match="landmark selection: method must be one of"):
        select_landmarks(GramColumns(np.eye(3)), 2, "greedy")
    with pytest.raises(InvalidParameterError, match="square"):
        GramColumns(np.ones((3, 2)))
