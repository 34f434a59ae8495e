"""The kernel_relations component (issue 16 point 4): trains, writes Doc._.kernel_rel and
Doc._.kernel_interactions, scores, saves and loads."""

import inspect
import json
import logging
import os
import re
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest
import spacy
from bombs import zlib_zeros
from data_paths import CORPORA
from relation_samples import KERNEL, PATH_SVM, model_config, pair_examples, parsed, parsed_in, trained_pair_pipeline
from spacy.language import Language
from spacy.tokens import Doc, DocBin, Span
from spacy.training import Example
from spacy.util import fix_random_seed

from spacy_convkernels.cli import main
from spacy_convkernels.components.relation_evaluation import evaluate_relations
from spacy_convkernels.components.relation_extractor import RelationExtractor
from spacy_convkernels.components.relation_scores import score_relations
from spacy_convkernels.errors import InvalidParameterError
from spacy_convkernels.extensions import install_extensions
from spacy_convkernels.ml.kernel_blocks import blocks_of
from spacy_convkernels.ml.relation_contract import candidate_batch

RELATIONS_SAMPLE = CORPORA / "relations-sample" / "relations.jsonl"


@pytest.mark.slow
@pytest.mark.parametrize("kernel,tok2vec", [(True, True), (True, False), (False, True)])
def test_it_learns_the_pairs_with_either_block_or_both(kernel, tok2vec):
    nlp, extractor, examples, losses = trained_pair_pipeline(kernel=kernel, tok2vec=tok2vec)
    assert extractor.labels == ("ACTIVATES", "PHOSPHORYLATES")
    assert losses[-1] < losses[0] / 2
    doc = extractor(parsed_in(nlp))
    assert set(doc._.kernel_rel) == {(0, 2), (0, 6), (2, 0), (2, 6), (6, 0), (6, 2)}
    assert doc._.kernel_rel[(0, 2)]["ACTIVATES"] > 0.5 > doc._.kernel_rel[(2, 0)]["ACTIVATES"]
    assert doc._.kernel_rel[(2, 6)]["PHOSPHORYLATES"] > 0.5 > doc._.kernel_rel[(0, 6)]["PHOSPHORYLATES"]
    scores = nlp.evaluate(examples)
    assert scores["rel_micro_f"] == 1.0


@pytest.mark.slow
def test_bytes_round_trip_gives_identical_scores():
    nlp, extractor, _, _ = trained_pair_pipeline(steps=5)
    before = extractor(parsed_in(nlp))._.kernel_rel
    copy = spacy.blank("en")
    copy.add_pipe("kernel_relations", config={"model": model_config("EntityPairCandidates")})
    copy.from_bytes(nlp.to_bytes())
    after = copy.get_pipe("kernel_relations")(parsed_in(copy))._.kernel_rel
    assert after.keys() == before.keys()
    for key in before:
        assert after[key] == before[key]


class CountingCandidates:
    """A candidate generator that counts the Docs it is called on."""

    def __init__(self, generator):
        self.generator, self.calls = generator, 0

    def __call__(self, doc):
        self.calls += 1
        return self.generator(doc)

    def __getattr__(self, name):
        return getattr(self.generator, name)


def test_candidates_are_made_once_per_doc_by_the_model():
    """The model makes a batch's candidates and gives them with its scores: set_annotations,
    the loss and initialize's thresholds make none."""
    nlp, extractor, examples, _ = trained_pair_pipeline(tok2vec=False, steps=1)
    expected = [dict(doc._.kernel_rel) for doc in extractor.pipe([parsed_in(nlp), parsed_in(nlp)])]
    counting = extractor.model.attrs["candidates"] = CountingCandidates(extractor.model.attrs["candidates"])
    docs = list(extractor.pipe([parsed_in(nlp), parsed_in(nlp)]))
    assert counting.calls == 2 and [dict(doc._.kernel_rel) for doc in docs] == expected
    other = parsed_in(nlp)  # the scores are those of predict's Docs' candidates
    extractor.set_annotations([other], extractor.predict([parsed_in(nlp)]))
    assert dict(other._.kernel_rel) == expected[0] and counting.calls == 3
    counting.calls = 0
    nlp.update(examples)
    assert counting.calls == len(examples)
    counting.calls = 0
    extractor.initialize(lambda: examples, nlp=nlp)
    assert counting.calls == len(examples)


def test_the_model_takes_docs_or_a_batch_made_before_and_gives_their_candidates_with_the_scores():
    """Its input is Docs (two Docs in a tuple too) or a CandidateBatch, taken as it is."""
    nlp, extractor, _, _ = trained_pair_pipeline(tok2vec=False, steps=1)
    docs = [parsed_in(nlp), parsed_in(nlp)]
    scores = extractor.model.predict(docs)
    pairs = [(0, 2), (0, 6), (2, 0), (2, 6), (6, 0), (6, 2)]
    assert [[c.key for c in candidates] for candidates in scores.candidates] == [pairs, pairs]
    assert scores.label_scores().shape == (12, 2) and len(scores) == 12
    np.testing.assert_array_equal(extractor.model.predict(tuple(docs)).values, scores.values)
    batch = candidate_batch(extractor.model, docs)
    assert extractor.model.predict(batch).batch is batch


def test_relations_survive_to_bytes_docbin_and_to_json():
    nlp, extractor, _, _ = trained_pair_pipeline(steps=5)
    doc = extractor(parsed_in(nlp))
    assert set(doc._.kernel_rel) == {(0, 2), (0, 6), (2, 0), (2, 6), (6, 0), (6, 2)}
    assert Doc(nlp.vocab).from_bytes(doc.to_bytes())._.kernel_rel == doc._.kernel_rel
    (restored,) = DocBin(docs=[doc], store_user_data=True).get_docs(nlp.vocab)
    assert restored._.kernel_rel == doc._.kernel_rel
    assert json.loads(json.dumps(doc.to_json()))["text"] == doc.text
    assert Doc(nlp.vocab)._.kernel_rel == {}  # the default, as the rel_component tutorial's


def test_relations_are_checked_when_set():
    install_extensions("doc._.kernel_rel")
    doc = parsed()
    doc._.kernel_rel = {(0, 2): {"ACTIVATES": 0.9}}
    assert doc._.kernel_rel == {(0, 2): {"ACTIVATES": 0.9}}
    for value, message in [
        (None, "takes a dict"),
        ({"0;2": {"A": 1.0}}, "got the key '0;2'"),
        ({(0, -2): {"A": 1.0}}, r"got the key \(0, -2\)"),
        ({(0, 2): 0.9}, r"\(0, 2\)\] is not a dict"),
        ({(0, 2): {"A": "high"}}, "number scores; got 'A': 'high'"),
    ]:
        with pytest.raises(InvalidParameterError, match=message):
            doc._.kernel_rel = value


@pytest.mark.slow
def test_relations_of_two_processes_are_those_of_one():
    nlp, _, _, _ = trained_pair_pipeline(steps=5)
    docs = [parsed_in(nlp) for _ in range(4)]
    one = [doc._.kernel_rel for doc in nlp.pipe(doc.copy() for doc in docs)]
    two = [doc._.kernel_rel for doc in nlp.pipe(docs, n_process=2, batch_size=2)]
    assert two == one and one[0]


def test_a_pair_with_a_proposed_entity_is_reported_with_the_whole_proposal():
    nlp = spacy.blank("en")
    config = model_config("EntityPairCandidates", tok2vec=False, kernel_features=PATH_SVM)
    config["candidates"] |= {"proposals_key": "proposals", "proposal_margin": 0.25}
    extractor = nlp.add_pipe("kernel_relations", config={"model": config, "threshold": 0.0})
    nlp.initialize(lambda: pair_examples(nlp))
    doc = parsed_in(nlp)
    doc.ents = doc.ents[:2]  # RAS and RAF; "MEK1 ." proposed
    doc.spans["proposals"] = [Span(doc, 6, 8, "Protein")]
    found = {(r.head.start, r.head.end, r.child.start, r.child.end) for r in extractor.relations(extractor(doc))}
    assert (2, 3, 6, 8) in found and (6, 8, 0, 1) in found


def test_an_interaction_with_a_proposed_participant_scores_the_margin_lower():
    nlp = spacy.blank("en")
    config = model_config("InteractionCandidates")
    config["candidates"] |= {"proposals_key": "proposals", "proposal_margin": 0.3}
    extractor = nlp.add_pipe("kernel_relations", config={"model": config})
    reference = parsed()
    reference.user_data[("spacy_convkernels", "interactions")] = [
        {"interaction": "Binding", "unit": "E1", "spans": {"trigger": [1, 2], "catalyst": [0, 1], "theme": [2, 3]}}
    ]
    nlp.initialize(lambda: [Example(parsed_in(nlp), reference)])

    def scored(doc) -> dict:
        return {json.dumps(r["spans"]): r["scores"]["Binding"] for r in extractor(doc)._.kernel_interactions}

    found = parsed_in(nlp)
    del found.spans["proteins"]  # raw text: the ner's entities, all three
    proposed = parsed_in(nlp)
    del proposed.spans["proteins"]
    proposed.ents = proposed.ents[:2]  # the ner missed MEK1, a ruler proposes it
    proposed.spans["proposals"] = [Span(proposed, 6, 7, "Protein"), Span(proposed, 0, 1, "Protein")]
    given = parsed_in(nlp)  # the gold proteins given: no proposals
    given.spans["proposals"] = [Span(given, 6, 7, "Protein")]
    given.ents = given.ents[:2]
    before, after = scored(found), scored(proposed)
    assert after.keys() == before.keys() == scored(given).keys() and len(before) == 24
    for spans, score in before.items():
        lowered = max(score - 0.3, 0.0) if "[6, 7]" in spans else score  # MEK1 in any role
        assert after[spans] == pytest.approx(lowered)
    assert scored(given) == before


@pytest.mark.slow
def test_interactions_get_scores_and_the_best_label():
    fix_random_seed(0)
    nlp = spacy.blank("en")
    extractor = nlp.add_pipe("kernel_relations", config={"model": model_config("InteractionCandidates")})
    examples = []
    for _ in range(3):
        predicted, reference = parsed_in(nlp), parsed()
        reference.user_data[("spacy_convkernels", "interactions")] = [
            {
                "interaction": "Positive_regulation",
                "unit": "E1",
                "spans": {"trigger": [1, 2], "catalyst": [0, 1], "theme": [2, 3]},
            }
        ]
        examples.append(Example(predicted, reference))
    optimizer = nlp.initialize(lambda: examples)
    optimizer.learn_rate = 0.01
    for _ in range(30):
        nlp.update(examples, sgd=optimizer)
    doc = extractor(parsed_in(nlp))
    records = doc._.kernel_interactions
    assert len(records) == 24 and all(set(r["scores"]) == {"Positive_regulation"} for r in records)
    best = max(records, key=lambda r: r["score"])
    assert best["score"] > 0.5 > sorted(r["score"] for r in records)[-2]
    assert best["spans"] == {"trigger": [1, 2], "catalyst": [0, 1], "theme": [2, 3]}
    assert best["participants"] == {"catalyst": "RAS", "theme": "RAF"} and best["trigger"] == "activates"
    assert nlp.evaluate(examples)["rel_micro_f"] == 1.0


def pair_example(predicted_rel: dict, gold_rel: dict) -> Example:
    predicted, reference = parsed(), parsed()
    predicted._.kernel_rel = predicted_rel
    reference._.kernel_rel = gold_rel
    return Example(predicted, reference)


def test_score_counts_micro_and_per_label_figures():
    spacy.blank("en").add_pipe("kernel_relations", config={"model": model_config("EntityPairCandidates")})
    example = pair_example(
        {(0, 2): {"A": 0.9, "B": 0.2}, (2, 6): {"A": 0.7, "B": 0.6}, (6, 0): {"A": 0.1, "B": 0.1}},
        {(0, 2): {"A": 1.0}, (2, 6): {"B": 1.0}, (6, 2): {"A": 1.0}},
    )
    scores = score_relations([example], threshold=0.5)
    # predicted: (0,2,A) right, (2,6,A) wrong, (2,6,B) right; gold: 3, of which 2 found
    assert scores["rel_micro_p"] == pytest.approx(2 / 3) and scores["rel_micro_r"] == pytest.approx(2 / 3)
    assert scores["rel_f_per_type"]["A"] == {"p": 0.5, "r": 0.5, "f": 0.5}
    assert scores["rel_f_per_type"]["B"] == {"p": 1.0, "r": 1.0, "f": 1.0}
    assert score_relations([example], threshold=0.8)["rel_micro_p"] == 1.0
    # whatever the label: (0,2) and (2,6) are related pairs, predicted; (6,2) is missed
    assert (scores["rel_untyped_p"], scores["rel_untyped_r"]) == (1.0, pytest.approx(2 / 3))
    strict = score_relations([example], threshold=0.8)
    assert (strict["rel_untyped_p"], strict["rel_untyped_r"]) == (1.0, pytest.approx(1 / 3))


def test_single_label_predicts_only_the_best_label_of_a_candidate():
    nlp = spacy.blank("en")
    extractor = nlp.add_pipe(
        "kernel_relations", config={"model": model_config("EntityPairCandidates"), "single_label": True}
    )
    example = pair_example(
        {(0, 2): {"A": 0.9, "B": 0.2}, (2, 6): {"A": 0.7, "B": 0.6}, (6, 0): {"A": 0.1, "B": 0.1}},
        {(0, 2): {"A": 1.0}, (2, 6): {"B": 1.0}, (6, 2): {"A": 1.0}},
    )
    # predicted: (0,2,A) right, (2,6,A) wrong; (2,6,B) is not the best label of its pair
    assert extractor.score([example])["rel_micro_p"] == pytest.approx(1 / 2)
    assert extractor.score([example])["rel_micro_r"] == pytest.approx(1 / 3)
    assert score_relations([example], threshold=0.5)["rel_micro_p"] == pytest.approx(2 / 3)  # every label
    with pytest.raises(InvalidParameterError, match="single_label must be true or false"):
        RelationExtractor(nlp.vocab, extractor.model, single_label="yes")


def test_an_equiv_variant_finds_its_interaction_once():
    install_extensions("doc._.kernel_rel", "doc._.kernel_interactions")
    predicted, reference = parsed(), parsed()
    predicted.user_data[("spacy_convkernels", "interactions")] = [
        {"scores": {"Binding": 0.9}, "spans": {"trigger": [5, 6], "theme": [6, 7]}},
        {"scores": {"Binding": 0.8}, "spans": {"trigger": [5, 6], "theme": [2, 3]}},
    ]
    reference.user_data[("spacy_convkernels", "interactions")] = [
        {"interaction": "Binding", "unit": "E1+T3", "spans": {"trigger": [5, 6], "theme": [6, 7]}},
        {"interaction": "Binding", "unit": "E1+T3", "spans": {"trigger": [5, 6], "theme": [2, 3]}},  # Equiv
    ]
    predicted._.kernel_rel = reference._.kernel_rel = {}
    scores = score_relations([Example(predicted, reference)])
    assert scores["rel_micro_p"] == 1.0 and scores["rel_micro_r"] == 1.0


def test_untyped_scores_count_interaction_candidates():
    install_extensions("doc._.kernel_rel", "doc._.kernel_interactions")
    predicted, reference = parsed(), parsed()
    predicted.user_data[("spacy_convkernels", "interactions")] = [
        {"scores": {"Binding": 0.2, "Expression": 0.9}, "spans": {"trigger": [5, 6], "theme": [6, 7]}},  # wrong type
        {"scores": {"Binding": 0.8}, "spans": {"trigger": [5, 6], "theme": [0, 1]}},  # no such interaction
        {"scores": {"Binding": 0.1}, "spans": {"trigger": [5, 6], "theme": [2, 3]}},  # below the threshold
    ]
    reference.user_data[("spacy_convkernels", "interactions")] = [
        {"interaction": "Binding", "unit": "E1", "spans": {"trigger": [5, 6], "theme": [6, 7]}},
        {"interaction": "Binding", "unit": "E2", "spans": {"trigger": [5, 6], "theme": [2, 3]}},
    ]
    predicted._.kernel_rel = reference._.kernel_rel = {}
    scores = score_relations([Example(predicted, reference)])
    assert scores["rel_micro_p"] == 0.0
    assert (scores["rel_untyped_p"], scores["rel_untyped_r"]) == (0.5, 0.5)


def test_bad_settings_fail_with_their_reason():
    nlp = spacy.blank("en")
    with pytest.raises(InvalidParameterError, match="threshold"):
        nlp.add_pipe(
            "kernel_relations",
            config={"threshold": 1.5, "model": model_config("EntityPairCandidates")},
        )
    with pytest.raises(InvalidParameterError, match="both null"):
        nlp.add_pipe(
            "kernel_relations",
            name="neither",
            config={"model": model_config("EntityPairCandidates", kernel=False, tok2vec=False)},
        )


def test_kernel_features_take_the_width_of_few_landmarks():
    from spacy_convkernels.kernels import SubsequencePathKernel
    from spacy_convkernels.ml.candidate_features import candidate_kernel_features
    from spacy_convkernels.structures.relations import entity_pairs

    block = candidate_kernel_features(SubsequencePathKernel(), n_components=10, landmark_init="uniform")
    candidates = [entity_pairs(parsed())]
    with pytest.warns(UserWarning, match="using 6 landmarks"):
        block.initialize(X=(None, candidates))
    rows = block.predict((None, candidates))
    assert block.get_dim("nO") == 6 and rows.shape == (6, 6) and np.all(rows.any(axis=0))


@pytest.mark.parametrize("landmark_init", ["pivoted_cholesky", "ridge_leverage"])
def test_kernel_features_take_every_landmark_method(landmark_init):
    from spacy_convkernels.kernels import SubsequencePathKernel
    from spacy_convkernels.ml.candidate_features import candidate_kernel_features
    from spacy_convkernels.structures.relations import entity_pairs

    block = candidate_kernel_features(SubsequencePathKernel(), n_components=4, landmark_init=landmark_init)
    assert block.attrs["encoder"].estimator.landmark_init == landmark_init
    candidates = [entity_pairs(parsed())]
    block.initialize(X=(None, candidates))
    rows = block.predict((None, candidates))
    assert rows.shape == (6, 4) and np.all(np.isfinite(rows))
    with pytest.raises(InvalidParameterError, match="landmark_init"):
        candidate_kernel_features(SubsequencePathKernel(), landmark_init="leverage")


@pytest.mark.slow
def test_klsh_bits_as_kernel_features_learn_and_round_trip():
    fix_random_seed(0)
    nlp = spacy.blank("en")
    config = model_config("EntityPairCandidates", tok2vec=False)
    config["kernel_features"] = dict(KERNEL, method="klsh", n_components=64, n_references=24, subset_size=3)
    extractor = nlp.add_pipe("kernel_relations", config={"model": config})
    examples = pair_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    optimizer.learn_rate = 0.01
    for _ in range(80):
        nlp.update(examples, sgd=optimizer)
    (block,) = blocks_of(extractor.model.get_ref("kernel_features"))
    rows = block.predict((None, [extractor.model.attrs["candidates"](parsed())]))
    assert set(np.unique(rows)) == {0.0, 1.0}  # bits
    assert nlp.evaluate(examples)["rel_micro_f"] == 1.0
    copy = spacy.blank("en")
    copy.add_pipe("kernel_relations", config={"model": config})
    copy.from_bytes(nlp.to_bytes())
    assert copy.get_pipe("kernel_relations")(parsed_in(copy))._.kernel_rel == extractor(parsed_in(nlp))._.kernel_rel


def test_a_batch_without_candidates_updates_nothing():
    nlp, extractor, examples, _ = trained_pair_pipeline(steps=1)
    empty = parsed_in(nlp)
    empty.ents = []
    before = extractor.model.to_bytes()
    losses = extractor.update([Example(empty, empty)], sgd=nlp.create_optimizer())
    assert losses == {"kernel_relations": 0.0} and extractor.model.to_bytes() == before
    assert extractor(parsed_in(nlp).copy())._.kernel_rel and not extractor(empty)._.kernel_rel


@pytest.mark.slow
def test_exact_svm_decisions_as_kernel_features_learn_and_round_trip():
    fix_random_seed(0)
    nlp = spacy.blank("en")
    config = dict(model_config("EntityPairCandidates", tok2vec=False), kernel_features=PATH_SVM)
    extractor = nlp.add_pipe("kernel_relations", config={"model": config})
    examples = pair_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    optimizer.learn_rate = 0.01
    for _ in range(80):
        nlp.update(examples, sgd=optimizer)
    assert nlp.evaluate(examples)["rel_micro_f"] == 1.0
    (block,) = blocks_of(extractor.model.get_ref("kernel_features"))
    svm = block.attrs["encoder"]
    doc = parsed_in(nlp)
    candidates = [extractor.model.attrs["candidates"](doc)]
    exact = svm.estimator.decision_function([c.path for c in candidates[0]])
    assert exact.shape == (6, 3)  # ACTIVATES, PHOSPHORYLATES, any label
    assert block.predict(([doc], candidates)) == pytest.approx(exact, abs=1e-5)
    assert set(svm.decisions) == {c.path for c in candidates[0]}  # kept by structure, computed once
    assert block.predict(([doc], candidates)) == pytest.approx(exact, abs=1e-5)
    out_of_fold = np.array([svm.out_of_fold[(doc.text, c.spans)] for c in candidates[0]])
    training_rows, _ = block(([doc], candidates), is_train=True)
    assert training_rows == pytest.approx(out_of_fold, abs=1e-5)
    # the four training documents are copies: each one's fold was fitted on the other three
    assert out_of_fold == pytest.approx(exact, abs=1e-5)
    copy = spacy.blank("en")
    copy.add_pipe("kernel_relations", config={"model": config})
    copy.from_bytes(nlp.to_bytes())
    assert copy.get_pipe("kernel_relations")(parsed_in(copy))._.kernel_rel == extractor(parsed_in(nlp))._.kernel_rel


def initialized_svm_block(svm_config: dict):
    """The SVM block of a kernel_relations initialized on the pair examples; its pipeline,
    candidate generator, and every training candidate with its label ("" for none)."""
    nlp = spacy.blank("en")
    config = dict(model_config("EntityPairCandidates", tok2vec=False), kernel_features=svm_config)
    extractor = nlp.add_pipe("kernel_relations", config={"model": config})
    examples = pair_examples(nlp)
    nlp.initialize(lambda: examples)
    (block,) = blocks_of(extractor.model.get_ref("kernel_features"))
    generate = extractor.model.attrs["candidates"]
    training, gold = [], []
    for example in examples:
        for candidate in generate(example.predicted):
            head, child = (start for _, start, _ in candidate.spans)
            training.append((example.predicted, candidate))
            gold.append(next(iter(example.reference._.kernel_rel.get((head, child), {})), ""))
    return block, nlp, generate, training, np.array(gold)


def test_the_svm_block_gives_the_decisions_of_svms_fitted_by_hand():
    from spacy_convkernels.kernels import SubsequencePathKernel
    from spacy_convkernels.learn import KernelSVC

    block, nlp, generate, training, gold = initialized_svm_block(PATH_SVM)
    paths = [candidate.path for _, candidate in training]
    related = gold != ""
    assert related.sum() == 8 and len(gold) == 24  # two relations among six ordered pairs, four documents
    kernel = SubsequencePathKernel(vectors=None)
    by_hand = [  # a label's SVM on the related candidates, then the gate's on all of them
        KernelSVC(kernel, C=100.0).fit([p for p, r in zip(paths, related) if r], gold[related] == label)
        for label in ("ACTIVATES", "PHOSPHORYLATES")
    ] + [KernelSVC(kernel, C=100.0).fit(paths, related)]
    doc = parsed_in(nlp)
    candidates = generate(doc)
    expected = np.stack([svm.decision_function([c.path for c in candidates]) for svm in by_hand], axis=1)
    assert block.predict(([doc], [candidates])) == pytest.approx(expected, abs=1e-5)


def test_a_candidate_text_is_its_labels_then_the_words_between_its_spans():
    from spacy_convkernels.ml.candidate_svm import candidate_text
    from spacy_convkernels.structures.relations import entity_pairs

    doc = parsed()  # RAS activates RAF , which phosphorylates MEK1 .
    texts = {c.key: candidate_text(doc, c) for c in entity_pairs(doc, tree=None)}
    assert texts[(0, 2)] == "labels=Protein>Protein w=activates"
    assert texts[(6, 2)] == texts[(2, 6)] == "labels=Protein>Protein w=, w=which w=phosphorylates"
    doc.ents = [Span(doc, 0, 1, "Gene"), Span(doc, 2, 3, "Protein")]
    assert [candidate_text(doc, c) for c in entity_pairs(doc, tree=None)] == [
        "labels=Gene>Protein w=activates",
        "labels=Protein>Gene w=activates",
    ]


@pytest.mark.slow
def test_the_svm_block_with_a_text_weight_gives_the_decisions_of_svms_on_the_composite_kernel():
    from spacy_convkernels.kernels import SubsequencePathKernel
    from spacy_convkernels.learn import KernelSVC
    from spacy_convkernels.ml.candidate_svm import candidate_text
    from spacy_convkernels.ml.kernel_encoders import NgramCosine

    block, nlp, generate, training, gold = initialized_svm_block({**PATH_SVM, "text_weight": 0.5})
    paths = [candidate.path for _, candidate in training]
    texts = [candidate_text(doc, candidate) for doc, candidate in training]
    related = gold != ""
    kernel, ngrams = SubsequencePathKernel(vectors=None), NgramCosine(2).fit(texts)
    gram = kernel.gram(paths) + 0.5 * ngrams.gram(texts)
    doc = parsed_in(nlp)
    candidates = generate(doc)
    rows = kernel.gram([c.path for c in candidates], paths)
    rows += 0.5 * ngrams.gram([candidate_text(doc, c) for c in candidates], texts)
    expected = []  # a label's SVM on the related candidates, then the gate's on all of them
    for label in ("ACTIVATES", "PHOSPHORYLATES"):
        svm = KernelSVC(kernel, C=100.0).fit_gram(
            gram[np.ix_(related, related)], [p for p, r in zip(paths, related) if r], gold[related] == label
        )
        expected.append(svm.decision_function_from_rows(rows[:, related][:, svm.support_]))
    svm = KernelSVC(kernel, C=100.0).fit_gram(gram, paths, related)
    expected.append(svm.decision_function_from_rows(rows[:, svm.support_]))
    decisions = block.predict(([doc], [candidates]))
    assert decisions == pytest.approx(np.stack(expected, axis=1), abs=1e-5)
    path_only = initialized_svm_block(PATH_SVM)[0]  # without the text weight, other decisions
    assert not np.allclose(path_only.predict(([doc], [candidates])), decisions, atol=1e-3)


def test_a_grid_of_text_weights_breaks_a_tie_to_the_path_kernel_and_initializes_again():
    block, nlp, generate, training, _ = initialized_svm_block({**PATH_SVM, "text_weight": [0.5, 0.0]})
    encoder = block.attrs["encoder"]
    assert set(encoder.choice["scores"]) == {(0.0, 0.0, 100.0), (0.0, 0.5, 100.0)}
    assert len(set(encoder.choice["scores"].values())) == 1  # the toy corpus: a tie, to the smaller weight
    assert encoder.choice["text_weight"] == encoder.text_weight == 0.0
    doc = parsed_in(nlp)
    before = block.predict(([doc], [generate(doc)]))
    nlp.initialize(lambda: pair_examples(nlp))  # the texts are read again to fit, though 0 was chosen
    assert encoder.choice["text_weight"] == 0.0
    assert block.predict(([doc], [generate(doc)])) == pytest.approx(before, abs=1e-9)


def test_initialize_tells_the_packages_logger_what_it_fits_how_far_it_is_and_what_it_chose(caplog):
    """What `spacy train` shows while the SVM block initializes."""
    with caplog.at_level(logging.INFO, logger="spacy_convkernels"):
        initialized_svm_block(PATH_SVM)
    told = [record.getMessage() for record in caplog.records if record.name == "spacy_convkernels"]
    told = told[[m.startswith("CandidateKernelSVM") for m in told].index(True) :]  # after spaCy's own
    assert told[0] == "CandidateKernelSVM: fitting on 24 candidates of 4 documents, C in [100.0], text weight in [0.0]"
    assert "CandidateKernelSVM: Gram: 24 of 24 rows (100 %), 0 s" in told
    assert [m for m in told if "fold" in m and "SVMs" in m] == [
        "CandidateKernelSVM: fold 1/2: 3 SVMs on 12 structures",
        "CandidateKernelSVM: fold 2/2: 3 SVMs on 12 structures",
    ]
    chosen = r"CandidateKernelSVM: C = 100 and text weight 0 chosen by 2-fold .*; \d+ support vectors"
    assert re.fullmatch(chosen, told[-2])
    assert told[-1].startswith("kernel_relations: thresholds chosen on the 24 training candidates' out-of-fold")


def test_initialize_logs_how_many_gold_relations_the_candidates_reach(caplog):
    """A relation between entities that the parse puts in two sentences is no pair's:
    initialize says how many such relations it can neither learn nor predict."""
    words = ["RAS", "activates", "RAF", ".", "MEK1", "binds", "ERK2", "."]
    heads, deps = [1, 1, 1, 1, 5, 5, 5, 5], ["nsubj", "ROOT", "dobj", "punct"] * 2
    tags, lemmas = ["NNP", "VBZ", "NNP", "."] * 2, ["ras", "activate", "raf", ".", "mek1", "bind", "erk2", "."]
    nlp = spacy.blank("en")
    config = dict(model_config("EntityPairCandidates", tok2vec=False), kernel_features=PATH_SVM)
    nlp.add_pipe("kernel_relations", config={"model": config})

    def two_sentences():
        doc = Doc(nlp.vocab, words=words, heads=heads, deps=deps, tags=tags, lemmas=lemmas)
        doc.ents = [Span(doc, i, i + 1, "GENE") for i in (0, 2, 4, 6)]
        return doc

    examples = []
    for _ in range(4):
        reference = two_sentences()
        reference._.kernel_rel = {(0, 2): {"ACTIVATES": 1.0}, (4, 6): {"BINDS": 1.0}, (2, 4): {"ACTIVATES": 1.0}}
        examples.append(Example(two_sentences(), reference))
    assert len(list(examples[0].predicted.sents)) == 2
    with caplog.at_level(logging.INFO, logger="spacy_convkernels"):
        nlp.initialize(lambda: examples)
    told = [record.getMessage() for record in caplog.records if "the candidates reach" in record.getMessage()]
    assert len(told) == 1 and told[0].startswith(
        "kernel_relations: the candidates reach 8 of the references' 12 gold relations (66.7 %)"
    )


def test_gram_progress_is_told_at_most_every_few_seconds_and_at_the_end(monkeypatch):
    from spacy_convkernels.ml import kernel_encoders

    clock = iter([0.0, 1.0, 2.0, 6.0, 7.0])  # the start, then each count
    # the module's own clock, not the time module's: nothing else in the process reads this one
    monkeypatch.setattr(kernel_encoders, "time", SimpleNamespace(perf_counter=lambda: next(clock)))
    told = []
    count = kernel_encoders.progress_of_rows(told.append, total=40, every=5.0)
    for _ in range(4):
        count(10)
    assert told == ["Gram: 30 of 40 rows (75 %), 6 s", "Gram: 40 of 40 rows (100 %), 7 s"]


@pytest.mark.slow
def test_candidates_without_trees_serve_path_blocks_and_refuse_tree_blocks():
    from spacy_convkernels.structures.relations import entity_pairs

    with_trees, without = entity_pairs(parsed()), entity_pairs(parsed(), tree=None)
    assert [c.path for c in without] == [c.path for c in with_trees] and all(c.tree is None for c in without)
    config = dict(model_config("EntityPairCandidates", tok2vec=False), kernel_features=PATH_SVM)
    config["candidates"] = {**config["candidates"], "tree": None}
    spacy.blank("en").add_pipe("kernel_relations", config={"model": config})  # paths only: fine
    config["kernel_features"] = {**PATH_SVM, "structure": "tree"}
    with pytest.raises(InvalidParameterError, match="the candidates have none"):
        spacy.blank("en").add_pipe("kernel_relations", config={"model": config})


def test_the_svm_block_needs_labels_and_a_sane_cap():
    from spacy_convkernels.kernels import SubsequencePathKernel
    from spacy_convkernels.ml.candidate_svm import candidate_kernel_svm
    from spacy_convkernels.structures.relations import entity_pairs

    with pytest.raises(InvalidParameterError, match="needs the candidates' labels"):
        candidate_kernel_svm(SubsequencePathKernel()).initialize(X=([parsed()], [entity_pairs(parsed())]))
    with pytest.raises(InvalidParameterError, match="max_train must be"):
        candidate_kernel_svm(SubsequencePathKernel(), max_train=1)


PTK_NYSTROEM = {
    "@architectures": "spacy_convkernels.CandidateKernelFeatures.v1",
    "structure": "tree",
    "n_components": 6,
    "kernel": {"@misc": "spacy_convkernels.PartialTreeKernel.v1", "lam": 0.4, "mu": 0.4},
}
TWO_BLOCKS = {
    "@architectures": "spacy_convkernels.KernelBlocks.v1",
    "*": {"pk_svm": PATH_SVM, "ptk_nystroem": PTK_NYSTROEM},
}


@pytest.fixture(scope="module")
def two_blocks():
    """A relation pipeline with two kernel blocks, trained once for the two tests below (neither changes it)."""
    return trained_pair_pipeline(steps=40, kernel_features=TWO_BLOCKS)


@pytest.mark.slow
def test_two_kernel_blocks_train_and_round_trip_through_bytes_with_identical_predictions(two_blocks):
    nlp, extractor, examples, losses = two_blocks
    svm, nystroem = blocks_of(extractor.model.get_ref("kernel_features"))
    assert svm.name == "candidate_kernel_svm" and nystroem.name == "candidate_kernel_features"
    assert svm.attrs["encoder"].fitted and nystroem.attrs["encoder"].fitted
    assert extractor.model.get_ref("kernel_features").get_dim("nO") == 3 + 6  # 2 labels + any label, 6 landmarks
    assert losses[-1] < losses[0] / 2
    assert nlp.evaluate(examples)["rel_micro_f"] == 1.0
    expected = extractor(parsed_in(nlp))._.kernel_rel
    copy = spacy.blank("en")
    copy.add_pipe(
        "kernel_relations", config={"model": model_config("EntityPairCandidates", kernel_features=TWO_BLOCKS)}
    )
    copy.from_bytes(nlp.to_bytes())
    assert copy.get_pipe("kernel_relations")(parsed_in(copy))._.kernel_rel == expected


def sorted_relations(doc) -> str:
    """A Doc's relations as one comparable line (also run by the new process below)."""
    return repr(sorted((k, sorted(v.items())) for k, v in doc._.kernel_rel.items()))


@pytest.mark.slow  # a new Python process loads the pipelines
def test_saved_pipelines_predict_identically_in_a_new_process_without_an_import(two_blocks, tmp_path):
    """spaCy finds the factories and architectures by their entry points: Nyström
    features, one SVM block, and the two blocks, each saved to disk."""
    pipelines = {
        "nystroem": trained_pair_pipeline(steps=5, kernel_features=KERNEL),
        "svm": trained_pair_pipeline(steps=5, kernel_features=PATH_SVM),
        "two_blocks": two_blocks,
    }
    parsed().to_disk(tmp_path / "doc.spacy")
    expected = []
    for name, (nlp, extractor, _, _) in pipelines.items():
        nlp.to_disk(tmp_path / name)
        expected.append(sorted_relations(extractor(parsed_in(nlp))))
    load = (
        f"for name in {list(pipelines)!r}:\n"
        f"    nlp = spacy.load({str(tmp_path)!r} + '/' + name)\n"
        f"    doc = nlp.get_pipe('kernel_relations')(Doc(nlp.vocab).from_disk({str(tmp_path / 'doc.spacy')!r}))\n"
        "    print(sorted_relations(doc))\n"
    )
    code = "import spacy\nfrom spacy.tokens import Doc\n" + inspect.getsource(sorted_relations) + load
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.splitlines() == expected


TUTORIAL = """
from spacy.language import Language
from spacy.tokens import Doc

Doc.set_extension("rel", default={}, force=True)  # as explosion's rel_component tutorial does


@Language.factory("relation_extractor", assigns=["doc._.rel"], default_score_weights={"rel_micro_f": None})
def make_tutorial_relations(nlp, name):  # a stand-in for the tutorial's component
    def tutorial_relations(doc):
        doc._.rel = {(e1.start, e2.start): {"TUTORIAL": 1.0} for e1 in doc.ents for e2 in doc.ents if e1 != e2}
        return doc

    return tutorial_relations
"""


def both_pipelines(tutorial_first: bool) -> str:
    """A script that builds the tutorial's pipeline and ours in one process and prints their relations."""
    ours = (
        "import spacy\n"
        "import spacy_convkernels.components.relation_extractor\n"
        "from relation_samples import model_config, pair_examples, parsed_in\n"
    )
    build = (
        "tutorial, kernel = spacy.blank('en'), spacy.blank('en')\n"
        "tutorial.add_pipe('relation_extractor')\n"
        "kernel.add_pipe('kernel_relations', config={'model': model_config('EntityPairCandidates')})\n"
        "kernel.initialize(lambda: pair_examples(kernel))\n"
        "doc = kernel(tutorial(parsed_in(kernel)))\n"
        "print(sorted(doc._.rel), sorted(doc._.kernel_rel))\n"
    )
    return (TUTORIAL + ours if tutorial_first else ours + TUTORIAL) + build


@pytest.mark.slow
@pytest.mark.parametrize("tutorial_first", [True, False])
def test_the_tutorials_component_and_ours_in_one_process(tutorial_first):
    result = subprocess.run(
        [sys.executable, "-c", both_pipelines(tutorial_first)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    pairs = [(0, 2), (0, 6), (2, 0), (2, 6), (6, 0), (6, 2)]
    assert result.stdout.strip() == f"{pairs} {pairs}"


@Language.component("test_parse_without_entities")
def parse_without_entities(doc):
    """The sample's parse, as a pipeline's parser would give it, and no entities."""
    parsed_doc = Doc(doc.vocab).from_bytes(parsed().to_bytes())
    parsed_doc.ents = []
    return parsed_doc


@pytest.mark.slow
def test_evaluation_keeps_the_gold_entities_through_the_pipeline():
    nlp, extractor, examples, _ = trained_pair_pipeline(steps=5)
    nlp.add_pipe("test_parse_without_entities", first=True)
    references = [example.reference for example in examples]
    direct = extractor.score([Example(extractor(parsed_in(nlp)), reference) for reference in references])
    assert direct["rel_micro_f"] > 0.0
    assert evaluate_relations(nlp, references) == direct
    assert evaluate_relations(nlp, references, entities="predicted")["rel_micro_r"] == 0.0  # no entity found
    with pytest.raises(InvalidParameterError, match="entity pairs, which have no triggers"):
        evaluate_relations(nlp, references, triggers="gold")
    with pytest.raises(InvalidParameterError, match="entities must be one of gold, predicted"):
        evaluate_relations(nlp, references, entities="given")
    with pytest.raises(InvalidParameterError, match="0 kernel_relations components"):
        evaluate_relations(spacy.blank("en"), references)


@pytest.mark.slow
def test_evaluate_relations_refuses_a_corpus_it_cannot_read(tmp_path, capsys):
    spacy.blank("en").to_disk(tmp_path / "blank")
    (tmp_path / "corpus.txt").write_text("RAS activates RAF.", encoding="utf-8")
    spacy.blank("en")("RAS activates RAF.").to_disk(tmp_path / "one.spacy")  # a Doc, not a DocBin
    (tmp_path / "bomb.spacy").write_bytes(zlib_zeros(b"", 100 << 20))  # 102 KB
    for corpus, message in [
        (tmp_path / "absent.jsonl", "absent.jsonl: no such file or directory"),
        (tmp_path / "one.spacy", "one.spacy, line 1: not a spaCy DocBin (ValueError: [E1014]"),
        (tmp_path / "bomb.spacy", "bomb.spacy, line 1: its DocBin data exceed 67,108,864 bytes"),
        (tmp_path / "corpus.txt", "corpus.txt: not a relations .jsonl, a standoff directory or a .spacy file"),
        (RELATIONS_SAMPLE, "the pipeline has 0 kernel_relations components"),
    ]:
        assert main(["evaluate", "relations", str(tmp_path / "blank"), str(corpus), "--quiet"]) == 1
        assert message in capsys.readouterr().err
