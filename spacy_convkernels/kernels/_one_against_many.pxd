"""One structure against a whole fixed set at once, on the index of ``_index.pxd``."""
from ._index cimport Fixed
from ._packing cimport Packed
from ._settings cimport Settings
from ._workspace cimport Workspace


cdef struct Against:
    const Fixed* fixed
    const Packed* forests       # the forest kernel: the packed fixed forests
    const double* dots          # SPTK: the block's dot products (FixedSet.block_similarities)
    const long long* node_dot   # per smoothed node of the queries (A's ``smooth`` entries): its row in ``dots``, or -1


cdef bint one_against_many(Workspace* ws, const Settings* prm, const Packed* A, Py_ssize_t r,
                           const Against* against, Py_ssize_t first, int shared, double* out) noexcept nogil
