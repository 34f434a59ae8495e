"""PENMAN reader, semantic graphs and interaction candidates."""

import subprocess
import sys
import warnings
import zlib

import penman
import pytest
import spacy
from broken_files import gzip_then_broken
from data_paths import need_shared
from relation_samples import SOS
from spacy.tokens import DocBin
from spacy.util import registry
from spacy.vocab import Vocab

from spacy_convkernels import ConvKernelsError, CorpusFormatError
from spacy_convkernels.corpora import CorpusWarning, read_penman
from spacy_convkernels.errors import ConvKernelsWarning, CorpusFileError
from spacy_convkernels.kernels import InvalidParameterError
from spacy_convkernels.structures.interactions import (
    amr_candidates,
    dependency_candidates,
)
from spacy_convkernels.structures.paths import PathTuples
from spacy_convkernels.structures.semantic_graph import SemanticGraph


@pytest.fixture
def penman_file(tmp_path):
    path = tmp_path / "graphs.txt"
    header = "# AMR release; corpus: test\n\n"
    second = SOS.replace("fig1", "fig1b").replace("Ras", "Rap")
    path.write_text(header + SOS + "\n" + second, encoding="utf-8")
    return path


def test_reader_gives_docs_with_their_graphs(penman_file):
    docs = list(read_penman(penman_file))
    assert [d.text for d in docs] == [
        "GEFs such as Sos have allosteric sites for Ras binding .",
        "GEFs such as Sos have allosteric sites for Rap binding .",
    ]
    assert len(docs[0]) == 11
    graph = penman.decode(docs[0]._.kernel_amr)
    assert graph.metadata["id"] == "fig1" and graph.top == "h"
    restored = list(DocBin(docs=docs, store_user_data=True).get_docs(Vocab()))
    assert [d._.kernel_amr for d in restored] == [d._.kernel_amr for d in docs]


def test_malformed_graph_names_file_id_and_line(tmp_path):
    path = tmp_path / "bad.txt"
    broken = SOS.replace("fig1", "broken").replace(":purpose (b / bind-01", ":purpose (b / bind-01 (")
    path.write_text(SOS + "\n" + broken + "\n" + SOS.replace("fig1", "after"), encoding="utf-8")
    with pytest.raises(CorpusFormatError) as info:
        list(read_penman(path))
    assert isinstance(info.value, ConvKernelsError)
    assert "graph broken" in str(info.value) and info.value.line >= 12 and str(path) in str(info.value)
    errors = []
    with pytest.warns(CorpusWarning, match="broken"):
        docs = list(read_penman(path, skip_errors=True, errors=errors))
    assert len(docs) == 2 and len(errors) == 1  # the rest of the corpus is not lost
    no_sentence = tmp_path / "nosnt.txt"
    no_sentence.write_text("# ::id lonely\n(a / b)\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match="graph lonely: no '# ::snt'"):
        list(read_penman(no_sentence))


def test_registered_reader(penman_file):
    reader = registry.readers.get("spacy_convkernels.Penman.v1")(path=penman_file)
    examples = list(reader(spacy.blank("en")))
    assert len(examples) == 2 and examples[0].reference._.kernel_amr.startswith("#")


@pytest.mark.shared
def test_reads_all_of_bio_amr():
    folder = need_shared("data/bio-amr")
    sizes = {f.name: len(list(read_penman(f))) for f in sorted(folder.glob("*.txt"))}
    assert sizes == {
        "amr-release-dev-bio.txt": 500,
        "amr-release-test-bio.txt": 500,
        "amr-release-training-bio.PARTIAL-first-1MiB.txt": 838,
    }


def test_semantic_graph_of_an_amr():
    graph = SemanticGraph.from_penman(SOS)
    assert graph.labels == {
        "h": "have",
        "p": "protein-family",
        "p2": "protein",
        "s": "site",
        "a": "allosteric",
        "b": "bind",
        "e": "enzyme",
    }
    assert graph.names == {"p": "GEF", "p2": "Sos", "e": "Ras"}
    parents = graph.walk_from("b")
    assert SemanticGraph.path_to(parents, "p2") == [
        ("", "b"),
        ("purpose-of", "s"),
        ("arg1-of", "h"),
        ("arg0", "p"),
        ("example", "p2"),
    ]


def test_candidates_of_an_amr_in_the_shape_of_table_1():
    candidates = amr_candidates(SOS)
    assert {c.interaction for c in candidates} == {"bind"}
    # participants: GEF (protein-family), Sos (protein), Ras (enzyme): 6 ordered pairs + 3 triples
    assert len(candidates) == 6 + 3
    sos_ras = next(c for c in candidates if dict(c.roles) == {"catalyst": "p2", "theme": "e"})
    assert sos_ras.path == PathTuples(
        [
            ("example", "protein"),
            ("arg0", "protein-family"),
            ("arg1-of", "have"),
            ("purpose-of", "site"),
            ("", "bind"),
            ("arg1", "enzyme"),
        ]
    )
    assert str(sos_ras.subgraph) == (
        "(/bind(purpose-of/site(arg1-of/have(arg0/protein-family(example/protein(/catalyst)))))(arg1/enzyme(/theme)))"
    )
    record = sos_ras.to_dict(SemanticGraph.from_penman(SOS))
    assert record["participants"] == {"catalyst": "Sos", "theme": "Ras"} and record["interaction"] == "bind"
    assert len(amr_candidates(SOS, max_distance=1)) == 0  # Ras is 1 edge away, nothing else within reach
    assert len(amr_candidates(SOS, max_distance=2)) == 0


def test_candidates_of_a_dependency_parse():
    from spacy.tokens import Doc, Span

    words = ["Sos", "binds", "Ras", "and", "Rap"]
    doc = Doc(
        Vocab(),
        words=words,
        heads=[1, 1, 1, 2, 2],
        deps=["nsubj", "ROOT", "dobj", "cc", "conj"],
        lemmas=["sos", "bind", "ras", "and", "rap"],
    )
    doc.ents = [Span(doc, 0, 1, "PROTEIN"), Span(doc, 2, 3, "PROTEIN"), Span(doc, 4, 5, "PROTEIN")]
    candidates = dependency_candidates(doc[:])
    assert len(candidates) == 6 + 3 and {c.interaction for c in candidates} == {"bind"}
    first = next(c for c in candidates if dict(c.roles) == {"catalyst": "0", "theme": "4"})
    assert first.path == PathTuples([("nsubj", "sos"), ("", "bind"), ("dobj", "ras"), ("conj", "rap")])


@pytest.mark.shared
def test_candidates_over_bio_amr():
    folder = need_shared("data/bio-amr")
    docs = list(read_penman(folder / "amr-release-dev-bio.txt"))
    candidates = [c for d in docs for c in amr_candidates(d._.kernel_amr)]
    assert len(candidates) > 10_000
    assert {"bind", "phosphorylate", "inhibit", "activate"} <= {c.interaction for c in candidates}
    assert all(c.path.tuples[0][0] != "" or len(c.path) > 1 for c in candidates)


def test_amr_candidates_component(penman_file):
    nlp = spacy.blank("en")
    nlp.add_pipe("kernel_amr_candidates")
    docs = [nlp(d) for d in read_penman(penman_file)]
    records = docs[0]._.kernel_interactions
    assert len(records) == 9
    sos_ras = next(r for r in records if r["participants"] == {"catalyst": "Sos", "theme": "Ras"})
    assert sos_ras["path"][-1] == ["arg1", "enzyme"] and sos_ras["subgraph"].startswith("(/bind(")
    restored = list(DocBin(docs=docs, store_user_data=True).get_docs(Vocab()))
    assert [d._.kernel_interactions for d in restored] == [d._.kernel_interactions for d in docs]
    again = list(nlp.pipe(read_penman(penman_file), n_process=2))
    assert [d._.kernel_interactions for d in again] == [d._.kernel_interactions for d in docs]
    with pytest.raises(ConvKernelsError, match="Doc._.kernel_amr"):
        nlp("no graph here")


def test_amr_candidates_from_dependencies():
    from spacy.tokens import Doc, Span

    import spacy_convkernels.components.amr_candidates  # noqa: F401

    nlp = spacy.blank("en")
    nlp.add_pipe("kernel_amr_candidates", config={"source": "dependencies", "entity_labels": ["PROTEIN"]})
    doc = Doc(
        nlp.vocab,
        words=["Sos", "binds", "Ras", "in", "cells"],
        heads=[1, 1, 1, 1, 3],
        deps=["nsubj", "ROOT", "dobj", "prep", "pobj"],
        lemmas=["sos", "bind", "ras", "in", "cell"],
    )
    doc.ents = [Span(doc, 0, 1, "PROTEIN"), Span(doc, 2, 3, "PROTEIN"), Span(doc, 4, 5, "CELL")]
    records = nlp(doc)._.kernel_interactions
    assert sorted(r["participants"]["catalyst"] for r in records) == ["Ras", "Sos"]


def test_a_byte_order_mark_is_dropped(tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbf# AMR release; corpus: test\n\n" + SOS.encode())
    assert [d._.kernel_amr.count("::id fig1") for d in read_penman(path)] == [1]  # the header is not read as a graph


TOKENIZED = """# ::id tok1
# ::tok Sos binds Ras-GTP .
(b / bind-01 :ARG0 (p / protein :name (n / name :op1 "Sos"))
   :ARG1 (p2 / protein :name (n2 / name :op1 "Ras-GTP")))
"""


def test_graphs_with_tokens_instead_of_a_sentence(tmp_path):
    path = tmp_path / "aligned.txt"
    path.write_text(TOKENIZED + "\n" + SOS, encoding="utf-8")
    first, second = read_penman(path)
    assert [t.text for t in first] == ["Sos", "binds", "Ras-GTP", "."] and first.text == "Sos binds Ras-GTP ."
    assert penman.decode(first._.kernel_amr).metadata["tok"] == "Sos binds Ras-GTP ."
    assert len(amr_candidates(first._.kernel_amr)) == 2
    assert second.text.startswith("GEFs such as Sos")


@pytest.mark.shared
def test_bio_amr_with_tokens_instead_of_sentences(tmp_path):
    source = need_shared("data/bio-amr") / "amr-release-dev-bio.txt"
    path = tmp_path / "dev-tok.txt"
    path.write_text(source.read_text(encoding="utf-8").replace("# ::snt ", "# ::tok "), encoding="utf-8")
    docs = list(read_penman(path))
    assert len(docs) == 500 and all(len(d) for d in docs)


MALFORMED = [  # graph, message, line in the graph (from 1)
    ("(a / )", "node a has no concept", 1),
    ("(h / have-03\n   :ARG0 (p / protein :name (n / name :op1)))", "role :op1 of node n has no value", 2),
    ("(h / have-03\n   :ARG0 (p))", "node p has no concept", 2),
    ("(h / have-03\n   :ARG0 (p / protein)\n   :ARG1 (p / enzyme))", "variable p is defined twice", 3),
    ("(h / have-03\n   :ARG0)", "role :ARG0 of node h has no value", 1),
    ('(h / "have it")', "concept '\"have it\"' of node h holds whitespace", 1),
    ("(h / have\u00a0it)", "concept 'have.xa0it' of node h holds whitespace", 1),
    ("(h / have-03)\n(s / site)", "text after the end of the graph", 2),
    ("(h / have-03 :ARG0 (s / site)) :ARG1 (e / enzyme))", "text after the end of the graph", 1),
    ("(h / have-03 :ARG0 (s / site)", "DecodeError: Unexpected end of input", 1),
    ("()", "a node without a variable", 1),
]


@pytest.fixture(scope="module")
def english():
    """One blank English pipeline for the many small reads of malformed graphs (read_penman
    without one makes a new one, a quarter of a second, as the other tests check)."""
    return spacy.blank("en")


@pytest.mark.parametrize("graph, words, line", MALFORMED)
def test_malformed_graphs_are_refused_at_read_time(tmp_path, english, graph, words, line):
    path = tmp_path / "bad.txt"
    path.write_text(SOS + "\n# ::id bad ::date 2018\n# ::snt Some text .\n" + graph + "\n\n" + SOS, encoding="utf-8")
    with pytest.raises(CorpusFormatError, match="graph bad: " + words) as info:
        list(read_penman(path, english))
    assert info.value.line == 12 + line  # SOS is 9 lines, a blank line, 2 comment lines, then the graph
    errors = []
    with pytest.warns(CorpusWarning):
        docs = list(read_penman(path, english, skip_errors=True, errors=errors))
    assert len(docs) == 2 and len(errors) == 1
    assert all(len(amr_candidates(d._.kernel_amr)) == 9 for d in docs)


def test_an_undecodable_line_loses_its_graph_only(tmp_path):
    path = tmp_path / "latin1.txt"
    broken = SOS.replace("fig1", "latin").replace("allosteric", "allost\u00e9ric").encode("latin-1")
    path.write_bytes(SOS.encode() + b"\n" + broken + b"\n" + SOS.encode())
    with pytest.raises(CorpusFormatError, match="line 12: graph latin: not UTF-8") as info:
        list(read_penman(path))
    assert isinstance(info.value.__cause__, UnicodeDecodeError)
    errors = []
    with pytest.warns(CorpusWarning, match="line 12"):
        assert len(list(read_penman(path, skip_errors=True, errors=errors))) == 2
    assert [e.line for e in errors] == [12]


def test_a_corrupted_deflate_stream(tmp_path):
    path = tmp_path / "broken.txt.gz"
    path.write_bytes(gzip_then_broken(SOS + "\n" + SOS))
    with pytest.raises(CorpusFormatError, match="line 20: graph fig1: unreadable gzip data") as info:
        list(read_penman(path))
    assert isinstance(info.value.__cause__, zlib.error)
    with pytest.warns(CorpusWarning, match="gzip"):
        assert len(list(read_penman(path, skip_errors=True))) == 1  # the graph cut short by the break is lost


def test_a_file_that_cannot_be_opened(tmp_path):
    with pytest.raises(CorpusFileError, match="cannot open"):
        list(read_penman(tmp_path / "missing.txt"))


@pytest.mark.slow
def test_amr_candidates_on_plain_text_is_a_missing_annotation():
    """In a fresh process, with nothing read by read_penman: the component itself installs
    Doc._.kernel_amr, so plain text gets the package's error, not spaCy's E046."""
    script = (
        "import spacy\n"
        "from spacy_convkernels.errors import MissingAnnotationError\n"
        "nlp = spacy.blank('en')\n"
        "nlp.add_pipe('kernel_amr_candidates')\n"
        "try:\n"
        "    nlp('Ras binds Raf.')\n"
        "except MissingAnnotationError as problem:\n"
        "    print(problem)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "no AMR graph in Doc._.kernel_amr" in out.stdout


def _proteins_around_a_trigger(n: int) -> str:
    """A bind-01 event with n proteins as its arguments."""
    arguments = "".join(f'\n   :ARG{i % 3} (p{i} / protein :name (n{i} / name :op1 "P{i}"))' for i in range(n))
    return f"# ::id many\n# ::snt Many proteins bind .\n(b / bind-01{arguments})\n"


def test_candidates_per_trigger_are_capped_with_a_warning():
    graph = _proteins_around_a_trigger(8)  # 8 * 7 pairs + 8 * 21 triples = 224 candidates
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        everything = amr_candidates(graph, max_candidates_per_trigger=224)
        assert len(everything) == len(amr_candidates(graph, max_candidates_per_trigger=None)) == 224
    with pytest.warns(ConvKernelsWarning, match=r"8 participants .* 224 candidates: only the first 50"):
        capped = amr_candidates(graph, max_candidates_per_trigger=50)
    assert capped == everything[:50]


def test_the_default_cap_bounds_a_crowded_trigger():
    graph = _proteins_around_a_trigger(60)  # 106,200 candidates without a cap
    with pytest.warns(ConvKernelsWarning, match="106200 candidates"):
        assert len(amr_candidates(graph)) == 5000


def test_amr_candidates_component_caps_per_trigger():
    nlp = spacy.blank("en")
    nlp.add_pipe("kernel_amr_candidates", config={"max_candidates_per_trigger": 30})
    doc = nlp.make_doc("Many proteins bind .")
    doc._.kernel_amr = _proteins_around_a_trigger(8)
    with pytest.warns(ConvKernelsWarning, match="max_candidates_per_trigger"):
        assert len(nlp(doc)._.kernel_interactions) == 30


@pytest.mark.parametrize(
    "config, setting",
    [
        ({"max_distance": -1}, "max_distance"),
        ({"max_candidates_per_trigger": 0}, "max_candidates_per_trigger"),
        ({"source": "text"}, "source"),
    ],
)
def test_amr_candidates_settings_are_checked_when_created(config, setting):
    with pytest.raises(InvalidParameterError, match=f"kernel_amr_candidates: {setting}"):
        spacy.blank("en").add_pipe("kernel_amr_candidates", config=config)


def test_dependency_candidates_from_odd_unicode_give_structures_that_round_trip():
    from spacy.tokens import Doc, Span

    from spacy_convkernels import Tree

    nlp = spacy.blank("en")
    doc = Doc(
        nlp.vocab,
        words=["So\u3000s", "binds", "Ras\xa0GTP", "in", "(cells)"],
        heads=[1, 1, 1, 1, 3],
        deps=["nsubj", "ROOT", "dobj\r", "prep/x", "pobj"],
        lemmas=["so\u3000s", "bind", "ras\x85gtp", "in", "(cell)"],
    )
    doc.ents = [Span(doc, 0, 1, "PROTEIN"), Span(doc, 2, 3, "PROTEIN")]
    candidates = dependency_candidates(doc)
    assert candidates
    for candidate in candidates:
        assert Tree.from_string(str(candidate.subgraph)) == candidate.subgraph
        assert PathTuples(candidate.path.tuples) == candidate.path


def nested(depth: int, name: str) -> str:
    """A graph of ``depth`` nodes, each inside the one before, one per line."""
    return "\n".join(
        [f"# ::id {name}", "# ::snt deep"]
        + [f"(n{i} / c :ARG0" for i in range(depth - 1)]
        + ["(x / y)" + ")" * (depth - 1)]
    )


def test_a_graph_nested_600_deep_is_refused_on_its_line_and_skipped_on_request(tmp_path):
    """Issue 36: a raw RecursionError, and with ``skip_errors`` the corpus stopped there."""
    path = tmp_path / "deep.txt"
    path.write_text(SOS + "\n" + nested(600, "deep") + "\n\n" + nested(200, "deep200") + "\n\n" + SOS, encoding="utf-8")
    # SOS: lines 1-9, the deep graph from line 11: its 201st bracket on line 11 + 2 + 200
    with pytest.raises(CorpusFormatError, match=r"line 213: graph deep: brackets nested more than 200 deep"):
        list(read_penman(path))
    errors = []
    with pytest.warns(CorpusWarning, match="graph deep:"):
        docs = list(read_penman(path, skip_errors=True, errors=errors))
    assert len(docs) == 3 and [e.line for e in errors] == [213]
    assert len(penman.decode(docs[1]._.kernel_amr).instances()) == 200  # 200 deep is read, and usable
    amr_candidates(docs[1]._.kernel_amr)


def test_carriage_return_line_ends_are_refused_not_read_as_a_comment(tmp_path):
    """Issue 36: a file with ``\\r`` line ends and a leading comment gave 0 graphs and no warning."""
    path = tmp_path / "cr.txt"
    path.write_bytes(("# AMR release\n\n" + SOS).replace("\n", "\r").encode())
    with pytest.raises(CorpusFormatError, match=r"cr\.txt, line 1: .*a carriage return inside the line"):
        list(read_penman(path))
    crlf = tmp_path / "crlf.txt"
    crlf.write_bytes(("# AMR release\n\n" + SOS).replace("\n", "\r\n").encode())
    assert len(list(read_penman(crlf))) == 1


def test_a_sentence_over_max_length_is_refused_and_skipped_on_request(tmp_path):
    nlp = spacy.blank("en")
    nlp.max_length = 60  # the sentence of SOS has 56 characters
    path = tmp_path / "long.txt"
    path.write_text(
        SOS + "\n" + SOS.replace("fig1", "long").replace(" .", " and more words" * 5 + " ."), encoding="utf-8"
    )
    with pytest.raises(CorpusFormatError, match=r"line 11: graph long: a sentence of 131 characters, more than"):
        list(read_penman(path, nlp))
    with pytest.warns(CorpusWarning, match="nlp.max_length"):
        assert len(list(read_penman(path, nlp, skip_errors=True))) == 1


@pytest.fixture
def python_recursion_limit():
    """Python's default recursion limit for one test (tests/reference_kernels.py raises it)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    yield
    sys.setrecursionlimit(limit)


def test_a_recursion_error_inside_penman_is_a_positioned_error(tmp_path, monkeypatch, python_recursion_limit):
    """Beyond what penman's parser can nest (under a raised MAX_DEPTH), the graph is
    refused as one, never a raw RecursionError."""
    from spacy_convkernels.corpora import amr

    monkeypatch.setattr(amr, "MAX_DEPTH", 10**6)
    path = tmp_path / "deeper.txt"
    path.write_text(nested(3000, "deeper") + "\n\n" + SOS, encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=r"line 1: graph deeper: nested too deep for the penman library"):
        list(read_penman(path))
    with pytest.warns(CorpusWarning, match="graph deeper"):
        assert len(list(read_penman(path, skip_errors=True))) == 1
