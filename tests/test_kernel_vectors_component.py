"""The kernel_vectors component: initialize, vectors, batches, saving and loading."""
import subprocess
import sys

import numpy as np
import pytest
import spacy
from spacy.tokens import DocBin
from spacy.training import Example
from spacy.vocab import Vocab

from spacy_convkernels import Tree
from spacy_convkernels.components.sentences import NotInitializedError
from spacy_convkernels.corpora import read_klp
from spacy_convkernels.kernels import PartialTreeKernel

from conftest import CORPORA
from kelp_parses import doc_from_grct

SAMPLE = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"
CONFIG = {"representation": "lct", "n_components": 25, "random_state": 1,
          "kernel": {"@misc": "spacy_convkernels.PartialTreeKernel.v1", "lam": 0.4, "mu": 0.4, "terminal_factor": 5}}


@pytest.fixture
def pipeline():
    nlp = spacy.blank("en")
    docs = [doc_from_grct(nlp.vocab, e.trees["grct"]) for e in read_klp(SAMPLE)]
    nlp.add_pipe("kernel_vectors", config=CONFIG)
    nlp.initialize(lambda: [Example(doc.copy(), doc) for doc in docs[:40]])
    return nlp, docs


def test_vectors_are_the_nystroem_map_of_the_trees(pipeline):
    nlp, docs = pipeline
    component = nlp.get_pipe("kernel_vectors")
    assert len(component.model.components_) == 25
    doc = nlp(docs[45].copy())
    vector = doc._.kernel_vector
    assert vector.dtype == np.float32 and vector.shape == (25,)
    (sentence,) = doc.sents
    np.testing.assert_array_equal(sentence._.kernel_vector, vector)
    # the same as the estimator on the tree, and its dot products approximate the kernel
    from spacy_convkernels.components.sentences import sentence_trees

    tree = sentence_trees(doc, "lct")[0]
    np.testing.assert_allclose(vector, component.model.transform([tree])[0], rtol=1e-6)
    kernel = PartialTreeKernel(0.4, mu=0.4, terminal_factor=5)
    landmark = component.model.components_[0]
    exact = kernel(tree, landmark)
    approx = vector @ component.model.transform([landmark])[0]
    assert abs(exact - approx) < 1e-4  # landmarks are reproduced exactly


def test_one_kernel_block_per_batch(pipeline, monkeypatch):
    nlp, docs = pipeline
    component = nlp.get_pipe("kernel_vectors")
    calls = []
    original = type(component.model.kernel).gram

    def counting(self, X, Y=None, **kwargs):
        calls.append(len(X))
        return original(self, X, Y, **kwargs)

    monkeypatch.setattr(type(component.model.kernel), "gram", counting)
    out = list(nlp.pipe([d.copy() for d in docs], batch_size=16))
    assert calls == [16, 16, 16, 12]
    assert all(d._.kernel_vector is not None for d in out)


def test_saved_pipeline_gives_identical_vectors(pipeline, tmp_path):
    nlp, docs = pipeline
    expected = [nlp(d.copy())._.kernel_vector for d in docs]
    nlp.to_disk(tmp_path / "model")
    reloaded = spacy.load(tmp_path / "model")
    got = [reloaded(doc_from_grct(reloaded.vocab, Tree.from_string(s)))._.kernel_vector
           for s in (str(e.trees["grct"]) for e in read_klp(SAMPLE))]
    np.testing.assert_array_equal(np.array(got), np.array(expected))
    from_bytes = spacy.blank("en")
    from_bytes.add_pipe("kernel_vectors", config=CONFIG)
    from_bytes.from_bytes(nlp.to_bytes())
    np.testing.assert_array_equal(from_bytes(docs[3].copy())._.kernel_vector, expected[3])
    script = (f"import spacy\nnlp = spacy.load({str(tmp_path / 'model')!r})\n"
              "print(nlp.pipe_names, len(nlp.get_pipe('kernel_vectors').model.components_))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['kernel_vectors'] 25"


def test_vectors_survive_docbin(pipeline):
    nlp, docs = pipeline
    processed = [nlp(d.copy()) for d in docs[:5]]
    data = DocBin(docs=processed, store_user_data=True).to_bytes()
    restored = list(DocBin(store_user_data=True).from_bytes(data).get_docs(Vocab()))
    for a, b in zip(processed, restored):
        np.testing.assert_array_equal(a._.kernel_vector, b._.kernel_vector)


def test_landmarks_from_a_corpus_named_in_the_config(tmp_path):
    conllu = tmp_path / "landmarks.conllu"
    conllu.write_text("".join(
        f"1\tI\tI\tPRON\tPRP\t_\t2\tnsubj\t_\t_\n2\t{verb}\t{verb}\tVERB\tVBD\t_\t0\troot\t_\t_\n"
        f"3\t{noun}\t{noun}\tNOUN\tNN\t_\t2\tobj\t_\t_\n\n"
        for verb in ("saw", "ate", "took") for noun in ("fish", "cake", "time")), encoding="utf-8")
    nlp = spacy.blank("en")
    nlp.add_pipe("kernel_vectors", config={**CONFIG, "n_components": 5, "landmark_source": "reference"})
    nlp.config["initialize"]["components"]["kernel_vectors"] = {
        "landmark_corpus": {"@readers": "spacy_convkernels.ConllU.v1", "path": str(conllu)}}
    nlp.initialize()
    landmarks = nlp.get_pipe("kernel_vectors").model.components_
    assert len(landmarks) == 5 and all(t.label.startswith("LEX##") and t.n_nodes == 9 for t in landmarks)


def test_uninitialized_component_says_so():
    nlp = spacy.blank("en")
    nlp.add_pipe("kernel_vectors", config=CONFIG)
    doc = doc_from_grct(nlp.vocab, next(iter(read_klp(SAMPLE))).trees["grct"])
    with pytest.raises(NotInitializedError, match="initialize"):
        nlp(doc)


def test_vectors_survive_multiprocessing(pipeline):
    nlp, docs = pipeline
    expected = [nlp(d.copy())._.kernel_vector for d in docs]
    got = [d._.kernel_vector for d in nlp.pipe([d.copy() for d in docs], n_process=2, batch_size=10)]
    np.testing.assert_array_equal(np.array(got), np.array(expected))
