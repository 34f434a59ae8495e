"""Kernels over structures, computed by the compiled engine."""

from ..errors import InvalidParameterError, StructureTypeError, VectorsError
from .base import Kernel
from .forest_kernel import ForestKernel
from .node_similarity import CompositionalSimilarity, LexicalSimilarity
from .smoothed_tree_kernels import CompositionalSmoothedPartialTreeKernel, SmoothedPartialTreeKernel
from .transformer import KernelTransformer
from .tree_kernels import PartialTreeKernel, SubsetTreeKernel, SubtreeKernel
from .tuple_kernels import SubsequencePathKernel, ZelenkoTreeKernel
from .vectors import WordVectors

__all__ = [
    "Kernel",
    "SubtreeKernel",
    "SubsetTreeKernel",
    "PartialTreeKernel",
    "SmoothedPartialTreeKernel",
    "SubsequencePathKernel",
    "ZelenkoTreeKernel",
    "ForestKernel",
    "CompositionalSmoothedPartialTreeKernel",
    "KernelTransformer",
    "LexicalSimilarity",
    "CompositionalSimilarity",
    "WordVectors",
    "VectorsError",
    "StructureTypeError",
    "InvalidParameterError",
]
