"""What a relation component predicts and how it is scored: the predicted relations of a
Doc (labels at or above their thresholds), the scores of predicted Docs against their
references (precision, recall and F1, micro and per label, with each label's support)
and their precision-recall curves (:mod:`.relation_evaluation` runs a pipeline on gold Docs).

A candidate's labels are its scores in ``Doc._.kernel_rel`` (entity pairs) or
``Doc._.kernel_interactions`` (interactions); a label is predicted when its score reaches
the label's threshold, with ``single_label`` only a candidate's best label (the first of
equal best ones). The scores are given twice: under ``rel_*`` and, for ``spacy evaluate``,
whose table prints a fixed list of keys, under the span keys of :data:`SPANS_KEY`
(``spacy evaluate MODEL DATA --spans-key relations`` prints them in its SPAN rows and its
per-type table): the same figures, of relations.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
from spacy.tokens import Doc, Span
from spacy.training import Example

from ..learn.thresholds import precision_recall
from ..structures.relations import GoldRelations, char_offsets, role_key

#: The span-group key under which the scores are given a second time, for ``spacy evaluate --spans-key``.
SPANS_KEY = "relations"

#: The threshold of a label no threshold names.
DEFAULT_THRESHOLD = 0.5

Thresholds = float | Mapping[str, float]


@dataclass(frozen=True)
class Relation:
    """A predicted relation: its label, its score and its spans by role (``head`` and
    ``child`` for an entity pair; ``trigger`` and the participants' roles for an
    interaction)."""

    label: str
    score: float
    spans: dict[str, Span]

    @property
    def head(self) -> Span | None:
        return self.spans.get("head")

    @property
    def child(self) -> Span | None:
        return self.spans.get("child")


def threshold_of(thresholds: Thresholds, label: str) -> float:
    """The threshold of ``label``: ``thresholds`` itself when a number, else its entry for
    the label (:data:`DEFAULT_THRESHOLD` when it has none)."""
    if isinstance(thresholds, Mapping):
        return float(thresholds.get(label, DEFAULT_THRESHOLD))
    return float(thresholds)


def eligible_scores(scores: Mapping[str, float], *, single_label: bool) -> dict[str, float]:
    """The scores of the labels a candidate can take: all, or with ``single_label`` its best."""
    if not single_label or not scores:
        return dict(scores)
    best = max(scores, key=scores.__getitem__)
    return {best: scores[best]}


def predicted_labels(scores: Mapping[str, float], thresholds: Thresholds, *, single_label: bool) -> list[str]:
    """The labels of a candidate's ``scores`` that reach their thresholds."""
    return [
        label
        for label, score in eligible_scores(scores, single_label=single_label).items()
        if score >= threshold_of(thresholds, label)
    ]


def relations_of(
    doc: Doc, *, thresholds: Thresholds, single_label: bool, entities: Iterable[Span] = ()
) -> list[Relation]:
    """The predicted relations of ``doc`` (module docstring), in the order of its
    candidates: its entity pairs (their spans found among ``entities`` by their first
    token) and interactions."""
    by_start = {span.start: span for span in entities}
    found = []
    for (head, child), scores in sorted((doc._.kernel_rel or {}).items()):
        spans = {"head": by_start.get(head, doc[head : head + 1]), "child": by_start.get(child, doc[child : child + 1])}
        for label in predicted_labels(scores, thresholds, single_label=single_label):
            found.append(Relation(label, scores[label], spans))
    for record in doc._.kernel_interactions or []:
        if "scores" not in record:  # a gold interaction, as the standoff reader writes them
            continue
        spans = {role: doc[start:end] for role, (start, end) in record["spans"].items()}
        for label in predicted_labels(record["scores"], thresholds, single_label=single_label):
            found.append(Relation(label, record["scores"][label], spans))
    return found


class Decisions:
    """Every scored candidate of some examples and every gold relation, per label: what
    the scores and curves are computed from, at any thresholds.

    ``scores[c, l]``: candidate c's score for label l (``-inf`` where it cannot take it);
    ``right[c, l]``: l is a gold relation of c; ``related[c]``: some gold relation of any
    label is c's; ``found_at[l]``: per gold relation of l, the highest score for l of the
    candidates that have it (``-inf``: none reaches it, it counts as missed);
    ``untyped_gold``: per gold relation counted whatever its label (a gold pair; an
    interaction candidate with a gold interaction), the candidate that has it or -1.
    ``labels``: every label that scores, candidates' and gold ones, and those given."""

    def __init__(self, examples: Iterable[Example], *, single_label: bool, labels: Iterable[str] = ()):
        rows: list[dict[str, float]] = []
        right: list[set[str]] = []
        gold: list[tuple[str, list[int]]] = []  # (label, the candidates that have the gold relation)
        self.untyped_gold: list[int] = []

        def candidate(scores: Mapping[str, float], labels: set[str]) -> int:
            rows.append(eligible_scores(scores, single_label=single_label))
            right.append(labels)
            return len(rows) - 1

        for example in examples:
            predicted, reference = example.predicted, example.reference
            relations = GoldRelations(reference)
            pairs = {}
            for (head, child), scores in (predicted._.kernel_rel or {}).items():
                key = (predicted[head].idx, predicted[child].idx)
                pairs[key] = candidate(scores, set(relations.pairs.get(key, ())))
            for key, labels in relations.pairs.items():
                gold += [(label, [pairs[key]] if key in pairs else []) for label in labels]
                if labels:
                    self.untyped_gold.append(pairs.get(key, -1))
            having: dict[tuple[str, str], list[int]] = {}
            for record in predicted._.kernel_interactions or []:
                if "scores" not in record:
                    continue
                chars = {role: char_offsets(predicted, *span) for role, span in record["spans"].items()}
                matches = relations.matches(chars.pop("trigger"), role_key(chars))
                index = candidate(record["scores"], {label for _, label in matches})
                for match in matches:
                    having.setdefault(match, []).append(index)
                if matches:
                    self.untyped_gold.append(index)
            gold += [(label, having.get((unit, label), [])) for unit, label in sorted(relations.units())]
        self.labels = sorted({label for row in rows for label in row} | {label for label, _ in gold} | set(labels))
        column = {label: number for number, label in enumerate(self.labels)}
        self.scores = np.full((len(rows), len(self.labels)), -np.inf)
        self.right = np.zeros((len(rows), len(self.labels)), dtype=bool)
        for number, (row, labels) in enumerate(zip(rows, right)):
            for label, score in row.items():
                self.scores[number, column[label]] = score
            for label in labels:
                self.right[number, column[label]] = True
        self.related = self.right.any(axis=1)
        self.found_at: dict[str, list[float]] = {label: [] for label in self.labels}
        for label, having_it in gold:
            values = self.scores[having_it, column[label]]
            self.found_at[label].append(float(values.max()) if len(values) else -np.inf)

    def counts_at(self, thresholds: Thresholds) -> dict[str, np.ndarray]:
        """Per label, at ``thresholds``: [right predictions, predictions, gold relations
        found, gold relations] (the counts of precision and recall; summed: micro)."""
        return self._counts(*self._predicted(thresholds))

    def _predicted(self, thresholds: Thresholds) -> tuple[np.ndarray, np.ndarray]:
        """Each label's cut, and which candidates' scores reach it."""
        cuts = np.array([threshold_of(thresholds, label) for label in self.labels])
        return cuts, self.scores >= cuts

    def _counts(self, cuts: np.ndarray, predicted: np.ndarray) -> dict[str, np.ndarray]:
        hits = predicted & self.right
        per_label = {}
        for number, label in enumerate(self.labels):
            found_at = np.asarray(self.found_at[label])
            per_label[label] = np.array(
                [hits[:, number].sum(), predicted[:, number].sum(), (found_at >= cuts[number]).sum(), len(found_at)]
            )
        return per_label

    def scores_at(self, thresholds: Thresholds) -> dict:
        """The scores (:func:`score_relations`) with labels predicted at ``thresholds``."""
        cuts, predicted = self._predicted(thresholds)
        per_label = self._counts(cuts, predicted)
        totals = sum(per_label.values(), np.zeros(4, dtype=int))
        any_label = np.asarray(predicted.any(axis=1))
        found = sum(bool(any_label[c]) for c in self.untyped_gold if c >= 0)
        untyped = [int((any_label & self.related).sum()), int(any_label.sum()), found, len(self.untyped_gold)]
        micro, by_type = _prf(*totals), {label: _prf(*counts) for label, counts in per_label.items()}
        return {
            "rel_micro_p": micro["p"],
            "rel_micro_r": micro["r"],
            "rel_micro_f": micro["f"],
            **{f"rel_untyped_{key}": value for key, value in _prf(*untyped).items()},
            "rel_f_per_type": by_type,
            "rel_support_per_type": {label: int(counts[3]) for label, counts in per_label.items()},
            f"spans_{SPANS_KEY}_p": micro["p"],
            f"spans_{SPANS_KEY}_r": micro["r"],
            f"spans_{SPANS_KEY}_f": micro["f"],
            f"spans_{SPANS_KEY}_per_type": by_type,
        }

    def curves(self) -> dict[str, dict[str, np.ndarray]]:
        """Each label's precision-recall curve (:func:`~spacy_convkernels.learn.thresholds.precision_recall`)."""
        return {
            label: precision_recall(self.scores[:, number], self.right[:, number], np.asarray(self.found_at[label]))
            for number, label in enumerate(self.labels)
        }


def score_relations(examples: Iterable[Example], *, threshold: Thresholds = 0.5, single_label: bool = False) -> dict:
    """Precision, recall and F1 of the predicted relations against the gold ones, micro
    (``rel_micro_p``, ``rel_micro_r``, ``rel_micro_f``) and per label
    (``rel_f_per_type``, with the number of gold relations of each in
    ``rel_support_per_type``), and again under the span keys of :data:`SPANS_KEY`.

    A label is predicted when its score reaches its ``threshold`` (a number for every
    label, or one per label; with ``single_label``, only the best label of a candidate).
    A predicted pair is right when the reference has it with that label. A predicted
    interaction is right when a gold interaction of that label has its participants and
    an overlapping trigger; a gold interaction is found when it or an ``Equiv`` variant of
    it (same event, same roles) is predicted. Gold relations no candidate reaches count
    as missed.

    ``rel_untyped_p``, ``_r``, ``_f``: whether there is a relation at all, whatever its
    label: a pair with a predicted label is right when the reference relates it; an
    interaction candidate is counted once, positive when a gold interaction of any label
    has its participants and an overlapping trigger (the candidate level of Garg et al.,
    over the candidates the component scored)."""
    return Decisions(examples, single_label=single_label).scores_at(threshold)


def _prf(right: int, predicted: int, found: int, gold: int) -> dict[str, float]:
    p = right / predicted if predicted else 0.0
    r = found / gold if gold else 0.0
    return {"p": float(p), "r": float(r), "f": float(2 * p * r / (p + r)) if p + r else 0.0}
