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
import threading
import warnings
from typing import Sequence

import numpy as np
from sklearn.base import BaseEstimator

from ..errors import ConvKernelsError, KernelUnderflowWarning
from . import _engine
from ._openmp import max_threads


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
    """Threads for ``n_jobs``, as scikit-learn counts them: None = the OpenMP limit in force
    (every core, unless ``OMP_NUM_THREADS``, a threadpoolctl limit or joblib's limit for its
    workers says fewer), k > 0 = k, -k = that limit + 1 - k; never more than the cores, as
    the work is compute-bound. A forked process (``nlp.pipe(n_process=...)``) computes on
    one thread: OpenMP cannot be used again after a fork, and the processes already share
    the cores."""
    cores = os.cpu_count() or 1
    if _forked:
        return 1
    if n_jobs is None:
        return min(max_threads(), cores)
    if not isinstance(n_jobs, (numbers.Integral, np.integer)) or isinstance(n_jobs, bool) or n_jobs == 0:
        raise InvalidParameterError(f"n_jobs must be None or a non-zero integer, got {n_jobs!r}")
    threads = int(n_jobs) if n_jobs > 0 else max_threads() + 1 + int(n_jobs)
    return min(max(threads, 1), cores)


def check_number(name: str, value, minimum: float = 0.0, inclusive: bool = False, maximum: float = math.inf) -> float:
    """``value`` as a float after checking it is a finite real number above ``minimum``
    (or equal to it, when ``inclusive``) and at most ``maximum``."""
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not math.isfinite(value):
        raise InvalidParameterError(f"{name} must be a finite number, got {value!r}")
    if value < minimum or (value == minimum and not inclusive):
        raise InvalidParameterError(f"{name} must be {'>=' if inclusive else '>'} {minimum}, got {value!r}")
    if value > maximum:
        raise InvalidParameterError(f"{name} must be <= {maximum}, got {value!r}")
    return float(value)


class Prepared:
    """Structures packed for the engine under one kernel configuration and one label
    table (:meth:`Kernel.prepare`); ``gram`` and ``pairs`` take it wherever they take
    structures and skip the packing, which pays when the same structures (landmarks, a
    reference set) meet many others. Immutable: ``structures`` is a tuple, and a kernel
    uses the packed form only when it was packed against that kernel's own table (by
    identity); any other kernel packs ``structures`` anew."""

    __slots__ = ("configuration", "tables", "structures", "packed")

    def __init__(self, configuration, tables, structures: tuple, packed):
        for name, value in zip(self.__slots__, (configuration, tables, tuple(structures), packed)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"Prepared is immutable: cannot set {name!r}")

    def __len__(self) -> int:
        return len(self.structures)

    def __reduce__(self):
        raise TypeError("a Prepared set is bound to the tables of a live kernel; pickle its structures instead")


class Kernel(BaseEstimator):
    """Base class: ``kernel(a, b)``, ``kernel.gram(X, Y)``, ``kernel.diag(X)``, ``kernel.pairs(X, pairs)``.

    A kernel object can be shared between threads: the label tables it hands the engine
    grow under a lock and are published as new objects that are never changed
    (:class:`~.node_similarity.SimilarityTable`), and each call packs its structures
    against one table and computes with a table that covers them."""

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
        tables = self._tables()
        X, A = self._resolve(X, tables)
        Y, B = (X, A) if Y is None else self._resolve(Y, tables)
        inv_a = inv_b = None
        if normalize:
            inv_a = self._inverse_norms(X, threads, tables, A)
            inv_b = inv_a if B is A else self._inverse_norms(Y, threads, tables, B)
        return self._block(A, B, B is A, threads, self._published(tables), inv_a, inv_b)

    def prepare(self, X: Sequence) -> Prepared:
        """``X`` packed for the engine once, for repeated ``gram`` and ``pairs`` calls."""
        tables = self._tables()
        X = self._check_structures(X)
        return Prepared(self._cache_key(), tables, X, self._pack(X, tables))

    def _resolve(self, X, tables):
        """(structures, packed form) of a sequence, or of a Prepared packed by this configuration
        against ``tables``."""
        if isinstance(X, Prepared) and X.tables is tables and X.configuration == self._cache_key():
            return list(X.structures), X.packed
        X = self._check_structures(X.structures if isinstance(X, Prepared) else X)
        return X, self._pack(X, tables)

    def diag(self, X: Sequence, n_jobs=None) -> np.ndarray:
        """Unnormalized self-kernels K(x, x)."""
        tables = self._tables()
        X, A = self._resolve(X, tables)
        return self._self_kernels(X, n_threads(n_jobs), tables, A)

    def pairs(self, X: Sequence, index_pairs, normalize: bool = True, n_jobs=None) -> np.ndarray:
        """K(X[i], X[j]) for each row (i, j) of ``index_pairs`` (``X`` may be Prepared)."""
        threads = n_threads(n_jobs)
        tables = self._tables()
        X, A = self._resolve(X, tables)
        index = _check_index_pairs(index_pairs, len(X))
        inv = None
        if normalize:
            used = np.zeros(len(X), dtype=bool)
            used[index.ravel()] = True
            inv = self._inverse_norms(X, threads, tables, A, used)
        return self._pairs(A, A, index, threads, self._published(tables), inv, inv)

    def _inverse_norms(self, X: list, threads: int, tables, packed, used=None) -> np.ndarray:
        """1 / sqrt(K(x, x)) (0 where K(x, x) = 0, or where ``used`` is False)."""
        self_k = self._self_kernels(X, threads, tables, packed, used)
        inv = np.zeros_like(self_k)
        np.divide(1.0, np.sqrt(self_k), out=inv, where=self_k > 0)
        return inv

    def _self_kernels(self, X: list, threads: int, tables, packed, used=None) -> np.ndarray:
        """K(x, x) for every x (0 where ``used`` is False), from the cache kept with each
        compiled structure when there, else computed from ``packed``, X's packed form.
        The cache is keyed by the configuration and the identity of its tables, so values
        computed against another table are never read."""
        key = (self._cache_key(), None if tables is None else tables.uid)
        used = np.ones(len(X), dtype=bool) if used is None else used
        values = np.array([self._self_kernel_cache(x).get(key, np.nan) if u else 0.0 for x, u in zip(X, used)])
        missing = np.flatnonzero(np.isnan(values))
        if len(missing):
            values[missing] = self._pairs(packed, packed, np.stack([missing, missing], axis=1), threads,
                                          self._published(tables))
            self._check_underflow(X, missing, values)
            for i in missing:
                self._self_kernel_cache(X[i])[key] = values[i]
        return values

    def _check_underflow(self, X: list, computed: np.ndarray, values: np.ndarray) -> None:
        """Warn when a non-empty structure's self-kernel is 0 or subnormal although no factor
        of the kernel is 0: the parameters make the values underflow, and normalized
        values would be 0 or meaningless."""
        if self._zero_is_possible():
            return
        tiny = np.finfo(np.float64).tiny
        small = [int(i) for i in computed if values[i] < tiny and X[i].compiled.labels.size > 0]
        if small:
            warnings.warn(
                f"{type(self).__name__}: K(x, x) underflows to {values[small[0]]!r} for structure {small[0]} "
                f"({len(small)} of {len(computed)}); raise lam or mu, or the normalized values are 0 or meaningless",
                KernelUnderflowWarning, stacklevel=4)

    def _zero_is_possible(self) -> bool:
        """Whether a factor of the kernel (a label weight, the terminal factor) is 0, which
        makes zero self-kernels legitimate."""
        weights = getattr(self, "label_weights", None) or getattr(self, "edge_weights", None) or {}
        return getattr(self, "terminal_factor", 1) == 0 or any(weight == 0 for weight in weights.values())

    def _cache_key(self):
        """Identifies the kernel configuration whose self-kernels a structure keeps."""
        return (type(self).__name__, tuple(sorted((name, _frozen(value)) for name, value in self.get_params().items())))

    def _tables(self):
        """The label tables of the current parameters (None for kernels without), made once
        and kept, not pickled; made anew when a parameter named in ``_table_params``
        changes, or the ``vectors`` object (by identity). Thread-safe: every thread gets
        the same object for the same parameters."""
        if not self._uses_tables():
            return None
        params = {name: _frozen(getattr(self, name)) for name in self._table_params}
        vectors = getattr(self, "vectors", None)
        cached = self.__dict__.get("_tables_cache")
        if cached is None or cached[0] != params or cached[1] is not vectors:
            with _tables_lock:
                cached = self.__dict__.get("_tables_cache")
                if cached is None or cached[0] != params or cached[1] is not vectors:
                    cached = self._tables_cache = (params, vectors, self._make_tables())
        return cached[2]

    def __getstate__(self):
        return {name: value for name, value in super().__getstate__().items() if name != "_tables_cache"}

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
    def _uses_tables(self) -> bool:
        """Whether the engine needs label tables for the current parameters."""
        return False

    def _make_tables(self):
        """New, empty label tables for the current parameters (with a ``uid`` and a ``current``
        published form)."""
        raise NotImplementedError

    def _published(self, tables):
        """What the engine reads of ``tables``: their latest published form (None without tables)."""
        return None if tables is None else tables.current

    def _self_kernel_cache(self, x) -> dict:
        """The dict in which structure ``x`` keeps its self-kernels."""
        raise NotImplementedError

    def _pack(self, X: list, tables):
        """The structures packed for the engine, their labels covered by ``tables``."""
        raise NotImplementedError

    def _block(self, A, B, symmetric: bool, threads: int, published, inv_a=None, inv_b=None) -> np.ndarray:
        """The block K(A[i], B[j]) (A is B when ``symmetric``), times inv_a[i] * inv_b[j]
        when those reciprocal square roots of the self-kernels are given."""
        raise NotImplementedError

    def _pairs(self, A, B, index: np.ndarray, threads: int, published, inv_a=None, inv_b=None) -> np.ndarray:
        """K(A[i], B[j]) for the rows (i, j) of ``index``, normalized as ``_block``."""
        raise NotImplementedError


_tables_lock = threading.Lock()


class CompiledKernel(Kernel):
    """A kernel computed by the compiled engine (``_engine``): subclasses give the engine's
    arguments, (kind, lam, mu, terminal_factor, node similarity table or None, tuple table
    or None), in ``_engine_args(published)``; structures keep their self-kernels with their
    compiled form."""

    def _engine_args(self, published) -> tuple:
        raise NotImplementedError

    def _self_kernel_cache(self, structure):
        return structure.compiled.self_kernels

    def _block(self, A, B, symmetric, threads, published, inv_a=None, inv_b=None):
        return _engine.gram(*self._engine_args(published), A, B, symmetric, inv_a, inv_b, threads)

    def _pairs(self, A, B, index, threads, published, inv_a=None, inv_b=None):
        return _engine.pairs(*self._engine_args(published), A, B, index, inv_a, inv_b, threads)


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
