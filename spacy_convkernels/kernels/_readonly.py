"""Arrays the compiled engine reads: copies or views that nobody can write to."""

import numpy as np


def frozen_copy(values, dtype) -> np.ndarray:
    """A read-only C-contiguous copy of ``values`` that cannot be made writeable again
    (its memory belongs to a bytes object)."""
    a = np.ascontiguousarray(values, dtype=dtype)
    return np.frombuffer(a.tobytes(), dtype=dtype).reshape(a.shape)


def read_only_view(values, dtype) -> np.ndarray:
    """``values`` as a C-contiguous array of ``dtype`` (a copy only if needed), seen through a read-only view."""
    view = np.ascontiguousarray(values, dtype=dtype).view()
    view.flags.writeable = False
    return view
