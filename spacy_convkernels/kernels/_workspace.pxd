"""Per-thread scratch memory of the engine: grow-only buffers, and the rolling rows of the
child-subsequence sums that PTK, SPTK, the path kernel and Zelenko's kernel share."""
from libc.stdlib cimport realloc
from libc.string cimport memset


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
    bint failed             # an allocation failed: the value being computed is void


cdef struct SubsequenceSum:
    double* v       # row i of the values, filled by the caller before :func:`add_row`
    double* prev    # the partial sums P of row i - 1
    double* cur     # the partial sums P of row i
    int m
    double total


cdef Workspace* workspace_new() noexcept nogil
cdef void workspace_free(Workspace* ws) noexcept nogil


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
