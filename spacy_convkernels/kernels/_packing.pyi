from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

class PackedStructures:
    n_structures: int
    ready: bool
    max_label: int
    node_offset: np.ndarray
    label: np.ndarray
    def __len__(self) -> int: ...

class PackedSequences(PackedStructures):
    def __init__(self, compiled_paths: Iterable[Any]) -> None: ...

class PackedTrees(PackedStructures):
    match_key: str
    key: np.ndarray
    sorted_key: np.ndarray
    child_ptr: np.ndarray
    child_idx: np.ndarray
    order: np.ndarray
    rank: np.ndarray
    smooth_offset: np.ndarray
    smooth: np.ndarray
    def __init__(self, compiled_trees: Iterable[Any], *, key: str, smooth_kinds: ArrayLike | None = None) -> None: ...

class PackedForests(PackedStructures):
    terminal: np.ndarray
    order: np.ndarray
    rank: np.ndarray
    inside: np.ndarray
    outside: np.ndarray
    total: np.ndarray
    edge_offset: np.ndarray
    edge_head: np.ndarray
    edge_key: np.ndarray
    edge_order: np.ndarray
    edge_prob: np.ndarray
    tail_ptr: np.ndarray
    tail_idx: np.ndarray
    def __init__(self, compiled_forests: Iterable[Any]) -> None: ...
