"""The kernels over (edge, node) tuples: the subsequence path kernel and Zelenko's tree kernel."""
from ._packing cimport TreeView
from ._settings cimport Settings
from ._workspace cimport Workspace


cdef double path_kernel(Workspace* ws, const Settings* prm, const int* a, int n, const int* b, int m) noexcept nogil
cdef double zelenko_kernel(Workspace* ws, const Settings* prm, const TreeView* a, const TreeView* b) noexcept nogil
