"""spacy-convkernels: tree, path and graph convolution kernels for spaCy pipelines.

``Tree`` is imported on first use (module ``__getattr__``), so that importing a light
part of the package, such as the command line, imports no numpy."""

from .errors import (
    ConvKernelsError,
    ConvKernelsWarning,
    CorpusFileError,
    CorpusFormatError,
    CorpusWarning,
    ExtensionConflictError,
    ForestParseError,
    InvalidForestError,
    InvalidGraphError,
    InvalidParameterError,
    InvalidTreeError,
    KernelOverflowError,
    KernelUnderflowWarning,
    MissingAnnotationError,
    MissingAnnotationWarning,
    MissingDependencyError,
    ModelFileError,
    NotInitializedError,
    OutputFileError,
    SchedulerError,
    SettingDeprecationWarning,
    StructureSizeError,
    StructureTypeError,
    TreeParseError,
    UnknownRepresentationError,
    VectorsError,
)

__version__ = "0.1.0"
__all__ = [
    "Tree",
    "ConvKernelsError",
    "TreeParseError",
    "InvalidTreeError",
    "InvalidForestError",
    "InvalidGraphError",
    "ForestParseError",
    "CorpusFormatError",
    "StructureTypeError",
    "InvalidParameterError",
    "StructureSizeError",
    "VectorsError",
    "CorpusFileError",
    "KernelOverflowError",
    "MissingAnnotationError",
    "MissingDependencyError",
    "ModelFileError",
    "OutputFileError",
    "ExtensionConflictError",
    "UnknownRepresentationError",
    "NotInitializedError",
    "SchedulerError",
    "ConvKernelsWarning",
    "KernelUnderflowWarning",
    "CorpusWarning",
    "MissingAnnotationWarning",
    "SettingDeprecationWarning",
]


def __getattr__(name: str):
    if name == "Tree":
        from .structures import Tree

        return Tree
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), "Tree"})
