"""The components that do not train are in spaCy's shape: ``predict`` and
``set_annotations``, a failing Doc given to the error handler while the rest of its batch
goes on, and serialization through ``spacy.util`` with ``exclude`` honoured."""

import numpy as np
import pytest
import spacy
from data_paths import CORPORA
from kelp_parses import doc_from_grct
from spacy.tokens import Doc
from spacy.training import Example

from spacy_convkernels.corpora import read_klp
from spacy_convkernels.errors import MissingAnnotationError

SAMPLE = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"
CONFIGS = {
    "kernel_trees": {},
    "kernel_vectors": {"representation": "lct", "n_components": 10},
    "kernel_klsh_codes": {"n_references": 20, "n_bits": 64, "subset_size": 4},
    "kernel_amr_candidates": {"source": "dependencies"},
}
ANNOTATIONS = {
    "kernel_trees": lambda doc: doc._.kernel_trees,
    "kernel_vectors": lambda doc: doc._.kernel_vector,
    "kernel_klsh_codes": lambda doc: doc._.kernel_klsh_code,
    "kernel_amr_candidates": lambda doc: doc._.kernel_interactions,
}
FITTED = ("kernel_vectors", "kernel_klsh_codes")


@pytest.fixture(scope="module")
def pipeline():
    nlp = spacy.blank("en")
    docs = [doc_from_grct(nlp.vocab, example.trees["grct"]) for example in read_klp(SAMPLE)]
    for name, config in CONFIGS.items():
        nlp.add_pipe(name, config=config)
    examples = [Example(doc.copy(), doc) for doc in docs[:30]]
    for name in FITTED:
        nlp.get_pipe(name).initialize(lambda: examples, nlp=nlp)
    return nlp, docs[30:]


def _unparsed(nlp) -> Doc:
    return Doc(nlp.vocab, words=["no", "parse"], spaces=[True, False])


def _failures(component) -> list:
    """Where the component's error handler puts what it is given."""
    failures = []
    component.set_error_handler(lambda *given: failures.append(given))
    return failures


@pytest.mark.parametrize("name", CONFIGS)
def test_a_failing_doc_goes_to_the_error_handler_and_its_batch_goes_on(pipeline, name):
    nlp, docs = pipeline
    component = nlp.get_pipe(name)
    alone = [component(doc.copy()) for doc in docs[:2]]
    batch = [docs[0].copy(), _unparsed(nlp), docs[1].copy()]
    failures = _failures(component)
    try:
        out = list(component.pipe(batch, batch_size=3))
        assert [id(doc) for doc in out] == [id(batch[0]), id(batch[2])]
        ((who, proc, failed, error),) = failures
        assert (who, proc, [id(doc) for doc in failed]) == (name, component, [id(batch[1])])
        assert isinstance(error, Exception)
        for doc, expected in zip(out, alone):  # annotated as if processed alone
            np.testing.assert_equal(ANNOTATIONS[name](doc), ANNOTATIONS[name](expected))
        assert component(batch[1]) is None and len(failures) == 2
    finally:
        component.set_error_handler(spacy.util.raise_error)


def test_the_default_error_handler_raises(pipeline):
    nlp, docs = pipeline
    with pytest.raises(MissingAnnotationError, match="kernel_trees: the Doc 'no parse' has no dependency parse"):
        list(nlp.get_pipe("kernel_trees").pipe([docs[0].copy(), _unparsed(nlp)]))


def test_the_pipelines_error_handler_reaches_the_components(pipeline):
    nlp, docs = pipeline
    failures = []
    nlp.set_error_handler(lambda *given: failures.append(given))
    try:
        out = list(nlp.pipe([docs[0].copy(), _unparsed(nlp), docs[1].copy()], batch_size=3))
    finally:
        nlp.set_error_handler(spacy.util.raise_error)
    assert len(out) == 2 and all(doc._.kernel_vector is not None for doc in out)
    assert [who for who, *_ in failures] == ["kernel_trees"]


@pytest.mark.slow
@pytest.mark.parametrize("name", FITTED)
def test_serialization_round_trips_and_honours_exclude(pipeline, name, tmp_path):
    component = pipeline[0].get_pipe(name)
    data = component.to_bytes()

    def fresh():
        return spacy.blank("en").add_pipe(name, config=CONFIGS[name])

    def fitted(other) -> bool:
        return hasattr(other.model, other.fitted_attribute)

    assert fresh().from_bytes(data).to_bytes() == data
    assert not fitted(fresh().from_bytes(component.to_bytes(exclude=["model"])))
    assert not fitted(fresh().from_bytes(data, exclude=["model"]))
    component.to_disk(tmp_path / "all")
    component.to_disk(tmp_path / "no_model", exclude=["model"])
    assert not (tmp_path / "no_model" / "model.msgpack").exists()
    assert fresh().from_disk(tmp_path / "all").to_bytes() == data
    assert not fitted(fresh().from_disk(tmp_path / "all", exclude=["model"]))
