"""The forest kernel's recursion (Zhang et al. 2009, eqs. 8-10)."""
from ._packing cimport ForestView
from ._settings cimport Settings
from ._workspace cimport Workspace


cdef double forest_kernel(Workspace* ws, const Settings* prm, const ForestView* a,
                          const ForestView* b) noexcept nogil
