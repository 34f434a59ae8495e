"""How a Delta reads its child pairs, written once for every evaluation (a pair of trees
stored, a query against a fixed set's index, a pair of paths): the product over aligned
children of ST and SST (:func:`production_delta`) and the child-subsequence sum of PTK,
SPTK and the path kernel (:func:`child_sum`). Each is generic over where the child values
come from, a fused type compiled once per source (as scikit-learn's
``_pairwise_distances_reduction`` is per dtype), so every caller runs the same loop."""
from ._deltas cimport production_factor
from ._index cimport Fixed
from ._packing cimport TreeView, is_leaf
from ._settings cimport Settings
from ._tables cimport TupleSimilarity, tuple_similarity
from ._workspace cimport SubsequenceSum, Workspace, add_row, start_sum, tick


cdef struct StoredPairs:  # a pair of trees: the child Deltas stored by key (``_tree_kernels``, PTK)
    const TreeView* a
    const TreeView* b
    const int* row_node   # the children of the first node
    const int* col_node   # the children of the second node


cdef struct PartnerLists:  # a pair of trees, SPTK: each child's Deltas in its partner list, sorted by node
    const int* row_node
    const int* col_node


cdef struct IndexRanges:  # a query against an index: each query node's values over its range of index nodes
    const int* row_node   # the query node of each row, or NULL: row i is query node i (a path's position)
    const int* col_node   # the index node of each column
    const double* values  # ``ws.delta`` (trees) or ``ws.pair_sim`` (paths), from ``ws.pair_start``


cdef struct TuplePairs:  # a pair of paths: the tuple similarities, computed as read
    const TupleSimilarity* tuples
    const int* row_label
    const int* col_label


ctypedef fused ChildValues:
    StoredPairs
    PartnerLists
    IndexRanges
    TuplePairs


ctypedef fused SecondTree:  # the second operand of a Delta: a tree, or a fixed set's index
    TreeView
    Fixed


cdef inline double stored_delta(const Workspace* ws, const TreeView* b, int x, int y) noexcept nogil:
    """Delta of the pair (x, y) of a stored pair of trees, which must share a match key and
    be evaluated already."""
    return ws.delta[ws.pair_start[x] + b.rank[y] - ws.group_start[x]]


cdef inline double range_value(const Workspace* ws, const double* values, int x, int u) noexcept nogil:
    """The value of query node x and index node u, 0 when u is outside x's range."""
    cdef unsigned int t = <unsigned int>(u - ws.group_start[x])
    if t < <unsigned int>ws.group_len[x]:
        return values[ws.pair_start[x] + t]
    return 0.0


cdef inline void fill_row(const Workspace* ws, const ChildValues* source, int i, double* v, int m) noexcept nogil:
    """Row i of the child values: v[j] for the m columns."""
    cdef int j, x, y, key
    cdef long long k, end, base
    cdef const TreeView* b
    if ChildValues is StoredPairs:
        x = source.row_node[i]
        key = source.a.key[x]
        b = source.b
        base = ws.pair_start[x] - ws.group_start[x]  # Delta(x, y) at base + b's rank of y (``stored_delta``)
        for j in range(m):
            y = source.col_node[j]
            v[j] = ws.delta[base + b.rank[y]] if b.key[y] == key else 0.0
    elif ChildValues is PartnerLists:
        x = source.row_node[i]
        k = ws.pair_start[x]
        end = k + ws.group_len[x]
        for j in range(m):
            y = source.col_node[j]
            while k < end and ws.partner[k] < y:
                k += 1
            v[j] = ws.delta[k] if k < end and ws.partner[k] == y else 0.0
    elif ChildValues is IndexRanges:
        x = source.row_node[i] if source.row_node != NULL else i
        for j in range(m):
            v[j] = range_value(ws, source.values, x, source.col_node[j])
    else:
        for j in range(m):
            v[j] = tuple_similarity(source.tuples, source.row_label[i], source.col_label[j])


cdef inline double child_sum(Workspace* ws, const ChildValues* source, int n, int m, double lam,
                             double factor) noexcept nogil:
    """The child-subsequence sum of n x m child values: the sum over pairs of equal-length
    index subsequences J1, J2 of factor^len * lam^(gaps(J1) + gaps(J2)) * prod_k
    v[J1k][J2k], gaps = positions skipped between the first and the last chosen one
    (PTK and SPTK: factor 1, Moschitti 2006; the path kernel: factor lam^2, Bunescu &
    Mooney 2005). One O(n*m) dynamic programme (:c:type:`SubsequenceSum`), each row of
    values filled just before it: three rows of m + 1 doubles, whatever n. Out of memory
    or stopped: 0, ``failed`` set."""
    cdef SubsequenceSum rows
    cdef int i
    if not start_sum(ws, &rows, m):
        return 0.0
    for i in range(n):
        fill_row(ws, source, i, rows.v, m)
        add_row(&rows, lam, factor)
        if not tick(ws, (2 if ChildValues is TuplePairs else 1) * (m + 1)):  # similarities cost a cell more
            return 0.0
    return rows.total


cdef inline double production_delta(const Workspace* ws, const Settings* prm, const TreeView* a,
                                    const SecondTree* b, int x, int y) noexcept nogil:
    """ST/SST Delta of two nodes with equal productions (so equal child labels):
    lam * prod_k f(c_xk, c_yk) over aligned children (``_deltas.production_factor``); ``b``
    a tree (child Deltas stored by key) or a fixed set's index (y an index node, child
    Deltas in the query children's ranges)."""
    cdef int pa = a.child_ptr[x], pb = b.child_ptr[y]
    cdef int n = a.child_ptr[x + 1] - pa
    cdef int k, ca, cb
    cdef bint leaf_a, leaf_b, inner_match
    cdef double prod = 1.0, f, child
    if b.child_ptr[y + 1] - pb != n:  # production ids of two different interners: no match
        return 0.0
    for k in range(n):
        ca = a.child_idx[pa + k]
        cb = b.child_idx[pb + k]
        leaf_a = is_leaf(a, ca)
        leaf_b = b.child_ptr[cb + 1] == b.child_ptr[cb]
        if SecondTree is TreeView:
            inner_match = not leaf_a and not leaf_b and a.key[ca] == b.key[cb]
            child = stored_delta(ws, b, ca, cb) if inner_match else 0.0
        else:
            inner_match = (not leaf_a and not leaf_b
                           and <unsigned int>(cb - ws.group_start[ca]) < <unsigned int>ws.group_len[ca])
            child = range_value(ws, ws.delta, ca, cb) if inner_match else 0.0
        f = production_factor(prm, leaf_a and leaf_b, inner_match, child)
        if f != 1.0:  # a factor 1 changes no bit: skipped, off the product's chain of multiplications
            prod *= f
    return prm.lam * prod
