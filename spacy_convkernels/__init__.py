"""spacy-convkernels: tree, path and graph convolution kernels for spaCy pipelines."""

from .errors import (
    ConvKernelsError,
    ConvKernelsWarning,
    CorpusFileError,
    CorpusFormatError,
    CorpusWarning,
    ExtensionConflictError,
    ForestParseError,
    InvalidForestError,
    InvalidParameterError,
    InvalidTreeError,
    KernelOverflowError,
    KernelUnderflowWarning,
    MissingAnnotationError,
    MissingDependencyError,
    NotInitializedError,
    StructureTypeError,
    TreeParseError,
    UnknownRepresentationError,
    VectorsError,
)
from .structures import Tree

__version__ = "0.1.0"
__all__ = [
    "Tree",
    "ConvKernelsError",
    "TreeParseError",
    "InvalidTreeError",
    "InvalidForestError",
    "ForestParseError",
    "CorpusFormatError",
    "StructureTypeError",
    "InvalidParameterError",
    "VectorsError",
    "CorpusFileError",
    "KernelOverflowError",
    "MissingAnnotationError",
    "MissingDependencyError",
    "ExtensionConflictError",
    "UnknownRepresentationError",
    "NotInitializedError",
    "ConvKernelsWarning",
    "KernelUnderflowWarning",
    "CorpusWarning",
]
