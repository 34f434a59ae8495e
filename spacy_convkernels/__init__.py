"""spacy-convkernels: tree, path and graph convolution kernels for spaCy pipelines."""
from .errors import ConvKernelsError, CorpusFormatError, InvalidTreeError, KernelOverflowError, TreeParseError
from .structures import Tree

__version__ = "0.1.0"
__all__ = ["Tree", "ConvKernelsError", "TreeParseError", "InvalidTreeError", "CorpusFormatError", "KernelOverflowError"]
