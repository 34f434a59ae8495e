"""The interners' C interface: a lease taken without a Python call per key."""
cimport numpy as cnp


cdef class Lease:
    cdef readonly cnp.ndarray ids
    cdef list _returned


cdef class Interner:
    cdef readonly dict _ids
    cdef list _keys, _free, _returned
    cdef cnp.ndarray _uses
    cdef readonly cnp.ndarray births
    cdef object _lock
    cdef Lease take(self, tuple keys)
    cdef int _id(self, key) except -1
    cdef _take_back(self)
