"""Per-thread scratch memory of the engine: grow-only buffers, the rolling rows of the
child-subsequence sums that PTK, SPTK, the path kernel and Zelenko's kernel share, and the
count of work that makes a long pair stop on Ctrl-C (:func:`tick`)."""
from cpython.ref cimport PyObject
from libc.stdlib cimport realloc
from libc.string cimport memset


# what the threads of one engine call share to stop early: set ``stop`` and every thread
# ends its work at its next :func:`poll`
cdef struct Control:
    int stop                # the call must end: a signal handler raised (``error``)
    bint main_thread        # the call came from Python's main thread, where signal handlers run
    double last_check       # monotonic seconds of the last check for signals
    PyObject* error         # the exception a signal handler raised (a new reference), or NULL


# one node pair being evaluated top-down (``_tree_kernels``, ``_tuple_kernels``): the pair
# (x, y), the next child pair it reads (i, j), its children counts, its rows in ``rows``
cdef struct Frame:
    int x
    int y
    int i
    int j
    int n
    int m
    int parity              # which of its rolling rows holds the previous row
    long long rows          # offset of its rows in the workspace's ``rows``
    double factor           # the pair's similarity or weight product
    double total            # its running sum (or product)


cdef struct Workspace:
    int* group_start
    int* group_len          # per node of the first tree: its number of partners
    long long* pair_start
    long long node_capacity
    double* delta
    long long pair_capacity
    int* partner            # SPTK: the partner node of each pair
    long long partner_capacity
    double* pair_sim        # SPTK: the node similarity of each pair
    long long sim_capacity
    int* edge_group         # forest kernel: per hyper-edge of the first forest, the start and length of its partners
    long long edge_capacity
    double* rows            # the rolling rows of one subsequence sum, O(children of the second node)
    long long row_capacity
    double* fixed_sum       # one against many: per node of the fixed set's index, the sum of its Deltas, kept 0
    long long fixed_capacity
    Frame* frames           # the stack of pairs evaluated top-down
    long long frame_capacity
    long long row_top       # the rows in use by those pairs
    int* ints               # per-node scratch of one pair of trees (parents, positions, lists, slots)
    long long int_capacity
    double* prefix_rows     # paths against a fixed set: the subsequence sums' rows of every depth of the
    long long prefix_capacity  # last query against every fixed path (``_one_against_many.path_row``)
    double* prefix_totals   # and their totals so far
    long long prefix_total_capacity
    bint prefix_kept        # they hold the last query's rows
    Py_ssize_t last_item    # the item of the job this workspace computed last, -1 for none
    bint failed             # an allocation failed or the call was stopped: the value being computed is void
    long long budget        # units of work left before the next :func:`poll`
    Control* control        # the call's, or NULL (never stopped)
    bint checker            # this thread is the caller, Python's main thread: it checks for signals


cdef struct SubsequenceSum:
    double* v       # row i of the values, filled by the caller before :func:`add_row`
    double* prev    # the partial sums P of row i - 1
    double* cur     # the partial sums P of row i
    int m
    double total


cdef Workspace* workspace_new() noexcept nogil
cdef void workspace_free(Workspace* ws) noexcept nogil
cdef bint poll(Workspace* ws) noexcept nogil
cdef void control_init(Control* control, bint main_thread) noexcept nogil
cdef void workspace_attach(Workspace* ws, Control* control, bint checker) noexcept nogil


cdef enum:
    POLL_UNITS = 1 << 16  # units of work (node pairs, cells of a subsequence sum) between two polls


cdef inline bint tick(Workspace* ws, long long units) noexcept nogil:
    """Count ``units`` of work (about a nanosecond each: a node pair, a cell of a
    subsequence sum); every ``POLL_UNITS`` of them :func:`poll`. False when the value being
    computed must be abandoned (``failed`` set): the caller returns at once, and so do its
    callers, which check ``failed``. The kernels tick inside every loop whose length
    depends on the input, so one pair of huge structures stops within a poll of Ctrl-C."""
    ws.budget -= units
    if ws.budget > 0:
        return True
    return poll(ws)


cdef inline long long grown(long long needed, long long capacity) noexcept nogil:
    cdef long long c = capacity if capacity > 64 else 64
    while c < needed:
        c *= 2
    return c


cdef inline bint reserve_nodes(Workspace* ws, long long n) noexcept nogil:
    if n <= ws.node_capacity:
        return True
    cdef long long c = grown(n, ws.node_capacity)
    cdef void* a = realloc(ws.group_start, c * sizeof(int))
    if a == NULL:
        return False
    ws.group_start = <int*>a
    a = realloc(ws.group_len, c * sizeof(int))
    if a == NULL:
        return False
    ws.group_len = <int*>a
    a = realloc(ws.pair_start, c * sizeof(long long))
    if a == NULL:
        return False
    ws.pair_start = <long long*>a
    ws.node_capacity = c
    return True


cdef inline bint reserve(void** buffer, long long* capacity, long long n, size_t item) noexcept nogil:
    """Grow ``*buffer`` to hold at least ``n`` items (contents kept); False if out of memory."""
    if n <= capacity[0]:
        return True
    cdef long long c = grown(n, capacity[0])
    cdef void* a = realloc(buffer[0], c * item)
    if a == NULL:
        return False
    buffer[0] = a
    capacity[0] = c
    return True


cdef inline bint reserve_zeroed(double** buffer, long long* capacity, long long n) noexcept nogil:
    """Grow ``*buffer`` to hold at least ``n`` doubles, the new ones 0 (contents kept);
    False if out of memory."""
    cdef long long old = capacity[0]
    if not reserve(<void**>buffer, capacity, n, sizeof(double)):
        return False
    if capacity[0] > old:
        memset(buffer[0] + old, 0, (capacity[0] - old) * sizeof(double))
    return True


cdef inline double* subsequence_rows(Workspace* ws, int n_rows, int m) noexcept nogil:
    """``n_rows`` rows of m + 1 doubles for a subsequence sum over m columns, the first
    zeroed (the partial sums before row 1); NULL (and ``failed``) if out of memory."""
    cdef int j
    if not reserve(<void**>&ws.rows, &ws.row_capacity, <long long>n_rows * (m + 1), sizeof(double)):
        ws.failed = True
        return NULL
    for j in range(m + 1):
        ws.rows[j] = 0.0
    return ws.rows


cdef inline double subsequence_row(const double* v, const double* prev, double* cur, int m, double lam,
                                   double factor, double total) noexcept nogil:
    """One row i of a subsequence sum: the sum over pairs of equal-length index
    subsequences i of 1..n and j of 1..m of factor^l * prod_k v[i_k][j_k] *
    lam^(gaps(i) + gaps(j)), gaps = indices skipped between the first and the last (the
    child-subsequence sum of PTK with factor 1, the path kernel with factor lam^2, whose
    span weights are lam^2 per element times the gaps).

    The sum is one O(n*m) pass with rolling rows: E[i][j] = factor * v[i][j] *
    (1 + P[i-1][j-1]) sums the subsequences ending at (i, j), and P[i][j] =
    sum_{i'<=i, j'<=j} E[i'][j'] lam^(i-i'+j-j') is a running row sum plus lam times the
    previous row (no subtraction). Only row i of v (``v[0:m]``, computed by the caller
    just before), the previous row of P (``prev[0:m+1]``) and the current one (``cur``)
    are kept: memory O(m), not O(n*m). Returns ``total`` plus the row's E values."""
    cdef double row = 0.0, e
    cdef int j
    cur[0] = 0.0
    for j in range(1, m + 1):
        e = v[j - 1]
        if e != 0.0:
            e = factor * e * (1.0 + prev[j - 1])
            total += e
        row = e + lam * row
        cur[j] = row + lam * prev[j]
    return total


cdef inline double zelenko_row(const double* k, const double* K, const double* prev_a, double* cur_a,
                               const double* prev_b, double* cur_b, int m, double lam, double lam2,
                               double total) noexcept nogil:
    """One row i of the child term of Zelenko's kernel (``_tuple_kernels.zelenko_kernel``):
    the sum over pairs of equal-length child subsequences of lam^(span(i) + span(j)) *
    (sum_s K_s) * prod_s k_s, with k and K of the child pairs of row i in ``k[0:m]`` and
    ``K[0:m]``. Two sums roll as in :func:`subsequence_row`: A of the products,
    E_a = k lam^2 (1 + A[i-1][j-1]), and B of the products times the sums,
    E_b = k lam^2 (K (1 + A[i-1][j-1]) + B[i-1][j-1]); ``prev_*`` are the partial sums of
    row i - 1, ``cur_*`` those of row i. Returns ``total`` plus the row's E_b values."""
    cdef double row_a = 0.0, row_b = 0.0, e_a, e_b, kj
    cdef int j
    cur_a[0] = 0.0
    cur_b[0] = 0.0
    for j in range(1, m + 1):
        kj = k[j - 1]
        if kj != 0.0:
            e_a = kj * lam2 * (1.0 + prev_a[j - 1])
            e_b = kj * lam2 * (K[j - 1] * (1.0 + prev_a[j - 1]) + prev_b[j - 1])
        else:
            e_a = 0.0
            e_b = 0.0
        total += e_b
        row_a = e_a + lam * row_a
        cur_a[j] = row_a + lam * prev_a[j]
        row_b = e_b + lam * row_b
        cur_b[j] = row_b + lam * prev_b[j]
    return total


cdef inline bint start_sum(Workspace* ws, SubsequenceSum* rows, int m) noexcept nogil:
    """Start a subsequence sum over m columns in the workspace's rows; False (and
    ``failed``) if out of memory."""
    cdef double* memory = subsequence_rows(ws, 3, m)
    if memory == NULL:
        return False
    rows.prev = memory
    rows.cur = memory + (m + 1)
    rows.v = memory + 2 * (m + 1)
    rows.m = m
    rows.total = 0.0
    return True


cdef inline void add_row(SubsequenceSum* rows, double lam, double factor) noexcept nogil:
    """Add row ``rows.v`` to the sum (:func:`subsequence_row`) and roll the rows."""
    rows.total = subsequence_row(rows.v, rows.prev, rows.cur, rows.m, lam, factor, rows.total)
    cdef double* swap = rows.prev
    rows.prev = rows.cur
    rows.cur = swap


cdef inline Frame* push_frame(Workspace* ws, int depth, int x, int y, int n, int m, int n_rows, int zeroed,
                              double factor) noexcept nogil:
    """Frame ``depth`` (the top of the stack) for the pair (x, y) with n and m children:
    ``n_rows`` rows of m + 1 doubles after the rows in use, the first ``zeroed`` rows (each
    m + 1 apart, from row 0 and then every other row) set to 0. NULL (``failed``) if out
    of memory. Frames and rows may move: pointers into them are void after a push."""
    cdef long long start = ws.row_top, need = ws.row_top + <long long>n_rows * (m + 1)
    cdef Frame* frame
    cdef int r
    if not (reserve(<void**>&ws.rows, &ws.row_capacity, need, sizeof(double))
            and reserve(<void**>&ws.frames, &ws.frame_capacity, depth + 1, sizeof(Frame))):
        ws.failed = True
        return NULL
    frame = ws.frames + depth
    frame.x = x
    frame.y = y
    frame.i = 0
    frame.j = 0
    frame.n = n
    frame.m = m
    frame.parity = 0
    frame.rows = start
    frame.factor = factor
    frame.total = 0.0
    for r in range(zeroed):
        memset(ws.rows + start + 2 * r * (m + 1), 0, (m + 1) * sizeof(double))
    ws.row_top = need
    return frame


cdef inline int* scratch_ints(Workspace* ws, long long n) noexcept nogil:
    """``n`` ints of per-node scratch (contents undefined); NULL (``failed``) if out of memory."""
    if not reserve(<void**>&ws.ints, &ws.int_capacity, n, sizeof(int)):
        ws.failed = True
        return NULL
    return ws.ints
