"""Label-indexed arrays that grow as labels appear, safe to read from other threads.

The engine reads its tables (kinds, groups, vector rows, weights per label id) without
the GIL, possibly while another thread describes new labels. A :class:`GrowingArray`
makes that safe by writing each entry before the table that covers it is published
(under the table's lock) and rewriting it only when the interner has given its id to
a new label (:class:`Coverage`), which no running call reads: the structures of a call
hold their ids. So a :meth:`view` handed out earlier keeps its meaning for every entry
a live structure uses. When the capacity runs out, the entries move to a new buffer of
1.5 times the size; earlier views keep the old buffer alive.
"""

import numpy as np


class GrowingArray:
    """An array of ``shape[1:] = item_shape`` items, default ``fill``, grown on demand."""

    def __init__(self, dtype, fill, item_shape: tuple = ()):
        self.fill = fill
        self.data = np.full((0, *item_shape), fill, dtype=dtype)
        self.size = 0

    def reserve(self, size: int) -> None:
        """Make entries ``0 .. size - 1`` addressable (new ones hold ``fill``)."""
        if size > len(self.data):
            capacity = max(size, len(self.data) + len(self.data) // 2, 16)
            grown = np.full((capacity, *self.data.shape[1:]), self.fill, dtype=self.data.dtype)
            grown[: self.size] = self.data[: self.size]
            self.data = grown
        self.size = max(self.size, size)

    def append(self, item) -> int:
        """Store ``item`` after the last entry; its index."""
        self.reserve(self.size + 1)
        self.data[self.size - 1] = item
        return self.size - 1

    def view(self) -> np.ndarray:
        """The entries so far, read-only."""
        view = self.data[: self.size]
        view.flags.writeable = False
        return view


class Coverage:
    """Which label ids a table has described, readable without the table's lock.

    Each id records the publication that covered it and the birth of the id it described
    (an interner gives a freed id to a new label: ``Interner.births``). A reader holding
    publication g (:meth:`publish`) trusts only ids recorded at g or before for the
    label they hold now, so an id another thread is describing right now, described
    after g, or given to a new label since, sends the reader to the lock."""

    UNSEEN = np.iinfo(np.int64).max

    def __init__(self, interner):
        self.interner = interner
        self.generation = GrowingArray(np.int64, self.UNSEEN)
        self.birth = GrowingArray(np.int64, 0)
        self.published = 0

    def missing(self, ids: np.ndarray) -> np.ndarray:
        """Indices k of the ``ids`` not described for their present label (call under the lock)."""
        self.generation.reserve(int(ids.max()) + 1)
        self.birth.reserve(int(ids.max()) + 1)
        stale = self.birth.data[ids] != self.interner.births[ids]
        return np.flatnonzero((self.generation.data[ids] == self.UNSEEN) | stale)

    def record(self, ids) -> None:
        """Mark ``ids`` as described in the coming publication (call under the lock)."""
        self.generation.data[ids] = self.published + 1  # first: a reader sees a newer generation
        self.birth.data[ids] = self.interner.births[ids]

    def publish(self) -> tuple:
        """A new publication: (generations so far, births described, its number)."""
        self.published += 1
        return self.generation.view(), self.birth.view(), self.published

    def covers(self, snapshot: tuple, ids: np.ndarray) -> bool:
        """Whether every id was described for its present label by publication ``snapshot``."""
        generations, births, published = snapshot
        if ids.size == 0:
            return True
        return ids.max() < len(generations) and bool(
            (generations[ids] <= published).all() and (births[ids] == self.interner.births[ids]).all()
        )
