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

KERNELS: tuple[type[Kernel], ...] = (
    SubtreeKernel,
    SubsetTreeKernel,
    PartialTreeKernel,
    SmoothedPartialTreeKernel,
    SubsequencePathKernel,
    ZelenkoTreeKernel,
    ForestKernel,
    CompositionalSmoothedPartialTreeKernel,
)
"""The registration of the package's kernels, the one list of them: each is exported here,
registered for spaCy configs as ``spacy_convkernels.NAME.v1``
(``components/registered_kernels.py``) and run through every test of the kernels;
``tests/test_registered_kernels.py`` checks the lists written by hand (pyproject.toml's
entry points, the command line's kernels) against it."""

__all__ = [
    "Kernel",
    *(kernel.__name__ for kernel in KERNELS),
    "KernelTransformer",
    "LexicalSimilarity",
    "CompositionalSimilarity",
    "WordVectors",
    "VectorsError",
    "StructureTypeError",
    "InvalidParameterError",
]
