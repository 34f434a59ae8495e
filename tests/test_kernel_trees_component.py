"""The kernel_trees component: config, saving and loading, DocBin, multiprocessing, real parser."""

import subprocess
import sys

import numpy as np
import pytest
import spacy
from data_paths import CORPORA, need_shared
from kelp_parses import doc_from_grct
from spacy.tokens import Doc, DocBin, Span
from spacy.vocab import Vocab

from spacy_convkernels import Tree
from spacy_convkernels.corpora import read_klp
from spacy_convkernels.errors import ExtensionConflictError
from spacy_convkernels.extensions import install_extensions
from spacy_convkernels.kernels import PartialTreeKernel, SubsetTreeKernel
from spacy_convkernels.structures import MissingAnnotationError, UnknownRepresentationError

SAMPLE = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"


def _two_sentence_doc(vocab):
    """'Who was Galileo ? Cats sat on mats .' parsed, two sentences."""
    return Doc(
        vocab,
        words=["Who", "was", "Galileo", "?", "Cats", "sat", "on", "mats", "."],
        tags=["WP", "VBD", "NNP", ".", "NNS", "VBD", "IN", "NNS", "."],
        lemmas=["who", "be", "Galileo", "?", "cat", "sit", "on", "mat", "."],
        heads=[1, 1, 1, 1, 5, 5, 5, 6, 5],
        deps=["attr", "ROOT", "nsubj", "punct", "nsubj", "ROOT", "prep", "pobj", "punct"],
        sent_starts=[True, False, False, False, True, False, False, False, False],
    )


@pytest.fixture
def nlp():
    nlp = spacy.blank("en")
    nlp.add_pipe("kernel_trees", config={"representations": ["grct", "loct"]})
    return nlp


def test_writes_span_and_doc_extensions(nlp):
    doc = nlp(_two_sentence_doc(nlp.vocab))
    sentences = list(doc.sents)
    assert sentences[1]._.kernel_trees == {
        "grct": "(SYNT##root(SYNT##nsubj(POS##NNS(LEX##cat::n)))(POS##VBD(LEX##sit::v))"
        "(SYNT##prep_on(POS##NNS(LEX##mat::n))))",
        "loct": "(LEX##sit::v(LEX##cat::n)(LEX##mat::n))",
    }
    assert sentences[0]._.kernel_trees["loct"] == "(LEX##be::v(LEX##who::w)(LEX##galileo::n))"
    assert doc._.kernel_trees == [s._.kernel_trees for s in sentences]
    assert Tree.from_string(doc._.kernel_trees[0]["grct"]).n_nodes == 9


def test_unknown_representation_is_refused():
    with pytest.raises(UnknownRepresentationError, match="tree"):
        spacy.blank("en").add_pipe("kernel_trees", config={"representations": ["tree"]})


@pytest.mark.slow
def test_saved_pipeline_loads_without_importing_the_package(nlp, tmp_path):
    nlp.to_disk(tmp_path / "pipeline")
    script = (
        "import sys, spacy\n"
        "from spacy.tokens import Doc\n"
        f"nlp = spacy.load({str(tmp_path / 'pipeline')!r})\n"
        "doc = Doc(nlp.vocab, words=['cats', 'sleep'], heads=[1, 1], deps=['nsubj', 'ROOT'],"
        " tags=['NNS', 'VBP'], lemmas=['cat', 'sleep'])\n"
        "print(nlp.pipe_names, nlp(doc)._.kernel_trees[0]['loct'])\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['kernel_trees'] (LEX##sleep::v(LEX##cat::n))"
    reloaded = spacy.load(tmp_path / "pipeline")
    assert reloaded.get_pipe("kernel_trees").representations == ["grct", "loct"]


def test_values_survive_docbin(nlp):
    docs = [nlp(_two_sentence_doc(nlp.vocab)) for _ in range(3)]
    data = DocBin(docs=docs, store_user_data=True).to_bytes()
    restored = list(DocBin(store_user_data=True).from_bytes(data).get_docs(Vocab()))
    assert [d._.kernel_trees for d in restored] == [d._.kernel_trees for d in docs]
    assert [s._.kernel_trees for s in restored[0].sents] == [s._.kernel_trees for s in docs[0].sents]


@pytest.mark.slow
def test_values_survive_multiprocessing(qc_docs_pipeline):
    nlp, docs = qc_docs_pipeline
    expected = [nlp(doc)._.kernel_trees for doc in docs]
    got = [doc._.kernel_trees for doc in nlp.pipe(docs, n_process=2, batch_size=8)]
    assert got == expected
    assert len(got) == 60 and all(len(d) == 1 for d in got)


@pytest.fixture
def qc_docs_pipeline():
    nlp = spacy.blank("en")
    nlp.add_pipe("kernel_trees")
    docs = [doc_from_grct(nlp.vocab, e.trees["grct"]) for e in read_klp(SAMPLE)]
    return nlp, docs


def test_bad_docs(nlp):
    unparsed = Doc(nlp.vocab, words=["no", "parse"])
    with pytest.raises(MissingAnnotationError, match="dependency parse"):
        nlp(unparsed)
    empty = nlp(Doc(nlp.vocab, words=[]))
    assert empty._.kernel_trees == []


@pytest.mark.shared
def test_real_pipeline_on_100_questions(qc_dir):
    model = need_shared("models/en_core_web_md-3.8.0")
    nlp = spacy.load(model)
    nlp.add_pipe("kernel_trees")
    questions = [e.texts["quest"] for e in read_klp(qc_dir / "train_5500.coarse.klp.gz")][:100]
    docs = list(nlp.pipe(questions))
    trees = {name: [] for name in ("grct", "lct", "clct")}
    for doc in docs:
        assert doc._.kernel_trees, doc.text
        for sentence in doc._.kernel_trees:
            for name in trees:
                tree = Tree.from_string(sentence[name])
                assert str(tree) == sentence[name]
                trees[name].append(tree)
            grct = Tree.from_string(sentence["grct"])
            assert grct.label == "SYNT##root"
            assert sum(label.startswith("POS##") for label in grct.labels) == sum(
                label.startswith("LEX##") for label in grct.labels
            )
    assert len(trees["grct"]) >= 100
    for kernel, sharing in ((PartialTreeKernel(terminal_factor=5), 1.0), (SubsetTreeKernel(), 0.5)):
        G = kernel.gram(trees["grct"])
        assert np.allclose(np.diag(G), 1.0) and ((G >= 0) & (G <= 1 + 1e-12)).all()
        assert (G[np.triu_indices(len(G), 1)] > 0).mean() >= sharing  # questions share fragments


@pytest.mark.slow
def test_importing_registers_no_extension_and_each_component_installs_its_own():
    """In a fresh process: importing the components and readers registers nothing; creating
    a component registers what it writes and what it reads (Span._.kernel_trees for
    kernel_vectors and kernel_klsh_codes, which read the trees of a kernel_trees component)."""
    script = (
        "from spacy.tokens import Doc, Span\n"
        "from spacy.vocab import Vocab\n"
        "import spacy_convkernels.corpora\n"
        "from spacy_convkernels.components import amr_candidates, kernel_trees, kernel_vectors, klsh_codes\n"
        "from spacy_convkernels.ml.doc_structures import sentence_trees\n"
        "from spacy_convkernels.kernels import PartialTreeKernel\n"
        "names = ['kernel_trees', 'kernel_vector', 'kernel_klsh_code', 'kernel_amr', 'kernel_interactions']\n"
        "print([n for n in names if Doc.has_extension(n) or Span.has_extension(n)])\n"
        "kernel_vectors.KernelVectors(None, 'kv', representation='grct', kernel=PartialTreeKernel(), n_components=2)\n"
        "print(Span.has_extension('kernel_trees'), Span.has_extension('kernel_vector'),"
        " Doc.has_extension('kernel_amr'))\n"
        "doc = Doc(Vocab(), words=['cats', 'sleep'], heads=[1, 1], deps=['nsubj', 'ROOT'], tags=['NNS', 'VBP'],"
        " lemmas=['cat', 'sleep'])\n"
        "print(sentence_trees(doc, 'loct'))\n"
        "amr_candidates.AmrCandidates()\n"
        "print(Doc.has_extension('kernel_amr'), Doc.has_extension('kernel_interactions'))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["[]", "True True False", "[Tree('(LEX##sleep::v(LEX##cat::n))')]", "True True"]


@pytest.fixture
def users_span_kernel_trees():
    """A user's own Span._.kernel_trees (default {}), put back as the package's afterwards."""
    Span.remove_extension("kernel_trees")
    Span.set_extension("kernel_trees", default={})
    yield
    Span.remove_extension("kernel_trees")
    install_extensions("span._.kernel_trees")


@pytest.mark.slow
def test_a_users_extension_is_not_overwritten(users_span_kernel_trees):
    for factory in ("kernel_trees", "kernel_vectors", "kernel_klsh_codes"):
        with pytest.raises(ExtensionConflictError, match=r"span._.kernel_trees is already registered as default=\{\}"):
            spacy.blank("en").add_pipe(factory)
    assert Span.get_extension("kernel_trees")[0] == {}


def test_an_extension_registered_the_same_way_is_kept():
    install_extensions("span._.kernel_trees", "doc._.kernel_trees")
    before = Span.get_extension("kernel_trees"), Doc.get_extension("kernel_trees")
    spacy.blank("en").add_pipe("kernel_trees")
    assert (Span.get_extension("kernel_trees"), Doc.get_extension("kernel_trees")) == before


def test_analyze_pipes_names_what_kernel_trees_needs():
    nlp = spacy.blank("en")
    nlp.add_pipe("kernel_trees")
    problems = nlp.analyze_pipes()["problems"]["kernel_trees"]
    assert {"token.dep", "token.head", "token.tag", "token.lemma"} <= set(problems)
    for name in ("tagger", "parser"):
        nlp.add_pipe(name, before="kernel_trees")
    nlp.add_pipe("lemmatizer", config={"mode": "rule"}, before="kernel_trees")
    analysis = nlp.analyze_pipes()
    assert analysis["problems"]["kernel_trees"] == []
    assert analysis["summary"]["kernel_trees"]["assigns"] == ["span._.kernel_trees", "doc._.kernel_trees"]
