"""Kernels over structures, computed by the compiled engine."""
from .base import InvalidParameterError, Kernel, StructureTypeError
from .tree_kernels import PartialTreeKernel, SubsetTreeKernel, SubtreeKernel

__all__ = [
    "Kernel",
    "SubtreeKernel",
    "SubsetTreeKernel",
    "PartialTreeKernel",
    "StructureTypeError",
    "InvalidParameterError",
]
