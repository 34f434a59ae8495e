"""A relation component's thresholds: the setting (a number for every label, a label's
own, or null), the ones chosen at initialization on the training candidates' scores
(:func:`~spacy_convkernels.learn.thresholds.choose_thresholds`), and which one each
label has in effect."""

from collections.abc import Mapping

import numpy as np

from ..errors import InvalidParameterError
from ..learn.thresholds import choose_thresholds
from ..utils.log import logger
from ..utils.validation import SHARE
from .relation_scores import DEFAULT_THRESHOLD

#: What a null ``threshold`` takes of the thresholds chosen at initialization.
THRESHOLD_CHOICES = ("one", "per_label")


def check_threshold(value, *, where: str, error=InvalidParameterError) -> None:
    """Raise ``error`` unless ``value`` is a threshold setting: null, a number in [0, 1],
    or a mapping of labels to such numbers."""
    if value is None or (not isinstance(value, bool) and SHARE.accepts(value)):
        return
    if isinstance(value, Mapping) and all(
        isinstance(label, str) and not isinstance(v, bool) and SHARE.accepts(v) for label, v in value.items()
    ):
        return
    raise error(f"{where}: threshold must be a number in [0, 1], a label -> number mapping or null, got {value!r}")


def check_threshold_choice(value, *, where: str, error=InvalidParameterError) -> None:
    """Raise ``error`` unless ``value`` is one of :data:`THRESHOLD_CHOICES`."""
    if value not in THRESHOLD_CHOICES:
        raise error(f'{where}: threshold_choice must be "one" or "per_label", got {value!r}')


def thresholds_in_effect(labels, cfg: Mapping) -> dict[str, float]:
    """Each label's threshold by a component's ``cfg``: its setting's (``threshold``),
    else the one chosen at initialization (with ``threshold_choice = "per_label"``, the
    label's own), else :data:`~.relation_scores.DEFAULT_THRESHOLD`."""
    setting = cfg["threshold"]
    per_label = cfg.get("threshold_choice", "one") == "per_label"
    chosen = (cfg.get("chosen_thresholds") or {}) if per_label else {}
    fallback = cfg.get("chosen_threshold")
    fallback = DEFAULT_THRESHOLD if fallback is None else fallback

    def of(label: str) -> float:
        if setting is not None and not isinstance(setting, Mapping):
            return float(setting)
        if isinstance(setting, Mapping) and label in setting:
            return float(setting[label])
        return float(chosen.get(label, fallback))

    return {label: of(label) for label in labels}


def chosen_thresholds(
    name: str, scores: np.ndarray, truths: np.ndarray, labels, *, choice: str
) -> tuple[float, dict[str, float]]:
    """(the one threshold, each label's own) of the best micro F1 of the training
    candidates' ``scores`` (eligible ones: :func:`~spacy_convkernels.learn.thresholds.eligible`)
    against their gold labels, at most 1; logged, saying which ``choice`` a null
    threshold takes."""
    one, per_label, f1 = choose_thresholds(scores, truths.astype(bool))
    own = {label: min(float(t), 1.0) for label, t in zip(labels, per_label)}
    listed = ", ".join(f"{label} {t:.3f}" for label, t in own.items())
    used = "each label's" if choice == "per_label" else "the one for all"
    logger.info(
        f"{name}: thresholds chosen on the {len(scores):,} training candidates' out-of-fold scores: one "
        f"for all labels {one:.3f} (micro F1 {f1['one']:.3f}); per label {listed} (micro F1 "
        f"{f1['per_label']:.3f}); with threshold = null, {used} is used (threshold_choice)"
    )
    return min(one, 1.0), own
