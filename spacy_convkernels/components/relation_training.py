"""What a relation component checks and reports at initialize, about its training data and
the pipeline and corpora around it, so that a setting that cannot work is refused before
any fitting and ``spacy train`` and ``spacy debug data`` show what the data hold.

- :func:`check_entity_sources`: a ``ner`` trained in the same run on Docs given their
  entities as ``doc.ents`` (it would learn nothing: a ``ner`` keeps the entities a Doc
  has); a dev corpus that gives the entities the pipeline learns to find (model-best
  would be chosen on the given ones), or none when nothing in the pipeline finds them
  (every dev score 0).
- :func:`check_training_data`: no gold relation, no candidate, no candidate with a gold relation.
- :func:`report_training_data`: documents, candidates per document, positive candidates
  and gold relations per label, the gold relations no candidate reaches.
"""

import warnings
from collections import Counter

import numpy as np
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example

from ..corpora.examples import GIVE_ENTITIES, entities_setting
from ..errors import InvalidParameterError, MissingAnnotationError, SettingDeprecationWarning
from ..structures.relations import GoldRelations
from ..utils.log import logger

#: The readers whose ``give_entities`` says what their predicted Docs are given.
GIVING_READERS = (
    "spacy_convkernels.RelationsJsonl.v1",
    "spacy_convkernels.BioNLPStandoff.v1",
    "spacy_convkernels.GoldEntitiesCorpus.v1",
)
GOLD = (
    "Doc._.kernel_rel or Doc._.rel, {(head.start, child.start): {label: 1.0}}, for pairs; "
    "Doc._.kernel_interactions for interactions"
)


def reader_of(nlp: Language | None, corpus: str) -> tuple[str | None, str | None]:
    """(the registered name of the reader of ``[training] corpus`` (``"train_corpus"`` or
    ``"dev_corpus"``), what it gives of the entities: one of
    :data:`~spacy_convkernels.corpora.examples.GIVE_ENTITIES`, or None when not known or
    when the corpus has no path, as in a config that trains nothing), read from the
    pipeline's config; (None, None) when the config does not say."""
    if nlp is None:
        return None, None
    config = nlp.config.interpolate()
    section = config
    for part in str(config.get("training", {}).get(corpus, "")).split("."):
        section = section.get(part, {}) if isinstance(section, dict) else {}
    name = section.get("@readers") if isinstance(section, dict) else None
    if section.get("path") is None:  # not a corpus the pipeline is trained with
        return None, None
    if name != "spacy.Corpus.v1" and name not in GIVING_READERS:
        return name, None
    if name == "spacy.Corpus.v1":
        return name, "none"
    settings = {key: section.get(key) for key in ("given_entities", "given_ents")}
    with warnings.catch_warnings():  # the reader warns of an earlier name when it is made
        warnings.simplefilter("ignore", SettingDeprecationWarning)
        return name, entities_setting(section.get("give_entities", GIVE_ENTITIES[0]), **settings, reader=name)


def check_entity_sources(name: str, nlp: Language, examples: list[Example]) -> None:
    """Refuse, naming the reader and the setting to change, a ``ner`` (any trainable
    component that writes ``doc.ents``) trained in this run on training Docs that have
    their entities as ``doc.ents``; a dev corpus that gives the entities such a component
    learns to find; and a dev corpus that gives none when no component before ``name``
    writes entities or span groups."""
    frozen = set(nlp.config.get("training", {}).get("frozen_components", []))
    names = nlp.component_names  # spacy train initializes with the sourced and frozen components disabled
    before = names[: names.index(name)] if name in names else names
    learners = [
        pipe
        for pipe in before
        if pipe not in frozen
        and isinstance(nlp.get_pipe(pipe), TrainablePipe)
        and "doc.ents" in nlp.get_pipe_meta(pipe).assigns
    ]
    train_reader, _ = reader_of(nlp, "train_corpus")
    if learners and any(eg.predicted.ents for eg in examples):
        raise InvalidParameterError(
            f"{name}: {', '.join(learners)} learns doc.ents in this run, but the training Docs were given their "
            f"entities as doc.ents{_by(train_reader)}, so it would learn nothing (a ner keeps the entities a Doc "
            'has): give them as a span group instead, give_entities = "span_group" on the train corpus, which '
            f'{name} reads with entities_key = "entities"'
        )
    dev_reader, dev_gives = reader_of(nlp, "dev_corpus")
    if learners and dev_gives in ("doc.ents", "span_group"):
        raise InvalidParameterError(
            f'{name}: the dev corpus{_by(dev_reader)} gives the Docs their entities (give_entities = "{dev_gives}"), '
            f"which {', '.join(learners)} learns to find in this run, so the dev scores and model-best would be "
            f'those of the given entities, not the pipeline\'s: set give_entities = "none" on the dev corpus'
        )
    finders = [pipe for pipe in before if {"doc.ents", "doc.spans"} & set(nlp.get_pipe_meta(pipe).assigns)]
    if dev_gives == "none" and not finders:
        raise InvalidParameterError(
            f'{name}: the dev corpus{_by(dev_reader)} gives the Docs no entities (give_entities = "none") and no '
            f"component before {name} finds them, so every dev score would be 0: give them "
            '(give_entities = "doc.ents"), or put an entity finder (a ner, an entity_ruler) before it'
        )


def check_training_data(
    name: str, generator, docs: list[Doc], truths: np.ndarray, labels: tuple[str, ...], *, reader: str | None
) -> None:
    """Raise :class:`MissingAnnotationError`, saying what is missing and where it comes
    from, when the training references hold no gold relation, or their Docs give no
    candidate, or no candidate with a gold relation."""
    if not labels:
        raise MissingAnnotationError(f"{name}: the {len(docs):,} training references hold no gold relation ({GOLD})")
    if not len(truths):
        missing = getattr(generator, "missing", None)
        lacking = [text for doc in docs if missing is not None and (text := missing(doc))]
        if lacking:
            reason = (
                f"{len(lacking):,} of them have no {lacking[0]}{_by(reader)}: give the entities "
                f'(give_entities = "doc.ents", or "span_group" beside a ner trained in the same run, in '
                f"{', '.join(GIVING_READERS)}; spacy.Corpus.v1 gives the text only: read .spacy files with "
                f"spacy_convkernels.GoldEntitiesCorpus.v1), or put an entity source before {name} and list it in "
                "[training] annotating_components"
            )
        else:
            reason = "see the candidates' settings (max_distance, labels); a pair's entities must share a sentence"
        raise MissingAnnotationError(f"{name}: the {len(docs):,} training Docs give no relation candidate; {reason}")
    if not truths.any():
        raise MissingAnnotationError(
            f"{name}: none of the {len(truths):,} training candidates holds a gold relation ({', '.join(labels)}); "
            f"see the candidates' settings and the gold ({GOLD})"
        )


def report_training_data(
    name: str, examples: list[Example], candidates: list[list], truths: np.ndarray, labels: tuple[str, ...], *, reader
) -> None:
    """Log (:mod:`~spacy_convkernels.utils.log`) what the training data hold for the
    component: documents and candidates, the positive candidates and the gold relations
    of each label, and how many of these some candidate reaches (the others are neither
    learned nor predicted)."""
    reached: Counter = Counter()
    every: Counter = Counter()
    for example, found in zip(examples, candidates):
        some, all_labels = GoldRelations(example.reference).reached_by_label(found, example.predicted)
        reached.update(some)
        every.update(all_labels)
    sizes = [len(found) for found in candidates]
    positives = dict(zip(labels, truths.sum(axis=0).astype(int)))
    per_label = "; ".join(
        f"{label} {positives.get(label, 0):,} candidates, {reached[label]:,} of {every[label]:,} gold relations"
        for label in sorted(set(labels) | set(every))
    )
    total, reaching = sum(every.values()), sum(reached.values())
    logger.info(
        f"{name}: training data{_by(reader)}: {len(examples):,} documents, {sum(sizes):,} candidates "
        f"({np.mean(sizes) if sizes else 0:.1f} per document; without any: {sizes.count(0):,} documents); "
        f"per label, the positive candidates and the gold relations a candidate reaches: {per_label}"
    )
    logger.info(
        f"{name}: the candidates reach {reaching:,} of the references' {total:,} gold relations "
        f"({100 * reaching / max(total, 1):.1f} %); no candidate has the others (the entities of a pair in "
        "different sentences of the parse, participants beyond max_distance, triggers not found), so they "
        "are neither learned nor predicted"
    )


def _by(reader: str | None) -> str:
    return f" (read by {reader})" if reader else ""
