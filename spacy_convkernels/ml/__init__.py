"""Thinc models over the package's annotations, registered as spaCy architectures
(``spacy_convkernels.KernelFeatures.v1``, ``spacy_convkernels.KernelTextCat.v1``)."""

from .component_features import kernel_features
from .textcat_model import kernel_textcat

__all__ = ["kernel_features", "kernel_textcat"]
