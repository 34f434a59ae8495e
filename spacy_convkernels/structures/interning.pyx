# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
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

import numpy as np

cimport numpy as cnp

cnp.import_array()


cdef class Lease:
    """The ids of some keys, held in use: they return to the interner when the lease is
    collected (:meth:`Interner.lease`)."""

    def __init__(self, ids, list returned):
        self.ids = ids
        self._returned = returned

    def __del__(self):
        if self._returned is not None:  # None: a signal's exception came before __init__ ran; its ids stay used
            self._returned.append(self.ids)  # atomic: safe from a collection in any thread


cdef class Interner:
    """Gives each hashable key an id while a lease on it is alive; a freed id is reused."""

    def __init__(self):
        self._ids = {}
        self._keys = []  # by id, None for a free id
        self._free = []
        self._uses = np.zeros(16, dtype=np.int64)  # per id: the leases that hold it, counted per occurrence
        self.births = np.zeros(16, dtype=np.int64)  # per id: how many keys it has been given to
        self._returned = []
        self._lock = threading.Lock()

    def __len__(self):
        """The keys some lease holds now."""
        with self._lock:
            self._take_back()
            return len(self._ids)

    @property
    def n_ids(self):
        """The ids made so far, held or free: the length of every table indexed by id."""
        return len(self._keys)

    def lease(self, keys):
        """The ids of ``keys`` (new keys get free or new ids), held until the lease is collected."""
        return self.take(tuple(keys))

    cdef Lease take(self, tuple keys):
        """:meth:`lease` of a tuple."""
        cdef cnp.npy_intp n = len(keys), k
        cdef cnp.ndarray ids = cnp.PyArray_EMPTY(1, &n, cnp.NPY_INT32, 0)
        cdef int* out = <int*>cnp.PyArray_DATA(ids)
        cdef long long* uses
        with self._lock:
            self._take_back()
            for k in range(n):
                out[k] = self._id(keys[k])
            uses = <long long*>cnp.PyArray_DATA(self._uses)  # after _id, which may have grown it
            for k in range(n):
                uses[out[k]] += 1
        return Lease(ids, self._returned)

    cdef int _id(self, key) except -1:
        found = self._ids.get(key)
        if found is not None:
            return found
        cdef int i
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

    cdef _take_back(self):
        """Count the returned leases off; ids no lease holds any more become free (under the lock)."""
        cdef cnp.ndarray ids
        cdef const int* held
        cdef long long* uses = <long long*>cnp.PyArray_DATA(self._uses)
        cdef Py_ssize_t k
        cdef int i
        while self._returned:
            ids = self._returned.pop()
            held = <const int*>cnp.PyArray_DATA(ids)
            for k in range(cnp.PyArray_SIZE(ids)):
                i = held[k]
                uses[i] -= 1
                if uses[i] == 0:
                    del self._ids[self._keys[i]]
                    self._keys[i] = None
                    self._free.append(i)


def _doubled(array):
    """A copy twice as long, the new entries 0 (a reader of the old array keeps it)."""
    return np.concatenate([array, np.zeros_like(array)])


LABELS = Interner()
CONTENTS = Interner()
PRODUCTIONS = Interner()
