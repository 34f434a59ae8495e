"""The kernel API shared by every kernel of the package.

A kernel compares two structures. Subclasses say how a list of structures is prepared
for the compiled engine (``_prepare``) and how the engine computes raw values
(``_block`` for a Gram block, ``_pairs`` for chosen pairs); this class adds
normalization, self-kernel reuse, thread counts and input checks, in the manner of
GraKeL's ``Kernel`` and scikit-learn's estimators (the constructor only stores
parameters; ``get_params``/``set_params``/``clone`` work).

Normalization is K(a, b) / sqrt(K(a, a) K(b, b)), computed as K(a, b) * r(a) * r(b)
with r(x) = 1 / sqrt(K(x, x)) (0 when K(x, x) = 0), which neither overflows nor
underflows where the kernel values themselves do not. A self-kernel is computed once
per structure and kernel configuration and kept with the compiled structure, so later
calls reuse it.
"""
import math
import numbers
import os
from typing import Sequence

import numpy as np
from sklearn.base import BaseEstimator

from ..errors import ConvKernelsError
from . import _engine


class StructureTypeError(ConvKernelsError, TypeError):
    """A kernel was given something that is not the structure type it compares."""


class InvalidParameterError(ConvKernelsError, ValueError):
    """A kernel parameter or argument is out of its range."""


_forked = False


def _after_fork_in_child():
    global _forked
    _forked = True


os.register_at_fork(after_in_child=_after_fork_in_child)


def n_threads(n_jobs) -> int:
    """Threads for ``n_jobs``: None or -1 = every core, k > 0 = k, -k = cores + 1 - k (as
    joblib); never more than the cores, as the work is compute-bound. A forked process
    (``nlp.pipe(n_process=...)``) computes on one thread: OpenMP cannot be used again after
    a fork, and the processes already share the cores."""
    cores = 1 if _forked else (os.cpu_count() or 1)
    if n_jobs is None:
        return cores
    if not isinstance(n_jobs, (numbers.Integral, np.integer)) or isinstance(n_jobs, bool) or n_jobs == 0:
        raise InvalidParameterError(f"n_jobs must be None or a non-zero integer, got {n_jobs!r}")
    threads = int(n_jobs) if n_jobs > 0 else cores + 1 + int(n_jobs)
    return min(max(threads, 1), cores)


def check_number(name: str, value, minimum: float = 0.0, inclusive: bool = False) -> float:
    """``value`` as a float after checking it is a finite real number above ``minimum``."""
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not math.isfinite(value):
        raise InvalidParameterError(f"{name} must be a finite number, got {value!r}")
    if value < minimum or (value == minimum and not inclusive):
        raise InvalidParameterError(f"{name} must be {'>=' if inclusive else '>'} {minimum}, got {value!r}")
    return float(value)


class Prepared:
    """Structures made ready for the engine under one kernel configuration
    (:meth:`Kernel.prepare`); ``gram`` takes it wherever it takes structures and skips
    the preparation, which pays when the same structures (landmarks, a reference set)
    meet many others."""

    def __init__(self, configuration, structures: list, engine_data):
        self.configuration = configuration
        self.structures = structures
        self.engine_data = engine_data

    def __len__(self) -> int:
        return len(self.structures)


class Kernel(BaseEstimator):
    """Base class: ``kernel(a, b)``, ``kernel.gram(X, Y)``, ``kernel.diag(X)``, ``kernel.pairs(X, pairs)``."""

    structure_type: type = object
    _table_params: tuple = ()  # the parameters the engine tables depend on (besides vectors)

    def __call__(self, a, b, normalize: bool = True) -> float:
        """K(a, b), normalized by default."""
        return float(self.pairs([a, b], [(0, 1)], normalize=normalize, n_jobs=1)[0])

    def gram(self, X: Sequence, Y: Sequence = None, normalize: bool = True, n_jobs=None) -> np.ndarray:
        """The Gram matrix K[i, j] = K(X[i], Y[j]) (Y = X when None), float64.

        With ``Y=None`` only the upper triangle is computed.
        """
        threads = n_threads(n_jobs)
        X, A = self._resolve(X)
        if Y is None:
            inv = self._inverse_norms(X, threads, A) if normalize else None
            return self._block(A, A, True, threads, inv, inv)
        Y, B = self._resolve(Y)
        inv_a = inv_b = None
        if normalize:
            inv_a, inv_b = self._inverse_norms(X, threads, A), self._inverse_norms(Y, threads, B)
        return self._block(A, B, False, threads, inv_a, inv_b)

    def prepare(self, X: Sequence) -> Prepared:
        """``X`` made ready for the engine once, for repeated ``gram`` calls."""
        X = self._check_structures(X)
        return Prepared(self._cache_key(), X, self._prepare(X))

    def _resolve(self, X):
        """(structures, engine data) of a sequence or of a Prepared still valid for this configuration."""
        if isinstance(X, Prepared) and X.configuration == self._cache_key():
            return X.structures, X.engine_data
        X = self._check_structures(X.structures if isinstance(X, Prepared) else X)
        return X, self._prepare(X)

    def diag(self, X: Sequence, n_jobs=None) -> np.ndarray:
        """Unnormalized self-kernels K(x, x)."""
        return self._self_kernels(self._check_structures(X), n_threads(n_jobs))

    def pairs(self, X: Sequence, index_pairs, normalize: bool = True, n_jobs=None) -> np.ndarray:
        """K(X[i], X[j]) for each row (i, j) of ``index_pairs`` (``X`` may be Prepared)."""
        threads = n_threads(n_jobs)
        X, A = self._resolve(X)
        index = _check_index_pairs(index_pairs, len(X))
        inv = None
        if normalize:
            used = np.zeros(len(X), dtype=bool)
            used[index.ravel()] = True
            inv = self._inverse_norms(X, threads, A, used)
        return self._pairs(A, A, index, threads, inv, inv)

    def _inverse_norms(self, X: list, threads: int, prepared=None, used=None) -> np.ndarray:
        """1 / sqrt(K(x, x)) (0 where K(x, x) = 0, or where ``used`` is False)."""
        self_k = self._self_kernels(X, threads, prepared, used)
        inv = np.zeros_like(self_k)
        np.divide(1.0, np.sqrt(self_k), out=inv, where=self_k > 0)
        return inv

    def _self_kernels(self, X: list, threads: int, prepared=None, used=None) -> np.ndarray:
        """K(x, x) for every x (0 where ``used`` is False), from the cache kept with each
        compiled structure when there, else from ``prepared``, X's engine data, when given."""
        key = self._cache_key()
        used = np.ones(len(X), dtype=bool) if used is None else used
        values = np.array([self._self_kernel_cache(x).get(key, np.nan) if u else 0.0 for x, u in zip(X, used)])
        missing = np.flatnonzero(np.isnan(values))
        if len(missing):
            rows = missing
            if prepared is None:
                prepared, rows = self._prepare([X[i] for i in missing]), np.arange(len(missing))
            values[missing] = self._pairs(prepared, prepared, np.stack([rows, rows], axis=1), threads)
            for i in missing:
                self._self_kernel_cache(X[i])[key] = values[i]
        return values

    def _cache_key(self):
        """Identifies the kernel configuration whose self-kernels a structure keeps."""
        return (type(self).__name__, tuple(sorted((name, _frozen(value)) for name, value in self.get_params().items())))

    def _engine_table(self, build):
        """``build()`` made once and kept, not pickled: the tables a kernel hands the engine,
        rebuilt when one of the parameters named in ``_table_params`` changes, or the
        ``vectors`` object (by identity)."""
        params = {name: getattr(self, name) for name in self._table_params}
        vectors = getattr(self, "vectors", None)
        cached = self.__dict__.get("_engine_table_cache")
        if cached is None or cached[0] != params or cached[1] is not vectors:
            cached = self._engine_table_cache = (params, vectors, build())
        return cached[2]

    def __getstate__(self):
        return {name: value for name, value in super().__getstate__().items() if name != "_engine_table_cache"}

    def _check_structures(self, X: Sequence) -> list:
        if isinstance(X, (str, bytes)) or not hasattr(X, "__iter__"):
            raise StructureTypeError(f"{type(self).__name__} needs a sequence of structures, got {type(X).__name__}")
        X = list(X)
        for k, x in enumerate(X):
            if not isinstance(x, self.structure_type):
                raise StructureTypeError(
                    f"{type(self).__name__} compares {self.structure_type.__name__} objects; "
                    f"item {k} is {type(x).__name__}"
                )
        return X

    # subclass hooks
    def _self_kernel_cache(self, x) -> dict:
        """The dict in which structure ``x`` keeps its self-kernels."""
        raise NotImplementedError

    def _prepare(self, X: list):
        raise NotImplementedError

    def _block(self, A, B, symmetric: bool, threads: int, inv_a=None, inv_b=None) -> np.ndarray:
        """The block K(A[i], B[j]) (A is B when ``symmetric``), times inv_a[i] * inv_b[j]
        when those reciprocal square roots of the self-kernels are given."""
        raise NotImplementedError

    def _pairs(self, A, B, index: np.ndarray, threads: int, inv_a=None, inv_b=None) -> np.ndarray:
        """K(A[i], B[j]) for the rows (i, j) of ``index``, normalized as ``_block``."""
        raise NotImplementedError


class CompiledKernel(Kernel):
    """A kernel computed by the compiled engine (``_engine``): subclasses give the engine's
    arguments, (kind, lam, mu, terminal_factor, node similarity table or None, tuple table
    or None), in ``_engine_args``; structures keep their self-kernels with their compiled form."""

    def _engine_args(self) -> tuple:
        raise NotImplementedError

    def _self_kernel_cache(self, structure):
        return structure.compiled.self_kernels

    def _block(self, A, B, symmetric, threads, inv_a=None, inv_b=None):
        return _engine.gram(*self._engine_args(), A, B, symmetric, inv_a, inv_b, threads)

    def _pairs(self, A, B, index, threads, inv_a=None, inv_b=None):
        return _engine.pairs(*self._engine_args(), A, B, index, inv_a, inv_b, threads)


def _frozen(value):
    """A hashable stand-in for a parameter value (dicts and lists by content)."""
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple, set)):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.shape, value.tobytes())
    return value


def _check_index_pairs(index_pairs, n: int) -> np.ndarray:
    index = np.asarray(index_pairs)
    if index.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    if index.ndim != 2 or index.shape[1] != 2 or not np.issubdtype(index.dtype, np.integer):
        raise InvalidParameterError(f"index_pairs must be integer pairs of shape (n, 2), got shape {index.shape} "
                                    f"of {index.dtype}")
    if index.min() < 0 or index.max() >= n:
        raise InvalidParameterError(f"index_pairs refer to structures outside 0..{n - 1}")
    return np.ascontiguousarray(index, dtype=np.int64)
