"""Decision thresholds on label scores: the ones of the best micro F1 on scored candidates
(a relation component chooses them at initialize, on out-of-fold scores), and the
precision-recall curve of one label's scores.

``scores`` is a (candidates x labels) array where ``-inf`` marks a label a candidate
cannot take (with single-label decisions, every label but its best: :func:`eligible`);
``truths`` the matching boolean array of gold labels. A label is predicted for a
candidate when its score reaches the label's threshold. Micro F1 is ``2 TP / (P + G)``
over all labels (TP right predictions, P predictions, G gold labels), so each label's
threshold can be moved with the others held (coordinate ascent, :func:`choose_thresholds`).
"""

import numpy as np


def eligible(scores: np.ndarray, *, single_label: bool) -> np.ndarray:
    """``scores`` with ``-inf`` where a candidate cannot take a label: with
    ``single_label``, every label but its best (the first of equal best ones)."""
    scores = np.asarray(scores, dtype=np.float64)
    if not single_label or not scores.size:
        return scores
    best = scores.argmax(axis=1)
    masked = np.full_like(scores, -np.inf)
    rows = np.arange(len(scores))
    masked[rows, best] = scores[rows, best]
    return masked


def choose_thresholds(scores: np.ndarray, truths: np.ndarray, *, rounds: int = 3) -> tuple[float, np.ndarray, dict]:
    """(the one threshold of the best micro F1 for every label, the per-label thresholds
    of the best micro F1 found from it by coordinate ascent, their F1s as
    ``{"one": f1, "per_label": f1}``), on the :func:`eligible` ``scores`` of candidates
    whose gold labels are ``truths``. Each round moves every label's threshold, in
    turn, to the value of the best micro F1 with the others held; at most ``rounds``
    rounds, fewer when one changes nothing. A label whose scores never help gets a
    threshold above them all (it is not predicted)."""
    scores, truths = np.asarray(scores, dtype=np.float64), np.asarray(truths, dtype=bool)
    gold = int(truths.sum())
    one, f1_one = _best_cut(scores.ravel(), truths.ravel(), gold=gold, held=(0, 0))
    thresholds = np.full(scores.shape[1], one)
    for _ in range(rounds):
        moved = False
        for label in range(scores.shape[1]):
            others = np.ones(scores.shape[1], dtype=bool)
            others[label] = False
            predicted = scores[:, others] >= thresholds[others]
            held = (int((predicted & truths[:, others]).sum()), int(predicted.sum()))
            best, _ = _best_cut(scores[:, label], truths[:, label], gold=gold, held=held)
            moved |= best != thresholds[label]
            thresholds[label] = best
        if not moved:
            break
    return one, thresholds, {"one": f1_one, "per_label": micro_f1(scores, truths, thresholds)}


def micro_f1(scores: np.ndarray, truths: np.ndarray, thresholds: np.ndarray) -> float:
    """Micro F1 of the labels predicted at ``thresholds`` (one per label) against ``truths``."""
    predicted = np.asarray(scores) >= np.asarray(thresholds)
    gold = int(np.sum(truths))
    return 2 * int((predicted & truths).sum()) / (int(predicted.sum()) + gold) if gold else 0.0


def precision_recall(scores: np.ndarray, right: np.ndarray, found_at: np.ndarray) -> dict[str, np.ndarray]:
    """The precision-recall curve of one label: at each threshold (the distinct finite
    ``scores``, highest first), the precision of the candidates predicted (``right``:
    whether the label is a gold relation of each) and the recall of the gold relations,
    each found when its best candidate's score ``found_at`` (``-inf``: none reaches it)
    reaches the threshold."""
    scores, right, found_at = (np.asarray(a, dtype=float) for a in (scores, right, found_at))
    finite = np.isfinite(scores)
    order = np.argsort(-scores[finite], kind="stable")
    values, hits = scores[finite][order], right[finite][order]
    ends = np.flatnonzero(np.r_[values[1:] != values[:-1], True]) if len(values) else np.zeros(0, dtype=int)
    thresholds = values[ends]
    precision = np.cumsum(hits)[ends] / (ends + 1)
    reached = np.sort(found_at)[::-1]
    recall = np.searchsorted(-reached, -thresholds, side="right") / max(len(found_at), 1)
    return {"threshold": thresholds, "precision": precision, "recall": recall}


def _best_cut(values: np.ndarray, truths: np.ndarray, *, gold: int, held: tuple[int, int]) -> tuple[float, float]:
    """(threshold, micro F1) of the best cut of ``values``, with ``held`` = (right
    predictions, predictions) of the other labels and ``gold`` gold labels in all. The
    cuts lie between distinct values (equal values are predicted together); predicting
    none is a cut too, its threshold just above the highest value."""
    finite = np.isfinite(values)
    order = np.argsort(-values[finite], kind="stable")
    ordered, hits = values[finite][order], truths[finite][order]
    ends = np.flatnonzero(np.r_[ordered[1:] != ordered[:-1], True]) if len(ordered) else np.zeros(0, dtype=int)
    right, predicted = held
    if not gold:
        return (0.5, 0.0) if not len(ordered) else (float(np.nextafter(ordered[0], np.inf)), 0.0)
    f1 = 2 * (right + np.cumsum(hits)[ends]) / (predicted + ends + 1 + gold)
    none = 2 * right / (predicted + gold)
    if not len(ends) or none >= f1.max():
        above = float(np.nextafter(ordered[0], np.inf)) if len(ordered) else 0.5
        return above, float(none)
    k = int(f1.argmax())
    return float(ordered[ends[k]]), float(f1[k])
