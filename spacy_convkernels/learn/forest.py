"""The KLSH forest's earlier import path: it is :mod:`spacy_convkernels.learn.klsh_forest`
("forest" alone is the parse forest of :mod:`spacy_convkernels.structures.forest`). A name
imported from here is that module's, with a
:class:`~spacy_convkernels.errors.SettingDeprecationWarning` naming the new path."""

import warnings

from ..errors import SettingDeprecationWarning
from . import klsh_forest

MOVED = ("KLSHForestClassifier",)


def __getattr__(name: str):
    """A name of :mod:`spacy_convkernels.learn.klsh_forest`, with a warning (PEP 562)."""
    if name not in MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"spacy_convkernels.learn.forest.{name} moved to spacy_convkernels.learn.klsh_forest.{name}; "
        "import it from there",
        SettingDeprecationWarning,
        stacklevel=2,
    )
    return getattr(klsh_forest, name)
