"""The table of kernel kinds (:data:`KIND_TRAITS`): one row per kind of the engine, with
everything in which kinds differ. The engine reads the row (``_settings`` copies it into
the settings of every call) and never compares kinds."""

from enum import IntEnum
from typing import NamedTuple


class Family(IntEnum):
    """The structures a kind reads: packed trees, paths (sequences of tuples) or forests.
    The C constants of ``_settings.pxd`` hold the same values."""

    TREE = 0
    PATH = 1
    FOREST = 2


class BucketRule(IntEnum):
    """How a one-against-many index (``_index.pyx``) sorts a kind's nodes. The C constants
    of ``_settings.pxd`` hold the same values."""

    BY_KEY = 0  # nodes pair when their match keys are equal
    BY_KEY_OR_GROUP = 1  # exact labels by match key, smoothed ones by similarity group
    BY_TUPLE = 2  # tuples by edge and node label, or edge and node group
    NO_BUCKETS = 3  # no index of nodes


class KernelKind(IntEnum):
    """The recursions of the engine, each with its row in :data:`KIND_TRAITS`."""

    SUBTREE_KELP = 0
    SUBTREE_TEXTBOOK = 1
    SUBSET_TREE = 2
    PARTIAL_TREE = 3
    SMOOTHED_PARTIAL_TREE = 4
    ZELENKO_TREE = 5
    SUBSEQUENCE_PATH = 6
    FOREST = 7


class KindTraits(NamedTuple):
    """One kernel kind as the engine reads it.

    ``family`` the structures it reads; ``match_keys`` (trees) the keys it can pair nodes
    by; ``table`` the label table it needs: ``"similarity"`` (SPTK: smoothed nodes pair by
    similarity), ``"tuples"`` (Zelenko, path), ``"weights"`` (optional label weights) or
    None (it takes none); ``bucket_rule`` how a one-against-many index sorts its nodes;
    ``sums_of_deltas`` whether K is the sum of Delta over node pairs (``deltas`` exports
    the table and ``explain`` draws it; a tree kind without: K is the value of the pair of
    roots, as Zelenko's).

    The Delta of a sum of Deltas (``_deltas.pxd``): ``aligned_by_position`` whether a
    fragment's children align by position, Delta = lam * prod_k f over aligned children
    (ST, SST), else as subsequences (PTK, SPTK); f of a pair of inner children with equal
    productions is ``child_offset`` + their Delta, of two leaves 1, of other pairs
    ``mismatch_factor``; ``factor_first`` whether the pair's factor is multiplied first (SPTK)
    or last (PTK) in a Delta of subsequences (the orders the engine has always used:
    another changes the last bits)."""

    family: Family
    match_keys: tuple[str, ...]
    table: str | None
    bucket_rule: BucketRule
    sums_of_deltas: bool
    aligned_by_position: bool = False
    child_offset: float = 0.0
    mismatch_factor: float = 1.0
    factor_first: bool = False


KIND_TRAITS: dict[int, KindTraits] = {
    KernelKind.SUBTREE_KELP: KindTraits(
        Family.TREE, ("production",), "weights", BucketRule.BY_KEY, True, aligned_by_position=True
    ),
    KernelKind.SUBTREE_TEXTBOOK: KindTraits(
        Family.TREE, ("production",), "weights", BucketRule.BY_KEY, True, aligned_by_position=True, mismatch_factor=0.0
    ),
    KernelKind.SUBSET_TREE: KindTraits(
        Family.TREE, ("production",), "weights", BucketRule.BY_KEY, True, aligned_by_position=True, child_offset=1.0
    ),
    KernelKind.PARTIAL_TREE: KindTraits(Family.TREE, ("content",), "weights", BucketRule.BY_KEY, True),
    # SPTK without vectors matches contents, as KeLP
    KernelKind.SMOOTHED_PARTIAL_TREE: KindTraits(
        Family.TREE, ("label", "content"), "similarity", BucketRule.BY_KEY_OR_GROUP, True, factor_first=True
    ),
    KernelKind.ZELENKO_TREE: KindTraits(Family.TREE, ("label",), "tuples", BucketRule.BY_TUPLE, False),
    KernelKind.SUBSEQUENCE_PATH: KindTraits(Family.PATH, (), "tuples", BucketRule.BY_TUPLE, False),
    KernelKind.FOREST: KindTraits(Family.FOREST, (), None, BucketRule.NO_BUCKETS, False),
}
