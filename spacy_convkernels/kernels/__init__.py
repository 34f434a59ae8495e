"""Kernels over structures, computed by the compiled engine."""
from .base import InvalidParameterError, Kernel, StructureTypeError
from .graph_kernels import SubsequencePathKernel, ZelenkoTreeKernel
from .node_similarity import CompositionalSimilarity, LexicalSimilarity
from .smoothed_tree_kernels import CompositionalSmoothedPartialTreeKernel, SmoothedPartialTreeKernel
from .tree_kernels import PartialTreeKernel, SubsetTreeKernel, SubtreeKernel
from .vectors import VectorsError, WordVectors

__all__ = [
    "Kernel",
    "SubtreeKernel",
    "SubsetTreeKernel",
    "PartialTreeKernel",
    "SmoothedPartialTreeKernel",
    "SubsequencePathKernel",
    "ZelenkoTreeKernel",
    "CompositionalSmoothedPartialTreeKernel",
    "LexicalSimilarity",
    "CompositionalSimilarity",
    "WordVectors",
    "VectorsError",
    "StructureTypeError",
    "InvalidParameterError",
]
