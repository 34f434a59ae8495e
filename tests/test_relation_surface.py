"""The spaCy surface of ``kernel_relations`` (issue 35, point 5): what a user of explosion's
``rel_component`` tutorial expects of a relation component. Tiny models and Docs built
here; no download, nothing from ../shared."""

import json
import warnings

import pytest
import spacy
from relation_samples import DEPS, HEADS, LEMMAS, POS, TAGS, WORDS, model_config, pair_examples, parsed, parsed_in
from spacy import attrs
from spacy.language import Language
from spacy.tokens import Doc, DocBin, Span
from spacy.training import Corpus, Example
from spacy.util import fix_random_seed, registry

from spacy_convkernels.errors import MissingAnnotationError, MissingAnnotationWarning
from spacy_convkernels.extensions import install_extensions
from spacy_convkernels.pair_scores import PairScores
from spacy_convkernels.structures.relations import REL as TUTORIAL_REL

TEXT = "RAS activates RAF, which phosphorylates MEK1."  # the sample's words
PARSE = [attrs.HEAD, attrs.DEP, attrs.TAG, attrs.POS, attrs.LEMMA]


def test_writes_into_the_relations_persist():
    install_extensions("doc._.kernel_rel", "doc._.kernel_interactions")
    doc = parsed()
    doc._.kernel_rel[(0, 2)] = {"ACTIVATES": 0.5}  # on a Doc never scored
    doc._.kernel_rel[(0, 2)]["ACTIVATES"] = 0.9
    doc._.kernel_rel.setdefault((2, 6), {})["PHOSPHORYLATES"] = 0.8
    assert doc._.kernel_rel == {(0, 2): {"ACTIVATES": 0.9}, (2, 6): {"PHOSPHORYLATES": 0.8}}
    restored = Doc(doc.vocab).from_bytes(doc.to_bytes())  # msgpack gives back string keys
    restored._.kernel_rel[(0, 2)]["ACTIVATES"] = 0.1
    del restored._.kernel_rel[(2, 6)]
    assert restored._.kernel_rel == {(0, 2): {"ACTIVATES": 0.1}}
    doc._.kernel_interactions = [{"interaction": "Binding", "scores": {"Binding": 0.2}, "spans": {"theme": [0, 1]}}]
    restored = Doc(doc.vocab).from_bytes(doc.to_bytes())
    restored._.kernel_interactions[0]["scores"]["Binding"] = 0.7
    assert restored._.kernel_interactions[0]["scores"] == {"Binding": 0.7}


def test_to_json_round_trips_through_json_dumps():
    install_extensions("doc._.kernel_rel", "doc._.kernel_interactions")
    doc = parsed()
    doc._.kernel_rel = {(0, 2): {"ACTIVATES": 0.9}, (6, 2): {"ACTIVATES": 0.1}}
    doc._.kernel_interactions = [{"interaction": "Binding", "scores": {"Binding": 0.2}, "spans": {"theme": [0, 1]}}]
    text = json.dumps(doc.to_json(underscore=["kernel_rel", "kernel_interactions"]))
    data = json.loads(text)
    assert data["_"]["kernel_rel"] == {"0,2": {"ACTIVATES": 0.9}, "6,2": {"ACTIVATES": 0.1}}
    back = Doc(doc.vocab).from_json(data)
    assert back._.kernel_rel == doc._.kernel_rel and back._.kernel_interactions == doc._.kernel_interactions
    scores = PairScores(data["_"]["kernel_rel"])  # the JSON form read back without a Doc
    assert scores == doc._.kernel_rel and sorted(scores) == [(0, 2), (6, 2)]
    assert [(head, child) for (head, child), _ in scores.items()] == [(0, 2), (6, 2)]


@Language.component("test_sample_parse")
def sample_parse(doc: Doc) -> Doc:
    """The sample's parse, tags and lemmas, as a parser would give them to its text."""
    parse = Doc(doc.vocab, words=WORDS, heads=HEADS, deps=DEPS, tags=TAGS, pos=POS, lemmas=LEMMAS)
    return doc.from_array(PARSE, parse.to_array(PARSE))


def tutorial_corpus(path, nlp) -> None:
    """Four Docs of the sample in the format of explosion's rel_component tutorial: the
    entities in doc.ents, every ordered pair's labels in Doc._.rel (1.0 gold, 0.0 not),
    in a DocBin with the user data."""
    docs = []
    for _ in range(4):
        doc = nlp.make_doc(TEXT)
        doc.ents = [Span(doc, i, i + 1, "PROTEIN") for i in (0, 2, 6)]
        gold = {(0, 2): "ACTIVATES", (2, 6): "PHOSPHORYLATES"}
        pairs = [(head.start, child.start) for head in doc.ents for child in doc.ents if head != child]
        # what the tutorial's `doc._.rel = rels` stores (it registers Doc._.rel; this process need not)
        doc.user_data[TUTORIAL_REL] = {
            pair: {label: float(gold.get(pair) == label) for label in ("ACTIVATES", "PHOSPHORYLATES")} for pair in pairs
        }
        docs.append(doc)
    DocBin(docs=docs, store_user_data=True).to_disk(path)


@pytest.mark.slow
def test_a_spacy_corpus_in_the_tutorials_format_trains(tmp_path):
    fix_random_seed(0)
    nlp = spacy.blank("en")
    tutorial_corpus(tmp_path / "train.spacy", nlp)
    nlp.add_pipe("test_sample_parse")
    extractor = nlp.add_pipe("kernel_relations", config={"model": model_config("EntityPairCandidates")})
    # spacy.Corpus.v1 gives the text only: no entity, no candidate, and an error that says so
    with pytest.raises(MissingAnnotationError, match=r"4 of them have no entities \(doc.ents\).*GoldEntitiesCorpus"):
        nlp.initialize(lambda: Corpus(tmp_path / "train.spacy")(nlp))
    corpus = registry.readers.get("spacy_convkernels.GoldEntitiesCorpus.v1")(tmp_path / "train.spacy")
    optimizer = nlp.initialize(lambda: corpus(nlp))
    assert extractor.labels == ("ACTIVATES", "PHOSPHORYLATES")
    optimizer.learn_rate = 0.01
    examples = list(corpus(nlp))
    losses = [
        nlp.update(examples, sgd=optimizer, annotates=["test_sample_parse"])["kernel_relations"] for _ in range(8)
    ]
    assert losses[-1] < losses[0]
    scores = nlp.evaluate(examples)  # the gold read from the references' Doc._.rel
    assert scores["rel_micro_r"] > 0.0


def test_the_tutorials_corpus_can_give_the_entities_as_a_span_group_for_a_ner(tmp_path):
    nlp = spacy.blank("en")
    tutorial_corpus(tmp_path / "train.spacy", nlp)
    read = registry.readers.get("spacy_convkernels.GoldEntitiesCorpus.v1")
    given = next(iter(read(tmp_path / "train.spacy")(nlp)))
    for_ner = next(iter(read(tmp_path / "train.spacy", give_entities="span_group")(nlp)))
    entities = spans(given.reference.ents)
    assert spans(given.predicted.ents) == entities and "entities" not in given.predicted.spans
    assert not for_ner.predicted.ents and spans(for_ner.predicted.spans["entities"]) == entities


def spans(found) -> list[tuple]:
    return [(s.start, s.end, s.label_) for s in found]


def test_a_reference_without_gold_relations_fails_with_its_reason():
    nlp = spacy.blank("en")
    nlp.add_pipe("kernel_relations", config={"model": model_config("EntityPairCandidates")})
    examples = [Example(parsed_in(nlp), parsed()) for _ in range(2)]
    with pytest.raises(MissingAnnotationError, match="hold no gold relation .*Doc._.kernel_rel or Doc._.rel"):
        nlp.initialize(lambda: examples)


def without_entities(nlp) -> Doc:
    doc = Doc(nlp.vocab, words=WORDS, heads=HEADS, deps=DEPS)  # parsed, no entity annotation at all
    assert not doc.has_annotation("ENT_IOB")
    return doc


@pytest.mark.slow
def test_docs_without_entities_get_one_warning_per_call():
    nlp = spacy.blank("en")
    extractor = nlp.add_pipe("kernel_relations", config={"model": model_config("EntityPairCandidates")})
    assert "doc.ents" in nlp.get_pipe_meta("kernel_relations").requires
    nlp.initialize(lambda: pair_examples(nlp))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        docs = list(extractor.pipe((without_entities(nlp) for _ in range(10)), batch_size=3))
        assert len(caught) == 1 and issubclass(caught[0].category, MissingAnnotationWarning)
        assert "without entities (doc.ents)" in str(caught[0].message)
        assert all(doc._.kernel_rel == {} for doc in docs)
        extractor(without_entities(nlp))
        list(nlp.pipe(without_entities(nlp) for _ in range(3)))
        assert len(caught) == 3
        found = parsed_in(nlp)
        found.ents = []  # an entity source ran and found none: nothing to warn about
        list(extractor.pipe([found, parsed_in(nlp)]))
        assert len(caught) == 3


@pytest.mark.slow
def test_add_pipe_with_no_config_trains_and_scores():
    fix_random_seed(0)
    nlp = spacy.blank("en")
    extractor = nlp.add_pipe("kernel_relations")
    assert extractor.cfg["threshold"] is None
    optimizer = nlp.initialize(lambda: pair_examples(nlp))
    for _ in range(3):
        nlp.update(pair_examples(nlp), sgd=optimizer)
    doc = extractor(parsed_in(nlp))
    assert set(doc._.kernel_rel) == {(0, 2), (0, 6), (2, 0), (2, 6), (6, 0), (6, 2)}
    assert all(0.0 <= score <= 1.0 for scores in doc._.kernel_rel.values() for score in scores.values())
