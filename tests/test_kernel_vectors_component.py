"""The kernel_vectors component: initialize, vectors, batches, saving and loading."""

import subprocess
import sys

import numpy as np
import pytest
import spacy
from data_paths import CORPORA
from kelp_parses import doc_from_grct
from spacy.language import Language
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.vocab import Vocab

from spacy_convkernels import Tree
from spacy_convkernels.corpora import read_conllu, read_klp
from spacy_convkernels.errors import MissingAnnotationError, NotInitializedError
from spacy_convkernels.kernels import InvalidParameterError, PartialTreeKernel

SAMPLE = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"
CONFIG = {
    "representation": "lct",
    "n_components": 25,
    "random_state": 1,
    "kernel": {"@misc": "spacy_convkernels.PartialTreeKernel.v1", "lam": 0.4, "mu": 0.4, "terminal_factor": 5},
}


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
    from spacy_convkernels.ml.doc_structures import sentence_trees

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


@pytest.mark.slow
def test_saved_pipeline_gives_identical_vectors(pipeline, tmp_path):
    nlp, docs = pipeline
    expected = [nlp(d.copy())._.kernel_vector for d in docs]
    nlp.to_disk(tmp_path / "model")
    reloaded = spacy.load(tmp_path / "model")
    got = [
        reloaded(doc_from_grct(reloaded.vocab, Tree.from_string(s)))._.kernel_vector
        for s in (str(e.trees["grct"]) for e in read_klp(SAMPLE))
    ]
    np.testing.assert_array_equal(np.array(got), np.array(expected))
    from_bytes = spacy.blank("en")
    from_bytes.add_pipe("kernel_vectors", config=CONFIG)
    from_bytes.from_bytes(nlp.to_bytes())
    np.testing.assert_array_equal(from_bytes(docs[3].copy())._.kernel_vector, expected[3])
    script = (
        f"import spacy\nnlp = spacy.load({str(tmp_path / 'model')!r})\n"
        "print(nlp.pipe_names, len(nlp.get_pipe('kernel_vectors').model.components_))\n"
    )
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
    conllu.write_text(
        "".join(
            f"1\tI\tI\tPRON\tPRP\t_\t2\tnsubj\t_\t_\n2\t{verb}\t{verb}\tVERB\tVBD\t_\t0\troot\t_\t_\n"
            f"3\t{noun}\t{noun}\tNOUN\tNN\t_\t2\tobj\t_\t_\n\n"
            for verb in ("saw", "ate", "took")
            for noun in ("fish", "cake", "time")
        ),
        encoding="utf-8",
    )
    nlp = spacy.blank("en")
    nlp.add_pipe("kernel_vectors", config={**CONFIG, "n_components": 5, "landmark_source": "reference"})
    nlp.config["initialize"]["components"]["kernel_vectors"] = {
        "landmark_corpus": {"@readers": "spacy_convkernels.ConllU.v1", "path": str(conllu)}
    }
    nlp.initialize()
    landmarks = nlp.get_pipe("kernel_vectors").model.components_
    assert len(landmarks) == 5 and all(t.label.startswith("LEX##") and t.n_nodes == 9 for t in landmarks)


def test_uninitialized_component_says_so():
    nlp = spacy.blank("en")
    nlp.add_pipe("kernel_vectors", config=CONFIG)
    doc = doc_from_grct(nlp.vocab, next(iter(read_klp(SAMPLE))).trees["grct"])
    with pytest.raises(NotInitializedError, match="initialize"):
        nlp(doc)


@pytest.mark.slow
def test_vectors_survive_multiprocessing(pipeline):
    nlp, docs = pipeline
    expected = [nlp(d.copy())._.kernel_vector for d in docs]
    got = [d._.kernel_vector for d in nlp.pipe([d.copy() for d in docs], n_process=2, batch_size=10)]
    # the float32 product of a batch of 10 rounds unlike that of one Doc (BLAS's gemm and gemv)
    np.testing.assert_allclose(np.array(got), np.array(expected), rtol=1e-6, atol=1e-6)


PTK = {"@misc": "spacy_convkernels.PartialTreeKernel.v1"}


@pytest.mark.parametrize(
    "factory, config, setting",
    [
        ("kernel_vectors", {"n_components": 0}, "n_components"),
        ("kernel_vectors", {"landmark_init": "random"}, "landmark_init"),
        ("kernel_vectors", {"landmark_source": "gold"}, "landmark_source"),
        ("kernel_vectors", {"batch_size": 0}, "batch_size"),
        ("kernel_vectors", {"kernel": {**PTK, "lam": -1.0}}, "lam"),
        ("kernel_klsh_codes", {"kernel": {**PTK, "mu": 0.0}}, "mu"),
        ("kernel_klsh_codes", {"n_references": 10, "subset_size": 20}, "subset_size"),
        ("kernel_klsh_codes", {"n_references": 20, "subset_size": 20}, "subset_size"),
        ("kernel_klsh_codes", {"n_bits": 0}, "n_bits"),
        ("kernel_klsh_codes", {"hash_function": "minhash"}, "hash_function"),
        ("kernel_klsh_codes", {"reference_source": "gold"}, "reference_source"),
    ],
)
def test_settings_are_checked_when_the_component_is_created(factory, config, setting):
    with pytest.raises(InvalidParameterError, match=f"{factory}: .*{setting}"):
        spacy.blank("en").add_pipe(factory, config=config)


@pytest.mark.slow
def test_a_saved_pipeline_with_a_bad_setting_fails_to_load(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("kernel_klsh_codes", config={"n_references": 30, "subset_size": 20})
    nlp.to_disk(tmp_path / "model")
    with pytest.raises(InvalidParameterError, match="subset_size"):
        spacy.load(tmp_path / "model", config={"components": {"kernel_klsh_codes": {"n_references": 20}}})


CONLLU = "".join(
    f"1\tI\tI\tPRON\tPRP\t_\t2\tnsubj\t_\t_\n2\t{verb}\t{verb}\tVERB\tVBD\t_\t0\troot\t_\t_\n"
    f"3\t{noun}\t{noun}\tNOUN\tNN\t_\t2\tobj\t_\tSpaceAfter=No\n\n"
    for verb in ("saw", "ate", "took")
    for noun in ("Fish", "Cake", "Time")
)


@Language.component("flat_parser")
def flat_parser(doc: Doc) -> Doc:
    """A stand-in parser whose analysis differs from the gold one: every token under the first."""
    words = [t.text for t in doc]
    return Doc(
        doc.vocab,
        words=words,
        spaces=[bool(t.whitespace_) for t in doc],
        heads=[0] * len(words),
        deps=["ROOT"] + ["flat"] * (len(words) - 1),
        tags=["NN"] * len(words),
        lemmas=words,
    )


def _fitted_trees(tmp_path, factory: str, source: str):
    """(trees the component was fitted on, trees it sees at runtime) of a pipeline with a
    parser unlike the gold parses and a kernel_trees component that keeps case."""
    path = tmp_path / "gold.conllu"
    path.write_text(CONLLU, encoding="utf-8")
    nlp = spacy.blank("en")
    nlp.add_pipe("flat_parser")
    nlp.add_pipe("kernel_trees", config={"representations": ["grct"], "lowercase": False})
    settings = {
        "kernel_vectors": {"n_components": 5, "landmark_source": source},
        "kernel_klsh_codes": {"n_references": 5, "subset_size": 2, "reference_source": source},
    }[factory]
    nlp.add_pipe(factory, config={"representation": "grct", **settings})
    examples = [Example(nlp.make_doc(gold.text), gold) for gold in read_conllu(path, nlp.vocab)]
    nlp.initialize(lambda: examples)
    model = nlp.get_pipe(factory).model
    fitted = model.components_ if factory == "kernel_vectors" else model.references_
    runtime = [Tree.from_string(s._.kernel_trees["grct"]) for e in examples for s in nlp(e.text).sents]
    return fitted, runtime


@pytest.mark.parametrize("factory", ["kernel_vectors", "kernel_klsh_codes"])
def test_fitted_on_the_trees_seen_at_runtime(tmp_path, factory):
    fitted, runtime = _fitted_trees(tmp_path, factory, "predicted")
    assert len(fitted) == 5 and set(fitted) <= set(runtime)
    labels = {label for tree in fitted for label in tree.labels}
    assert "SYNT##flat" in labels and not {"SYNT##obj", "SYNT##nsubj"} & labels  # the pipeline's parser
    assert "LEX##I::n" in labels  # the kernel_trees settings (lowercase=False)


@pytest.mark.parametrize("factory", ["kernel_vectors", "kernel_klsh_codes"])
def test_fitted_on_the_gold_parses_when_configured(tmp_path, factory):
    fitted, _ = _fitted_trees(tmp_path, factory, "reference")
    labels = {label for tree in fitted for label in tree.labels}
    assert {"SYNT##nsubj", "SYNT##obj"} <= labels and "SYNT##flat" not in labels
    assert "LEX##I::p" in labels and "LEX##i::p" not in labels  # still with the kernel_trees settings


def test_predicted_docs_without_a_parse_are_refused():
    nlp = spacy.blank("en")
    nlp.add_pipe("kernel_vectors", config=CONFIG)
    gold = doc_from_grct(nlp.vocab, next(iter(read_klp(SAMPLE))).trees["grct"])
    with pytest.raises(MissingAnnotationError, match="no dependency parse.*put a parser before it"):
        nlp.initialize(lambda: [Example(nlp.make_doc(gold.text), gold)])


@pytest.mark.slow
def test_components_are_quiet(pipeline, capfd):
    nlp, docs = pipeline
    nlp.add_pipe("kernel_trees", first=True)
    nlp.add_pipe("kernel_klsh_codes", config={"n_references": 20, "n_bits": 64, "subset_size": 4})
    nlp.add_pipe("kernel_amr_candidates", config={"source": "dependencies"})
    examples = [Example(d.copy(), d) for d in docs[:30]]
    for name in ("kernel_vectors", "kernel_klsh_codes"):
        nlp.get_pipe(name).initialize(lambda: examples, nlp=nlp)
    capfd.readouterr()
    assert all(d._.kernel_klsh_code for d in nlp.pipe(d.copy() for d in docs))
    out, err = capfd.readouterr()
    assert out == "" and err == ""


@pytest.mark.slow
def test_a_saved_pipeline_with_pipeline_vectors_loads(tmp_path):
    """vectors = "vocab" is bound when the component is first used: spacy.load creates it
    before the vectors are loaded."""
    nlp = spacy.blank("en")
    rng = np.random.default_rng(0)
    for word in ("be", "who", "galileo", "cat", "sit", "mat", "what", "dog"):
        nlp.vocab.set_vector(word, rng.normal(size=8).astype(np.float32))
    docs = [doc_from_grct(nlp.vocab, e.trees["grct"]) for e in read_klp(SAMPLE)]
    nlp.add_pipe(
        "kernel_vectors",
        config={
            **CONFIG,
            "n_components": 10,
            "kernel": {"@misc": "spacy_convkernels.SmoothedPartialTreeKernel.v1", "vectors": "vocab"},
        },
    )
    nlp.initialize(lambda: [Example(doc.copy(), doc) for doc in docs[:20]])
    expected = [nlp(d.copy())._.kernel_vector for d in docs[20:25]]
    nlp.to_disk(tmp_path / "model")
    reloaded = spacy.load(tmp_path / "model")
    got = [
        reloaded(doc_from_grct(reloaded.vocab, Tree.from_string(str(e.trees["grct"]))))._.kernel_vector
        for e in list(read_klp(SAMPLE))[20:25]
    ]
    np.testing.assert_array_equal(np.array(got), np.array(expected))


@pytest.mark.slow
@pytest.mark.parametrize("landmark_init", ["pivoted_cholesky", "ridge_leverage", "kmeans++"])
def test_every_landmark_method_is_a_setting(landmark_init, tmp_path):
    nlp = spacy.blank("en")
    docs = [doc_from_grct(nlp.vocab, e.trees["grct"]) for e in read_klp(SAMPLE)]
    component = nlp.add_pipe("kernel_vectors", config={**CONFIG, "landmark_init": landmark_init})
    assert component.model.landmark_init == landmark_init
    nlp.initialize(lambda: [Example(doc.copy(), doc) for doc in docs[:40]])
    expected = [nlp(d.copy())._.kernel_vector for d in docs[40:]]
    assert all(v.shape == (25,) for v in expected)
    nlp.to_disk(tmp_path / "model")
    reloaded = spacy.load(tmp_path / "model")
    assert reloaded.get_pipe("kernel_vectors").model.landmark_init == landmark_init
    np.testing.assert_array_equal([reloaded(d.copy())._.kernel_vector for d in docs[40:]], expected)
