"""The work of the engine on a structure, counted before any: what ``max_work`` bounds.

Past one pass over the nodes (merges of sorted lists, the sums of the pairs with a leaf
per key), the engine spends its time on the pairs of nodes that can match and on what
each pair reads of its children. For a pair of structures (a, b) this module counts

    work(a, b) = sum over groups g of W_a(g) * W_b(g),    W_t(g) = sum over t's nodes x in g of w(x),

g a group of the nodes that can pair (equal match keys, ...) and w(x) what a node
brings to each of its pairs, from the recurrences of the engine (``_tree_kernels``,
``_tuple_kernels``, ``_forest_kernels`` and the one-against-many ``_one_against_many``):

- **PTK, SPTK** (``_children.child_sum``): a pair of inner nodes (x, y) with equal keys
  runs the child-subsequence programme, |ch(x)| rows of |ch(y)| + 1 cells, stored or
  top-down alike; a pair with a leaf is O(1) (summed per key beyond ``stored_pairs``).
  w(x) = 1 + |ch(x)| for inner nodes grouped by key: w(x) w(y) covers the pair and its cells.
- **ST, SST** (``_children.production_delta``): equal productions have equal child
  counts, read aligned by position: 1 + |ch| per pair, so w(x) = sqrt(1 + |ch(x)|),
  inner nodes grouped by production.
- **SPTK's smoothed nodes** (word vectors, compositions) pair with the smoothed nodes of
  the other tree of their kind and similarity group (the buckets of ``_index``): inner
  ones grouped by (kind, group) as above, and every pair of smoothed nodes may need a
  similarity, a dot product of the vectors' ``dim`` coordinates between the nodes of a
  group (``dim // 4`` units, as the engine's ``tick`` counts it) and O(1) between the
  others: ``n_smooth^2 + dim // 4 * sum over groups of n_group^2``.
- **Zelenko** (``zelenko_kernel``): the pairs read from the roots, and the index's
  buckets, pair tuples of equal edges; inner nodes grouped by edge, w(x) = 1 + |ch(x)|,
  and with word vectors ``dim // 4`` more per pair of nodes of one edge (each cell of the
  programme computes the tuple similarity).
- **paths** (``path_kernel``): one programme of n x (m + 1) cells: W = 1 + n, plus
  ``dim // 4`` per pair of positions of one edge with word vectors.
- **forests** (``forest_kernel``): one double per pair of nodes of equal labels, kept
  for the whole pair (4 units each: the memory, about 8 bytes a unit at most), and
  1 + tails per pair of hyper-edges of equal productions (aligned), so w = 2 per node
  grouped by label and sqrt(1 + tails) per hyper-edge grouped by production.

``structure_work`` gives work(t, t) = sum_g W_t(g)^2 of each structure. Without the
label table the count is a lower bound of the count with it (smoothed nodes and tuples
grouped by label, a finer partition than similarity groups and edges, whose squares sum
to less; no similarities), which the kernels check first, before their tables describe
the structures' new labels (2 s for a root of 4 million children). By the
Cauchy-Schwarz inequality, work(a, b) <= sqrt(work(a, a) work(b, b)), so a bound on each
structure's own K(t, t), which normalization computes anyway, bounds every pair a kernel
computes with it; the one-against-many engine pairs a query with the distinct subtrees
of a fixed set, no more than with the fixed structures one by one. A unit is 2 to 10 ns
of one core (about 3 ns for the wide shapes' cells, 6 to 9 ns for chains, whose pairs
cost more than their one cell): the default bound, :data:`DEFAULT_MAX_WORK`, is about a
second per pair at the slowest.
"""

from collections.abc import Sequence

import numpy as np

from ..utils.validation import COUNT
from ._tables import NodeSimilarity, SimilarityKind, TupleTable
from .kinds import KIND_TRAITS, Family

DEFAULT_MAX_WORK = 10**8
"""The default ``max_work`` of every kernel: about a second of one core per pair at the
slowest shapes (a single-label chain of 5,000 nodes for SST, 0.9 s; a root of 10,000
children for PTK, 0.35 s), 2,400 times the work of the largest TREC question and GE
sentence, 21 times that of the largest whole GE document (CSPTK; ``bench/speed/kernels.py``,
``StructureWork`` and ``RealWork``)."""

MAX_WORK = [COUNT, None]
"""The constraint of ``max_work`` in every kernel's table."""


FOREST_PAIR_UNITS = 4
"""Units per pair of forest nodes of equal labels: each keeps a double for the whole pair."""


def reads_table(kernel_kind: int) -> bool:
    """Whether the count of the engine kind ``kernel_kind`` reads its label table (smoothed
    nodes, edges, word vectors)."""
    return KIND_TRAITS[kernel_kind].table in ("similarity", "tuples")


def structure_work(kernel_kind: int, structures: Sequence, match_key: str | None, table=None) -> np.ndarray:
    """work(t, t) of each compiled structure (see the module) for the engine kind
    ``kernel_kind`` whose trees pair by ``match_key``, with ``table`` the label table the
    call publishes (SPTK's node similarity, the tuple table; None: no smoothing), as float64."""
    if not len(structures):
        return np.zeros(0)
    family = KIND_TRAITS[kernel_kind].family
    if family is Family.FOREST:
        return np.array([forest_work(forest) for forest in structures])
    if family is Family.PATH:
        return path_work(structures, table)
    return tree_work(kernel_kind, structures, match_key, table)


def _squares_by_group(
    n_structures: int, structure: np.ndarray, group: np.ndarray, weight: np.ndarray, factor: np.ndarray | None = None
) -> np.ndarray:
    """Per structure, the sum over its groups of (the sum of ``weight`` over the group)^2,
    times the group's ``factor`` (one value per group, read at its first node) when given:
    one entry per node (``structure``, ``group``, ...), one pass for all structures."""
    if not len(group):
        return np.zeros(n_structures)
    group = group.astype(np.int64)
    group -= group.min()
    span = int(group.max()) + 1
    cells, first, inverse = np.unique(structure.astype(np.int64) * span + group, return_index=True, return_inverse=True)
    sums = np.bincount(inverse.ravel(), weights=weight, minlength=len(cells))
    squares = sums * sums if factor is None else sums * sums * factor[first]
    return np.bincount(cells // span, weights=squares, minlength=n_structures)


def _similarity_cost(table) -> int:
    """Units of one similarity of two labels by their vectors (``dim // 4``, as the engine's ``tick``)."""
    similarity = table.node_similarity if isinstance(table, TupleTable) else table
    if not isinstance(similarity, NodeSimilarity):
        return 0
    return int(similarity.vectors.shape[1]) // 4 if len(similarity.rows) and similarity.rows.max() >= 0 else 0


def tree_work(kernel_kind: int, trees: Sequence, match_key: str | None, table=None) -> np.ndarray:
    """work(t, t) of each compiled tree for the tree kinds (ST, SST, PTK, SPTK, Zelenko)."""
    n = len(trees)
    sizes = np.array([tree.n_nodes for tree in trees], dtype=np.int64)
    child_ptr = np.concatenate([np.asarray(tree.child_ptr, dtype=np.int64) for tree in trees])
    children = np.delete(np.diff(child_ptr), np.cumsum(sizes + 1)[:-1] - 1)  # no node between two trees
    owner = np.repeat(np.arange(n), sizes)
    inner = children > 0
    weight = 1.0 + children

    def per_node(name: str) -> np.ndarray:
        return np.concatenate([np.asarray(getattr(tree, name), dtype=np.int64) for tree in trees])

    traits = KIND_TRAITS[kernel_kind]
    if traits.table == "tuples":  # Zelenko: by edge (by tuple label without the table: a lower bound)
        labels = per_node("labels")
        edges = np.asarray(table.edges, dtype=np.int64)[labels] if isinstance(table, TupleTable) else labels
        work = _squares_by_group(n, owner[inner], edges[inner], weight[inner])
        cost = _similarity_cost(table)
        return work + cost * _squares_by_group(n, owner, edges, np.ones(len(edges))) if cost else work
    keys = per_node(f"{match_key}s")
    work = np.zeros(n)
    if traits.table == "similarity" and isinstance(table, NodeSimilarity):
        labels = per_node("labels")
        kinds = np.asarray(table.kinds, dtype=np.int64)[labels]
        smooth = kinds != SimilarityKind.EXACT
        if smooth.any():  # smoothed nodes: one group per kind and similarity group, after the keys
            bucket = kinds * (int(np.max(table.groups)) + 1) + np.asarray(table.groups, dtype=np.int64)[labels]
            keys = np.where(smooth, keys.max() + 1 + bucket, keys)
            work += np.bincount(owner[smooth], minlength=n).astype(np.float64) ** 2
            ones = np.ones(int(smooth.sum()))
            work += _similarity_cost(table) * _squares_by_group(n, owner[smooth], bucket[smooth], ones)
    if traits.aligned_by_position:  # equal productions, equal child counts: N^2 (1 + |ch|)
        return work + _squares_by_group(n, owner[inner], keys[inner], np.ones(int(inner.sum())), weight[inner])
    return work + _squares_by_group(n, owner[inner], keys[inner], weight[inner])


def path_work(paths: Sequence, table=None) -> np.ndarray:
    """work(p, p) of each compiled path: (1 + n)^2, plus the vectors' cost of the pairs of positions of one edge."""
    lengths = np.array([len(path.labels) for path in paths], dtype=np.int64)
    work = (1.0 + lengths) ** 2
    cost = _similarity_cost(table)
    if cost and lengths.sum():
        labels = np.concatenate([np.asarray(path.labels, dtype=np.int64) for path in paths])
        edges = np.asarray(table.edges, dtype=np.int64)[labels]
        owner = np.repeat(np.arange(len(paths)), lengths)
        work += cost * _squares_by_group(len(paths), owner, edges, np.ones(len(edges)))
    return work


def forest_work(forest) -> float:
    """work(F, F) of a compiled forest: its pairs of nodes of equal labels (kept, 4 units
    each) and of hyper-edges of equal productions (1 + tails each)."""
    _, per_label = np.unique(np.asarray(forest.labels), return_counts=True)
    productions, first, per_production = np.unique(
        np.asarray(forest.productions), return_index=True, return_counts=True
    )
    tails = np.diff(np.asarray(forest.tail_ptr, dtype=np.float64))[first] if len(productions) else np.zeros(0)
    pairs = float(np.sum(per_label.astype(np.float64) ** 2))
    return FOREST_PAIR_UNITS * pairs + float(np.sum(per_production.astype(np.float64) ** 2 * (tails + 1.0)))
