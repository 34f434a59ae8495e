"""Similarity through kernels in spaCy's terms: the text tree rule, the exact normalized
kernel between Docs and Spans, and the user hooks of kernel_vectors."""

import pickle
import warnings

import numpy as np
import pytest
import spacy
from data_paths import CORPORA
from kelp_parses import doc_from_grct
from reference_kernels import normalized, partial_tree
from spacy.tokens import Doc, DocBin
from spacy.training import Example

from spacy_convkernels import ConvKernelsWarning, InvalidParameterError, StructureTypeError, Tree
from spacy_convkernels.components.kernel_vectors import KernelVectors
from spacy_convkernels.components.similarity import text_similarity, text_tree
from spacy_convkernels.corpora import read_klp
from spacy_convkernels.kernels import PartialTreeKernel
from spacy_convkernels.structures import VIRTUAL_ROOT, join_sentences, span_to_tree

SAMPLE = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"
PTK = {"@misc": "spacy_convkernels.PartialTreeKernel.v1", "lam": 0.4, "mu": 0.4, "terminal_factor": 1.0}
CONFIG = {"representation": "loct", "n_components": 20, "random_state": 1, "kernel": PTK, "similarity_hook": True}


@pytest.fixture(scope="module")
def questions():
    vocab = spacy.blank("en").vocab
    return [doc_from_grct(vocab, e.trees["grct"]) for e in read_klp(SAMPLE)]


def pipeline(questions, **settings):
    nlp = spacy.blank("en", vocab=questions[0].vocab)
    nlp.add_pipe("kernel_vectors", config={**CONFIG, **settings})
    nlp.initialize(lambda: [Example(doc.copy(), doc) for doc in questions[:20]])
    return nlp


def two_sentences(first: Doc, second: Doc) -> Doc:
    return Doc.from_docs([first, second])


def test_join_sentences_puts_several_trees_under_a_virtual_root():
    a, b = Tree.from_string("(A (B c))"), Tree.from_string("(D e)")
    assert join_sentences([]) is None and join_sentences([None]) is None
    assert join_sentences([None, a]) is a
    assert join_sentences([a, None, b]) == Tree(VIRTUAL_ROOT, [a, b])


def test_the_tree_of_a_text_is_its_sentence_trees_joined(questions):
    doc = two_sentences(questions[0], questions[1])
    first, second = list(doc.sents)
    expected = [span_to_tree(first, "loct"), span_to_tree(second, "loct")]
    assert text_tree(doc, "loct") == Tree(VIRTUAL_ROOT, expected)
    assert text_tree(first, "loct") == expected[0] == text_tree(questions[0], "loct")
    # a span across the boundary: the tail of the first sentence and the head of the second
    crossing = doc[first.end - 3 : first.end + 2]
    tail, head = doc[first.end - 3 : first.end], doc[first.end : first.end + 2]
    assert text_tree(crossing, "loct") == Tree(VIRTUAL_ROOT, [span_to_tree(tail, "loct"), span_to_tree(head, "loct")])
    assert text_tree(doc[0:0], "loct") is None
    with pytest.raises(StructureTypeError, match="Token"):
        text_tree(doc[0], "loct")


def test_text_similarity_is_the_normalized_kernel_of_the_text_trees(questions):
    doc = two_sentences(questions[2], questions[3])
    other = questions[4]
    expected = normalized(partial_tree, text_tree(doc, "lct"), text_tree(other, "lct"), lam=0.3, mu=0.5)
    found = text_similarity(doc, other, kernel=PartialTreeKernel(0.3, mu=0.5), representation="lct")
    assert abs(found - expected) < 1e-9 and 0 < found < 1
    assert text_similarity(doc, doc, kernel=PartialTreeKernel()) == pytest.approx(1.0)
    punctuation = Doc(doc.vocab, words=["?"], heads=[0], deps=["punct"], tags=["."], lemmas=["?"])
    assert text_similarity(punctuation, doc, kernel=PartialTreeKernel()) == 0.0
    with pytest.raises(InvalidParameterError, match="text_similarity: kernel"):
        text_similarity(doc, other, kernel=PartialTreeKernel(-1.0))


def test_hooks_are_off_by_default(questions):
    nlp = pipeline(questions, similarity_hook=False)
    doc = nlp(questions[30].copy())
    assert doc._.kernel_vector is not None
    assert "similarity" not in doc.user_hooks and "vector" not in doc.user_span_hooks


def test_similarity_is_the_cosine_of_the_kernel_vectors(questions):
    nlp = pipeline(questions)
    a, b = nlp(questions[30].copy()), nlp(two_sentences(questions[31], questions[32]))
    np.testing.assert_array_equal(a.vector, a._.kernel_vector)
    np.testing.assert_array_equal(b.vector, b._.kernel_vector)
    cosine = a._.kernel_vector @ b._.kernel_vector / np.linalg.norm(a.vector) / np.linalg.norm(b.vector)
    assert a.similarity(b) == pytest.approx(cosine, abs=1e-6) and b.similarity(a) == pytest.approx(cosine, abs=1e-6)
    first, second = b.sents
    np.testing.assert_array_equal(second.vector, second._.kernel_vector)
    span_cosine = first.vector @ second.vector / np.linalg.norm(first.vector) / np.linalg.norm(second.vector)
    assert first.similarity(second) == pytest.approx(span_cosine, abs=1e-6)
    assert not np.allclose(first.vector, second.vector)


def test_on_landmarks_the_hook_gives_the_exact_kernel(questions):
    """Nyström reproduces the kernel between two landmarks exactly."""
    nlp = pipeline(questions)
    landmarks = nlp.get_pipe("kernel_vectors").model.components_
    texts = [nlp(q.copy()) for q in questions[:20]]
    picked = [d for d in texts if text_tree(d, "loct") in landmarks][:2]
    assert len(picked) == 2
    exact = text_similarity(*picked, kernel=PartialTreeKernel(0.4, mu=0.4), representation="loct")
    assert picked[0].similarity(picked[1]) == pytest.approx(exact, abs=1e-4)


def test_a_span_inside_a_sentence_gets_the_vector_of_its_tree(questions):
    nlp = pipeline(questions)
    component = nlp.get_pipe("kernel_vectors")
    doc = nlp(questions[35].copy())
    span = doc[1:4]
    expected = component.model.transform([text_tree(span, "loct")])[0]
    np.testing.assert_allclose(span.vector, expected, rtol=1e-6)
    assert not np.allclose(span.vector, doc.vector)
    with pytest.raises(StructureTypeError, match="Token"):
        doc.similarity(doc[0])


def test_a_text_without_a_tree_has_similarity_zero_with_a_warning(questions):
    nlp = pipeline(questions)
    doc = nlp(questions[36].copy())
    empty = nlp(Doc(doc.vocab, words=["?"], heads=[0], deps=["punct"], tags=["."], lemmas=["?"]))
    assert empty._.kernel_vector is None and not empty.vector.any() and empty.vector.shape == (20,)
    with pytest.warns(ConvKernelsWarning, match="no tree"):
        assert empty.similarity(doc) == 0.0


@pytest.mark.slow
def test_the_hook_setting_is_saved_and_works_after_loading(questions, tmp_path):
    nlp = pipeline(questions)
    a, b = questions[40], two_sentences(questions[41], questions[42])
    expected = nlp(a.copy()).similarity(nlp(b.copy()))
    nlp.to_disk(tmp_path / "model")
    reloaded = spacy.load(tmp_path / "model")
    assert reloaded.config["components"]["kernel_vectors"]["similarity_hook"] is True
    x, y = reloaded(a.copy()), reloaded(b.copy())
    assert "similarity" in x.user_hooks and "similarity" in y.user_span_hooks
    assert x.similarity(y) == pytest.approx(expected, abs=1e-6)
    assert list(x.sents)[0].similarity(list(y.sents)[1]) == pytest.approx(
        nlp(a.copy())[:].similarity(list(nlp(b.copy()).sents)[1]), abs=1e-6
    )


def test_hooks_come_back_after_a_docbin(questions):
    nlp = pipeline(questions)
    a, b = nlp(questions[43].copy()), nlp(questions[44].copy())
    expected = a.similarity(b)
    data = DocBin(docs=[a, b], store_user_data=True).to_bytes()
    restored = list(DocBin(store_user_data=True).from_bytes(data).get_docs(nlp.vocab))
    hooks = nlp.get_pipe("kernel_vectors").hooks
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # spaCy's W008: the restored Docs have no hooks and no word vectors
        assert restored[0].similarity(restored[1]) != pytest.approx(expected)
    x, y = (hooks.install(doc) for doc in restored)
    assert x.similarity(y) == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_the_hook_setting_is_checked(value):
    """A config is checked by spaCy against the factory's ``bool``; the class checks it too."""
    with pytest.raises(InvalidParameterError, match="kernel_vectors: similarity_hook must be True or False, got"):
        KernelVectors(
            spacy.blank("en"),
            "kernel_vectors",
            representation="loct",
            kernel=PartialTreeKernel(),
            n_components=5,
            similarity_hook=value,
        )


@pytest.mark.slow
def test_a_pickled_doc_keeps_its_hooks(questions):
    """spaCy pickles a Doc with its hooks (as ``copy`` keeps them); the hooks hold the fitted model."""
    nlp = pipeline(questions)
    a, b = nlp(questions[45].copy()), nlp(questions[46].copy())
    x, y = pickle.loads(pickle.dumps(a)), a.copy()
    assert x.similarity(b) == pytest.approx(a.similarity(b), abs=1e-6)
    assert y.similarity(b) == pytest.approx(a.similarity(b), abs=1e-6)
    np.testing.assert_allclose(x[1:3].vector, a[1:3].vector, rtol=1e-6)
