"""The kernel API shared by every kernel of the package.

A kernel compares two structures. A kernel class states its parameters (constructor,
``_parameter_constraints``) and, in one method, ``_engine_spec``, what the compiled
engine needs for them: an :class:`EngineSpec`. This class does the rest, in the manner of
GraKeL's ``Kernel`` and scikit-learn's estimators (the constructor only stores
parameters; ``get_params``/``set_params``/``clone`` work): validation, label tables,
packing, normalization, self-kernel reuse, thread counts and input checks.

Normalization is K(a, b) / sqrt(K(a, a) K(b, b)), computed as K(a, b) * r(a) * r(b)
with r(x) = 1 / sqrt(K(x, x)) (0 when K(x, x) = 0), which neither overflows nor
underflows where the kernel values themselves do not. A self-kernel is computed once
per structure and kernel configuration and kept with the compiled structure, so later
calls reuse it.
"""

import os
import threading
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np
from sklearn.base import BaseEstimator
from tqdm.auto import tqdm

from ..errors import InvalidParameterError, KernelUnderflowWarning, SettingDeprecationWarning, StructureSizeError
from ..utils.inputs import check_structures
from ..utils.validation import Interval, Satisfies, validate_parameters, validate_params
from . import _driver
from ._index import FixedSet
from ._openmp import max_threads
from ._openmp import set_max_threads as set_max_threads  # for worker threads (components)
from ._packing import PackedSequences, PackedStructures, PackedTrees
from ._settings import EngineSettings
from ._tables import NodeSimilarity
from .kinds import KIND_TRAITS, Family
from .work import DEFAULT_MAX_WORK, reads_table, structure_work


def inverse_roots(self_kernels) -> np.ndarray:
    """r(x) = 1 / sqrt(K(x, x)) of each self-kernel, 0 where K(x, x) = 0: K(a, b) r(a) r(b)
    is the normalized value (module docstring), where K(a, b) / sqrt(K(a, a) K(b, b)) loses
    the product of two tiny self-kernels to underflow."""
    self_kernels = np.asarray(self_kernels, dtype=np.float64)
    inverse = np.zeros_like(self_kernels)
    np.divide(1.0, np.sqrt(self_kernels), out=inverse, where=self_kernels > 0)
    return inverse


class TableSpec(Protocol):
    """A frozen (hashable, comparable) description of a kernel's label tables."""

    def build(self) -> Any:
        """The label tables it describes (``cover_structures``, ``current``, ``uid``)."""
        ...

    def has_zero_weight(self) -> bool:
        """Whether a label weight is 0."""
        ...


@dataclass(frozen=True)
class EngineSpec:
    """What the engine needs of a kernel configuration.

    ``kind`` the recursion (a :class:`~.kinds.KernelKind`) and its numbers ``lam``, ``mu``,
    ``terminal_factor``; ``match_key`` how tree nodes are paired ("production",
    "content" or "label"; None for sequences); ``tables`` a frozen description of the
    label tables (:class:`~.node_similarity.SimilaritySpec`,
    :class:`~.tuple_kernels.TupleSpec`; None when labels match themselves with weight 1).
    Kernels whose ``tables`` are equal share their tables: the tables depend on exactly
    the parameters the description holds."""

    kind: int
    lam: float
    mu: float = 1.0
    terminal_factor: float = 1.0
    match_key: str | None = "label"
    tables: TableSpec | None = None

    def may_be_zero(self) -> bool:
        """Whether a factor (the terminal factor, a label weight) is 0, which makes zero
        self-kernels legitimate."""
        return self.terminal_factor == 0 or (self.tables is not None and self.tables.has_zero_weight())


INDEXED_GRAM_MIN = 400
"""From this many structures on, ``Kernel.gram(X)`` runs on an index of X made on the fly
(3 to 6 times faster at 2,000 TREC trees); below, pair by pair, which the index's fixed
cost outweighs (PTK and SST break even near 400 TREC trees, SPTK below 256)."""

_forked = False


def _after_fork_in_child():
    global _forked
    _forked = True


os.register_at_fork(after_in_child=_after_fork_in_child)


NON_ZERO = Satisfies(
    lambda value: Interval(None, None, integer=True).accepts(value) and value != 0, "a non-zero integer"
)


@validate_params({"n_jobs": [NON_ZERO, None]})
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
    threads = int(n_jobs) if n_jobs > 0 else max_threads() + 1 + int(n_jobs)
    return min(max(threads, 1), cores)


class Prepared:
    """Structures packed for the engine under one kernel configuration and one label
    table (:meth:`Kernel.prepare`); ``gram`` and ``pairs`` take it wherever they take
    structures and skip the packing, which pays when the same structures (landmarks, a
    reference set) meet many others. With an ``index`` (a :class:`~._index.FixedSet`),
    ``kernel.gram(X, prepared)`` computes each row of X against all of them at once.
    Immutable: ``structures`` is a tuple, and a kernel uses the packed form and the index
    only when they were made for its own configuration against its own table (by
    identity); any other kernel packs ``structures`` anew."""

    __slots__ = ("spec", "tables", "structures", "packed", "index")
    spec: EngineSpec
    tables: Any
    structures: tuple
    packed: PackedStructures
    index: FixedSet | None

    def __init__(
        self, spec: EngineSpec, tables, structures: Sequence, packed: PackedStructures, index: FixedSet | None = None
    ):
        for name, value in zip(self.__slots__, (spec, tables, tuple(structures), packed, index)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"Prepared is immutable: cannot set {name!r}")

    def __len__(self) -> int:
        return len(self.structures)

    def __reduce__(self):
        raise TypeError("a Prepared set is bound to the tables of a live kernel; pickle its structures instead")


class Kernel(BaseEstimator):
    """Base class: ``kernel(a, b)``, ``kernel.gram(X, Y)``, ``kernel.diag(X)``, ``kernel.pairs(X, pairs)``.

    A subclass sets ``structure_type`` and ``_parameter_constraints`` and implements
    ``_engine_spec``. A kernel object can be shared between threads: its label tables grow
    under a lock and are published as new objects that are never changed
    (:class:`~.node_similarity.SimilarityTable`), and each call packs its structures
    against one table and computes with a table that covers them.

    Every kernel's constructor takes ``max_work``, the most work one structure's K(t, t)
    may need (:mod:`~.work`; default 10**8, about a second of one core, None: no bound):
    a structure that needs more raises :class:`StructureSizeError` before any work, and
    so no pair of accepted structures needs more."""

    structure_type: type = object
    _parameter_constraints: dict = {}
    #: Every kernel's constructor takes ``max_work`` (this default, for instances pickled
    #: before it existed): structures whose K(t, t) needs more work than this
    #: (:mod:`~.work`: pairs of matching nodes weighted by their children, about a second
    #: at the default) are refused with :class:`StructureSizeError` before any work; by
    #: Cauchy-Schwarz no pair of accepted structures needs more either. None: no bound.
    max_work: int | None = DEFAULT_MAX_WORK

    @property
    def max_matching_pairs(self) -> int | None:
        """The bound's earlier name (it counted pairs of inner nodes): ``max_work`` (warns)."""
        _warn_renamed()
        return self.max_work

    @max_matching_pairs.setter
    def max_matching_pairs(self, value: int | None) -> None:
        _warn_renamed()
        self.max_work = value

    def _engine_spec(self) -> EngineSpec:
        """What the engine needs for the current parameters (already validated)."""
        raise NotImplementedError

    def __call__(self, a, b, normalize: bool = True) -> float:
        """K(a, b), normalized by default: K(a, b) / sqrt(K(a, a) K(b, b)), exactly 1 when a and b are equal."""
        ab = self.pairs([a, b], [(0, 1)], normalize=False, n_jobs=1)[0]
        if not normalize:
            return float(ab)
        aa, bb = self.diag([a, b], n_jobs=1)
        if aa == bb:
            return float(ab / aa) if aa > 0 else 0.0
        inverse_a, inverse_b = inverse_roots([aa, bb])
        return float(ab * inverse_a * inverse_b)

    def gram(
        self,
        X: Sequence | Prepared,
        Y: Sequence | Prepared | None = None,
        *,
        normalize: bool = True,
        n_jobs: int | None = None,
        progress: bool | Callable[[int], None] = False,
    ) -> np.ndarray:
        """The Gram matrix K[i, j] = K(X[i], Y[j]) (Y = X when None), float64.

        With ``Y=None`` only the upper triangle is computed, pair by pair, then mirrored;
        from :data:`INDEXED_GRAM_MIN` structures on, X is indexed on the fly instead and
        each row computed against all of X at once (the one-against-many engine: the same
        values up to rounding in the last bits, about 1e-15), the upper triangle mirrored
        onto the lower one; the diagonal of a normalized Gram is 1 either way. When ``Y``
        was prepared with an index (:meth:`prepare`), each row of X is computed against all
        of Y at once; so are paths unless Y was prepared without an index, Y indexed on the
        fly (a row's tuple similarities are computed once per distinct label of Y, through
        the postings of its features, not once per position pair).
        ``progress`` shows a tqdm bar of the rows done; a function is called instead with
        the number of rows of each block done (about every 0.1 s).
        """
        threads = n_threads(n_jobs)
        spec, tables = self._configuration()
        X, A = self._resolve(X, spec, tables)
        given = Y
        Y, B = (X, A) if Y is None else self._resolve(Y, spec, tables)
        inv_a = inv_b = None
        if normalize:
            inv_a = self._inverse_norms(X, A, spec, tables, threads)
            inv_b = inv_a if B is A else self._inverse_norms(Y, B, spec, tables, threads)
        index = given.index if isinstance(given, Prepared) and B is given.packed and B is not A else None
        indexed_gram = given is None and len(X) >= INDEXED_GRAM_MIN
        paths = KIND_TRAITS[spec.kind].family is Family.PATH
        if indexed_gram or (paths and not isinstance(given, Prepared)):
            index = FixedSet(_engine_settings(spec, tables), B)
        with tqdm(total=len(X), desc=f"{type(self).__name__} Gram", unit=" rows", disable=progress is not True) as bar:
            rows_done = progress if callable(progress) else bar.update if progress else None
            if index is not None:
                return _driver.gram_against(
                    _engine_settings(spec, tables),
                    A,
                    index,
                    symmetric=B is A,
                    inv_norm_a=inv_a,
                    inv_norm_b=inv_b,
                    n_threads=threads,
                    progress=rows_done,
                )
            return _driver.gram(
                _engine_settings(spec, tables),
                A,
                B,
                symmetric=B is A,
                inv_norm_a=inv_a,
                inv_norm_b=inv_b,
                n_threads=threads,
                progress=rows_done,
            )

    def pairs(
        self,
        X: Sequence | Prepared,
        index_pairs,
        *,
        normalize: bool = True,
        n_jobs: int | None = None,
        progress: bool = False,
    ) -> np.ndarray:
        """K(X[i], X[j]) for each row (i, j) of ``index_pairs`` (``X`` may be Prepared);
        ``progress`` shows a tqdm bar of the pairs done."""
        threads = n_threads(n_jobs)
        spec, tables = self._configuration()
        X, A = self._resolve(X, spec, tables)
        index = _check_index_pairs(index_pairs, len(X))
        inv = None
        if normalize:
            used = np.zeros(len(X), dtype=bool)
            used[index.ravel()] = True
            inv = self._inverse_norms(X, A, spec, tables, threads, used)
        with tqdm(total=len(index), desc=f"{type(self).__name__} pairs", unit=" pairs", disable=not progress) as bar:
            return self._raw_pairs(A, index, spec, tables, threads, inv, progress=bar.update if progress else None)

    def diag(self, X: Sequence | Prepared, *, n_jobs: int | None = None) -> np.ndarray:
        """Unnormalized self-kernels K(x, x)."""
        spec, tables = self._configuration()
        X, A = self._resolve(X, spec, tables)
        return self._self_kernels(X, A, spec, tables, n_threads(n_jobs))

    def prepare(self, X: Sequence, *, index: bool = True) -> Prepared:
        """``X`` packed for the engine once, for repeated ``gram`` and ``pairs`` calls.

        With ``index`` (the default) it is also indexed as a fixed set (distinct subtrees
        with their occurrences, see ``_index.pyx``), and ``gram(rows, prepared)`` computes
        each row against all of ``X`` at once: what Nystroem, KLSH and SVM decisions do
        with their landmarks, references and support vectors. ``index=False`` gives the
        plain engine, one pair at a time."""
        spec, tables = self._configuration()
        X = check_structures(self, X)
        packed = self._pack(X, spec, tables)
        fixed = FixedSet(_engine_settings(spec, tables), packed) if index else None
        return Prepared(spec, tables, X, packed, fixed)

    def _configuration(self):
        """(engine spec, label tables or None) of the current parameters, after validating them.
        The tables are made once per description and kept (not pickled); every thread gets
        the same object for the same description."""
        validate_parameters(self)
        spec = self._engine_spec()
        if spec.tables is None:
            return spec, None
        cached = self.__dict__.get("_tables_cache")
        if cached is None or cached[0] != spec.tables:
            with _tables_lock:
                cached = self.__dict__.get("_tables_cache")
                if cached is None or cached[0] != spec.tables:
                    cached = self._tables_cache = (spec.tables, spec.tables.build())
        return spec, cached[1]

    def _resolve(self, X, spec: EngineSpec, tables) -> tuple[list, PackedStructures]:
        """(structures, packed form) of a sequence, or of a Prepared packed for ``spec`` against ``tables``."""
        if isinstance(X, Prepared) and X.tables is tables and X.spec == spec:
            return list(X.structures), X.packed
        X = check_structures(self, X.structures if isinstance(X, Prepared) else X)
        return X, self._pack(X, spec, tables)

    def _pack(self, X: list, spec: EngineSpec, tables) -> PackedStructures:
        """The structures packed for the engine, their labels covered by ``tables``,
        after :meth:`_check_work`."""
        compiled = [x.compiled for x in X]
        self._check_work(compiled, spec, None)  # before the tables describe new labels (a lower bound)
        published = None if tables is None else tables.cover_structures(X)
        if published is not None and reads_table(spec.kind):
            self._check_work(compiled, spec, published)
        if spec.match_key is None:
            return PackedSequences(compiled)
        kinds = published.kinds if isinstance(published, NodeSimilarity) else None
        return PackedTrees(compiled, key=spec.match_key, smooth_kinds=kinds)

    def _check_work(self, compiled: list, spec: EngineSpec, published) -> None:
        """Refuse, before any work, the first structure whose K(t, t) needs more than
        ``max_work`` units of work (:func:`~.work.structure_work`, from label counts;
        without the ``published`` table, a lower bound of the count with it)."""
        if self.max_work is None:
            return
        work = structure_work(spec.kind, compiled, spec.match_key, published)
        too_much = np.flatnonzero(work > self.max_work)
        if len(too_much):
            i = int(too_much[0])
            size = getattr(compiled[i], "n_nodes", None)
            size = len(compiled[i].labels) if size is None else size
            raise StructureSizeError(
                f"{type(self).__name__}: structure {i} ({size:,} nodes) needs {work[i]:,.0f} units of work for "
                f"K(t, t) (pairs of matching nodes weighted by their children), above max_work = {self.max_work:,}; "
                f"raise the kernel's max_work to compute it (None: no bound; the default, {DEFAULT_MAX_WORK:,}, is "
                "about a second of one core per pair)"
            )

    @staticmethod
    def _raw_pairs(A, index: np.ndarray, spec: EngineSpec, tables, threads: int, inv=None, progress=None) -> np.ndarray:
        """K(A[i], A[j]) for the rows (i, j) of ``index``, times inv[i] * inv[j] when given;
        ``progress(n)`` called after each block of n pairs."""
        return _driver.pairs(
            _engine_settings(spec, tables),
            A,
            A,
            index,
            inv_norm_a=inv,
            inv_norm_b=inv,
            n_threads=threads,
            progress=progress,
        )

    def _inverse_norms(self, X: list, packed, spec, tables, threads: int, used=None) -> np.ndarray:
        """1 / sqrt(K(x, x)) (0 where K(x, x) = 0, or where ``used`` is False)."""
        return inverse_roots(self._self_kernels(X, packed, spec, tables, threads, used))

    def _self_kernels(self, X: list, packed, spec: EngineSpec, tables, threads: int, used=None) -> np.ndarray:
        """K(x, x) for every x (0 where ``used`` is False), from the cache kept with each
        compiled structure when there, else computed from ``packed``, X's packed form.
        The cache is keyed by the engine spec and the identity of the tables, so values
        computed against another table are never read."""
        key = replace(spec, tables=None if tables is None else tables.uid)
        used = np.ones(len(X), dtype=bool) if used is None else used
        values = np.array([x.compiled.self_kernels.get(key, np.nan) if u else 0.0 for x, u in zip(X, used)])
        missing = np.flatnonzero(np.isnan(values))
        if len(missing):
            values[missing] = self._raw_pairs(packed, np.stack([missing, missing], axis=1), spec, tables, threads)
            if not spec.may_be_zero():
                _warn_on_underflow(type(self).__name__, X, missing, values)
            for i in missing:
                X[i].compiled.self_kernels[key] = values[i]
        return values

    def __getstate__(self):
        return {name: value for name, value in super().__getstate__().items() if name != "_tables_cache"}

    def as_structure(self, x):
        """``x`` as a structure this kernel compares: as given, but for the kernels that
        also take another form of it (the tuple kernels: networkx graphs)."""
        return x


KERNEL = Satisfies(lambda value: isinstance(value, Kernel), "a kernel of spacy_convkernels")

_tables_lock = threading.Lock()


def _warn_renamed() -> None:
    warnings.warn(
        "max_matching_pairs is now max_work, a parameter of every kernel, which counts the work of K(t, t) "
        "(pairs of matching nodes weighted by their children): the value is max_work's",
        SettingDeprecationWarning,
        stacklevel=3,
    )


def _engine_settings(spec: EngineSpec, tables) -> EngineSettings:
    """The engine's settings for ``spec`` with the tables published last."""
    published = None if tables is None else tables.current
    node_table = published if isinstance(published, NodeSimilarity) else None
    tuple_table = None if published is None or node_table is not None else published
    return EngineSettings(
        spec.kind,
        lam=spec.lam,
        mu=spec.mu,
        terminal_factor=spec.terminal_factor,
        similarity=node_table,
        tuples=tuple_table,
    )


def _warn_on_underflow(name: str, X: list, computed: np.ndarray, values: np.ndarray) -> None:
    """Warn when a non-empty structure's self-kernel is 0 or subnormal: the parameters make
    the values underflow, and normalized values would be 0 or meaningless."""
    tiny = np.finfo(np.float64).tiny
    small = [int(i) for i in computed if values[i] < tiny and X[i].compiled.labels.size > 0]
    if small:
        warnings.warn(
            f"{name}: K(x, x) underflows to {values[small[0]]!r} for structure {small[0]} "
            f"({len(small)} of {len(computed)}); raise lam or mu, or the normalized values are 0 or meaningless",
            KernelUnderflowWarning,
            stacklevel=5,
        )


def _check_index_pairs(index_pairs, n: int) -> np.ndarray:
    try:
        index = np.asarray(index_pairs)
    except (ValueError, TypeError) as error:
        raise InvalidParameterError(f"index_pairs must be integer pairs of shape (n, 2): {error}") from error
    if index.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    if index.ndim != 2 or index.shape[1] != 2 or not np.issubdtype(index.dtype, np.integer):
        raise InvalidParameterError(
            f"index_pairs must be integer pairs of shape (n, 2), got shape {index.shape} of {index.dtype}"
        )
    if index.min() < 0 or index.max() >= n:
        raise InvalidParameterError(f"index_pairs refer to structures outside 0..{n - 1}")
    return np.ascontiguousarray(index, dtype=np.int64)
