"""The remaining bad inputs of issue 26 each get a package error naming the argument or file."""

import numpy as np
import pytest
import spacy
import srsly
from bombs import npy_header
from data_paths import CORPORA
from kelp_parses import doc_from_grct
from spacy.training import Example

from spacy_convkernels.cli import main
from spacy_convkernels.corpora import read_klp
from spacy_convkernels.corpora.conllu import create_conllu_reader, read_conllu
from spacy_convkernels.errors import (
    InvalidForestError,
    InvalidGraphError,
    InvalidParameterError,
    ModelFileError,
)
from spacy_convkernels.structures.forest import Forest

SAMPLE = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"


@pytest.mark.parametrize("n_sents", ["2", 1.5, 0, True])
def test_n_sents_must_be_a_positive_integer(tmp_path, n_sents):
    with pytest.raises(InvalidParameterError, match="n_sents must be an integer"):
        create_conllu_reader(tmp_path / "x.conllu", n_sents=n_sents)
    with pytest.raises(InvalidParameterError, match="n_sents must be an integer"):
        read_conllu(tmp_path / "x.conllu", n_sents=n_sents)


@pytest.mark.parametrize(
    "value, message",
    [
        ("garbage((", "not an AMR graph in PENMAN notation"),
        ("5", "not an AMR graph in PENMAN notation"),
        (5, "an AMR graph is a penman.Graph or PENMAN text, got int"),
        ("(a / )", "node 'a' has no concept"),
    ],
)
def test_amr_candidates_name_a_bad_graph(value, message):
    nlp = spacy.blank("en")
    component = nlp.add_pipe("kernel_amr_candidates")
    doc = nlp.make_doc("binding")
    doc._.kernel_amr = value
    with pytest.raises(InvalidGraphError, match=f"kernel_amr_candidates: Doc._.kernel_amr of 'binding': {message}"):
        component(doc)


def test_command_line_arguments_get_one_line(tmp_path, capsys):
    np.save(tmp_path / "plain.npy", np.zeros(3))
    np.save(tmp_path / "objects.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    (tmp_path / "huge.npy").write_bytes(npy_header((10**6, 10**6)) + bytes(800))  # 8 TB declared: MemoryError before
    assert main(["nystroem", "fit", str(SAMPLE), str(tmp_path / "m.npz"), "--n-components", "3", "--quiet"]) == 0
    with np.load(tmp_path / "m.npz") as stored:
        arrays = dict(stored)
    np.savez(tmp_path / "nan.npz", **{**arrays, "normalization": np.full_like(arrays["normalization"], np.nan)})
    capsys.readouterr()
    out = str(tmp_path / "out.npy")
    cases = [
        (["nystroem", "transform", str(tmp_path / "plain.npy"), str(SAMPLE), out], "a .npy array, not its .npz"),
        (["nystroem", "transform", str(tmp_path / "objects.npy"), str(SAMPLE), out], "a .npy array, not its .npz"),
        (["nystroem", "transform", str(tmp_path / "huge.npy"), str(SAMPLE), out], "a .npy array, not its .npz"),
        (["nystroem", "transform", str(tmp_path / "nan.npz"), str(SAMPLE), out], "does not match its content hash"),
        (["convert", "--lang", "zz", str(SAMPLE), str(tmp_path / "x.spacy")], "--lang 'zz' is not a language"),
        (["convert", "--format", "klp", str(CORPORA / "bionlp-st-2013-ge-sample"), out], "needs --format standoff"),
        (["gram", str(SAMPLE), str(tmp_path)], "is a directory"),
        (["evaluate", "qc", str(SAMPLE), str(SAMPLE), "--C", "nan"], "--C must be a finite number in (0, inf)"),
        (["nystroem", "fit", str(SAMPLE), "-o", str(tmp_path / "n.npz"), "--seed", "-1"], "--seed must be"),
    ]
    for command, message in cases:
        assert main(command) == 1, command
        err = capsys.readouterr().err.strip()
        assert message in err and "\n" not in err and "allow_pickle" not in err, (command, err)


@pytest.fixture(scope="module")
def saved_vectors(tmp_path_factory):
    nlp = spacy.blank("en")
    component = nlp.add_pipe("kernel_vectors", config={"n_components": 5})
    docs = [doc_from_grct(nlp.vocab, example.trees["grct"]) for example in read_klp(SAMPLE)]
    component.initialize(lambda: [Example(d, d) for d in docs], nlp=nlp)
    directory = tmp_path_factory.mktemp("kernel_vectors")
    component.to_disk(directory)
    return directory


@pytest.mark.parametrize("damage", ["truncated", "random", "nan", "shape", "missing"])
def test_a_damaged_saved_component_names_its_file(saved_vectors, tmp_path, damage):
    data = (saved_vectors / "model.msgpack").read_bytes()
    state = srsly.msgpack_loads(data)
    damaged = {
        "truncated": lambda: data[: len(data) // 2],
        "random": lambda: bytes(range(256)) * 3,
        "nan": lambda: srsly.msgpack_dumps(dict(state, normalization=np.full((5, 5), np.nan))),
        "shape": lambda: srsly.msgpack_dumps(dict(state, normalization=np.eye(4))),
        "missing": lambda: srsly.msgpack_dumps({"landmarks": state["landmarks"]}),
    }[damage]()
    (tmp_path / "model.msgpack").write_bytes(damaged)
    component = spacy.blank("en").add_pipe("kernel_vectors", config={"n_components": 5})
    with pytest.raises(ModelFileError, match=f"kernel_vectors: {tmp_path / 'model.msgpack'} is damaged"):
        component.from_disk(tmp_path)


def test_a_forest_whose_probabilities_would_underflow_says_so():
    nodes, edges = [("a", 0, 1), ("b", 1, 2), ("S", 0, 2)], [(2, (0, 1), 1e-100)]
    with pytest.raises(InvalidForestError, match="below 1e-150.*scale the root weights up"):
        Forest(nodes, edges, [(2, 1e-100)])
    assert Forest(nodes, edges, [(2, 1.0)]).total == pytest.approx(1e-100)
