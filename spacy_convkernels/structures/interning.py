"""Process-wide tables that map labels, label contents and productions to int32 ids.

The compiled engine compares integers, never strings: two nodes match when their ids
are equal. A compiled structure holds its ids through a :class:`Lease`; when the last
lease on an id is collected, the key is forgotten and the id is given to the next new
key, so the tables follow the structures alive rather than every text ever seen (a
spaCy pipeline behind a server keeps a bounded size). ``births`` counts how often each
id was given: a table that describes labels by id (``kernels.growing.Coverage``) tells
a reused id from the label it described before. Ids are never pickled (a structure sent
to another process is recompiled there).
"""

import threading
from collections.abc import Hashable, Iterable

import numpy as np


class Lease:
    """The ids of some keys, held in use: they return to the interner when the lease is
    collected (:meth:`Interner.lease`)."""

    __slots__ = ("ids", "_returned")

    def __init__(self, ids: np.ndarray, returned: list) -> None:
        self.ids = ids
        self._returned = returned

    def __del__(self) -> None:
        try:
            returned, ids = self._returned, self.ids
        except AttributeError:  # a signal's exception came before __init__ ran: its ids stay counted as used
            return
        returned.append(ids)  # atomic: safe from a collection in any thread


class Interner:
    """Gives each hashable key an id while a lease on it is alive; a freed id is reused."""

    def __init__(self) -> None:
        self._ids: dict = {}
        self._keys: list = []  # by id, None for a free id
        self._free: list[int] = []
        self._uses = np.zeros(16, dtype=np.int64)  # per id: the leases that hold it, counted per occurrence
        self.births = np.zeros(16, dtype=np.int64)  # per id: how many keys it has been given to
        self._returned: list[np.ndarray] = []
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """The keys some lease holds now."""
        with self._lock:
            self._take_back()
            return len(self._ids)

    @property
    def n_ids(self) -> int:
        """The ids made so far, held or free: the length of every table indexed by id."""
        return len(self._keys)

    def lease(self, keys: Iterable[Hashable]) -> Lease:
        """The ids of ``keys`` (new keys get free or new ids), held until the lease is collected."""
        with self._lock:
            self._take_back()
            ids = np.fromiter(map(self._id, keys), dtype=np.int32)
            np.add.at(self._uses, ids, 1)
        return Lease(ids, self._returned)

    def _id(self, key: Hashable) -> int:
        i = self._ids.get(key)
        if i is None:
            if self._free:
                i = self._free.pop()
                self._keys[i] = key
            else:
                i = len(self._keys)
                self._keys.append(key)
                if i == len(self.births):
                    self._uses, self.births = _doubled(self._uses), _doubled(self.births)
            self.births[i] += 1
            self._ids[key] = i
        return i

    def _take_back(self) -> None:
        """Count the returned leases off; ids no lease holds any more become free (under the lock)."""
        if not self._returned:
            return
        returned = [self._returned.pop() for _ in range(len(self._returned))]
        ids = np.concatenate(returned)
        np.subtract.at(self._uses, ids, 1)
        for i in np.unique(ids[self._uses[ids] == 0]).tolist():
            del self._ids[self._keys[i]]
            self._keys[i] = None
            self._free.append(i)


def _doubled(array: np.ndarray) -> np.ndarray:
    """A copy twice as long, the new entries 0 (a reader of the old array keeps it)."""
    return np.concatenate([array, np.zeros_like(array)])


LABELS = Interner()
CONTENTS = Interner()
PRODUCTIONS = Interner()
