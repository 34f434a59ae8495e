"""The earlier import path of :mod:`spacy_convkernels.learn.klsh_forest`, kept for earlier
code with a warning ("forest" alone is the parse forest of :mod:`spacy_convkernels.structures.forest`)."""

import warnings

from ..errors import SettingDeprecationWarning
from .klsh_forest import KLSHForestClassifier

__all__ = ["KLSHForestClassifier"]

warnings.warn(
    "spacy_convkernels.learn.forest is now spacy_convkernels.learn.klsh_forest",
    SettingDeprecationWarning,
    stacklevel=2,
)
