"""The evaluation driver of a relation pipeline: its predicted Docs of gold Docs, made from
their text with the gold entities (and triggers) given as the reader gives them in
training, and their scores (:mod:`.relation_scores`), with a warning when the corpus holds
labels the component does not know. ``python -m spacy_convkernels evaluate relations``
and ``plot relations`` run it."""

import warnings
from collections.abc import Iterable

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from tqdm import tqdm

from ..corpora.examples import give_annotations, training_example
from ..errors import CorpusWarning, InvalidParameterError
from .relation_extractor import RelationExtractor
from .relation_scores import Decisions, Thresholds

#: Where ``evaluate_relations`` takes entities and triggers from.
SETTINGS = ("gold", "predicted")


def evaluated_examples(
    nlp: Language,
    references: Iterable[Doc],
    *,
    entities: str = "gold",
    triggers: str = "predicted",
    progress: bool = False,
) -> list[Example]:
    """Examples of the references whose predicted Docs the pipeline annotated from their
    text: with ``entities="gold"`` its entities (and, for interactions, its participant
    span group, as the shared task's gold proteins) given, with ``triggers="gold"`` its
    trigger span group; what is given is put back after every component, so a component
    that finds entities or triggers (an ``entity_ruler``, a ``span_ruler``) does not
    replace it. ``"predicted"``: the pipeline finds them."""
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

    examples = [training_example(nlp, reference, give_entities="none") for reference in references]
    docs = give((eg.predicted for eg in examples), examples)
    for _, step in nlp.pipeline:
        docs = give(step.pipe(docs) if hasattr(step, "pipe") else map(step, docs), examples)
    for example, doc in zip(examples, tqdm(docs, total=len(examples), unit="doc", disable=not progress)):
        example.predicted = doc
    return examples


def evaluate_relations(
    nlp: Language,
    references: Iterable[Doc],
    *,
    entities: str = "gold",
    triggers: str = "predicted",
    threshold: Thresholds | None = None,
    progress: bool = False,
) -> dict:
    """The scores (:func:`score_relations`) of the pipeline's relation component on gold
    Docs (:func:`evaluated_examples` says how they are annotated), at the component's
    thresholds or at ``threshold``. On the corpus of ``spacy train``'s dev scores, with
    what its reader gives, these are its figures. Warns (:class:`CorpusWarning`) when the
    corpus has gold relations of labels the component does not know, and when it shares
    no label with it (every figure is then 0)."""
    component = relation_component(nlp)
    examples = evaluated_examples(nlp, references, entities=entities, triggers=triggers, progress=progress)
    decisions = Decisions(examples, single_label=component.cfg["single_label"], labels=component.labels)
    warn_unknown_labels(decisions, component)
    return decisions.scores_at(component.thresholds if threshold is None else threshold)


def warn_unknown_labels(decisions: Decisions, component: RelationExtractor) -> None:
    """Warn when the references hold relations of labels the component does not know."""
    support = {label: len(found) for label, found in decisions.found_at.items() if found}
    unknown = {label: count for label, count in support.items() if label not in component.labels}
    if not unknown:
        return
    spelled = ", ".join(f"{label} ({count:,})" for label, count in sorted(unknown.items()))
    if len(unknown) == len(support):
        warnings.warn(
            f"the corpus shares no relation label with {component.name} (the corpus: {spelled}; the model: "
            f"{', '.join(component.labels)}), so every figure is 0: is it the corpus the model was trained for?",
            CorpusWarning,
            stacklevel=3,
        )
    else:
        warnings.warn(
            f"the corpus has gold relations of labels {component.name} does not know, counted as missed: {spelled}",
            CorpusWarning,
            stacklevel=3,
        )


def relation_component(nlp: Language) -> RelationExtractor:
    """The pipeline's one relation component (``kernel_relations``)."""
    found = [step for _, step in nlp.pipeline if isinstance(step, RelationExtractor)]
    if len(found) != 1:
        raise InvalidParameterError(
            f"the pipeline has {len(found)} kernel_relations components ({', '.join(nlp.pipe_names)}); one is needed"
        )
    return found[0]
