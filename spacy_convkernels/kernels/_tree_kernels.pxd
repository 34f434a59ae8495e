"""The tree kernels' recursions: ST, SST, PTK (exact node matching) and SPTK (smoothed)."""
from ._packing cimport TreeView
from ._settings cimport Settings
from ._workspace cimport Workspace


cdef double tree_kernel(Workspace* ws, const Settings* prm, const TreeView* a, const TreeView* b) noexcept nogil
cdef double smoothed_kernel(Workspace* ws, const Settings* prm, const TreeView* a, const TreeView* b) noexcept nogil
cdef bint delta_table(Workspace* ws, const Settings* prm, const TreeView* a, const TreeView* b,
                      double* out) noexcept nogil
