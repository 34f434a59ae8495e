"""Kernel k-nearest neighbours, exact or through KLSH hash buckets.

Exact search (``method="exact"``) compares a query with every training structure. KLSH
search (``method="klsh"``; Kulis & Grauman 2009; Garg et al. 2018) compares it with the
M references only to get its code, then with the training structures whose codes lie
within a small Hamming distance of it ("probing" the neighbouring buckets, the distance
growing until there are enough candidates): about N*M + bucket work kernel evaluations
for a k-NN graph instead of N(N-1)/2.

Neighbours are the structures of highest normalized kernel value, ties broken by the
lower training index. :meth:`KernelKNeighborsClassifier.kneighbors` gives them as
scikit-learn does, by ascending kernel distance d(a, b) = sqrt(max(0, 2 - 2 K(a, b))), the
distance of a and b in the kernel's feature space when K is normalized.

Kernel rows are computed a block of queries at a time and only their k best kept, so a
search or an exact k-NN graph holds O(N k) values plus one block, never an N x N Gram. The
exact classifier does not use ``KNeighborsClassifier(metric="precomputed")``: its ``fit``
wants the square N x N distance matrix of the training set, N(N-1)/2 kernel evaluations
that k-NN never needs (14.9 million for the 5,452 TREC questions, against 2.7 million to
classify 500 of them).
"""

from collections.abc import Sequence

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import unique_labels
from sklearn.utils.validation import check_is_fitted

from ..approx.klsh import KLSH, KLSH_PARAMETERS, hamming_distances, klsh_parameters
from ..kernels.base import KERNEL, Kernel, Prepared
from ..utils.inputs import structure_list, structure_tags, training_set
from ..utils.row_blocks import row_blocks, symmetric_blocks
from ..utils.validation import COUNT, Options, check_parameters, validate_params

METHODS = ("exact", "klsh")


class NeighborSearch:
    """Top-k search among ``structures`` under ``kernel``, exact or through KLSH buckets
    (see the module). Searching changes nothing: each search returns the kernel values it
    computed.

    Parameters
    ----------
    kernel : Kernel
        A kernel of the package.
    structures : sequence
        The structures searched.
    method : {"exact", "klsh"}, default="exact"
        ``"klsh"`` fits a :class:`~spacy_convkernels.approx.KLSH` on ``structures`` (with
        ``n_references``, ``n_bits``, ``subset_size``, ``hash_function``, ``random_state``)
        and searches the buckets of the query's code.
    n_references, n_bits, subset_size, hash_function
        The KLSH codes of ``method="klsh"``.
    probes : int, default=1
        ``"klsh"`` also looks in the buckets within this many bits.
    random_state : int, RandomState instance or None, default=None
        Seeds the KLSH codes.
    n_jobs : int or None, default=None
        Threads of the kernel computations, as :meth:`Kernel.gram`.
    verbose : bool, default=False
        Show progress bars (tqdm, on stderr).

    Attributes
    ----------
    klsh : KLSH or None
        The fitted codes (``"klsh"``).
    codes : ndarray of shape (n_structures, ceil(n_bits / 8))
        The structures' packed codes (``"klsh"``).
    n_kernel_evaluations : int
        Kernel values computed to build the search: the KLSH fit and the structures'
        codes (``"klsh"``), none (``"exact"``).
    """

    @validate_params({"kernel": [KERNEL], "method": [Options(*METHODS)]})
    def __init__(
        self,
        kernel: Kernel,
        structures: Sequence,
        *,
        method: str = "exact",
        n_references: int = 100,
        n_bits: int = 15,
        subset_size: int = 20,
        hash_function: str = "random_knn",
        probes: int = 1,
        random_state: int | np.random.RandomState | None = None,
        n_jobs: int | None = None,
        verbose: bool = False,
    ):
        self.kernel = kernel
        self.structures = list(structures)
        self.probes = probes
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.klsh: KLSH | None = None
        self._prepared: Prepared | None = None  # the structures indexed for exact searches, by the first of them
        self.n_kernel_evaluations = 0
        if method == "klsh":
            self.klsh = KLSH(
                kernel,
                n_references=n_references,
                n_bits=n_bits,
                subset_size=subset_size,
                hash_function=hash_function,
                packed=True,  # buckets and Hamming distances on packed codes
                random_state=random_state,
                n_jobs=n_jobs,
                verbose=verbose,
            ).fit(self.structures)
            self.codes = self.klsh.transform(self.structures)
            self.n_kernel_evaluations = self.klsh.n_kernel_evaluations_ + len(self.structures) * len(
                self.klsh.references_
            )
            self.bucket_codes, self.bucket_of = np.unique(self.codes, axis=0, return_inverse=True)
            self.bucket_of = self.bucket_of.reshape(-1)
            self.members = [np.flatnonzero(self.bucket_of == b) for b in range(len(self.bucket_codes))]

    def __getstate__(self):
        """Pickled without the engine-ready structures, which the next exact search rebuilds."""
        return {**self.__dict__, "_prepared": None}

    def kneighbors(self, queries: list, n_neighbors: int) -> tuple[np.ndarray, np.ndarray, int]:
        """(similarities, indices, kernel evaluations); similarities and indices are
        (len(queries), n_neighbors), best first; missing neighbours are -1 (similarity -inf)."""
        if self.klsh is None:
            k = min(n_neighbors, len(self.structures))
            similarities, indices = np.empty((len(queries), k)), np.empty((len(queries), k), dtype=np.int64)
            if self._prepared is None:
                self._prepared = self.kernel.prepare(self.structures)
            for start, stop in row_blocks(len(queries), self.verbose, "k-NN search"):
                K = self.kernel.gram(queries[start:stop], self._prepared, n_jobs=self.n_jobs)
                similarities[start:stop], indices[start:stop] = _top(K, k)
            return similarities, indices, len(queries) * len(self.structures)
        codes = self.klsh.transform(queries)
        return self._hashed(queries, codes, n_neighbors, len(queries) * len(self.klsh.references_))

    def graph(self, n_neighbors: int) -> tuple[np.ndarray, np.ndarray, int]:
        """The neighbours of every structure among the others, as :meth:`kneighbors`: exact,
        from the upper triangle of the Gram (n(n-1)/2 evaluations) by row blocks, keeping
        the k best of each row; hashed, from the codes already made."""
        if self.klsh is not None:
            return self._hashed(None, self.codes, n_neighbors, 0)
        X, n = self.structures, len(self.structures)
        k = min(n_neighbors, n)
        # The k best of each row among the columns seen so far, best first: a block's new
        # columns always come after those, so position order is index order on ties.
        best = np.full((n, k), -np.inf)
        best_index = np.full((n, k), -1, dtype=np.int64)
        for start, stop, diagonal, right in symmetric_blocks(
            self.kernel, X, n_jobs=self.n_jobs, verbose=self.verbose, desc="k-NN graph"
        ):
            np.fill_diagonal(diagonal, -np.inf)
            rows = np.hstack([best[start:stop], diagonal, right])  # columns start..n-1 after the kept ones
            position = _top_positions(rows, k)
            best_index[start:stop] = np.where(
                position < k,
                np.take_along_axis(best_index[start:stop], np.minimum(position, k - 1), axis=1),
                position - k + start,
            )
            best[start:stop] = np.take_along_axis(rows, position, axis=1)
            below = np.hstack([best[stop:], right.T])  # the rows after the block gain columns start..stop-1
            position = _top_positions(below, k)
            best_index[stop:] = np.where(
                position < k,
                np.take_along_axis(best_index[stop:], np.minimum(position, k - 1), axis=1),
                position - k + start,
            )
            best[stop:] = np.take_along_axis(below, position, axis=1)
        return best, np.where(np.isfinite(best), best_index, -1), n * (n - 1) // 2

    def _hashed(self, queries: list | None, codes: np.ndarray, n_neighbors: int, evaluations: int):
        """Top-k among the candidates of each code; ``queries`` None: the structures
        themselves, each excluded from its own candidates."""
        candidates = [self._candidates(code, n_neighbors + (queries is None)) for code in codes]
        if queries is None:
            candidates = [c[c != q] for q, c in enumerate(candidates)]
            pool, offset = self.structures, 0
        else:
            pool, offset = queries + self.structures, len(queries)
        index = np.array([(q, offset + c) for q, cs in enumerate(candidates) for c in cs], dtype=np.int64)
        values = self.kernel.pairs(pool, index, n_jobs=self.n_jobs) if len(index) else np.zeros(0)
        similarities = np.full((len(codes), n_neighbors), -np.inf)
        indices = np.full((len(codes), n_neighbors), -1)
        start = 0
        for q, cs in enumerate(candidates):
            row = values[start : start + len(cs)]
            order = np.argsort(-row, kind="stable")[:n_neighbors]
            similarities[q, : len(order)] = row[order]
            indices[q, : len(order)] = cs[order]
            start += len(cs)
        return similarities, indices, evaluations + len(index)

    def _candidates(self, code: np.ndarray, wanted: int) -> np.ndarray:
        """Training structures in the buckets within ``probes`` bits of ``code``, more if
        fewer than ``wanted``."""
        assert self.klsh is not None  # buckets come with the KLSH index
        distances = hamming_distances(self.bucket_codes, code)
        radius = self.probes
        while True:
            chosen = np.flatnonzero(distances <= radius)
            found = np.concatenate([self.members[b] for b in chosen]) if len(chosen) else np.zeros(0, np.int64)
            if len(found) >= wanted or radius >= self.klsh.n_bits:
                return np.sort(found)
            radius += 1


def _top_positions(K: np.ndarray, k: int) -> np.ndarray:
    """The columns of the k largest values of each row, largest first, ties by lower column
    (as a stable descending sort), in O(columns) per row: a partition finds the k-th value,
    every larger value is kept, and the equal ones of lowest column fill up."""
    if K.shape[1] <= k:
        return np.argsort(-K, axis=1, kind="stable")
    threshold = -np.partition(-K, k - 1, axis=1)[:, k - 1 : k]
    above = K > threshold
    tied = K == threshold
    keep = above | (tied & (np.cumsum(tied, axis=1) <= k - above.sum(axis=1, keepdims=True)))
    columns = np.nonzero(keep)[1].reshape(len(K), k)  # ascending per row
    order = np.argsort(-np.take_along_axis(K, columns, axis=1), axis=1, kind="stable")
    return np.take_along_axis(columns, order, axis=1)


def _top(K: np.ndarray, k: int):
    """(values, columns) of the k best of each row (see :func:`_top_positions`); columns of
    non-finite values are -1."""
    columns = _top_positions(K, k)
    values = np.take_along_axis(K, columns, axis=1)
    return values, np.where(np.isfinite(values), columns, -1)


def kernel_knn_graph(
    kernel: Kernel,
    X: Sequence,
    n_neighbors: int,
    *,
    method: str = "exact",
    n_references: int = 100,
    n_bits: int = 15,
    subset_size: int = 20,
    hash_function: str = "random_knn",
    probes: int = 1,
    random_state: int | np.random.RandomState | None = None,
    n_jobs: int | None = None,
    verbose: bool = False,
) -> tuple[np.ndarray, np.ndarray, int]:
    """The k-NN graph of ``X`` (each structure's neighbours among the others):
    (similarities, indices, kernel evaluations), best first, missing neighbours -1. With
    ``method="klsh"`` it is approximated through the buckets of KLSH codes fitted on ``X``
    (the other parameters as :class:`NeighborSearch`; the evaluations count the fit);
    exact, it takes O(N k) memory plus one block of rows, and shows a progress bar when
    ``verbose``."""
    search = NeighborSearch(
        kernel,
        X,
        method=method,
        n_references=n_references,
        n_bits=n_bits,
        subset_size=subset_size,
        hash_function=hash_function,
        probes=probes,
        random_state=random_state,
        n_jobs=n_jobs,
        verbose=verbose,
    )
    similarities, indices, evaluations = search.graph(n_neighbors)
    return similarities, indices, search.n_kernel_evaluations + evaluations


def kernel_distances(similarities: np.ndarray) -> np.ndarray:
    """sqrt(max(0, 2 - 2 K)): the feature-space distance of a normalized kernel value;
    inf for a missing neighbour (K = -inf)."""
    return np.sqrt(np.maximum(2.0 - 2.0 * similarities, 0.0))


class KernelKNeighborsClassifier(ClassifierMixin, BaseEstimator):
    """k-NN classification with a structure kernel: the class most frequent among the
    ``n_neighbors`` training structures of highest normalized kernel value (ties: the
    lower training index first; equal votes: the first class).

    Parameters
    ----------
    kernel : Kernel
        A kernel of the package; its structures (trees, path tuples) are the input.
    n_neighbors : int, default=8
        Neighbours that vote.
    method : {"exact", "klsh"}, default="exact"
        ``"klsh"`` searches through KLSH buckets, with ``n_references``, ``n_bits``,
        ``subset_size`` and ``hash_function`` as :class:`~spacy_convkernels.approx.KLSH`.
    n_references : int, default=100
        M, the references of the KLSH codes (``"klsh"``).
    n_bits : int, default=15
        H, bits per code (``"klsh"``); 2^H buckets at most.
    subset_size : int, default=20
        alpha of the codes (``"klsh"``).
    hash_function : {"random_knn", "kulis_grauman"}, default="random_knn"
        Hash functions of the codes (``"klsh"``).
    probes : int, default=1
        ``"klsh"`` also looks in the buckets within this many bits.
    random_state : int, RandomState instance or None, default=None
        Seeds the KLSH codes.
    n_jobs : int or None, default=None
        Threads of the kernel computations, as :meth:`Kernel.gram`.
    verbose : bool, default=False
        Show progress bars (tqdm, on stderr) over the structures coded or searched.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    search_ : NeighborSearch
        The training structures (and their codes, ``"klsh"``).
    n_kernel_evaluations_ : int
        Kernel values between two structures computed by ``fit`` (the KLSH fit and the
        training codes, ``"klsh"``; none, ``"exact"``).
    """

    _parameter_constraints = {
        "kernel": [KERNEL],
        "n_neighbors": [COUNT],
        "method": [Options(*METHODS)],
        **KLSH_PARAMETERS,
    }

    def __init__(
        self,
        kernel: Kernel,
        *,
        n_neighbors: int = 8,
        method: str = "exact",
        n_references: int = 100,
        n_bits: int = 15,
        subset_size: int = 20,
        hash_function: str = "random_knn",
        probes: int = 1,
        random_state: int | np.random.RandomState | None = None,
        n_jobs: int | None = None,
        verbose: bool = False,
    ):
        self.kernel = kernel
        self.n_neighbors = n_neighbors
        self.method = method
        self.n_references = n_references
        self.n_bits = n_bits
        self.subset_size = subset_size
        self.hash_function = hash_function
        self.probes = probes
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def __sklearn_tags__(self):
        return structure_tags(super().__sklearn_tags__())

    def fit(self, X: Sequence, y):
        X, y = training_set(self, X, y, minimum=1)
        self.classes_ = unique_labels(y)
        self._y_index = np.searchsorted(self.classes_, y)
        self.search_ = NeighborSearch(
            self.kernel,
            X,
            method=self.method,
            **klsh_parameters(self),
            probes=self.probes,
            random_state=self.random_state,
            n_jobs=self.n_jobs,
            verbose=self.verbose,
        )
        self.n_kernel_evaluations_ = self.search_.n_kernel_evaluations
        return self

    def kneighbors(
        self, X: Sequence | None = None, n_neighbors: int | None = None, return_distance: bool = True
    ) -> tuple[np.ndarray, np.ndarray] | np.ndarray:
        """The training neighbours of each structure of ``X`` (None: of each training
        structure, itself excluded), as scikit-learn's: (distances, indices), nearest first,
        or the indices alone. Distances are kernel distances sqrt(max(0, 2 - 2 K)) of the
        normalized kernel K; a missing neighbour (too few candidates in the buckets) is
        index -1 at distance inf."""
        check_is_fitted(self, "search_")
        n_neighbors = self.n_neighbors if n_neighbors is None else n_neighbors
        check_parameters(type(self).__name__, {"n_neighbors": n_neighbors}, {"n_neighbors": [COUNT]})
        if X is None:
            similarities, indices, _ = self.search_.graph(n_neighbors)
        else:
            similarities, indices, _ = self.search_.kneighbors(structure_list(X, type(self).__name__), n_neighbors)
        return (kernel_distances(similarities), indices) if return_distance else indices

    def predict_proba(self, X: Sequence) -> np.ndarray:
        """The share of each class among the neighbours."""
        indices = self.kneighbors(X, return_distance=False)
        counts = np.zeros((len(indices), len(self.classes_)))
        for row, neighbours in enumerate(indices):
            found = neighbours[neighbours >= 0]
            np.add.at(counts[row], self._y_index[found], 1.0)
        totals = counts.sum(axis=1, keepdims=True)
        return np.divide(counts, totals, out=np.full_like(counts, 1.0 / len(self.classes_)), where=totals > 0)

    def predict(self, X: Sequence) -> np.ndarray:
        """The class most frequent among the neighbours (the first on equal votes)."""
        proba = self.predict_proba(X)
        return self.classes_[proba.argmax(axis=1)]
