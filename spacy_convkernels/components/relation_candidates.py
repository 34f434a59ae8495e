"""The candidate generators' earlier import path: they are the relation model's, in
:mod:`spacy_convkernels.ml.relation_candidates` (their registered names are unchanged).
A name imported from here is that module's, with a
:class:`~spacy_convkernels.errors.SettingDeprecationWarning` naming the new path."""

import warnings

from ..errors import SettingDeprecationWarning
from ..ml import relation_candidates

MOVED = ("EntityPairCandidates", "InteractionCandidates", "entity_pair_candidates", "interaction_candidates")


def __getattr__(name: str):
    """A name of :mod:`spacy_convkernels.ml.relation_candidates`, with a warning (PEP 562)."""
    if name not in MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"spacy_convkernels.components.relation_candidates.{name} moved to "
        f"spacy_convkernels.ml.relation_candidates.{name}; import it from there",
        SettingDeprecationWarning,
        stacklevel=2,
    )
    return getattr(relation_candidates, name)
