import numpy as np

from ._packing import PackedStructures, PackedTrees
from ._settings import EngineSettings

class FixedSet:
    kind: int
    n_structures: int
    packed: PackedStructures
    labels: np.ndarray
    child_ptr: np.ndarray
    child_idx: np.ndarray
    buckets: np.ndarray
    bucket_start: np.ndarray
    occurrence_ptr: np.ndarray
    occurrence_structure: np.ndarray
    occurrence_count: np.ndarray
    roots: np.ndarray
    vector_slot: np.ndarray
    vector_groups: np.ndarray
    panel_start: np.ndarray
    group_panels: np.ndarray
    path_node: np.ndarray
    def __init__(self, settings: EngineSettings, packed: PackedStructures) -> None: ...
    def block_similarities(
        self, settings: EngineSettings, A: PackedTrees, start: int, stop: int, *, n_threads: int = 1
    ) -> tuple[np.ndarray, np.ndarray]: ...
    def __len__(self) -> int: ...
