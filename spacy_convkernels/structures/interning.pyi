from collections.abc import Hashable, Iterable

import numpy as np

class Lease:
    ids: np.ndarray
    def __init__(self, ids: np.ndarray, returned: list) -> None: ...
    def __del__(self) -> None: ...

class Interner:
    births: np.ndarray
    _ids: dict
    def __init__(self) -> None: ...
    def __len__(self) -> int: ...
    @property
    def n_ids(self) -> int: ...
    def lease(self, keys: Iterable[Hashable]) -> Lease: ...

LABELS: Interner
CONTENTS: Interner
PRODUCTIONS: Interner
