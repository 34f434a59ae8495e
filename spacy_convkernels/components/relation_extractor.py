"""The ``kernel_relations`` component: scores every relation candidate of a Doc.

    nlp.add_pipe("kernel_relations")                             # the default model
    nlp.add_pipe("kernel_relations", config={"model": {...}})   # see configs/relations.cfg

Its model (``spacy_convkernels.RelationModel.v1``) makes the candidates of each Doc with
its generator and gives each one sigmoid score per label; the component writes them:

- entity pairs: ``Doc._.kernel_rel[(head.start, child.start)] = {label: score}`` (the
  reading of explosion's ``rel_component`` tutorial, empty by default), a
  :class:`~spacy_convkernels.pair_scores.PairScores` kept in ``Doc.user_data``: changes
  in place persist, and ``Doc.to_bytes``, ``DocBin``, ``nlp.pipe(..., n_process=2)``
  and JSON keep it (its keys written as ``"head,child"``);
- interactions: ``Doc._.kernel_interactions``, one dict per candidate with ``interaction``
  (the best label), ``score`` (its score), ``scores`` (every label's), ``trigger``
  (the trigger text) and ``spans`` (role -> [start, end] tokens), as the standoff
  reader writes the gold ones.

A label's score is P(relation) x P(label | relation), the model's two outputs
(:mod:`~spacy_convkernels.ml.relation_model`). A label is predicted when its score
reaches ``threshold`` (in ``cfg``); null (the default) chooses it at initialization: the
threshold of the best micro F1 of the training candidates' scores as training first sees
them (from the out-of-fold SVM decisions), logged and saved. With ``single_label``, only
a candidate's best label can be predicted (an interaction candidate is one event, of one
type: on GE 2013 train, none of the 2,826 gold trigger-participant groups has two).
Training labels
each candidate with the gold relations of the example's reference Doc
(:class:`~spacy_convkernels.structures.relations.GoldRelations`); ``score`` reports micro
precision, recall and F1 and per-label figures (:func:`score_relations`).
"""

import warnings
from collections.abc import Callable, Iterable, Iterator

import numpy as np
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example, validate_get_examples
from spacy.util import logger
from spacy.vocab import Vocab
from thinc.api import Model, Optimizer, set_dropout_rate
from thinc.types import Floats2d
from tqdm import tqdm

from ..corpora.examples import give_annotations, training_example
from ..errors import (
    InvalidParameterError,
    MissingAnnotationError,
    MissingAnnotationWarning,
    ModelFileError,
    NotInitializedError,
)
from ..extensions import INTERACTIONS_KEY, install_extensions, user_data
from ..ml.relation_model import candidates_of
from ..structures.relations import GoldRelations, char_offsets, role_key
from ..utils.saved_arrays import texts
from ..utils.validation import SHARE
from .overlapped_pipe import overlapped_pipe
from .registered_kernels import bind_model_vectors
from .sealed_pipe import SealedPipe
from .sentences import fitting_docs

SETTINGS = ("gold", "predicted")  # where evaluate_relations takes entities and triggers from


class RelationExtractor(SealedPipe, TrainablePipe):
    """A trainable scorer of relation candidates (module docstring).

    Parameters
    ----------
    vocab : Vocab
        The pipeline's vocab (its vectors serve a kernel configured with ``vectors = "vocab"``).
    model : Model[list[Doc], Floats2d]
        A ``spacy_convkernels.RelationModel.v1``.
    name : str, default="kernel_relations"
        The component's name.
    threshold : float in [0, 1] or None, default=None
        The score from which a label is predicted; None: chosen at initialization.
    single_label : bool, default=False
        Predict at most one label per candidate, its best.
    """

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "kernel_relations",
        *,
        threshold: float | None = None,
        single_label: bool = False,
    ):
        if threshold is not None and not 0.0 <= threshold <= 1.0:
            raise InvalidParameterError(f"{name}: threshold must be in [0, 1] or null, got {threshold!r}")
        if not isinstance(single_label, bool):
            raise InvalidParameterError(f"{name}: single_label must be true or false, got {single_label!r}")
        install_extensions("doc._.kernel_rel", "doc._.kernel_interactions")
        self.vocab = vocab
        self.model = model
        self.name = name
        self.cfg = {"labels": [], "threshold": threshold, "single_label": single_label, "chosen_threshold": None}
        self._made: tuple[list[Doc], list[list]] | None = None  # the last batch's Docs and candidates

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(self.cfg["labels"])

    @property
    def threshold(self) -> float:
        """The configured threshold, else the one chosen at initialization (0.5 before)."""
        if self.cfg["threshold"] is not None:
            return self.cfg["threshold"]
        chosen = self.cfg.get("chosen_threshold")
        return 0.5 if chosen is None else chosen

    def add_label(self, label: str) -> int:
        if label in self.labels:
            return 0
        self._allow_extra_label()
        self.cfg["labels"].append(label)
        return 1

    def __call__(self, doc: Doc) -> Doc:
        (doc,) = self._warn_once([doc])
        return super().__call__(doc)

    def pipe(self, stream: Iterable[Doc], *, batch_size: int = 128) -> Iterator[Doc]:
        return overlapped_pipe(self, self._warn_once(stream), batch_size=batch_size)

    def _warn_once(self, docs: Iterable[Doc]) -> Iterator[Doc]:
        """The Docs, with one warning at the first that lacks what the candidates need
        (no entities: no candidate, so nothing scored)."""
        missing = getattr(self.model.attrs["candidates"], "missing", None)
        warned = missing is None
        for doc in docs:
            lacking = None if warned or missing is None or not len(doc) else missing(doc)
            if lacking:
                warnings.warn(
                    f"{self.name}: a Doc without {lacking} reached it ({doc.text[:40]!r}; warned once per "
                    "call), so it has no candidate and nothing is scored. Put an entity source before it (a "
                    "trained ner, an entity_ruler), or give the gold entities (the reader "
                    "spacy_convkernels.GoldEntitiesCorpus.v1, `python -m spacy_convkernels evaluate relations`)",
                    MissingAnnotationWarning,
                    stacklevel=3,
                )
                warned = True
            yield doc

    def predict(self, docs: Iterable[Doc]) -> Floats2d:
        encoders = [node.attrs["encoder"] for node in self.model.walk() if "encoder" in node.attrs]
        if not self.labels or not all(encoder.fitted for encoder in encoders):
            raise NotInitializedError(f"{self.name}: not initialized; run nlp.initialize() or load a trained pipeline")
        bind_model_vectors(self.model, self.vocab)
        docs = list(docs)
        if not any(len(doc) for doc in docs):
            return self.model.ops.alloc2f(0, len(self.labels) + 1)
        return self.model.predict(self._made_for(docs))

    def _made_for(self, docs: list[Doc]) -> tuple[list[Doc], list[list]]:
        """The Docs with their candidates, made once per batch: kept for the next
        :meth:`_candidates_of` (``set_annotations`` after ``predict``, the loss after the
        forward pass), whose rows are these candidates'."""
        self._made = (docs, candidates_of(self.model, docs))
        return self._made

    def _candidates_of(self, docs: list[Doc]) -> list[list]:
        """The candidates of the Docs: those made last, when these are the very same Docs
        (taken once), else made now."""
        made, self._made = self._made, None
        if made is not None and len(made[0]) == len(docs) and all(a is b for a, b in zip(made[0], docs)):
            return made[1]
        return candidates_of(self.model, docs)

    def set_annotations(self, docs: Iterable[Doc], probabilities: Floats2d) -> None:
        docs = list(docs)
        scores = label_scores(self.model.ops.to_numpy(probabilities))
        row = 0
        for doc, candidates in zip(docs, self._candidates_of(docs)):
            doc_scores = scores[row : row + len(candidates)]
            row += len(candidates)
            pairs, interactions = {}, []
            for candidate, values in zip(candidates, doc_scores):
                by_label = {label: float(v) for label, v in zip(self.labels, values)}
                if candidate.spans and candidate.spans[0][0] == "head":
                    pairs[candidate.key] = by_label
                else:
                    interactions.append(_interaction_record(doc, candidate, by_label))
            doc._.kernel_rel = pairs
            user_data(doc)[INTERACTIONS_KEY] = interactions

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optimizer | None = None,
        losses: dict[str, float] | None = None,
    ) -> dict[str, float]:
        losses = {} if losses is None else losses
        losses.setdefault(self.name, 0.0)
        examples = list(examples)
        validate_get_examples(lambda: examples, f"{self.name}.update")
        bind_model_vectors(self.model, self.vocab)
        docs = [eg.predicted for eg in examples]
        if not any(len(doc) for doc in docs):
            return losses
        set_dropout_rate(self.model, drop)
        scores, backprop = self.model.begin_update(self._made_for(docs))
        if not len(scores):  # no candidate in the batch
            self._made = None
            return losses
        loss, gradient = self.get_loss(examples, scores)
        backprop(gradient)
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        return losses

    def truths(self, examples: Iterable[Example]) -> np.ndarray:
        """The gold label matrix of the examples' candidates (one row per candidate)."""
        examples = list(examples)
        docs = [eg.predicted for eg in examples]
        rows = []
        for example, doc, candidates in zip(examples, docs, self._candidates_of(docs)):
            gold = GoldRelations(example.reference)
            for candidate in candidates:
                found = gold.labels(candidate, doc)
                rows.append([label in found for label in self.labels])
        return np.asarray(rows, dtype=np.float32).reshape(len(rows), len(self.labels))

    def get_loss(self, examples: Iterable[Example], probabilities: Floats2d) -> tuple[float, Floats2d]:
        """The negative log-likelihood of the gold relations, summed over candidates: the
        binary cross-entropy of P(relation), plus, for a candidate with a relation, the
        cross-entropy of P(label | relation) against its gold labels (shared equally when
        it has several); and its gradient with respect to the model's logits."""
        truths = self.model.ops.asarray2f(self.truths(examples))
        xp = self.model.ops.xp
        n_labels = truths.shape[1]
        labels, related = probabilities[:, :n_labels], probabilities[:, n_labels]
        has = truths.sum(axis=1)
        gold = has > 0
        wanted = truths / xp.maximum(has, 1)[:, None]
        p = xp.clip(related, 1e-7, 1 - 1e-7)
        loss = -(gold * xp.log(p) + (1 - gold) * xp.log(1 - p)).sum()
        loss -= (wanted * xp.log(xp.clip(labels, 1e-7, 1.0))).sum()
        gradient = xp.hstack([(labels - wanted) * gold[:, None], (related - gold)[:, None]])
        return float(loss), self.model.ops.asarray2f(gradient)

    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Language | None = None, labels=None):
        """Label set from the gold relations (or ``labels``), landmarks and layer sizes
        from the training candidates, made as the pipeline makes them (the components
        before this one run on copies of the predicted docs)."""
        validate_get_examples(get_examples, f"{self.name}.initialize")
        bind_model_vectors(self.model, self.vocab)
        examples = list(get_examples())
        if labels is None:
            labels = sorted({label for eg in examples for label in _gold_labels(eg.reference)})
        for label in labels:
            self.add_label(label)
        docs = list(fitting_docs(examples, nlp, self.name, "predicted")) if nlp is not None else []
        docs = docs or [eg.predicted for eg in examples]
        annotated = [Example(doc, eg.reference) for doc, eg in zip(docs, examples)]
        inputs = self._made_for(docs)
        truths = self.truths(annotated)
        _check_training_data(self.name, self.model.attrs["candidates"], docs, truths, self.labels)
        _log_reached(self.name, annotated, inputs[1])
        self.model.initialize(X=inputs, Y=self.model.ops.asarray2f(truths))
        if self.cfg["threshold"] is None:
            self.cfg["chosen_threshold"] = self._choose_threshold(inputs, truths)

    def _choose_threshold(self, inputs: tuple[list[Doc], list[list]], truths: np.ndarray) -> float:
        """The threshold of the best micro F1 over the training candidates' labels, their
        scores as training first sees them (the out-of-fold kernel decisions, no dropout), logged."""
        set_dropout_rate(self.model, 0.0)
        probabilities, _ = self.model.begin_update(inputs)
        scores = label_scores(self.model.ops.to_numpy(probabilities))
        threshold, f1 = best_threshold(scores, truths.astype(bool), single_label=self.cfg["single_label"])
        logger.info(
            f"{self.name}: threshold {threshold:.3f} chosen on the {len(scores):,} training candidates "
            f"(micro F1 {f1:.3f} from their out-of-fold decisions)"
        )
        return threshold

    def check_cfg(self, cfg: dict) -> None:
        """Saved settings: labels (strings), thresholds in [0, 1] or null, single_label true or false."""
        texts(cfg.get("labels"), name="labels")
        for name in ("threshold", "chosen_threshold"):
            if cfg.get(name) is not None and not SHARE.accepts(cfg[name]):
                raise ModelFileError(f"{name} must be a number in [0, 1] or null")
        if not isinstance(cfg.get("single_label"), bool):
            raise ModelFileError("single_label must be true or false")

    def score(self, examples: Iterable[Example], **kwargs) -> dict:
        return score_relations(examples, threshold=self.threshold, single_label=self.cfg.get("single_label", False))


def label_scores(probabilities: np.ndarray) -> np.ndarray:
    """The label scores P(relation) x P(label | relation) of the model's output (the
    labels' conditional probabilities, then P(relation))."""
    return probabilities[:, :-1] * probabilities[:, -1:]


def best_threshold(scores: np.ndarray, truths: np.ndarray, *, single_label: bool) -> tuple[float, float]:
    """(threshold, micro F1) of the best threshold on the label ``scores`` of candidates
    whose gold labels are ``truths`` (candidates x labels): a label is predicted when its
    score reaches the threshold (with ``single_label``, only a candidate's best label)."""
    if single_label:
        best = scores.argmax(axis=1) if scores.size else np.zeros(0, dtype=int)
        values = scores[np.arange(len(scores)), best] if scores.size else np.zeros(0)
        right = truths[np.arange(len(truths)), best] if truths.size else np.zeros(0, dtype=bool)
    else:
        values, right = scores.ravel(), truths.ravel()
    gold = int(truths.sum())
    if not gold or not len(values):
        return 0.5, 0.0
    order = np.argsort(-values, kind="stable")
    f1 = 2 * np.cumsum(right[order]) / (np.arange(1, len(order) + 1) + gold)
    k = int(f1.argmax())
    return float(values[order][k]), float(f1[k])


def _check_training_data(name: str, generator, docs: list[Doc], truths: np.ndarray, labels: tuple[str, ...]) -> None:
    """Raise :class:`MissingAnnotationError`, saying what is missing, when the training
    references hold no gold relation, or their Docs give no candidate, or no candidate
    with a gold relation."""
    gold = (
        "Doc._.kernel_rel or Doc._.rel, {(head.start, child.start): {label: 1.0}}, for pairs; "
        "Doc._.kernel_interactions for interactions"
    )
    if not labels:
        raise MissingAnnotationError(f"{name}: the {len(docs):,} training references hold no gold relation ({gold})")
    if not len(truths):
        missing = getattr(generator, "missing", None)
        lacking = [text for doc in docs if missing is not None and (text := missing(doc))]
        reason = (
            f"{len(lacking):,} of them have no {lacking[0]} (spacy.Corpus.v1 gives the text only): read the "
            "corpus with spacy_convkernels.GoldEntitiesCorpus.v1, which gives the gold entities, or put an "
            f"entity source before {name} and list it in [training] annotating_components"
            if lacking
            else "see the candidates' settings (max_distance, labels); a pair's entities must share a sentence"
        )
        raise MissingAnnotationError(f"{name}: the {len(docs):,} training Docs give no relation candidate; {reason}")
    if not truths.any():
        raise MissingAnnotationError(
            f"{name}: none of the {len(truths):,} training candidates holds a gold relation ({', '.join(labels)}); "
            f"see the candidates' settings and the gold ({gold})"
        )


def _log_reached(name: str, examples: list[Example], candidates: list[list]) -> None:
    """Log how many of the training references' gold relations the candidates reach: the
    others the component can neither learn nor predict."""
    reached = total = 0
    for example, found in zip(examples, candidates):
        some, every = GoldRelations(example.reference).reached(found, example.predicted)
        reached, total = reached + some, total + every
    logger.info(
        f"{name}: the training candidates reach {reached:,} of the references' {total:,} gold relations "
        f"({100 * reached / max(total, 1):.1f} %); no candidate has the others (the entities of a pair in "
        "different sentences of the parse, participants beyond max_distance, triggers not found), so "
        "they are neither learned nor predicted"
    )


def _interaction_record(doc: Doc, candidate, scores: dict[str, float]) -> dict:
    roles = candidate.roles
    best = max(scores, key=scores.__getitem__) if scores else ""
    record = {
        "interaction": best,
        "score": scores.get(best, 0.0),
        "scores": scores,
        "spans": {role: [start, end] for role, (start, end) in roles.items()},
    }
    if "trigger" in roles:
        record["trigger"] = doc[slice(*roles["trigger"])].text
        record["participants"] = {r: doc[s:e].text for r, (s, e) in roles.items() if r != "trigger"}
    return record


def _gold_labels(reference: Doc) -> set[str]:
    """The labels of the reference's gold relations (pairs scored >= 0.5, interactions)."""
    gold = GoldRelations(reference)
    return {label for labels in gold.pairs.values() for label in labels} | {label for _, label in gold.units()}


def score_relations(examples: Iterable[Example], *, threshold: float = 0.5, single_label: bool = False) -> dict:
    """Micro precision, recall and F1 of the predicted relations against the gold ones,
    and per label (``rel_micro_p``, ``rel_micro_r``, ``rel_micro_f``, ``rel_f_per_type``).

    A label is predicted when its score reaches ``threshold`` (with ``single_label``, only
    the best label of a candidate). A predicted pair is right when the reference has it with that
    label. A predicted interaction is right when a gold interaction of that label has its
    participants and an overlapping trigger; a gold interaction is found when it or an
    ``Equiv`` variant of it (same event, same roles) is predicted. Gold relations no
    candidate reaches count as missed.

    ``rel_untyped_p``, ``_r``, ``_f``: whether there is a relation at all, whatever its
    label: a pair with a predicted label is right when the reference relates it; an
    interaction candidate is counted once, positive when a gold interaction of any label
    has its participants and an overlapping trigger (the candidate level of Garg et al.,
    over the candidates the component scored)."""
    counts: dict[str, list[int]] = {}  # label -> [right predictions, predictions, found gold, gold]
    untyped = [0, 0, 0, 0]

    def add(label: str | None, index: int, value: int) -> None:
        if label is None:
            untyped[index] += value
        else:
            counts.setdefault(label, [0, 0, 0, 0])[index] += value

    for example in examples:
        predicted, reference = example.predicted, example.reference
        gold = GoldRelations(reference)
        predicted_pairs = {  # (head start char, child start char) -> the labels predicted
            (predicted[head].idx, predicted[child].idx): _predicted_labels(scores, threshold, single_label)
            for (head, child), scores in predicted._.kernel_rel.items()
        }
        for key, labels in predicted_pairs.items():
            for label in labels:
                add(label, 1, 1)
                add(label, 0, label in gold.pairs.get(key, ()))
        for key, labels in gold.pairs.items():
            for label in labels:
                add(label, 3, 1)
                add(label, 2, label in predicted_pairs.get(key, ()))
        related = {key for key, labels in gold.pairs.items() if labels}
        for key, labels in predicted_pairs.items():
            add(None, 1, bool(labels))
            add(None, 0, bool(labels) and key in related)
        for key in related:
            add(None, 3, 1)
            add(None, 2, bool(predicted_pairs.get(key)))
        _score_interactions(predicted, gold, threshold, single_label, add)
    return _summary(counts, untyped)


def evaluate_relations(
    nlp: Language,
    references: Iterable[Doc],
    *,
    entities: str = "gold",
    triggers: str = "predicted",
    progress: bool = False,
) -> dict:
    """The scores (:func:`score_relations`) of the pipeline's relation component on gold Docs.

    Each reference's text is run through the pipeline; with ``entities="gold"`` its
    entities (and, for interactions, its participant span group, as the shared task's
    gold proteins) are given, with ``triggers="gold"`` its trigger span group; what is
    given is put back after every component, so a component that finds entities or
    triggers (an ``entity_ruler``, a ``span_ruler``) does not replace it. ``"predicted"``:
    the pipeline finds them. On the corpus of ``spacy train``'s dev scores, with what
    its reader gives, these are its figures."""
    for setting, value in (("entities", entities), ("triggers", triggers)):
        if value not in SETTINGS:
            raise InvalidParameterError(f"{setting} must be one of {', '.join(SETTINGS)}, got {value!r}")
    component = relation_component(nlp)
    options = component.model.attrs["candidates"].options
    if triggers == "gold" and "triggers_key" not in options:
        raise InvalidParameterError(
            f"triggers='gold': the {component.name} component scores entity pairs, which have no triggers"
        )
    groups = (options["participants_key"],) if entities == "gold" and "participants_key" in options else ()
    groups += (options["triggers_key"],) if triggers == "gold" else ()

    def give(docs, examples):
        for doc, example in zip(docs, examples):
            yield give_annotations(doc, example.reference, entities=entities == "gold", span_groups=groups)

    examples = [training_example(nlp, reference, given_entities=False) for reference in references]
    docs = give((eg.predicted for eg in examples), examples)
    for _, step in nlp.pipeline:
        docs = give(step.pipe(docs) if hasattr(step, "pipe") else map(step, docs), examples)
    for example, doc in zip(examples, tqdm(docs, total=len(examples), unit="doc", disable=not progress)):
        example.predicted = doc
    return component.score(examples)


def relation_component(nlp: Language) -> "RelationExtractor":
    """The pipeline's one relation component (``kernel_relations``)."""
    found = [step for _, step in nlp.pipeline if isinstance(step, RelationExtractor)]
    if len(found) != 1:
        raise InvalidParameterError(
            f"the pipeline has {len(found)} kernel_relations components ({', '.join(nlp.pipe_names)}); one is needed"
        )
    return found[0]


def _predicted_labels(scores: dict[str, float], threshold: float, single_label: bool) -> set[str]:
    """The labels of ``scores`` that reach ``threshold`` (only the best with ``single_label``)."""
    if single_label:
        best = max(scores, key=scores.__getitem__, default=None)
        return {best} if best is not None and scores[best] >= threshold else set()
    return {label for label, score in scores.items() if score >= threshold}


def _score_interactions(predicted: Doc, gold: GoldRelations, threshold: float, single_label: bool, add) -> None:
    found = set()
    for record in predicted._.kernel_interactions or []:
        if "scores" not in record:
            continue
        chars = {role: char_offsets(predicted, *span) for role, span in record["spans"].items()}
        matches = gold.matches(chars.pop("trigger"), role_key(chars))
        labels = _predicted_labels(record["scores"], threshold, single_label)
        for label in labels:
            right = {(unit, lab) for unit, lab in matches if lab == label}
            add(label, 1, 1)
            add(label, 0, bool(right))
            found |= right
        right_candidate = bool(labels and matches)  # the candidate level: one count per candidate
        for index, value in enumerate((right_candidate, bool(labels), right_candidate, bool(matches))):
            add(None, index, value)
    for unit, label in gold.units():
        add(label, 3, 1)
        add(label, 2, (unit, label) in found)


def _summary(counts: dict[str, list[int]], untyped: list[int]) -> dict:
    def prf(right: int, predicted: int, found: int, gold: int) -> dict[str, float]:
        p = right / predicted if predicted else 0.0
        r = found / gold if gold else 0.0
        return {"p": p, "r": r, "f": 2 * p * r / (p + r) if p + r else 0.0}

    total = prf(*(sum(c[i] for c in counts.values()) for i in range(4)))
    return {
        "rel_micro_p": total["p"],
        "rel_micro_r": total["r"],
        "rel_micro_f": total["f"],
        **{f"rel_untyped_{key}": value for key, value in prf(*untyped).items()},
        "rel_f_per_type": {label: prf(*c) for label, c in sorted(counts.items())},
    }
