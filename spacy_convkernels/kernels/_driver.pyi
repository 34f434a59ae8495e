from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from ._index import FixedSet
from ._packing import PackedStructures
from ._settings import EngineSettings

def gram(
    settings: EngineSettings,
    A: PackedStructures,
    B: PackedStructures,
    *,
    symmetric: bool = False,
    inv_norm_a: ArrayLike | None = None,
    inv_norm_b: ArrayLike | None = None,
    n_threads: int = 1,
    progress: Callable[[int], object] | None = None,
) -> np.ndarray: ...
def pairs(
    settings: EngineSettings,
    A: PackedStructures,
    B: PackedStructures,
    index: ArrayLike,
    *,
    inv_norm_a: ArrayLike | None = None,
    inv_norm_b: ArrayLike | None = None,
    n_threads: int = 1,
    progress: Callable[[int], object] | None = None,
) -> np.ndarray: ...
def gram_against(
    settings: EngineSettings,
    A: PackedStructures,
    B: FixedSet,
    *,
    symmetric: bool = False,
    inv_norm_a: ArrayLike | None = None,
    inv_norm_b: ArrayLike | None = None,
    n_threads: int = 1,
    progress: Callable[[int], object] | None = None,
) -> np.ndarray: ...
def sorted_paths(A: PackedStructures, keep_order: bool = False) -> tuple[np.ndarray, np.ndarray]: ...

DELTA_CELLS: int

def deltas(settings: EngineSettings, A: PackedStructures, B: PackedStructures, r: int, c: int) -> np.ndarray: ...
