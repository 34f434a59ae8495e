"""The ``kernel_relations`` component: scores every relation candidate of a Doc.

    nlp.add_pipe("kernel_relations")                             # the default model
    nlp.add_pipe("kernel_relations", config={"model": {...}})   # see the relations config

Its model (``spacy_convkernels.RelationModel.v1``, or any architecture that keeps the
contract of :mod:`~spacy_convkernels.ml.relation_contract`) makes the candidates of each
Doc with its generator and scores them; the component asks it for each one's score per
label, and writes them:

- entity pairs: ``Doc._.kernel_rel[(head.start, child.start)] = {label: score}`` (the
  reading of explosion's ``rel_component`` tutorial, empty by default), a
  :class:`~spacy_convkernels.pair_scores.PairScores` kept in ``Doc.user_data``: changes
  in place persist, and ``Doc.to_bytes``, ``DocBin``, ``nlp.pipe(..., n_process=2)``
  and JSON keep it (its keys written as ``"head,child"``);
- interactions: ``Doc._.kernel_interactions``, one dict per candidate with ``interaction``
  (the best label), ``score`` (its score), ``scores`` (every label's), ``trigger``
  (the trigger text) and ``spans`` (role -> [start, end] tokens), as the standoff
  reader writes the gold ones.

With ``RelationModel.v1`` a label's score is P(relation) x P(label | relation), the
model's two outputs (:mod:`~spacy_convkernels.ml.relation_model`). A label is predicted
when its score reaches its threshold (:attr:`RelationExtractor.thresholds`, chosen as
:mod:`~.relation_thresholds` says); :meth:`RelationExtractor.relations`
gives a Doc's predicted relations. ``threshold`` (in the config, or set on the
component) is a number for every label, a mapping of labels to their own, or null (the
default): then the threshold is the one chosen at initialization, for the best micro F1
of the training candidates' scores as training first sees them (the out-of-fold SVM
decisions): one for every label (``threshold_choice = "one"``, the default), or each
label's own, by coordinate ascent from that one (``"per_label"``); both are chosen,
logged and saved. (Per label did not win where it was measured: a tie on CoNLL04 dev,
and on GE one label, Binding, switched off by its own threshold:
docs/results/relations.md.) A threshold given in the config when the pipeline is
loaded is the one used. With
``single_label``, only a candidate's best label can be predicted (an interaction
candidate is one event, of one type: on GE 2013 train, none of the 2,826 gold
trigger-participant groups has two).

Training labels each candidate with the gold relations of the example's reference Doc
(:class:`~spacy_convkernels.structures.relations.GoldRelations`); ``score`` reports
micro precision, recall and F1 and per-label figures
(:func:`~.relation_scores.score_relations`). Initialize refuses a pipeline and corpora
that cannot work together and reports what the training data hold
(:mod:`~.relation_training`).
"""

import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping

import numpy as np
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example, validate_get_examples
from spacy.vocab import Vocab
from thinc.api import Model, Optimizer, set_dropout_rate
from thinc.types import Floats2d

from ..errors import InvalidParameterError, MissingAnnotationWarning, ModelFileError, NotInitializedError
from ..extensions import INTERACTIONS_KEY, install_extensions, user_data
from ..learn.thresholds import eligible
from ..ml.relation_candidates import lowered_scores
from ..ml.relation_contract import CandidateBatch, RelationScores, candidate_batch
from ..structures.relations import GoldRelations, RelationCandidate, mentions
from ..utils.saved_arrays import texts
from ..utils.validation import SHARE
from .overlapped_pipe import overlapped_pipe
from .registered_kernels import bind_model_vectors
from .relation_explain import RelationExplanation, explain_candidate
from .relation_scores import Decisions, Relation, relations_of
from .relation_thresholds import check_threshold, check_threshold_choice, chosen_thresholds, thresholds_in_effect
from .relation_training import check_entity_sources, check_training_data, reader_of, report_training_data
from .sealed_pipe import SealedPipe
from .sentences import fitting_docs

#: The settings of the config that a pipeline loaded with another value of keeps (they
#: are saved with the component too, so that a setter's change is saved).
CONFIGURED = ("threshold", "threshold_choice", "single_label")


class RelationExtractor(SealedPipe, TrainablePipe):
    """A trainable scorer of relation candidates (module docstring).

    Parameters
    ----------
    vocab : Vocab
        The pipeline's vocab (its vectors serve a kernel configured with ``vectors = "vocab"``).
    model : Model[list[Doc], RelationScores]
        A ``spacy_convkernels.RelationModel.v1``, or another relation model
        (:mod:`~spacy_convkernels.ml.relation_contract`).
    name : str, default="kernel_relations"
        The component's name.
    threshold : float in [0, 1], dict of label to float, or None, default=None
        The score from which a label is predicted, for every label or per label (labels
        not named: the chosen ones); None: chosen at initialization.
    threshold_choice : {"one", "per_label"}, default="one"
        With ``threshold`` None (or for labels it does not name): the one threshold chosen
        for every label, or each label's own.
    single_label : bool, default=False
        Predict at most one label per candidate, its best.
    """

    def __init__(
        self,
        vocab: Vocab,
        model: Model,
        name: str = "kernel_relations",
        *,
        threshold: float | dict[str, float] | None = None,
        threshold_choice: str = "one",
        single_label: bool = False,
    ):
        check_threshold(threshold, where=name)
        check_threshold_choice(threshold_choice, where=name)
        if not isinstance(single_label, bool):
            raise InvalidParameterError(f"{name}: single_label must be true or false, got {single_label!r}")
        install_extensions("doc._.kernel_rel", "doc._.kernel_interactions")
        self.vocab = vocab
        self.model = model
        self.name = name
        threshold = dict(threshold) if isinstance(threshold, Mapping) else threshold
        self.cfg = {
            "labels": [],
            "threshold": threshold,
            "threshold_choice": threshold_choice,
            "single_label": single_label,
            "configured": {"threshold": threshold, "threshold_choice": threshold_choice, "single_label": single_label},
            "chosen_threshold": None,
            "chosen_thresholds": {},
        }

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(self.cfg["labels"])

    @property
    def threshold(self) -> float | dict[str, float] | None:
        """The threshold setting: a number for every label, a label's own, or None (the
        chosen ones). Set it to change the predictions (it is saved with the component)."""
        return self.cfg["threshold"]

    @threshold.setter
    def threshold(self, value: float | dict[str, float] | None) -> None:
        check_threshold(value, where=self.name)
        self.cfg["threshold"] = dict(value) if isinstance(value, Mapping) else value

    @property
    def thresholds(self) -> dict[str, float]:
        """Each label's threshold in effect: the setting's (:attr:`threshold`), else the one
        chosen at initialization (with ``threshold_choice = "per_label"``, the label's own),
        else 0.5."""
        return thresholds_in_effect(self.labels, self.cfg)

    def relations(self, doc: Doc) -> list[Relation]:
        """The relations predicted in ``doc``, a Doc this component annotated: each
        candidate's labels whose scores reach their thresholds (:attr:`thresholds`; with
        ``single_label`` its best label only), as :class:`~.relation_scores.Relation`
        (label, score, spans by role: ``head`` and ``child``, or ``trigger`` and the
        participants), in the order of the candidates."""
        options = self.model.attrs["candidates"].options
        entities = mentions(doc, given_key=options.get("entities_key"), proposals_key=options.get("proposals_key"))
        return relations_of(doc, thresholds=self.thresholds, single_label=self.cfg["single_label"], entities=entities)

    def explain(self, doc: Doc, key, *, labels=None, top: int = 5) -> RelationExplanation:
        """Why the candidate ``key`` of ``doc`` scored as it did: its SVM decisions (the
        gate's, and ``labels``' or its best label's), each split over the training
        candidates that are its support vectors, the ``top`` of largest weight with their
        sentence, gold labels, share of the decision and the fragments shared
        (:func:`~.relation_explain.explain_candidate`; :func:`~.relation_explain.to_html` draws it)."""
        return explain_candidate(self, doc, key, labels=labels, top=top)

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
                    "trained ner, an entity_ruler), or give the gold entities (a reader's give_entities; "
                    "`python -m spacy_convkernels evaluate relations` gives them)",
                    MissingAnnotationWarning,
                    stacklevel=3,
                )
                warned = True
            yield doc

    def predict(self, docs: Iterable[Doc]) -> RelationScores:
        encoders = [node.attrs["encoder"] for node in self.model.walk() if "encoder" in node.attrs]
        if not self.labels or not all(encoder.fitted for encoder in encoders):
            raise NotInitializedError(f"{self.name}: not initialized; run nlp.initialize() or load a trained pipeline")
        bind_model_vectors(self.model, self.vocab)
        return self.model.predict(list(docs))

    def set_annotations(self, docs: Iterable[Doc], scores: RelationScores) -> None:
        """Write the scores of the candidates the model made of ``docs``, as it read them,
        each lowered by its candidate's margin (a proposed participant's, else 0), to 0 at least."""
        by_label = iter(scores.label_scores())
        maker = self.model.attrs["candidates"]
        for doc, candidates in zip(docs, scores.candidates):
            pairs, interactions = {}, []
            for candidate, values, margin in zip(candidates, by_label, maker.margins(doc, candidates)):
                labelled = lowered_scores(self.labels, values, margin)
                if candidate.spans and candidate.spans[0][0] == "head":
                    pairs[candidate.key] = labelled
                else:
                    interactions.append(_interaction_record(doc, candidate, labelled))
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
        set_dropout_rate(self.model, drop)
        scores, backprop = self.model.begin_update([eg.predicted for eg in examples])
        if not len(scores):  # no candidate in the batch
            return losses
        loss, gradient = self.get_loss(examples, scores)
        backprop(gradient)
        if sgd is not None:
            self.finish_update(sgd)
        losses[self.name] += loss
        return losses

    def truths(self, examples: Iterable[Example], candidates: list[list[RelationCandidate]]) -> np.ndarray:
        """The gold label matrix of the candidates of each example's predicted Doc (one
        row per candidate, a column per label)."""
        rows = []
        for example, doc_candidates in zip(examples, candidates):
            gold = GoldRelations(example.reference)
            for candidate in doc_candidates:
                found = gold.labels(candidate, example.predicted)
                rows.append([label in found for label in self.labels])
        return np.asarray(rows, dtype=np.float32).reshape(len(rows), len(self.labels))

    def get_loss(self, examples: Iterable[Example], scores: RelationScores) -> tuple[float, Floats2d]:
        """The loss of the gold relations of the scored candidates, as the model reads its
        scores (with ``RelationModel.v1``, the negative log-likelihood of
        :class:`~spacy_convkernels.ml.relation_model.GatedSoftmax`), and its gradient,
        which the model's backprop takes."""
        return scores.loss(self.truths(examples, scores.candidates))

    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Language | None = None, labels=None):
        """Label set from the gold relations (or ``labels``), landmarks and layer sizes
        from the training candidates, made as the pipeline makes them (the components
        before this one run on copies of the predicted docs), and each label's threshold.
        Refuses a pipeline whose corpora cannot work with it and reports what the
        training data hold (:mod:`~.relation_training`)."""
        validate_get_examples(get_examples, f"{self.name}.initialize")
        bind_model_vectors(self.model, self.vocab)
        examples = list(get_examples())
        if labels is None:
            labels = sorted({label for eg in examples for label in _gold_labels(eg.reference)})
        for label in labels:
            self.add_label(label)
        if nlp is not None:
            check_entity_sources(self.name, nlp, examples)
        reader, _ = reader_of(nlp, "train_corpus")
        docs = list(fitting_docs(examples, nlp, self.name, "predicted")) if nlp is not None else []
        docs = docs or [eg.predicted for eg in examples]
        annotated = [Example(doc, eg.reference) for doc, eg in zip(docs, examples)]
        batch = candidate_batch(self.model, docs)  # made once: their gold labels are needed before any fit
        truths = self.truths(annotated, batch.candidates)
        check_training_data(self.name, self.model.attrs["candidates"], docs, truths, self.labels, reader=reader)
        report_training_data(self.name, annotated, batch.candidates, truths, self.labels, reader=reader)
        self.model.initialize(X=batch, Y=self.model.ops.asarray2f(truths))
        self._choose_thresholds(batch, truths)
        setting = self.cfg["threshold"]
        unknown = sorted(set(setting) - set(self.labels)) if isinstance(setting, Mapping) else []
        if unknown:
            raise InvalidParameterError(
                f"{self.name}: threshold names labels it does not have ({', '.join(unknown)}); "
                f"its labels: {', '.join(self.labels)}"
            )

    def _choose_thresholds(self, batch: CandidateBatch, truths: np.ndarray) -> None:
        """The one threshold and each label's, of the best micro F1 over the training
        candidates' labels, their scores as training first sees them (the out-of-fold
        kernel decisions, no dropout); saved and logged."""
        set_dropout_rate(self.model, 0.0)
        scores, _ = self.model.begin_update(batch)
        eligible_scores = eligible(scores.label_scores(), single_label=self.cfg["single_label"])
        self.cfg["chosen_threshold"], self.cfg["chosen_thresholds"] = chosen_thresholds(
            self.name, eligible_scores, truths, self.labels, choice=self.cfg["threshold_choice"]
        )

    def check_cfg(self, cfg: dict) -> None:
        """Saved settings: labels (strings), thresholds in [0, 1] or null, single_label true or false."""
        texts(cfg.get("labels"), name="labels")
        configured = cfg.get("configured", {})
        for name, value in (("threshold", cfg.get("threshold")), ("configured threshold", configured.get("threshold"))):
            check_threshold(value, where=name, error=ModelFileError)
        chosen = cfg.get("chosen_threshold")
        if chosen is not None and not SHARE.accepts(chosen):
            raise ModelFileError("chosen_threshold must be a number in [0, 1] or null")
        check_threshold(cfg.get("chosen_thresholds"), where="chosen_thresholds", error=ModelFileError)
        for value in (cfg.get("single_label"), configured.get("single_label", False)):
            if not isinstance(value, bool):
                raise ModelFileError("single_label must be true or false")
        for where, value in (
            ("threshold_choice", cfg.get("threshold_choice", "one")),
            ("configured threshold_choice", configured.get("threshold_choice", "one")),
        ):
            check_threshold_choice(value, where=where, error=ModelFileError)

    def load_cfg(self, cfg: dict) -> None:
        """The saved settings, but for those the config names otherwise than the config
        the component was saved with: a threshold given when the pipeline is loaded
        (``spacy.load(path, config={"components": {NAME: {"threshold": 0.9}}})``) wins."""
        configured = dict(self.cfg["configured"])
        saved = cfg.get("configured", {name: cfg.get(name) for name in CONFIGURED})
        self.cfg.update(cfg)
        self.cfg["configured"] = configured
        for name in CONFIGURED:
            if configured[name] != saved.get(name):
                self.cfg[name] = configured[name]

    def score(self, examples: Iterable[Example], **kwargs) -> dict:
        decisions = Decisions(examples, single_label=self.cfg["single_label"], labels=self.labels)
        return decisions.scores_at(self.thresholds)


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
