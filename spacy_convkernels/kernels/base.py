"""The kernel API shared by every kernel of the package.

A kernel compares two structures. Subclasses say how a list of structures is prepared
for the compiled engine (``_prepare``) and how the engine computes raw values
(``_block`` for a Gram block, ``_pairs`` for chosen pairs); this class adds
normalization, self-kernel reuse, thread counts and input checks, in the manner of
GraKeL's ``Kernel`` and scikit-learn's estimators (the constructor only stores
parameters; ``get_params``/``set_params``/``clone`` work).
"""
import os
from typing import Sequence

import numpy as np
from sklearn.base import BaseEstimator

from ..errors import ConvKernelsError


class StructureTypeError(ConvKernelsError, TypeError):
    """A kernel was given something that is not the structure type it compares."""


class InvalidParameterError(ConvKernelsError, ValueError):
    """A kernel parameter is out of its range."""


def n_threads(n_jobs) -> int:
    """Threads for ``n_jobs``: None or -1 = every core, k > 0 = k, -k = cores + 1 - k (as joblib)."""
    cores = os.cpu_count() or 1
    if n_jobs is None:
        return cores
    if not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise InvalidParameterError(f"n_jobs must be None or a non-zero integer, got {n_jobs!r}")
    return int(n_jobs) if n_jobs > 0 else max(1, cores + 1 + int(n_jobs))


class Kernel(BaseEstimator):
    """Base class: ``kernel(a, b)``, ``kernel.gram(X, Y)``, ``kernel.diag(X)``, ``kernel.pairs(X, pairs)``."""

    structure_type: type = object

    def __call__(self, a, b, normalize: bool = True) -> float:
        """K(a, b), normalized by default."""
        return float(self.pairs([a, b], [(0, 1)], normalize=normalize, n_jobs=1)[0])

    def gram(self, X: Sequence, Y: Sequence = None, normalize: bool = True, n_jobs=None) -> np.ndarray:
        """The Gram matrix K[i, j] = K(X[i], Y[j]) (Y = X when None), float64.

        Each self-kernel needed for normalization is computed once per structure; with
        ``Y=None`` only the upper triangle is computed.
        """
        threads = n_threads(n_jobs)
        A = self._prepare(X)
        B = A if Y is None else self._prepare(Y)
        self_a = self_b = None
        if normalize:
            self_a = self._self_kernels(A, threads)
            self_b = self_a if Y is None else self._self_kernels(B, threads)
        return self._block(A, B, Y is None, threads, self_a, self_b)

    def diag(self, X: Sequence, n_jobs=None) -> np.ndarray:
        """Unnormalized self-kernels K(x, x)."""
        return self._self_kernels(self._prepare(X), n_threads(n_jobs))

    def pairs(self, X: Sequence, index_pairs, normalize: bool = True, n_jobs=None) -> np.ndarray:
        """K(X[i], X[j]) for each (i, j) in ``index_pairs``; self-kernels once per structure used."""
        threads = n_threads(n_jobs)
        index = np.ascontiguousarray(np.asarray(index_pairs, dtype=np.int64).reshape(-1, 2))
        if index.size and (index.min() < 0 or index.max() >= len(X)):
            raise IndexError(f"index_pairs refer to structures outside 0..{len(X) - 1}")
        A = self._prepare(X)
        self_k = None
        if normalize:
            used = np.zeros(len(X), dtype=bool)
            used[index.ravel()] = True
            used = np.flatnonzero(used)
            self_k = np.zeros(len(X))
            self_k[used] = self._pairs(A, A, np.repeat(used, 2).reshape(-1, 2), threads)
        return self._pairs(A, A, index, threads, self_k, self_k)

    def _self_kernels(self, prepared, threads: int) -> np.ndarray:
        every = np.repeat(np.arange(len(prepared), dtype=np.int64), 2).reshape(-1, 2)
        return self._pairs(prepared, prepared, every, threads)

    def _check_structures(self, X: Sequence) -> list:
        X = list(X)
        for k, x in enumerate(X):
            if not isinstance(x, self.structure_type):
                raise StructureTypeError(
                    f"{type(self).__name__} compares {self.structure_type.__name__} objects; "
                    f"item {k} is {type(x).__name__}"
                )
        return X

    # subclass hooks
    def _prepare(self, X: Sequence):
        raise NotImplementedError

    def _block(self, A, B, symmetric: bool, threads: int, self_a=None, self_b=None) -> np.ndarray:
        """The block K(A[i], B[j]) (A is B when ``symmetric``), divided by
        sqrt(self_a[i] self_b[j]) (0 where that is 0) when self-kernels are given."""
        raise NotImplementedError

    def _pairs(self, A, B, index: np.ndarray, threads: int, self_a=None, self_b=None) -> np.ndarray:
        """K(A[i], B[j]) for the rows (i, j) of ``index``, divided by sqrt(self_a[i] self_b[j])
        (0 where that is 0) when self-kernels are given."""
        raise NotImplementedError
