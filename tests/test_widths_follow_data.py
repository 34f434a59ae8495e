"""Vector widths follow the data (issue 27, point 4): with fewer training structures than
``n_components`` (Nyström landmarks) or ``n_references`` (KLSH references), every
consumer takes the width actually produced, with one warning, and training runs."""

import warnings

import numpy as np
import pytest
import spacy
from kelp_parses import questions
from relation_samples import model_config, pair_examples, parsed_in
from spacy.tokens import Doc
from spacy.util import fix_random_seed

from spacy_convkernels import ConvKernelsWarning
from spacy_convkernels.ml.fitted_doc_features import doc_blocks

PTK = {"@misc": "spacy_convkernels.PartialTreeKernel.v1", "lam": 0.4, "mu": 0.4}
N_QUESTIONS = 20  # sentences: fewer than any width asked below


def train_and_count_warnings(nlp, examples, *, annotates=(), steps=3):
    """Initialize, train ``steps`` updates and predict; the ConvKernelsWarnings raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        optimizer = nlp.initialize(lambda: examples)
        for _ in range(steps):
            losses = nlp.update(examples, sgd=optimizer, annotates=list(annotates))
        docs = list(nlp.pipe(example.predicted.copy() for example in examples))
    assert all(np.isfinite(loss) for loss in losses.values())
    return [w for w in caught if issubclass(w.category, ConvKernelsWarning)], docs


def textcat_nlp(extension: str, component: str, settings: dict, width: int):
    fix_random_seed(0)
    nlp = spacy.blank("en")
    nlp.add_pipe(component, config={"representation": "grct", "kernel": PTK, **settings})
    features = {"@architectures": "spacy_convkernels.KernelFeatures.v1", "extension": extension, "nO": width}
    model = {"@architectures": "spacy_convkernels.KernelTextCat.v1", "kernel_features": features, "hidden_width": 8}
    nlp.add_pipe("textcat", config={"model": model})
    return nlp, questions(nlp.vocab)[:N_QUESTIONS]


@pytest.mark.slow
def test_kernel_vectors_narrower_than_n_components_reach_the_textcat():
    nlp, examples = textcat_nlp("kernel_vector", "kernel_vectors", {"n_components": 300}, width=300)
    caught, docs = train_and_count_warnings(nlp, examples, annotates=["kernel_vectors"])
    assert [str(w.message) for w in caught] == [f"n_components=300 > {N_QUESTIONS} structures: using 20 landmarks"]
    assert all(len(doc._.kernel_vector) == N_QUESTIONS for doc in docs)
    (features,) = [n for n in nlp.get_pipe("textcat").model.walk() if n.name == "kernel_features"]
    assert features.get_dim("nO") == N_QUESTIONS
    assert all(set(doc.cats) == set(examples[0].reference.cats) for doc in docs)
    assert_reloaded_predicts_the_same(nlp, examples, docs)


def assert_reloaded_predicts_the_same(nlp, examples, docs):
    """The pipeline saved and loaded from its config gives the same categories."""
    copy = spacy.util.load_model_from_config(nlp.config, auto_fill=True).from_bytes(nlp.to_bytes())
    parsed = [Doc(copy.vocab).from_bytes(example.predicted.to_bytes()) for example in examples]
    for doc, again in zip(docs, copy.pipe(parsed)):
        assert again.cats == pytest.approx(doc.cats, abs=1e-6)


def test_klsh_codes_with_fewer_sentences_than_references_train():
    settings = {"n_references": 100, "n_bits": 16, "subset_size": 4}
    nlp, examples = textcat_nlp("kernel_klsh_code", "kernel_klsh_codes", settings, width=16)
    caught, docs = train_and_count_warnings(nlp, examples, annotates=["kernel_klsh_codes"])
    assert [str(w.message) for w in caught] == [f"n_references=100 > {N_QUESTIONS} structures: using 20 references"]
    assert all(len(doc._.kernel_klsh_code[0]) == 2 for doc in docs)  # 16 bits, packed


@pytest.mark.slow
def test_nystroem_block_of_kernel_textcat_takes_the_landmarks_width():
    fix_random_seed(0)
    nlp = spacy.blank("en")
    block = {"@architectures": "spacy_convkernels.KernelNystroemFeatures.v1", "kernel": PTK, "n_components": 300}
    model = {"@architectures": "spacy_convkernels.KernelTextCat.v1", "kernel_features": block, "hidden_width": 8}
    nlp.add_pipe("kernel_textcat", name="textcat", config={"model": model})
    examples = questions(nlp.vocab)[:N_QUESTIONS]
    caught, docs = train_and_count_warnings(nlp, examples)
    assert len(caught) == 1 and "using 20 landmarks" in str(caught[0].message)
    (fitted,) = doc_blocks(nlp.get_pipe("textcat").model)
    assert fitted.get_dim("nO") == N_QUESTIONS
    assert fitted.predict([doc for doc in docs[:3]]).shape == (3, N_QUESTIONS)
    assert_reloaded_predicts_the_same(nlp, examples, docs)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["nystroem", "klsh"])
def test_relation_model_takes_the_width_of_its_candidate_features(method):
    fix_random_seed(0)
    nlp = spacy.blank("en")
    features = {
        "@architectures": "spacy_convkernels.CandidateKernelFeatures.v1",
        "structure": "path",
        "method": method,
        "n_components": 100,
        "n_references": 100,
        "subset_size": 2,
        "landmark_init": "uniform",
        "kernel": {"@misc": "spacy_convkernels.SubsequencePathKernel.v1", "vectors": None},
    }
    config = model_config("EntityPairCandidates", tok2vec=False, kernel_features=features)
    extractor = nlp.add_pipe("kernel_relations", config={"model": config})
    examples = pair_examples(nlp)  # 4 Docs of 6 candidates each
    caught, _ = train_and_count_warnings(nlp, examples)
    assert len(caught) == 1 and "> 24 structures" in str(caught[0].message)
    (block,) = [n for n in extractor.model.walk() if n.name == "candidate_kernel_features"]
    if method == "nystroem":  # one feature per kept eigenvalue of the 24 landmarks' Gram
        estimator = block.attrs["encoder"].estimator
        rank = np.linalg.matrix_rank(estimator.kernel.gram(estimator.components_))
        assert len(estimator.components_) == 24 and block.get_dim("nO") == rank < 24
    else:
        assert block.get_dim("nO") == 100  # KLSH: n_components bits
    before = extractor(parsed_in(nlp))._.kernel_rel
    copy = spacy.blank("en")
    copy.add_pipe("kernel_relations", config={"model": config})
    copy.from_bytes(nlp.to_bytes())
    assert copy.get_pipe("kernel_relations")(parsed_in(copy))._.kernel_rel == before
