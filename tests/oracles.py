"""The oracle of every kind of the engine's table (``kinds.KIND_TRAITS``): a kernel of the
kind, its definition in plain Python (``reference_kernels.py``) and pairs of structures to
compare them on. ``test_reference_kernels.py`` runs every kind of the table through its
oracle, so a kind without one fails there."""

from functools import partial
from typing import NamedTuple

import numpy as np
import reference_kernels as ref
from path_data import path_pairs, rooted_pairs
from random_trees import random_pairs, small_tree
from smoothed_data import CASES as SMOOTHED_CASES
from smoothed_data import PAIRS as SMOOTHED_PAIRS
from smoothed_data import sigma_key

from spacy_convkernels.kernels import (
    ForestKernel,
    Kernel,
    PartialTreeKernel,
    SubsequencePathKernel,
    SubsetTreeKernel,
    SubtreeKernel,
    ZelenkoTreeKernel,
)
from spacy_convkernels.kernels.kinds import KernelKind
from spacy_convkernels.structures.forest import Forest


class Oracle(NamedTuple):
    kernel: Kernel  # a kernel of the kind
    reference: object  # reference(a, b): the unnormalized value, from the definition
    pairs: list  # pairs of structures (a, b)


def _forest_pairs(seed: int, n: int) -> list:
    rng = np.random.default_rng(seed)

    def forest():
        n_leaves = int(rng.integers(1, 6))
        return Forest.from_trees([(small_tree(rng, n_leaves), float(rng.uniform(0.1, 1))) for _ in range(3)])

    return [(forest(), forest()) for _ in range(n)]


TREES = random_pairs(seed=64, n_pairs=40)
_SPTK, _SIGMA = SMOOTHED_CASES[0]
_SPTK_PARAMS = {name: _SPTK.get_params()[name] for name in ("lam", "mu", "terminal_factor", "threshold")}
_TUPLES = ref.tuple_kernel()

ORACLES = {
    KernelKind.SUBTREE_KELP: Oracle(SubtreeKernel(lam=0.4, variant="kelp"), partial(ref.subtree_kelp, lam=0.4), TREES),
    KernelKind.SUBTREE_TEXTBOOK: Oracle(SubtreeKernel(lam=0.7), partial(ref.subtree_textbook, lam=0.7), TREES),
    KernelKind.SUBSET_TREE: Oracle(SubsetTreeKernel(lam=0.4), partial(ref.subset_tree, lam=0.4), TREES),
    KernelKind.PARTIAL_TREE: Oracle(
        PartialTreeKernel(lam=0.4, mu=0.4, terminal_factor=2.0),
        partial(ref.partial_tree, lam=0.4, mu=0.4, terminal_factor=2.0),
        TREES,
    ),
    KernelKind.SMOOTHED_PARTIAL_TREE: Oracle(
        _SPTK,
        partial(ref.smoothed_partial_tree, sigma=_SIGMA, match=sigma_key, **_SPTK_PARAMS),
        [(a, b) for a, b in SMOOTHED_PAIRS[:60] if a.n_nodes + b.n_nodes < 100],
    ),
    KernelKind.ZELENKO_TREE: Oracle(
        ZelenkoTreeKernel(lam=0.5), partial(ref.zelenko, k=_TUPLES, lam=0.5), rooted_pairs(seed=8, n=40)
    ),
    KernelKind.SUBSEQUENCE_PATH: Oracle(
        SubsequencePathKernel(lam=0.5),
        lambda a, b: ref.subsequence_path(a.labels, b.labels, _TUPLES, 0.5),
        path_pairs(seed=1, n=40),
    ),
    KernelKind.FOREST: Oracle(ForestKernel(lam=0.4), partial(ref.forest_kernel, lam=0.4), _forest_pairs(seed=3, n=30)),
}
