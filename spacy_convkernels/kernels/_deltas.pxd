"""The Delta formulas of the tree kernels, written once for every evaluation of them: stored
and top-down (``_tree_kernels``), one query against a fixed set (``_one_against_many``).
Each keeps one order of its floating-point operations, so a Delta has the same bits
wherever it is computed. The child-subsequence sums themselves are ``_workspace``'s
rolling rows."""
from ._settings cimport Settings, SMOOTHED_PARTIAL_TREE, SUBSET_TREE, SUBTREE_TEXTBOOK


cdef inline double production_factor(const Settings* prm, bint both_leaves, bint inner_match,
                                     double child) noexcept nogil:
    """ST, SST: the factor f of one aligned pair of children in Delta = lam * prod_k f
    (Collins & Duffy 2002; KeLP), ``inner_match`` when both children are inner nodes with
    equal productions, ``child`` their Delta then (times their label weights):

    - SST: f = 1 + Delta if ``inner_match``, else 1 (a leaf child, or a child whose
      production differs, ends the fragment there);
    - ST, KeLP's SubTreeKernel: f = Delta if ``inner_match``, else 1;
    - ST, textbook: f = 1 for two leaves, Delta if ``inner_match``, else 0.
    """
    if inner_match:
        return 1.0 + child if prm.kind == SUBSET_TREE else child
    if prm.kind == SUBTREE_TEXTBOOK and not both_leaves:
        return 0.0
    return 1.0


cdef inline double partial_value(const Settings* prm, double factor, bint leaf, double children) noexcept nogil:
    """PTK, SPTK: Delta of a pair of nodes with factor f (PTK: w(x) w(y); SPTK:
    w(x) sigma(x, y) w(y)) and child-subsequence sum ``children`` (Moschitti 2006;
    Croce et al. 2011, eq. 1):

        Delta = mu * lam^2 * terminal_factor * f      if either node is a leaf (``leaf``),
        Delta = mu * f * (lam^2 + children)           otherwise,

    PTK multiplying f last, SPTK first (the orders the engine has always used: another
    order changes the last bits)."""
    if leaf:
        return prm.mu * prm.lam2 * prm.terminal_factor * factor
    if prm.kind == SMOOTHED_PARTIAL_TREE:
        return prm.mu * factor * (prm.lam2 + children)
    return (prm.mu * (prm.lam2 + children)) * factor
