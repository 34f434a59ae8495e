"""Kernel k-nearest neighbours, exact or through KLSH hash buckets.

Exact search compares a query with every training structure. Hashed search (Kulis &
Grauman 2009; Garg et al. 2018) compares it with the M references only to get its code,
then with the training structures whose codes lie within a small Hamming distance of it
("probing" the neighbouring buckets, the distance growing until there are enough
candidates): about N*M + bucket work kernel evaluations for a k-NN graph instead of
N(N-1)/2.
Neighbours are the structures of highest kernel value; every search counts its kernel
evaluations in ``n_kernel_evaluations_``.
"""
from typing import Optional, Sequence, Tuple

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import unique_labels
from sklearn.utils.validation import check_is_fitted

from ..approx.klsh import KLSH, hamming_distances
from ..kernels.base import InvalidParameterError, Kernel


class NeighborSearch:
    """Top-k search among ``structures`` under ``kernel``, exact (``klsh=None``) or hashed."""

    def __init__(self, kernel: Kernel, structures: Sequence, klsh: Optional[KLSH] = None, probes: int = 1,
                 n_jobs=None):
        self.kernel = kernel
        self.structures = list(structures)
        self.klsh = klsh
        self.probes = probes
        self.n_jobs = n_jobs
        self.n_kernel_evaluations = 0
        if klsh is not None:
            self.codes = klsh.transform(self.structures)
            self.n_kernel_evaluations += len(self.structures) * len(klsh.references_)
            self.bucket_codes, self.bucket_of = np.unique(self.codes, axis=0, return_inverse=True)
            self.bucket_of = self.bucket_of.reshape(-1)
            self.members = [np.flatnonzero(self.bucket_of == b) for b in range(len(self.bucket_codes))]

    def kneighbors(self, queries: Sequence, n_neighbors: int) -> Tuple[np.ndarray, np.ndarray]:
        """(similarities, indices), each (len(queries), n_neighbors), best first; missing
        neighbours are -1."""
        queries = list(queries)
        if self.klsh is None:
            K = self.kernel.gram(queries, self.structures, n_jobs=self.n_jobs)
            self.n_kernel_evaluations += K.size
            return _top(K, n_neighbors)
        codes = self.klsh.transform(queries)
        self.n_kernel_evaluations += len(queries) * len(self.klsh.references_)
        return self._hashed(queries, codes, n_neighbors)

    def graph(self, n_neighbors: int) -> Tuple[np.ndarray, np.ndarray]:
        """The neighbours of every structure among the others, as :meth:`kneighbors`: exact,
        from one symmetric Gram (n(n-1)/2 evaluations); hashed, from the codes already made."""
        if self.klsh is None:
            K = self.kernel.gram(self.structures, n_jobs=self.n_jobs)
            self.n_kernel_evaluations += len(K) * (len(K) - 1) // 2
            np.fill_diagonal(K, -np.inf)
            return _top(K, n_neighbors)
        return self._hashed(None, self.codes, n_neighbors)

    def _hashed(self, queries: Optional[list], codes: np.ndarray, n_neighbors: int):
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
        self.n_kernel_evaluations += len(index)
        similarities = np.full((len(codes), n_neighbors), -np.inf)
        indices = np.full((len(codes), n_neighbors), -1)
        start = 0
        for q, cs in enumerate(candidates):
            row = values[start : start + len(cs)]
            order = np.argsort(-row, kind="stable")[:n_neighbors]
            similarities[q, : len(order)] = row[order]
            indices[q, : len(order)] = cs[order]
            start += len(cs)
        return similarities, indices

    def _candidates(self, code: np.ndarray, wanted: int) -> np.ndarray:
        """Training structures in the buckets within ``probes`` bits of ``code``, more if
        fewer than ``wanted``."""
        distances = hamming_distances(self.bucket_codes, code)
        radius = self.probes
        while True:
            chosen = np.flatnonzero(distances <= radius)
            found = np.concatenate([self.members[b] for b in chosen]) if len(chosen) else np.zeros(0, np.int64)
            if len(found) >= wanted or radius >= self.klsh.n_bits:
                return np.sort(found)
            radius += 1


def _top(K: np.ndarray, n_neighbors: int):
    k = min(n_neighbors, K.shape[1])
    indices = np.argsort(-K, axis=1, kind="stable")[:, :k]
    similarities = np.take_along_axis(K, indices, axis=1)
    indices = np.where(np.isfinite(similarities), indices, -1)
    return similarities, indices


def kernel_knn_graph(kernel: Kernel, X: Sequence, n_neighbors: int, klsh: Optional[KLSH] = None, probes: int = 1,
                     n_jobs=None):
    """The k-NN graph of ``X`` (each structure's neighbours among the others):
    (similarities, indices, kernel evaluations). With a fitted ``klsh`` it is
    approximated through hash buckets."""
    search = NeighborSearch(kernel, X, klsh, probes, n_jobs)
    similarities, indices = search.graph(n_neighbors)
    return similarities, indices, search.n_kernel_evaluations


def training_set(X: Sequence, y, minimum: int) -> Tuple[list, np.ndarray]:
    """X as a list and y as an array, after checking they agree and hold ``minimum`` structures."""
    X, y = list(X), np.asarray(y)
    if len(X) != len(y) or len(X) < minimum:
        raise InvalidParameterError(f"X and y must hold at least {minimum} structure(s) and agree, "
                                    f"got {len(X)} and {len(y)}")
    return X, y


class KernelKNeighborsClassifier(ClassifierMixin, BaseEstimator):
    """k-NN classification with a structure kernel: the class most frequent among the
    ``n_neighbors`` training structures of highest kernel value.

    ``method="hashed"`` searches through KLSH buckets (``n_references``, ``n_bits``,
    ``subset_size``, ``hash_function`` as :class:`~spacy_convkernels.approx.KLSH`; the
    neighbouring buckets within ``probes`` bits are searched too).
    """

    def __init__(self, kernel: Kernel, n_neighbors: int = 8, method: str = "exact", n_references: int = 100,
                 n_bits: int = 15, subset_size: int = 20, hash_function: str = "random_knn", probes: int = 1,
                 random_state=None, n_jobs=None):
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

    def fit(self, X: Sequence, y):
        if self.method not in ("exact", "hashed"):
            raise InvalidParameterError(f"method must be 'exact' or 'hashed', got {self.method!r}")
        if not isinstance(self.n_neighbors, (int, np.integer)) or self.n_neighbors < 1:
            raise InvalidParameterError(f"n_neighbors must be a positive integer, got {self.n_neighbors!r}")
        X, y = training_set(X, y, minimum=1)
        self.classes_ = unique_labels(y)
        self._y_index = np.searchsorted(self.classes_, y)
        klsh = None
        if self.method == "hashed":
            klsh = KLSH(self.kernel, self.n_references, self.n_bits, self.subset_size, self.hash_function,
                        self.random_state, self.n_jobs).fit(X)
        self.search_ = NeighborSearch(self.kernel, X, klsh, self.probes, self.n_jobs)
        return self

    @property
    def n_kernel_evaluations_(self) -> int:
        """Kernel values computed so far, in fitting and in every search."""
        return self.search_.n_kernel_evaluations

    def kneighbors(self, X: Sequence, n_neighbors: Optional[int] = None):
        """(similarities, indices) of the training neighbours of each structure, best first."""
        check_is_fitted(self, "search_")
        return self.search_.kneighbors(list(X), n_neighbors or self.n_neighbors)

    def predict_proba(self, X: Sequence) -> np.ndarray:
        """The share of each class among the neighbours."""
        _, indices = self.kneighbors(X)
        counts = np.zeros((len(indices), len(self.classes_)))
        for row, neighbours in enumerate(indices):
            found = neighbours[neighbours >= 0]
            np.add.at(counts[row], self._y_index[found], 1.0)
        totals = counts.sum(axis=1, keepdims=True)
        return np.divide(counts, totals, out=np.full_like(counts, 1.0 / len(self.classes_)), where=totals > 0)

    def predict(self, X: Sequence) -> np.ndarray:
        return self.classes_[self.predict_proba(X).argmax(axis=1)]
