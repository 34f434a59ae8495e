"""The Delta formulas of the tree kernels, written once for every evaluation of them: stored
and top-down (``_tree_kernels``), one query against a fixed set (``_one_against_many``).
A kind's constants come from its row of the table of kinds (``kinds.KindTraits``). Each
keeps one order of its floating-point operations, so a Delta has the same bits wherever it
is computed. The child-subsequence sums themselves are ``_workspace``'s rolling rows."""
from ._settings cimport Settings


cdef inline double production_factor(const Settings* prm, bint both_leaves, bint inner_match,
                                     double child) noexcept nogil:
    """ST, SST: the factor f of one aligned pair of children in Delta = lam * prod_k f
    (Collins & Duffy 2002; KeLP), ``inner_match`` when both children are inner nodes with
    equal productions, ``child`` their Delta then (times their label weights):

    - f = ``child_offset`` + Delta if ``inner_match`` (SST: 1 + Delta; ST: Delta);
    - f = 1 for two leaves;
    - f = ``mismatch_factor`` otherwise (SST and KeLP's SubTreeKernel: 1, a leaf child or
      a child whose production differs ends the fragment there; the textbook ST: 0).
    """
    if inner_match:
        return prm.child_offset + child
    if not both_leaves:
        return prm.mismatch_factor
    return 1.0


cdef inline double partial_value(const Settings* prm, double factor, bint leaf, double children) noexcept nogil:
    """PTK, SPTK: Delta of a pair of nodes with factor f (PTK: w(x) w(y); SPTK:
    w(x) sigma(x, y) w(y)) and child-subsequence sum ``children`` (Moschitti 2006;
    Croce et al. 2011, eq. 1):

        Delta = mu * lam^2 * terminal_factor * f      if either node is a leaf (``leaf``),
        Delta = mu * f * (lam^2 + children)           otherwise,

    f multiplied first with ``factor_first`` (SPTK), else last (PTK)."""
    if leaf:
        return prm.mu * prm.lam2 * prm.terminal_factor * factor
    if prm.factor_first:
        return prm.mu * factor * (prm.lam2 + children)
    return (prm.mu * (prm.lam2 + children)) * factor
