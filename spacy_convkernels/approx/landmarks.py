"""Landmark selection for the Nyström approximation, over a "kernel columns + diagonal" interface.

Every method reads the kernel only through a :class:`KernelColumns` source: its diagonal
K(x_i, x_i) and chosen columns K(X, x_j) (or a block of their rows). :class:`StructureColumns`
computes them with a kernel of the package (what :class:`~.nystroem.Nystroem` does);
:class:`GramColumns` slices a precomputed Gram matrix (what a benchmark may do). The same
selection code runs on both, and gives the same landmarks for the same kernel values.

- ``uniform``: ``n_components`` indices without replacement (scikit-learn's choice).
- ``kmeans++``: kernel k-means++ seeding (Arthur & Vassilvitskii 2007, "k-means++: the
  advantages of careful seeding", SODA): each next landmark drawn with probability
  proportional to its squared feature-space distance to the nearest landmark.
- ``pivoted_cholesky``: greedy incomplete Cholesky (Fine & Scheinberg 2001, "Efficient SVM
  training using low-rank kernel representations", JMLR; Bach & Jordan 2005): each step
  takes the structure of largest residual self-similarity diag(K - K~), K~ the Nyström
  approximation of the landmarks so far; the diagonal and one column per pick.
- ``ridge_leverage``: recursive ridge-leverage-score sampling (Musco & Musco 2017,
  "Recursive Sampling for the Nyström Method", NeurIPS, Algorithm 3 for a fixed sample
  size); see :func:`ridge_leverage_landmarks` for its regularization.

Every method is deterministic for a given ``random_state`` (a ``RandomState`` or a seed).
"""

import math
from collections.abc import Sequence

import numpy as np
from scipy.linalg import eigh
from sklearn.utils import check_random_state
from tqdm import tqdm

from ..errors import InvalidParameterError
from ..kernels.base import inverse_roots
from ..utils.validation import Options, validate_params

#: Pivoted Cholesky treats a structure whose residual self-similarity is at most this
#: share of its own self-similarity as lying in the span of the landmarks (exactly, up to
#: rounding: a duplicate of one), and never takes it as a pivot.
RESIDUAL_RTOL = 1e-8


class KernelColumns:
    """What landmark selection reads of a kernel over ``n`` structures: ``diagonal()``,
    K(x_i, x_i) for every i, and ``columns(indices, rows=None)``, the block
    K(x_r, x_j) for r in ``rows`` (every structure when None) and j in ``indices``, of shape
    (len(rows), len(indices)). Subclasses implement ``_diagonal`` and ``columns``."""

    def __init__(self, n: int):
        self.n = n
        self._diag: np.ndarray | None = None

    def __len__(self) -> int:
        return self.n

    def diagonal(self) -> np.ndarray:
        """K(x_i, x_i) of every structure (computed once)."""
        diag = self._diag
        if diag is None:
            diag = self._diag = np.asarray(self._diagonal(), dtype=np.float64)
        return diag

    def _diagonal(self) -> np.ndarray:
        raise NotImplementedError

    def columns(self, indices, rows=None) -> np.ndarray:
        raise NotImplementedError


class GramColumns(KernelColumns):
    """A precomputed (n, n) Gram matrix as a :class:`KernelColumns` source."""

    def __init__(self, gram: np.ndarray):
        gram = np.asarray(gram, dtype=np.float64)
        if gram.ndim != 2 or gram.shape[0] != gram.shape[1]:
            raise InvalidParameterError(f"GramColumns needs a square matrix, got shape {gram.shape}")
        super().__init__(gram.shape[0])
        self.gram = gram

    def _diagonal(self) -> np.ndarray:
        return np.diag(self.gram).copy()

    def columns(self, indices, rows=None) -> np.ndarray:
        indices = np.asarray(indices, dtype=np.intp)
        if rows is None:
            return self.gram[:, indices]
        return self.gram[np.ix_(np.asarray(rows, dtype=np.intp), indices)]


class StructureColumns(KernelColumns):
    """The kernel values of ``kernel`` over the structures ``X`` (normalized or not), computed
    on demand, one engine call per block of columns, parallel over its rows. The
    self-kernels are computed once; normalized blocks are K(x, y) / sqrt(K(x, x) K(y, y)) as
    the kernel's own (0 where a self-kernel is 0)."""

    def __init__(self, kernel, X: Sequence, *, normalize: bool = True, n_jobs=None):
        super().__init__(len(X))
        self.kernel, self.X, self.normalize, self.n_jobs = kernel, list(X), normalize, n_jobs
        self._everything = None
        self._self_kernels: np.ndarray | None = None

    def self_kernels(self) -> np.ndarray:
        """The unnormalized K(x_i, x_i)."""
        self_kernels = self._self_kernels
        if self_kernels is None:
            self_kernels = np.asarray(self.kernel.diag(self.X, n_jobs=self.n_jobs), dtype=np.float64)
            self._self_kernels = self_kernels
        return self_kernels

    def _diagonal(self) -> np.ndarray:
        self_k = self.self_kernels()
        return (self_k > 0).astype(np.float64) if self.normalize else self_k

    def columns(self, indices, rows=None) -> np.ndarray:
        indices = np.asarray(indices, dtype=np.intp)
        landmarks = [self.X[j] for j in indices]
        if rows is None:
            if self._everything is None:
                self._everything = self.kernel.prepare(self.X)
            block = self.kernel.gram(self._everything, landmarks, normalize=False, n_jobs=self.n_jobs)
            rows = slice(None)
        else:
            rows = np.asarray(rows, dtype=np.intp)
            block = self.kernel.gram([self.X[i] for i in rows], landmarks, normalize=False, n_jobs=self.n_jobs)
        if self.normalize:
            inverse = inverse_roots(self.self_kernels())
            block = block * inverse[rows][:, None] * inverse[indices][None, :]
        return block


def uniform_landmarks(source: KernelColumns, n_components: int, random_state=None, *, verbose=False) -> np.ndarray:
    """``n_components`` distinct indices drawn uniformly (the first of a random permutation,
    as scikit-learn's ``Nystroem``); reads no kernel value."""
    rng = check_random_state(random_state)
    return rng.permutation(len(source))[:n_components]


def kmeans_plus_plus_landmarks(
    source: KernelColumns, n_components: int, random_state=None, *, verbose: bool = False
) -> np.ndarray:
    """Kernel k-means++ seeding (Arthur & Vassilvitskii 2007): the first landmark uniform,
    each next one drawn with probability proportional to D(x)^2 = min over landmarks c of
    K(x, x) + K(c, c) - 2 K(x, c); n * M kernel values. When every structure coincides with
    a landmark (D = 0), the rest are drawn uniformly."""
    rng = check_random_state(random_state)
    n = len(source)
    diag = source.diagonal()
    chosen = [int(rng.randint(n))]
    distance = np.full(n, np.inf)
    for _ in tqdm(range(n_components - 1), desc="k-means++ landmarks", disable=not verbose):
        c = chosen[-1]
        column = source.columns([c])[:, 0]
        distance = np.minimum(distance, np.maximum(diag + diag[c] - 2 * column, 0.0))
        distance[chosen] = 0.0
        total = distance.sum()
        if total <= 0:
            return _fill_uniformly(chosen, n, n_components, rng)
        chosen.append(int(rng.choice(n, p=distance / total)))
    return np.asarray(chosen)


def pivoted_cholesky_landmarks(
    source: KernelColumns,
    n_components: int,
    random_state=None,
    *,
    verbose: bool = False,
    return_factor: bool = False,
):
    """Greedy pivoted (incomplete) Cholesky (Fine & Scheinberg 2001): with residual
    d = diag(K - F F^T), each step takes the pivot i of largest d_i, computes its column
    K(X, x_i) and appends f = (K(X, x_i) - F F_i^T) / sqrt(d_i) to F, so that F F^T is the
    Nyström approximation K_{:,S} K_{S,S}^+ K_{S,:} of the pivots S; d -= f^2.

    The diagonal and one kernel column per pick (n * M kernel values), O(n M^2) arithmetic.
    The rule bounds the largest residual, not their sum: it takes the structures least like
    any landmark so far (rare ones) first, and keeps less held-out kernel mass than uniform
    landmarks in every TREC run (M up to 4,000) and on GE candidates up to M = 2,000
    (docs/results/nystroem_landmarks.md).
    Ties (exactly equal residuals, as every self-similarity of a normalized kernel at the
    start) go to the structure first in a random order drawn from ``random_state``, so the
    choice is deterministic for a given ``random_state`` and not tied to the order of X.
    A structure whose residual is at most ``RESIDUAL_RTOL`` of its self-similarity lies in
    the span of the pivots (a duplicate of one, up to rounding) and is never taken; when
    every structure does, the rest of the landmarks are drawn uniformly among the others
    (they add nothing to K~; the normalization gives them no weight).

    Returns the indices, and with ``return_factor`` also F (shape (n, number of pivots))."""
    rng = check_random_state(random_state)
    n = len(source)
    diag = source.diagonal()
    residual = np.where(diag > 0, diag, 0.0)
    floor = RESIDUAL_RTOL * np.abs(diag)
    rank = np.empty(n, dtype=np.intp)
    rank[rng.permutation(n)] = np.arange(n)
    factor = np.zeros((n_components, n))  # row k: the k-th column of F, contiguous
    chosen = []
    for k in tqdm(range(n_components), desc="pivoted Cholesky landmarks", disable=not verbose):
        eligible = residual > floor
        if not eligible.any():
            break
        best = residual[eligible].max()
        ties = np.flatnonzero(eligible & (residual == best))
        i = int(ties[np.argmin(rank[ties])])
        column = source.columns([i])[:, 0]
        f = (column - factor[:k, i] @ factor[:k]) / math.sqrt(residual[i])
        factor[k] = f
        residual -= f * f
        np.maximum(residual, 0.0, out=residual)
        residual[i] = 0.0
        chosen.append(i)
    pivots = len(chosen)
    indices = _fill_uniformly(chosen, n, n_components, rng) if pivots < n_components else np.asarray(chosen)
    return (indices, factor[:pivots].T) if return_factor else indices


def ridge_leverage_landmarks(
    source: KernelColumns, n_components: int, random_state=None, *, verbose: bool = False
) -> np.ndarray:
    """Recursive ridge-leverage-score sampling (Musco & Musco 2017, Algorithm 3, as in the
    authors' ``recursiveNystrom.m``), for s = ``n_components`` landmarks.

    The structures are put in a random order; level sizes halve from n down to about s
    (log2(n / s) levels), the smallest level's structures are the first sample (uniform,
    weights 1). At each larger level, with the current weighted sample S (weights w), the
    lambda-ridge leverage score of each structure x of the level is estimated as

        tau_x = (K(x, x) - k_S(x)^T (K_SS + lambda W^-2)^(-1) k_S(x)) / lambda,

    and the regularization is the paper's choice for a fixed sample size: with
    k = ceil(s / (4 ln s)), lambda = (sum of the eigenvalues of W K_SS W beyond its k
    largest) / k, the tail mass at rank k, at which the effective dimension is O(k) and
    sampling by min(1, ln(s) tau) keeps about s structures. Intermediate levels keep each
    structure independently with probability p = min(1, ln(s) tau), weight p^(-1/2); the
    top level (all n) draws exactly s without replacement, with probability proportional
    to min(1, tau). lambda is kept at least 1e-5 times the mean self-similarity of the level
    (the reference code's 1e-5 for kernels near 1), its value when the sample has at most k
    structures. 2 n s kernel values in expectation, O(n s^2) arithmetic."""
    rng = check_random_state(random_state)
    n, s = len(source), n_components
    if s >= n:
        return rng.permutation(n)
    oversample = max(math.log(s), 1.0)
    k = max(1, math.ceil(s / (4 * oversample)))
    levels = max(math.ceil(math.log2(n / s)), 1)
    order = rng.permutation(n)
    sizes = [n]
    for _ in range(levels):
        sizes.append(math.ceil(sizes[-1] / 2))
    diag = source.diagonal()
    sample = np.arange(sizes[-1])  # positions in ``order``
    weights = np.ones(len(sample))
    for level in tqdm(range(levels - 1, -1, -1), desc="ridge leverage levels", disable=not verbose):
        current = order[: sizes[level]]
        block = source.columns(order[sample], rows=current)  # K(level, sample)
        weighted = block * weights
        inner = weighted[sample] * weights[:, None]  # W K_SS W
        inner = (inner + inner.T) / 2
        eigenvalues, eigenvectors = eigh(inner)
        floor = 1e-5 * max(float(np.mean(diag[current])), np.finfo(float).tiny)
        lam = floor
        if k < len(sample):
            top = np.sort(np.abs(eigenvalues))[-k:]
            lam = max((float(np.trace(inner)) - float(top.sum())) / k, floor)
        projected = weighted @ eigenvectors
        quadratic = np.sum(projected**2 / (np.maximum(eigenvalues, 0.0) + lam), axis=1)
        scores = np.maximum(diag[current] - quadratic, 0.0) / lam
        if level > 0:
            p = np.minimum(1.0, oversample * scores)
            sample = np.flatnonzero(rng.random_sample(len(current)) < p)
            if len(sample) == 0:  # improbable: no structure kept; a uniform sample instead
                p = np.full(len(current), min(1.0, s / len(current)))
                sample = np.sort(rng.choice(len(current), min(s, len(current)), replace=False))
            weights = 1.0 / np.sqrt(p[sample])
        else:
            p = np.minimum(1.0, scores)
            positive = np.flatnonzero(p > 0)
            if len(positive) >= s:
                sample = rng.choice(len(current), s, replace=False, p=p / p.sum())
            else:  # fewer structures outside the sample's span than s: those, then uniform
                rest = np.setdiff1d(np.arange(len(current)), positive)
                sample = np.concatenate([rng.permutation(positive), rng.permutation(rest)[: s - len(positive)]])
    return order[sample]


def _fill_uniformly(chosen: list, n: int, n_components: int, rng) -> np.ndarray:
    """``chosen``, then indices drawn uniformly among the others up to ``n_components``."""
    rest = np.setdiff1d(np.arange(n), chosen)
    return np.concatenate([np.asarray(chosen, dtype=np.intp), rng.permutation(rest)[: n_components - len(chosen)]])


LANDMARK_METHODS = {
    "uniform": uniform_landmarks,
    "kmeans++": kmeans_plus_plus_landmarks,
    "pivoted_cholesky": pivoted_cholesky_landmarks,
    "ridge_leverage": ridge_leverage_landmarks,
}


@validate_params({"method": [Options(*LANDMARK_METHODS)]}, owner="landmark selection")
def select_landmarks(
    source: KernelColumns, n_components: int, method: str, random_state=None, *, verbose: bool = False
) -> np.ndarray:
    """The indices of ``n_components`` landmarks (at most ``len(source)``) chosen by ``method``,
    one of ``LANDMARK_METHODS``."""
    n_components = min(int(n_components), len(source))
    return np.asarray(
        LANDMARK_METHODS[method](source, n_components, check_random_state(random_state), verbose=verbose),
        dtype=np.intp,
    )
