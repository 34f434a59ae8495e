"""Thresholds as a user controls them (issue 61, point 4): chosen per label at initialize,
the config's at load, a setter, per-label settings; the predicted relations of a Doc; and
the choice itself and the precision-recall curves against plain-Python references."""

import itertools

import numpy as np
import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from relation_samples import KERNEL, parsed_in, trained_pair_pipeline

from spacy_convkernels.components.relation_scores import Relation
from spacy_convkernels.errors import InvalidParameterError
from spacy_convkernels.learn.thresholds import choose_thresholds, eligible, micro_f1, precision_recall

LABELS = {"ACTIVATES", "PHOSPHORYLATES"}


@pytest.fixture(scope="module")
def trained():
    nlp, extractor, examples, _ = trained_pair_pipeline(steps=5, kernel_features=KERNEL)
    return nlp, extractor, examples


def test_one_threshold_and_each_labels_are_chosen_at_initialize_and_the_choice_says_which_is_used(trained):
    _, extractor, _ = trained
    one, chosen = extractor.cfg["chosen_threshold"], extractor.cfg["chosen_thresholds"]
    assert set(chosen) == LABELS and all(0.0 <= t <= 1.0 for t in [one, *chosen.values()])
    assert extractor.threshold is None and extractor.cfg["threshold_choice"] == "one"
    assert extractor.thresholds == dict.fromkeys(LABELS, one)
    saved = extractor.to_bytes()
    try:
        extractor.cfg["threshold_choice"] = "per_label"
        assert extractor.thresholds == chosen
        extractor.threshold = {"ACTIVATES": 0.3}  # a label's setting wins over its chosen one
        assert extractor.thresholds == {**chosen, "ACTIVATES": 0.3}
    finally:
        extractor.from_bytes(saved)
    with pytest.raises(InvalidParameterError, match='threshold_choice must be "one" or "per_label"'):
        spacy.blank("en").add_pipe("kernel_relations", config={"threshold_choice": "each"})


def test_relations_of_a_doc_are_the_labels_at_or_above_their_thresholds(trained):
    nlp, extractor, _ = trained
    doc = extractor(parsed_in(nlp))
    relations = extractor.relations(doc)
    expected = {
        ((head, child), label)
        for (head, child), scores in doc._.kernel_rel.items()
        for label, score in scores.items()
        if score >= extractor.thresholds[label]
    }
    assert {((r.head.start, r.child.start), r.label) for r in relations} == expected
    assert all(
        isinstance(r, Relation) and r.score == doc._.kernel_rel[r.head.start, r.child.start][r.label] for r in relations
    )
    assert all(r.head.text in ("RAS", "RAF", "MEK1") and r.head in list(doc.ents) for r in relations)


def test_the_setter_changes_the_predictions_and_is_saved_with_the_component(trained):
    nlp, extractor, _ = trained
    saved = extractor.to_bytes()
    try:
        extractor.threshold = 1.0
        assert set(extractor.thresholds.values()) == {1.0}
        assert extractor.relations(extractor(parsed_in(nlp))) == []
        extractor.threshold = {"ACTIVATES": 0.0}
        assert extractor.thresholds["ACTIVATES"] == 0.0
        assert extractor.thresholds["PHOSPHORYLATES"] == extractor.cfg["chosen_threshold"]
        doc = extractor(parsed_in(nlp))
        assert {(r.head.start, r.child.start) for r in extractor.relations(doc) if r.label == "ACTIVATES"} == set(
            doc._.kernel_rel
        )
        copy = nlp.get_pipe("kernel_relations").__class__(nlp.vocab, extractor.model, "copy")
        copy.from_bytes(extractor.to_bytes())
        assert copy.threshold == {"ACTIVATES": 0.0}
        for bad in (1.5, -0.1, {"ACTIVATES": 2.0}, True, "high"):
            with pytest.raises(InvalidParameterError, match="threshold must be"):
                extractor.threshold = bad
    finally:
        extractor.from_bytes(saved)
    assert extractor.threshold is None


def test_a_threshold_given_at_load_is_the_one_used(trained, tmp_path):
    nlp, extractor, _ = trained
    nlp.to_disk(tmp_path / "plain")
    loaded = spacy.load(tmp_path / "plain").get_pipe("kernel_relations")
    assert loaded.thresholds == extractor.thresholds
    overridden = spacy.load(tmp_path / "plain", config={"components": {"kernel_relations": {"threshold": 0.9}}})
    pipe = overridden.get_pipe("kernel_relations")
    assert pipe.threshold == 0.9 and set(pipe.thresholds.values()) == {0.9}
    # per label in the saved config (spaCy's overrides at load take a number, not a mapping)
    config = (tmp_path / "plain" / "config.cfg").read_text()
    assert "\nthreshold = null\n" in config
    (tmp_path / "plain" / "config.cfg").write_text(
        config.replace("\nthreshold = null\n", '\nthreshold = {"PHOSPHORYLATES": 0.2}\n')
    )
    pipe = spacy.load(tmp_path / "plain").get_pipe("kernel_relations")
    assert pipe.thresholds == {**extractor.thresholds, "PHOSPHORYLATES": 0.2}
    # a setter's value is saved with the pipeline and kept when it is loaded again as it is
    loaded.threshold = 0.7
    loaded_nlp = spacy.load(tmp_path / "plain")
    loaded_nlp.get_pipe("kernel_relations").threshold = 0.7
    loaded_nlp.to_disk(tmp_path / "set")
    assert set(spacy.load(tmp_path / "set").get_pipe("kernel_relations").thresholds.values()) == {0.7}


def test_a_threshold_naming_a_label_the_component_lacks_is_refused_at_initialize():
    from relation_samples import model_config, pair_examples

    nlp = spacy.blank("en")
    config = {"model": model_config("EntityPairCandidates", tok2vec=False), "threshold": {"ACTIVATE": 0.5}}
    nlp.add_pipe("kernel_relations", config=config)
    with pytest.raises(InvalidParameterError, match=r"threshold names labels it does not have \(ACTIVATE\)"):
        nlp.initialize(lambda: pair_examples(nlp))


# --- the choice and the curves, against plain Python ----------------------------------------


def brute_force_thresholds(scores: np.ndarray, truths: np.ndarray) -> float:
    """The best micro F1 over every combination of per-label cuts (each label's scores,
    and above them all)."""
    options = [sorted(set(scores[:, j][np.isfinite(scores[:, j])])) + [np.inf] for j in range(scores.shape[1])]
    return max(micro_f1(scores, truths, np.array(cut)) for cut in itertools.product(*options))


scored = st.integers(min_value=1, max_value=7).flatmap(
    lambda n: st.tuples(
        st.lists(st.lists(st.sampled_from([0.1, 0.3, 0.5, 0.7, 0.9]), min_size=2, max_size=2), min_size=n, max_size=n),
        st.lists(st.lists(st.booleans(), min_size=2, max_size=2), min_size=n, max_size=n),
        st.booleans(),
    )
)


@settings(max_examples=150, deadline=None)
@given(scored)
def test_the_chosen_thresholds_reach_their_stated_f1_and_no_less_than_one_threshold(case):
    values, truths, single_label = case
    scores, truths = eligible(np.array(values), single_label=single_label), np.array(truths)
    one, per_label, f1 = choose_thresholds(scores, truths)
    assert f1["per_label"] == pytest.approx(micro_f1(scores, truths, per_label))
    assert f1["one"] == pytest.approx(micro_f1(scores, truths, np.full(2, one)))
    assert f1["per_label"] >= f1["one"] - 1e-12
    assert f1["per_label"] <= brute_force_thresholds(scores, truths) + 1e-12
    every_single = {micro_f1(scores, truths, np.full(2, t)) for t in [*np.unique(scores[np.isfinite(scores)]), np.inf]}
    assert f1["one"] == pytest.approx(max(every_single))


def test_single_label_leaves_each_candidate_its_best_label_only():
    scores = eligible(np.array([[0.2, 0.7], [0.6, 0.6], [0.9, 0.1]]), single_label=True)
    assert np.array_equal(np.isfinite(scores), [[False, True], [True, False], [True, False]])


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from([0.2, 0.4, 0.6, 0.8]), st.booleans()), max_size=8),
    st.lists(st.sampled_from([-np.inf, 0.2, 0.4, 0.6, 0.8]), max_size=6),
)
def test_the_precision_recall_curve_counts_as_the_definition(candidates, found_at):
    scores = np.array([s for s, _ in candidates], dtype=float)
    right = np.array([r for _, r in candidates], dtype=bool)
    curve = precision_recall(scores, right, np.array(found_at, dtype=float))
    assert list(curve["threshold"]) == sorted(set(scores), reverse=True)
    for t, p, r in zip(curve["threshold"], curve["precision"], curve["recall"]):
        predicted = scores >= t
        assert p == pytest.approx(right[predicted].sum() / predicted.sum())
        assert r == pytest.approx(sum(f >= t for f in found_at) / max(len(found_at), 1))
