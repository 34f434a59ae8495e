# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The threaded driver of the engine: Gram blocks and lists of pairs, computed with any
kernel of ``_tree_kernels``, ``_tuple_kernels`` and ``_forest_kernels``, Gram blocks
against an indexed fixed set (``_index``, ``_one_against_many``), and the table of the
node-pair Deltas of one pair of trees (:func:`deltas`, what ``explain`` reads).

The entry points check every argument (the settings against the packed kinds and match
keys, tables covering every label id, index pairs and norms against the packed sets) and
raise :class:`~spacy_convkernels.errors.InvalidParameterError` before any computation;
packed sets and tables are immutable. Everything below the entry points runs without the
GIL: the items (Gram rows, pairs) are computed in blocks of about 0.1 s, spread over
threads with OpenMP, each thread owning one grow-only ``Workspace`` for the whole call;
between blocks the GIL is taken back to check for signals. Inside a block the kernels
count their work (``_workspace.tick``) and the caller's thread, when it is Python's main
thread, takes the GIL about every 0.05 s of work to run the signal handlers: a handler
that raises (Ctrl-C: KeyboardInterrupt) stops every thread at its next poll, even in the
middle of one pair of huge structures, and the driver raises it.
"""
from cpython.exc cimport PyErr_CheckSignals
from cpython.ref cimport Py_XDECREF
from cython.parallel cimport parallel, prange, threadid
from libc.stdlib cimport calloc, free

import os
import threading
import time

import numpy as np

from ..errors import InvalidParameterError, KernelOverflowError
from ._forest_kernels cimport forest_kernel
from ._index cimport FixedSet
from ._one_against_many cimport Against, one_against_many
from ._packing cimport ForestView, Packed, PackedStructures, PackedTrees, TreeView, forest_view, tree_view
from ._settings cimport EngineSettings, FOREST, PATH, Settings
from ._tree_kernels cimport delta_table, smoothed_kernel, tree_kernel
from ._tuple_kernels cimport path_kernel, zelenko_kernel
from ._workspace cimport Control, Workspace, control_init, workspace_attach, workspace_free, workspace_new


cdef struct Job:
    Settings prm
    const Packed* A
    const Packed* B
    Py_ssize_t n_b
    bint symmetric
    const double* inv_a     # the inverse norms, or NULL (both or neither)
    const double* inv_b
    const long long* index  # pairs: the (row, column) of each value
    double* out             # gram: n_a x n_b, row-major; pairs: one value per index row
    const Against* against  # gram_against: the indexed fixed set B
    const Py_ssize_t* order  # gram_against of paths: the row of each item (sorted paths), or NULL (item r: row r)
    const int* shared        # and the positions each shares with the one before it


ctypedef bint (*Task)(Workspace* ws, const Job* job, Py_ssize_t item) noexcept nogil


cdef inline double evaluate(Workspace* ws, const Settings* prm, const Packed* A, Py_ssize_t r,
                            const Packed* B, Py_ssize_t c) noexcept nogil:
    """The unnormalized kernel of structure r of A and structure c of B, by the family and
    traits of the kind (a tree kind that sums no Deltas is K of the roots: Zelenko's; out
    of memory: ``ws.failed`` set)."""
    cdef long long oa, ob
    cdef TreeView va, vb
    cdef ForestView fa, fb
    if prm.family == FOREST:
        fa = forest_view(A, r)
        fb = forest_view(B, c)
        return forest_kernel(ws, prm, &fa, &fb)
    if prm.family == PATH:
        oa = A.node_offset[r]
        ob = B.node_offset[c]
        return path_kernel(ws, prm, A.label + oa, <int>(A.node_offset[r + 1] - oa),
                           B.label + ob, <int>(B.node_offset[c + 1] - ob))
    va = tree_view(A, r)
    vb = tree_view(B, c)
    if not prm.sums_of_deltas:
        return zelenko_kernel(ws, prm, &va, &vb)
    if prm.smoothed:
        return smoothed_kernel(ws, prm, &va, &vb)
    return tree_kernel(ws, prm, &va, &vb)


cdef Settings checked_settings(EngineSettings settings, PackedStructures A, PackedStructures B,
                               int n_threads) except *:
    """The settings' struct, after checking them against A, B and the thread count."""
    if not settings.ready:
        raise InvalidParameterError("the EngineSettings was not initialized")
    settings.check_operands(A, B)
    if n_threads < 1:
        raise InvalidParameterError(f"n_threads must be >= 1, got {n_threads}")
    return settings.settings


cdef double _ONE = 1.0


cdef const double* checked_norms(object inv, PackedStructures packed, str name, list keep) except? NULL:
    """The checked inverse norms of ``packed`` (a private copy, kept alive in ``keep``), or NULL for None."""
    if inv is None:
        return NULL
    cdef const double[::1] values = np.array(inv, dtype=np.float64, copy=True).ravel()
    if values.shape[0] != packed.n_structures:
        raise InvalidParameterError(f"inv_norm_{name} has {values.shape[0]} values for {packed.n_structures} "
                                    f"structures in {name.upper()}")
    keep.append(values)
    return &values[0] if values.shape[0] else <const double*>&_ONE


cdef inverse_norms(Job* job, inv_norm_a, inv_norm_b, PackedStructures A, PackedStructures B, list keep):
    """Set the job's inverse norms (both or neither)."""
    if (inv_norm_a is None) != (inv_norm_b is None):
        raise InvalidParameterError("inv_norm_a and inv_norm_b are given together or not at all")
    job.inv_a = checked_norms(inv_norm_a, A, "a", keep)
    job.inv_b = checked_norms(inv_norm_b, B, "b", keep)


def _raise_on_failure(values):
    if not np.isfinite(values).all():
        raise KernelOverflowError(
            "kernel values overflowed float64; use smaller lam, mu or terminal_factor for structures this large"
        )


cdef bint gram_row(Workspace* ws, const Job* job, Py_ssize_t r) noexcept nogil:
    """Row r of a Gram block (from column r on when symmetric); False if out of memory."""
    cdef Py_ssize_t c
    cdef double value
    cdef double* K = job.out + r * job.n_b
    for c in range(r if job.symmetric else 0, job.n_b):
        if job.inv_a != NULL:
            if job.inv_a[r] * job.inv_b[c] == 0:
                K[c] = 0.0
                continue
            if job.symmetric and c == r:
                K[c] = 1.0
                continue
        value = evaluate(ws, &job.prm, job.A, r, job.B, c)
        if ws.failed:
            return False
        K[c] = value * job.inv_a[r] * job.inv_b[c] if job.inv_a != NULL else value
    return True


cdef bint against_row(Workspace* ws, const Job* job, Py_ssize_t item) noexcept nogil:
    """A row of a Gram block against an indexed fixed set (row ``item``, or ``job.order[item]``
    for paths in order, which start after the positions they share with the path of the item
    before when this workspace computed it; symmetric paths: from column r on; trees always
    compute the whole row, the index sharing work across all of B), normalized as
    :func:`gram_row` does (its diagonal 1 without rounding); False if out of memory."""
    cdef Py_ssize_t r = item if job.order == NULL else job.order[item]
    cdef Py_ssize_t c, first = r if job.symmetric and job.prm.family == PATH else 0
    cdef int shared = job.shared[item] if job.order != NULL and ws.last_item == item - 1 else 0
    cdef double* K = job.out + r * job.n_b
    ws.last_item = item
    for c in range(first, job.n_b):
        K[c] = 0.0
    if job.inv_a != NULL and job.inv_a[r] == 0:
        ws.prefix_kept = False
        return True
    if not one_against_many(ws, &job.prm, job.A, r, job.against, first, shared, K):
        return False
    if job.inv_a != NULL:
        for c in range(first, job.n_b):
            K[c] = 0.0 if job.inv_a[r] * job.inv_b[c] == 0 else K[c] * job.inv_a[r] * job.inv_b[c]
        if job.symmetric:
            K[r] = 1.0
    return True


def sorted_paths(PackedStructures A, bint keep_order=False):
    """(order, shared) of the packed paths ``A``: the rows in the order of their label
    sequences (with ``keep_order``, in their own order), and how many leading positions
    each shares with the one before it (0 for the first)."""
    offsets, labels = A.node_offset, A.label.tolist()
    paths = [labels[offsets[r] : offsets[r + 1]] for r in range(A.n_structures)]
    order = list(range(len(paths))) if keep_order else sorted(range(len(paths)), key=paths.__getitem__)
    shared = [0] + [len(os.path.commonprefix([paths[a], paths[b]])) for a, b in zip(order, order[1:])]
    return np.asarray(order, dtype=np.intp), np.asarray(shared, dtype=np.intc)


cdef class _BlockSimilarities:
    """The per-call state of :func:`gram_against` for SPTK: before each block of rows, the
    dot products of the block's smoothed query labels with the fixed set's vector rows
    (:meth:`FixedSet.block_similarities`), kept for the block."""
    cdef Against against
    cdef EngineSettings settings
    cdef FixedSet index
    cdef PackedTrees A
    cdef int n_threads
    cdef object node_dot, dots

    def __init__(self, EngineSettings settings, PackedTrees A, FixedSet index, int n_threads):
        self.settings, self.A, self.index, self.n_threads = settings, A, index, n_threads
        self.node_dot = np.full(max(int(A.smooth_offset[A.n_structures]), 1), -1, dtype=np.int64)
        self.dots = np.zeros(1)
        self.against.fixed = &index.fixed
        self.against.forests = NULL
        self._point()

    cdef _point(self):
        cdef long long[::1] node_dot = self.node_dot
        cdef const double[::1] dots = self.dots
        self.against.node_dot = &node_dot[0]
        self.against.dots = &dots[0]

    def __call__(self, Py_ssize_t start, Py_ssize_t stop):
        node_dot, self.dots = self.index.block_similarities(self.settings, self.A, start, stop,
                                                            n_threads=self.n_threads)
        lo = int(self.A.smooth_offset[start])
        self.node_dot[lo : lo + len(node_dot)] = node_dot
        self._point()


cdef int PATH_CHUNK = 16  # sorted paths against a fixed set: consecutive rows a thread takes (sharing prefixes)
cdef Py_ssize_t SIMILARITY_BLOCK = 256  # SPTK against a fixed set: at most this many rows per block of dot products


def gram_against(EngineSettings settings not None, PackedStructures A, FixedSet B not None, *, bint symmetric=False,
                 inv_norm_a=None, inv_norm_b=None, int n_threads=1, progress=None):
    """Gram block K[r, c] = K(A[r], B[c]) of the kernel ``settings`` against the indexed
    fixed set B (:class:`~._index.FixedSet`), one row per query against all of B at once
    (``_one_against_many``); normalized, progress and Ctrl-C as :func:`gram`. The values
    are those of ``gram`` with B's packed structures up to rounding (sums taken in another
    order: about 1e-16 relative). For SPTK the dot products of each block of rows' smoothed
    labels with B's vector rows are computed first, once per distinct pair of rows
    (:meth:`FixedSet.block_similarities`), on the same ``n_threads``. With ``symmetric``
    (A the packed structures of B: the Gram of one set) the upper triangle is mirrored onto
    the lower one, as :func:`gram` does, and the diagonal is 1 when normalized; for paths
    each row is computed from its diagonal on, for trees whole (the index shares a query
    node's work across all of B, which it cannot split by column). Paths are
    computed in the order of their label sequences (:func:`sorted_paths`; a symmetric
    Gram's in their own), ``PATH_CHUNK`` consecutive ones per thread, each from the rows it
    shares with the one before (``_one_against_many.path_row``): the same bits in any order.
    Inconsistent arguments, or tables that no longer hold what B's index read, raise
    :class:`InvalidParameterError`."""
    cdef Job job
    cdef list keep = []
    cdef Against against
    cdef _BlockSimilarities block = None
    job.prm = checked_settings(settings, A, B.packed, n_threads)
    B.check_settings(settings)
    if symmetric and A is not B.packed:
        raise InvalidParameterError("a symmetric Gram block against a fixed set needs A the fixed set's")
    inverse_norms(&job, inv_norm_a, inv_norm_b, A, B.packed, keep)
    cdef Py_ssize_t n_a = A.n_structures, n_b = B.n_structures
    out = np.zeros((n_a, n_b), dtype=np.float64)
    if n_a == 0 or n_b == 0:
        return out
    cdef double[:, ::1] K = out
    against.fixed = &B.fixed
    against.forests = &B.packed.packed
    against.dots = NULL
    against.node_dot = NULL
    job.A = &A.packed
    job.B = &B.packed.packed
    job.n_b = n_b
    job.symmetric = symmetric
    job.index = NULL
    job.out = &K[0, 0]
    job.against = &against
    job.order = NULL
    job.shared = NULL
    cdef Py_ssize_t[::1] order
    cdef int[::1] shared
    cdef int chunk = 1
    if job.prm.family == PATH and not len(B.vector_groups):  # a symmetric Gram's row r from column r on
        order, shared = sorted_paths(A, keep_order=symmetric)
        job.order = &order[0]
        job.shared = &shared[0]
        chunk = PATH_CHUNK
    if len(B.vector_groups):
        block = _BlockSimilarities(settings, A, B, n_threads)
        job.against = &block.against
        run(against_row, &job, n_a, n_threads, n_threads, chunk, progress, block, SIMILARITY_BLOCK)
    else:
        run(against_row, &job, n_a, n_threads, n_threads, chunk, progress)
    if symmetric:
        with nogil:
            mirror_upper(K, n_threads)
    _raise_on_failure(out)
    return out


cdef bint pair_value(Workspace* ws, const Job* job, Py_ssize_t k) noexcept nogil:
    cdef Py_ssize_t r = job.index[2 * k], c = job.index[2 * k + 1]
    cdef double value = evaluate(ws, &job.prm, job.A, r, job.B, c)
    if ws.failed:
        return False
    job.out[k] = value * job.inv_a[r] * job.inv_b[c] if job.inv_a != NULL else value
    return True


cdef bint run_block(Task task, const Job* job, Workspace** workspaces, Py_ssize_t start, Py_ssize_t stop,
                    int n_threads, int chunk) noexcept nogil:
    """Items start..stop-1 of a job, handed to the threads ``chunk`` at a time; False if
    out of memory or stopped (``Control``). One thread runs without OpenMP at all (safe in
    a forked process)."""
    cdef Py_ssize_t i
    cdef Workspace* ws
    cdef int failed_flag = 0
    cdef int* failed = &failed_flag  # shared by the threads (a plain int would be private to each)
    if n_threads == 1:
        for i in range(start, stop):
            if not task(workspaces[0], job, i):
                return False
        return True
    with parallel(num_threads=n_threads):
        ws = workspaces[threadid()]
        for i in prange(start, stop, schedule="dynamic", chunksize=chunk):
            if not failed[0] and not task(ws, job, i):
                failed[0] = 1
                if ws.control != NULL:  # the other threads abandon their items at their next poll
                    ws.control.stop = 1
    return not failed_flag


cdef double BLOCK_SECONDS = 0.1  # the aimed time between two checks for signals


cdef run(Task task, const Job* job, Py_ssize_t n_items, int n_threads, Py_ssize_t first_block, int chunk,
         progress=None, before_block=None, Py_ssize_t max_block=0):
    """Run ``task`` on items 0..n_items-1 in blocks without the GIL, checking for signals
    (Ctrl-C) between blocks and, from Python's main thread, inside them (the module), so
    a KeyboardInterrupt stops the work within a fraction of a second, whatever the size of
    one item. Block sizes adapt to take about 0.1 s (at most 4 times the previous one, and
    at most ``max_block`` items when it is positive), which keeps the cost of the checks
    negligible. ``before_block(start, stop)``, when given, is called with the GIL before
    each block (and counts in its time); ``progress``, when given, with the number of
    items of each block done. The per-thread workspaces live for the whole call and are
    freed however it ends."""
    cdef Workspace** workspaces = <Workspace**>calloc(n_threads, sizeof(Workspace*))
    cdef Py_ssize_t start = 0, stop, size = first_block
    cdef double began, elapsed
    cdef int t
    cdef bint ok = workspaces != NULL
    cdef Control control
    control_init(&control, threading.current_thread() is threading.main_thread())
    try:
        for t in range(n_threads if ok else 0):
            workspaces[t] = workspace_new()
            ok = ok and workspaces[t] != NULL
            if workspaces[t] != NULL:
                workspace_attach(workspaces[t], &control, t == 0)
        while ok and start < n_items:
            stop = min(start + size, n_items)
            began = time.perf_counter()
            if before_block is not None:
                before_block(start, stop)
            with nogil:
                ok = run_block(task, job, workspaces, start, stop, n_threads, chunk)
            if control.error != NULL:  # a signal handler raised inside the block
                error = <object>control.error
                Py_XDECREF(control.error)
                control.error = NULL
                raise error
            PyErr_CheckSignals()
            if progress is not None and ok:
                progress(stop - start)
            elapsed = time.perf_counter() - began
            size = max(1, min(4 * size, <Py_ssize_t>(size * BLOCK_SECONDS / max(elapsed, 1e-6))))
            if max_block > 0:
                size = min(size, max_block)
            start = stop
        if not ok:
            raise MemoryError("the kernel engine could not allocate its scratch buffers")
    finally:
        Py_XDECREF(control.error)
        if workspaces != NULL:
            for t in range(n_threads):
                workspace_free(workspaces[t])
            free(workspaces)


def gram(EngineSettings settings not None, PackedStructures A, PackedStructures B, *, bint symmetric=False,
         inv_norm_a=None, inv_norm_b=None, int n_threads=1, progress=None):
    """Gram block K[r, c] = K(A[r], B[c]) of the kernel ``settings``, normalized as
    K * inv_norm_a[r] * inv_norm_b[c] (the reciprocal square roots of the self-kernels, 0
    for a zero self-kernel) unless they are None. With ``symmetric`` (A is B) only the
    upper triangle is computed, then mirrored; normalized, its diagonal is 1 (0 for a zero
    self-kernel) without recomputation. Rows are computed in blocks; Ctrl-C between blocks
    raises KeyboardInterrupt; ``progress(n)`` is called after each block of n rows.
    Inconsistent arguments raise :class:`InvalidParameterError`."""
    cdef Job job
    cdef list keep = []
    job.prm = checked_settings(settings, A, B, n_threads)
    if symmetric and A is not B:
        raise InvalidParameterError("a symmetric Gram block needs A is B")
    inverse_norms(&job, inv_norm_a, inv_norm_b, A, B, keep)
    cdef Py_ssize_t n_a = A.n_structures, n_b = B.n_structures
    out = np.empty((n_a, n_b), dtype=np.float64)
    if n_a == 0 or n_b == 0:
        return out
    cdef double[:, ::1] K = out
    job.A = &A.packed
    job.B = &B.packed
    job.n_b = n_b
    job.symmetric = symmetric
    job.index = NULL
    job.out = &K[0, 0]
    job.against = NULL
    run(gram_row, &job, n_a, n_threads, n_threads, 1, progress)
    if symmetric:
        with nogil:
            mirror_upper(K, n_threads)
    _raise_on_failure(out)
    return out


cdef void mirror_upper(double[:, ::1] K, int n_threads) noexcept nogil:
    """Copy the upper triangle onto the lower one, tile by tile to stay in cache."""
    cdef Py_ssize_t n = K.shape[0], tile = 64, n_tiles = (n + tile - 1) // tile
    cdef Py_ssize_t ti
    if n_threads == 1:
        for ti in range(n_tiles):
            mirror_tile_row(K, ti, tile, n_tiles, n)
    else:
        for ti in prange(n_tiles, num_threads=n_threads, schedule="dynamic"):
            mirror_tile_row(K, ti, tile, n_tiles, n)


cdef inline void mirror_tile_row(double[:, ::1] K, Py_ssize_t ti, Py_ssize_t tile, Py_ssize_t n_tiles,
                                 Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t tj, i, j
    for tj in range(ti, n_tiles):
        for i in range(ti * tile, min((ti + 1) * tile, n)):
            for j in range(max(tj * tile, i + 1), min((tj + 1) * tile, n)):
                K[j, i] = K[i, j]


def pairs(EngineSettings settings not None, PackedStructures A, PackedStructures B, index, *, inv_norm_a=None,
          inv_norm_b=None, int n_threads=1, progress=None):
    """K(A[index[k, 0]], B[index[k, 1]]) for every k, normalized as in :func:`gram`
    unless ``inv_norm_a`` is None; ``index`` is an (n, 2) integer array whose columns are
    checked against A and B. Pairs are computed in blocks; Ctrl-C between blocks raises
    KeyboardInterrupt; ``progress(n)`` is called after each block of n pairs."""
    cdef Job job
    cdef list keep = []
    job.prm = checked_settings(settings, A, B, n_threads)
    inverse_norms(&job, inv_norm_a, inv_norm_b, A, B, keep)
    rows = np.asarray(index)
    if rows.ndim != 2 or rows.shape[1] != 2 or not (np.issubdtype(rows.dtype, np.integer) or rows.size == 0):
        raise InvalidParameterError(f"index must be integer pairs of shape (n, 2), got shape {rows.shape} "
                                    f"of {rows.dtype}")
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    if rows.size and (rows.min() < 0 or (rows.max(axis=0) >= (A.n_structures, B.n_structures)).any()):
        raise InvalidParameterError(f"index refers to structures outside A (0..{A.n_structures - 1}) "
                                    f"or B (0..{B.n_structures - 1})")
    cdef Py_ssize_t n = rows.shape[0]
    out = np.zeros(n, dtype=np.float64)
    if n == 0:
        return out
    cdef const long long[:, ::1] pairs_index = rows
    cdef double[::1] values = out
    job.A = &A.packed
    job.B = &B.packed
    job.n_b = B.n_structures
    job.symmetric = False
    job.index = &pairs_index[0, 0]
    job.out = &values[0]
    job.against = NULL
    run(pair_value, &job, n, n_threads, 64 * n_threads, 64, progress)
    _raise_on_failure(out)
    return out


DELTA_CELLS = 1 << 22  # the largest Delta table :func:`deltas` makes: 4,194,304 node pairs, 32 MB


cdef bint delta_task(Workspace* ws, const Job* job, Py_ssize_t item) noexcept nogil:
    cdef TreeView va = tree_view(job.A, job.index[0])
    cdef TreeView vb = tree_view(job.B, job.index[1])
    return delta_table(ws, &job.prm, &va, &vb, job.out)


def deltas(EngineSettings settings not None, PackedStructures A, PackedStructures B, Py_ssize_t r, Py_ssize_t c):
    """Delta(x, y) of every node pair of the trees A[r] and B[c] as the kernel ``settings``
    sums them (ST, SST, PTK, SPTK: K = sum over node pairs of Delta, label weights and
    sigma included): an (n_a, n_b) float64 table by preorder index, 0 for the pairs that do
    not match, whose sum is the unnormalized K(A[r], B[c]). The recursion and tables are
    the kernel's own (``_tree_kernels.delta_table``).

    The table is quadratic in the nodes, where the kernel itself keeps only the matching
    pairs (and, top-down, O(depth * children)); it is made for ``explain``, and a pair
    whose table would exceed ``DELTA_CELLS`` cells raises :class:`InvalidParameterError`,
    as do other kernel kinds and inconsistent arguments."""
    cdef Job job
    job.prm = checked_settings(settings, A, B, 1)
    if not settings.settings.sums_of_deltas:
        raise InvalidParameterError(f"the Delta table is for the kernels that sum over node pairs (ST, SST, PTK, "
                                    f"SPTK), not {settings.kind.name}")
    if not (0 <= r < A.n_structures and 0 <= c < B.n_structures):
        raise InvalidParameterError(f"({r}, {c}) refers to a tree outside A (0..{A.n_structures - 1}) "
                                    f"or B (0..{B.n_structures - 1})")
    n_a = int(A.node_offset[r + 1] - A.node_offset[r])
    n_b = int(B.node_offset[c + 1] - B.node_offset[c])
    if n_a * n_b > DELTA_CELLS:
        raise InvalidParameterError(f"the Delta table of trees of {n_a} and {n_b} nodes has {n_a * n_b:,} cells, "
                                    f"more than the {DELTA_CELLS:,} allowed (it is quadratic in the nodes)")
    out = np.zeros((n_a, n_b), dtype=np.float64)
    if out.size == 0:
        return out
    cdef double[:, ::1] table = out
    cdef long long[2] pair = [r, c]
    job.A = &A.packed
    job.B = &B.packed
    job.index = pair
    job.out = &table[0, 0]
    job.against = NULL
    run(delta_task, &job, 1, 1, 1, 1)
    _raise_on_failure(out)
    return out
