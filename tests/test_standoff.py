"""BioNLP shared-task standoff reader: Docs, flattened gold interactions, errors, registry, convert."""

import json
import sys
import warnings
from collections import Counter

import pytest
import spacy
from address_space import run_limited
from data_paths import CORPORA, ROOT, need_shared
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spacy.tokens import DocBin
from thinc.api import Config

from spacy_convkernels.cli import main
from spacy_convkernels.corpora import read_standoff
from spacy_convkernels.corpora.standoff import article_of, split_articles
from spacy_convkernels.errors import (
    ConvKernelsError,
    ConvKernelsWarning,
    CorpusFileError,
    CorpusFormatError,
    CorpusWarning,
    InvalidParameterError,
)

SAMPLE = CORPORA / "bionlp-st-2013-ge-sample"
TIAB = SAMPLE / "PMC-2626671-00-TIAB.txt"
# one pipeline for the many small reads of malformed lines (read_standoff without one
# makes a blank English pipeline, a quarter of a second, as the other tests check)
NLP = spacy.blank("en")


def flat(doc):
    return [(i["event"], i["interaction"], i["trigger"], i["roles"], i["equiv"]) for i in doc._.kernel_interactions]


def write_doc(directory, text, a1, a2=None, name="doc"):
    (directory / f"{name}.txt").write_text(text, encoding="utf-8")
    (directory / f"{name}.a1").write_text("".join(line + "\n" for line in a1), encoding="utf-8")
    if a2 is not None:
        (directory / f"{name}.a2").write_text("".join(line + "\n" for line in a2), encoding="utf-8")
    return directory / f"{name}.txt"


TEXT = "RAS activates the binding of RAF to MEK1 and ERK."
A1 = ["T1\tProtein 0 3\tRAS", "T2\tProtein 29 32\tRAF", "T3\tProtein 36 40\tMEK1", "T4\tProtein 45 48\tERK"]
A2 = [
    "T5\tPositive_regulation 4 13\tactivates",
    "T6\tBinding 18 25\tbinding",
    "E1\tBinding:T6 Theme:T2 Theme2:T3",
    "E2\tPositive_regulation:T5 Theme:E1 Cause:T1",
]


def test_nested_events_of_a_real_document_flatten_as_checked_by_hand():
    # PMC-2626671-00-TIAB: E3 = Regulation(Theme: E4 = Gene_expression(Theme: T7), Cause: T4), ...;
    # Equiv T5 T6 (Eomesodermin, Eomes) repeats E2 and E5 with T6
    (doc,) = read_standoff(TIAB)
    assert flat(doc) == [
        ("E1", "Positive_regulation", "T17", {"theme": "T4"}, False),
        ("E2", "Positive_regulation", "T18", {"theme": "T5"}, False),
        ("E2", "Positive_regulation", "T18", {"theme": "T6"}, True),
        ("E3", "Regulation", "T19", {"catalyst": "T4", "theme": "T7"}, False),
        ("E4", "Gene_expression", "T20", {"theme": "T7"}, False),
        ("E5", "Regulation", "T19", {"catalyst": "T5", "theme": "T7"}, False),
        ("E5", "Regulation", "T19", {"catalyst": "T6", "theme": "T7"}, True),
        ("E6", "Regulation", "T21", {"catalyst": "T9", "theme": "T10"}, False),
        ("E7", "Gene_expression", "T22", {"theme": "T10"}, False),
        ("E8", "Regulation", "T21", {"catalyst": "T9", "theme": "T11"}, False),
        ("E9", "Gene_expression", "T23", {"theme": "T11"}, False),
        ("E10", "Regulation", "T21", {"catalyst": "T9", "theme": "T12"}, False),
        ("E11", "Gene_expression", "T23", {"theme": "T12"}, False),
        ("E12", "Regulation", "T21", {"catalyst": "T9", "theme": "T13"}, False),
        ("E13", "Gene_expression", "T23", {"theme": "T13"}, False),
    ]
    e3 = doc._.kernel_interactions[3]
    assert e3["participants"] == {"catalyst": "T-bet", "theme": "interferon (IFN) gamma"}
    spans = {role: doc[start:end].text for role, (start, end) in e3["spans"].items()}
    assert spans == {"trigger": "regulate", "catalyst": "T-bet", "theme": "interferon (IFN) gamma"}
    assert not any(i["negated"] or i["speculated"] for i in doc._.kernel_interactions)


def test_mentions_become_span_groups_with_their_ids_and_proteins_the_entities():
    (doc,) = read_standoff(TIAB)
    proteins = doc.spans["proteins"]
    assert len(proteins) == 14 and proteins[0].id_ == "T1" and proteins[0].label_ == "Protein"
    assert [(s.id_, s.label_, s.text) for s in doc.spans["triggers"]][:3] == [
        ("T17", "Positive_regulation", "induction"),
        ("T18", "Positive_regulation", "induction"),
        ("T19", "Regulation", "regulate"),
    ]
    assert [s.text for s in doc.spans["anaphora"]] == ["T-box transcription factors", "three cardinal markers"]
    assert [e.text for e in doc.ents] == [s.text for s in proteins]
    assert all(e.label_ == "Protein" for e in doc.ents)


def test_binding_with_two_themes_and_speculation():
    docs = list(read_standoff(SAMPLE))
    assert [d.text[:30] for d in docs][0] == TIAB.read_text()[:30] and len(docs) == 3
    binding = [i for i in docs[2]._.kernel_interactions if i["interaction"] == "Binding"]
    assert [(i["roles"], i["speculated"]) for i in binding] == [
        ({"theme": "T24", "theme2": "T26"}, True),
        ({"theme": "T25", "theme2": "T26"}, True),
    ]
    assert all(i["speculated"] and not i["negated"] for i in docs[2]._.kernel_interactions)


def test_regulation_of_a_binding_keeps_both_themes_and_a_cause_event_gives_catalysts(tmp_path):
    a2 = A2 + ["T7\tPositive_regulation 0 3\tRAS", "E3\tPositive_regulation:T7 Theme:T4 Cause:E1"]
    write_doc(tmp_path, TEXT, A1, a2)
    (doc,) = read_standoff(tmp_path)
    assert flat(doc) == [
        ("E1", "Binding", "T6", {"theme": "T2", "theme2": "T3"}, False),
        ("E2", "Positive_regulation", "T5", {"catalyst": "T1", "theme": "T2", "theme2": "T3"}, False),
        ("E3", "Positive_regulation", "T7", {"catalyst": "T2", "theme": "T4"}, False),
        ("E3", "Positive_regulation", "T7", {"catalyst": "T3", "theme": "T4"}, False),
    ]


def test_equiv_repeats_interactions_over_every_combination_of_equivalent_proteins(tmp_path):
    write_doc(tmp_path, TEXT, A1 + ["*\tEquiv T2 T4"], A2 + ["*\tEquiv T1 T3", "M1\tNegation E2"])
    counts = Counter()
    (doc,) = read_standoff(tmp_path, counts=counts)
    e2 = [(i["roles"], i["equiv"], i["negated"]) for i in doc._.kernel_interactions if i["event"] == "E2"]
    assert e2 == [
        ({"catalyst": "T1", "theme": "T2", "theme2": "T3"}, False, True),
        ({"catalyst": "T1", "theme": "T4", "theme2": "T3"}, True, True),
        ({"catalyst": "T3", "theme": "T2", "theme2": "T1"}, True, True),
        ({"catalyst": "T3", "theme": "T4", "theme2": "T1"}, True, True),
    ]
    assert (
        counts["equiv"] == 2
        and counts["modifications"] == 1
        and counts["interactions"] == len(doc._.kernel_interactions)
    )


def test_offsets_inside_tokens_widen_to_whole_tokens_and_are_counted(tmp_path):
    text = "CD8+ cells express IL-2Ralpha."
    a1 = ["T1\tProtein 0 3\tCD8", "T2\tProtein 19 23\tIL-2"]
    write_doc(tmp_path, text, a1, ["T3\tGene_expression 11 18\texpress", "E1\tGene_expression:T3 Theme:T2"])
    nlp = spacy.blank("en")
    assert [t.text for t in nlp(text)] == ["CD8", "+", "cells", "express", "IL-2Ralpha", "."]
    counts = Counter()
    (doc,) = read_standoff(tmp_path, nlp, counts=counts)
    assert counts["misaligned"] == 1 and counts["documents"] == 1
    assert [s.text for s in doc.spans["proteins"]] == ["CD8", "IL-2Ralpha"]
    assert doc._.kernel_interactions[0]["spans"] == {"trigger": [3, 4], "theme": [4, 5]}
    (doc,) = read_standoff(SAMPLE / "PMC-2626671-00-TIAB.a1", counts=counts)  # "granzyme B" of "B."
    assert counts["misaligned"] == 2 and doc.spans["proteins"][12].text == "granzyme B."


@pytest.mark.parametrize(
    "bad, line, message",
    [
        ("T9\tProtein 3 1\tx", "doc.a1, line 5", "offsets 3 1 are not a span"),
        ("T9\tProtein 0 3\tRAF", "doc.a1, line 5", "text 'RAF' does not match"),
        ("T9\tProtein 0 3", "doc.a1, line 5", "a T line needs"),
        ("T1\tProtein 0 3\tRAS", "doc.a1, line 5", "id T1 is defined twice"),
        ("T9\tEntity 0 3\tRAS", "doc.a1, line 5", "a Entity mention in the .a1 file"),
        ("X1\tfoo", "doc.a1, line 5", "unknown annotation id 'X1'"),
        ("*\tEquiv T1", "doc.a1, line 5", "an equivalence line needs"),
    ],
)
def test_malformed_a1_line_names_file_and_line(tmp_path, bad, line, message):
    write_doc(tmp_path, TEXT, A1 + [bad], A2)
    with pytest.raises(CorpusFormatError, match=line) as raised:
        list(read_standoff(tmp_path, NLP))
    assert message in str(raised.value) and raised.value.line == 5


@pytest.mark.parametrize(
    "bad, message",
    [
        ("E3\tBinding:T6 Theme:T99", "event E3 refers to T99, not defined"),
        ("E3\tBinding:T1 Theme:T2", "T1 (a Protein, not a trigger)"),
        ("E3\tBinding T6", "an E line needs"),
        ("E3\tPositive_regulation:T5 Theme:E4\nE4\tPositive_regulation:T5 Theme:E3", "nested in itself"),
        ("M1\tHedge E1", "an M line needs"),
        ("M1\tNegation E9", "modification of E9, not a defined event"),
        ("R1\tCoreference Subject:T1 Object:T77", "coreference of T77, not mentions of the document"),
        ("*\tEquiv T1 T5", "equivalence of T5, not proteins of the document"),
    ],
)
def test_malformed_a2_line_names_file_and_line(tmp_path, bad, message):
    write_doc(tmp_path, TEXT, A1, A2 + [bad])
    with pytest.raises(CorpusFormatError, match=r"doc.a2, line 5") as raised:
        list(read_standoff(tmp_path, NLP))
    assert message in str(raised.value)


def test_skip_errors_drops_the_line_and_what_refers_to_it_and_keeps_the_rest(tmp_path):
    write_doc(tmp_path, TEXT, A1[:1] + ["T2\tProtein 29 32\tRAG"] + A1[2:], A2, name="a")
    write_doc(tmp_path, TIAB.read_text(), (SAMPLE / "PMC-2626671-00-TIAB.a1").read_text().splitlines(), [], name="b")
    errors = []
    with pytest.warns(CorpusWarning, match="skipped a standoff line") as warned:
        docs = list(read_standoff(tmp_path, skip_errors=True, errors=errors))
    assert [(e.path.split("/")[-1], e.line) for e in errors] == [("a.a1", 2), ("a.a2", 3), ("a.a2", 4)]
    assert "E1 refers to T2" in str(errors[1]) and "E2 refers to E1" in str(errors[2])
    assert len(warned) == 3 and len(docs) == 2
    assert [s.id_ for s in docs[0].spans["proteins"]] == ["T1", "T3", "T4"]
    assert [s.id_ for s in docs[0].spans["triggers"]] == ["T5", "T6"] and docs[0]._.kernel_interactions == []
    assert len(docs[1].spans["proteins"]) == 14


def test_files_missing_or_unreadable(tmp_path):
    path = write_doc(tmp_path, TEXT, A1)  # no .a2: no events
    (doc,) = read_standoff(path)
    assert len(doc.spans["proteins"]) == 4 and doc._.kernel_interactions == []
    (tmp_path / "doc.a1").unlink()
    with pytest.raises(CorpusFileError, match=r"doc.a1: missing .a1 file"):
        list(read_standoff(tmp_path))
    with pytest.raises(CorpusFileError, match=r"nothing.txt: cannot open"):
        list(read_standoff(tmp_path / "nothing.txt"))
    write_doc(tmp_path, TEXT, A1)
    (tmp_path / "doc.txt").write_bytes(b"RAS \xff")
    with pytest.raises(CorpusFileError, match=r"doc.txt: not UTF-8"):
        list(read_standoff(tmp_path))
    with pytest.raises(CorpusFileError, match=r"x.json: not a directory"):
        list(read_standoff(tmp_path / "x.json"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(CorpusFileError, match=r"empty: a directory without .txt documents"):
        list(read_standoff(tmp_path / "empty"))


def test_document_names_with_dots(tmp_path):
    path = write_doc(tmp_path, TEXT, A1, A2, name="PMC-2817507-01-1._Introduction")
    assert [len(d._.kernel_interactions) for d in read_standoff(tmp_path)] == [2]
    assert [len(d._.kernel_interactions) for d in read_standoff([path, path.with_suffix(".a2")])] == [2]


def test_registered_reader_gives_examples_with_gold_interactions():
    nlp = spacy.blank("en")
    read = spacy.registry.readers.get("spacy_convkernels.BioNLPStandoff.v1")(path=SAMPLE)
    examples = list(read(nlp))
    assert len(examples) == 3
    predicted, reference = examples[0].predicted, examples[0].reference
    assert flat(reference) == flat(next(read_standoff(TIAB)))
    # the predicted Doc has the text and the proteins (given in the shared task), not the events
    assert predicted.text == reference.text and predicted._.kernel_interactions is None
    proteins = [(s.start, s.end, s.label_, s.id_) for s in reference.spans["proteins"]]
    assert [(s.start, s.end, s.label_, s.id_) for s in predicted.spans["proteins"]] == proteins
    assert [(e.start, e.end) for e in predicted.ents] == [(e.start, e.end) for e in reference.ents]
    assert "triggers" not in predicted.spans
    text_only = spacy.registry.readers.get("spacy_convkernels.BioNLPStandoff.v1")(path=SAMPLE, give_entities="none")
    assert not next(iter(text_only(nlp))).predicted.ents


@pytest.mark.slow
def test_convert_writes_a_docbin_that_reloads_with_the_same_annotations(tmp_path, capsys):
    out = tmp_path / "ge.spacy"
    assert main(["convert", "--format", "standoff", str(SAMPLE), str(out)]) == 0
    assert "3 documents to" in capsys.readouterr().out
    nlp = spacy.blank("en")
    reloaded = list(DocBin().from_disk(out).get_docs(nlp.vocab))
    for doc, original in zip(reloaded, read_standoff(SAMPLE), strict=True):
        assert doc.text == original.text
        assert doc._.kernel_interactions == original._.kernel_interactions
        for name in ("proteins", "triggers", "entities", "anaphora"):
            got = [(s.start, s.end, s.label_, s.id_) for s in doc.spans[name]]
            assert got == [(s.start, s.end, s.label_, s.id_) for s in original.spans[name]]
        assert [(e.start, e.end, e.label_) for e in doc.ents] == [(e.start, e.end, e.label_) for e in original.ents]


def test_convert_stops_at_a_malformed_line_unless_skipping(tmp_path, capsys):
    write_doc(tmp_path, TEXT, A1, A2 + ["E3\tBinding:T6 Theme:T99"])
    out = tmp_path.with_name(tmp_path.name + "-out.spacy")  # outside the input folder
    assert main(["convert", "--format", "standoff", str(tmp_path), str(out)]) == 1
    assert "doc.a2, line 5: event E3 refers to T99" in capsys.readouterr().err
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        assert main(["convert", "--format", "standoff", "--skip-errors", str(tmp_path), str(out)]) == 0
    assert len(DocBin().from_disk(out)) == 1


@pytest.mark.shared
def test_the_shared_ge_devel_set_reads_without_error():
    devel = need_shared("data/bionlp-st-2013-ge/original-data/devel")
    counts, most = Counter(), 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvKernelsWarning)  # max_interactions_per_event never bites
        for doc in read_standoff(devel, counts=counts):
            most = max([most, *Counter(i["event"] for i in doc._.kernel_interactions).values()])
    assert counts["documents"] == len(list(devel.glob("*.txt"))) and counts["interactions"] > counts["events"] / 2
    assert most == 4  # per event (train: 5), far below the default cap of 1,000


def test_events_nested_too_deep_are_malformed_and_shared_arguments_are_resolved_once(tmp_path):
    chain = [f"E{k}\tPositive_regulation:T5 Theme:E{k + 1}" for k in range(1, 150)] + ["E150\tBinding:T6 Theme:T2"]
    write_doc(tmp_path, TEXT, A1, A2[:2] + chain)
    with pytest.raises(
        CorpusFormatError, match=r"doc.a2, line 3: events nested more than 100 deep \(E1 > ... > E101\)"
    ):
        list(read_standoff(tmp_path))
    diamond = [f"E{k}\tBinding:T6 Theme:E{k + 1} Theme2:E{k + 1}" for k in range(1, 60)] + ["E60\tBinding:T6 Theme:T2"]
    write_doc(tmp_path, TEXT, A1, A2[:2] + diamond)  # 2**60 paths through the events: each event resolved once
    (doc,) = read_standoff(tmp_path)
    assert [(i["event"], i["roles"]) for i in doc._.kernel_interactions] == [
        ("E60", {"theme": "T2"})
    ]  # no (T2, T2) pair


_PIECES = [
    "T1",
    "T2",
    "T5",
    "E1",
    "E2",
    "M1",
    "R1",
    "*",
    "\t",
    " ",
    ":",
    "Protein",
    "Binding",
    "Entity",
    "Anaphora",
    "Theme",
    "Cause",
    "Negation",
    "Equiv",
    "Coreference",
    "0",
    "3",
    "13",
    "99",
    "RAS",
    "\n",
    "\r",
    "\xa0",
    "\xff",
]


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    a1=st.lists(st.sampled_from(A1) | st.lists(st.sampled_from(_PIECES), max_size=8).map("".join), max_size=6),
    a2=st.lists(st.sampled_from(A2) | st.lists(st.sampled_from(_PIECES), max_size=10).map("".join), max_size=8),
)
def test_random_annotation_lines_give_corpus_format_errors_only(tmp_path, a1, a2):
    for name, lines in (("doc.a1", a1), ("doc.a2", a2)):
        (tmp_path / name).write_bytes("\n".join(lines).encode("utf-8").replace(b"\xc3\xbf", b"\xff"))
    (tmp_path / "doc.txt").write_text(TEXT, encoding="utf-8")
    try:
        list(read_standoff(tmp_path, NLP))
    except CorpusFormatError:
        pass
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (doc,) = read_standoff(tmp_path, NLP, skip_errors=True)
    assert all(len(i["roles"]) <= 3 for i in doc._.kernel_interactions)


def test_reader_in_a_training_config():
    config = Config().from_str(
        f'[corpora]\n\n[corpora.train]\n@readers = "spacy_convkernels.BioNLPStandoff.v1"\npath = "{SAMPLE}"\n'
    )
    read = spacy.registry.resolve(config)["corpora"]["train"]
    assert [len(e.reference._.kernel_interactions) for e in read(spacy.blank("en"))] == [
        15,
        20,
        11,
    ]  # 19 events + E16 again on Equiv T18; 11 events


def many_proteins(directory, n, a2_events):
    """A document of ``n`` proteins P0000 ... and the triggers T{n+1} (Binding), T{n+2} (Regulation)."""
    names = [f"P{i:04d}" for i in range(n)]
    a1 = [f"T{i + 1}\tProtein {6 * i} {6 * i + 5}\t{name}" for i, name in enumerate(names)]
    a2 = [f"T{n + 1}\tBinding {6 * n} {6 * n + 5}\tbinds", f"T{n + 2}\tRegulation {6 * n + 6} {6 * n + 15}\tregulates"]
    return write_doc(directory, " ".join(names) + " binds regulates", a1, a2 + a2_events)


@pytest.mark.slow
def test_an_event_that_expands_beyond_the_cap_is_cut_with_a_warning(tmp_path):
    # 30 equivalent proteins: one Binding of 2 themes has 30 * 29 variants
    path = many_proteins(
        tmp_path, 30, ["E1\tBinding:T31 Theme:T1 Theme2:T2", "*\tEquiv " + " ".join(f"T{i}" for i in range(1, 31))]
    )
    (doc,) = read_standoff(path, max_interactions_per_event=None)
    assert len(doc._.kernel_interactions) == 30 * 29
    with pytest.warns(
        ConvKernelsWarning, match=r"doc\.a2: event E1 expands to more than 100 interactions.*max_interactions_per_event"
    ):
        (doc,) = read_standoff(path, max_interactions_per_event=100)
    assert len(doc._.kernel_interactions) == 100
    assert (
        doc._.kernel_interactions[0]["roles"] == {"theme": "T1", "theme2": "T2"}
        and not doc._.kernel_interactions[0]["equiv"]
    )
    # a Binding of 30 themes (435 pairs) nested in a Regulation caused by its proteins (30 * 435)
    path = many_proteins(
        tmp_path,
        30,
        [
            "E1\tBinding:T31 " + " ".join(f"Theme{i if i > 1 else ''}:T{i}" for i in range(1, 31)),
            "E2\tRegulation:T32 Theme:E1 Cause:E1",
        ],
    )
    (doc,) = read_standoff(path, max_interactions_per_event=None, max_interactions_per_document=None)
    assert Counter(i["event"] for i in doc._.kernel_interactions) == {
        "E1": 435,
        "E2": 30 * 435,  # every catalyst with every pair
    }
    with pytest.warns(ConvKernelsWarning) as caught:
        (doc,) = read_standoff(path, max_interactions_per_event=400)
    assert Counter(i["event"] for i in doc._.kernel_interactions) == {"E1": 400, "E2": 400}
    assert sorted(str(w.message).split(": event ")[1][:2] for w in caught) == ["E1", "E2"]


def test_the_cap_leaves_real_data_alone_and_is_checked():
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvKernelsWarning)
        capped = [flat(doc) for doc in read_standoff(SAMPLE, max_interactions_per_event=5)]
    assert capped == [flat(doc) for doc in read_standoff(SAMPLE, max_interactions_per_event=None)]
    for bad in (0, 1.5, "5", True):
        with pytest.raises(InvalidParameterError, match="max_interactions_per_event"):
            list(read_standoff(SAMPLE, max_interactions_per_event=bad))


EXPANSION_SCRIPT = """
import json, sys, warnings
from pathlib import Path
sys.path.insert(0, sys.argv[2])
import spacy
from spacy_convkernels.corpora import read_standoff
from test_standoff import many_proteins

nlp = spacy.blank("en")
folder = Path(sys.argv[1])
equiv = many_proteins(folder / "equiv", 2000, ["E1\\tBinding:T2001 Theme:T1 Theme2:T2",
                                              "*\\tEquiv " + " ".join(f"T{i}" for i in range(1, 2001))])
binding = "E1\\tBinding:T101 " + " ".join(f"Theme{i if i > 1 else ''}:T{i}" for i in range(1, 101))
regulations = [f"E{k}\\tRegulation:T102 Theme:E1 Cause:E1" for k in (2, 3, 4)]
nested = many_proteins(folder / "nested", 100, [binding] + regulations)
list(read_standoff(folder / "nested" / "doc.txt", nlp, max_interactions_per_event=1))
limit_address_space(200)
found = {}
warnings.simplefilter("ignore")
for name, path in (("equiv", equiv), ("nested", nested)):
    (doc,) = read_standoff(path, nlp)
    found[name] = len(doc._.kernel_interactions)
print(json.dumps(found))
"""


@pytest.mark.slow  # a new process (spaCy imported), then seconds of memory-bound work
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc and an address-space limit")
def test_the_two_documents_of_issue_26_read_in_200_megabytes(tmp_path):
    """2,000 proteins in one Equiv group with one Binding (68 KB; unbounded: 4 million
    variants, 5.5 GB), and a Binding of 100 themes nested 3 times (3.7 KB; unbounded: 1.49
    million interactions, 4 GB), each under 200 MB of address space (their seconds:
    python -m bench.speed --filter ReaderBounds)."""
    for name in ("equiv", "nested"):
        (tmp_path / name).mkdir()
    done = run_limited(EXPANSION_SCRIPT, tmp_path, ROOT / "tests", timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout)
    assert found == {"equiv": 1000, "nested": 4000}


def articles_corpus(directory, articles: dict[str, int]):
    """Documents ARTICLE-00-S0 ... of each article, each with the example's text and annotations."""
    directory.mkdir(exist_ok=True)
    for article, sections in articles.items():
        for section in range(sections):
            write_doc(directory, TEXT, A1, A2, name=f"{article}-0{section}-S{section}")
    return directory


def test_split_articles_keeps_the_sections_of_an_article_together(tmp_path):
    articles_corpus(tmp_path, {"PMC-1": 3, "PMC-2": 1, "PMC-3": 2, "PMC-4": 4})
    kept, held = split_articles(tmp_path, share=0.2, seed=0)
    assert sorted(kept + held) == sorted(tmp_path.glob("*.txt")) and not set(kept) & set(held)
    held_articles = {article_of(f) for f in held}
    assert held_articles and not held_articles & {article_of(f) for f in kept}
    assert len(held) >= 0.2 * 10
    assert split_articles(tmp_path, share=0.2, seed=0) == (kept, held)  # fixed by the seed
    assert article_of(tmp_path / "PMC-2817507-01-1._Introduction.txt") == "PMC-2817507"


def test_the_reader_gives_the_train_and_dev_sides_of_the_split(tmp_path):
    articles_corpus(tmp_path, {"PMC-1": 3, "PMC-2": 1, "PMC-3": 2, "PMC-4": 4})
    kept, held = split_articles(tmp_path, share=0.3, seed=1)
    make = spacy.registry.readers.get("spacy_convkernels.BioNLPStandoff.v1")
    nlp = spacy.blank("en")
    sides = {
        split: len(list(make(path=tmp_path, split=split, dev_share=0.3, split_seed=1)(nlp)))
        for split in ("all", "train", "dev")
    }
    assert sides == {"all": 10, "train": len(kept), "dev": len(held)}


def test_convert_dev_articles_writes_the_held_out_articles(tmp_path, capsys):
    corpus = articles_corpus(tmp_path / "corpus", {"PMC-1": 3, "PMC-2": 1, "PMC-3": 2, "PMC-4": 4})
    command = ["convert", "--format", "standoff", str(corpus), str(tmp_path / "fit.spacy")]
    assert main(command + ["--dev", str(tmp_path / "held.spacy"), "--dev-articles", "0.2"]) == 0
    kept, held = split_articles(corpus, share=0.2)
    assert len(DocBin().from_disk(tmp_path / "fit.spacy")) == len(kept)
    assert len(DocBin().from_disk(tmp_path / "held.spacy")) == len(held)


def test_a_split_by_article_refuses_bad_input(tmp_path, capsys):
    corpus = articles_corpus(tmp_path / "corpus", {"PMC-1": 1, "PMC-2": 1})
    write_doc(corpus, TEXT, A1, A2, name="notes")
    with pytest.raises(CorpusFileError, match=r"notes\.txt: the document name holds no article id"):
        split_articles(corpus)
    (corpus / "notes.txt").unlink()
    with pytest.raises(InvalidParameterError, match=r"share must be a finite number in \(0, 1\), got 1\.5"):
        split_articles(corpus, share=1.5)
    single = articles_corpus(tmp_path / "single", {"PMC-1": 3})
    with pytest.raises(ConvKernelsError, match="3 document\\(s\\) of 1 article\\(s\\)"):
        split_articles(single)
    with pytest.raises(InvalidParameterError, match="split must be one of 'all', 'train', 'dev', got 'test'"):
        spacy.registry.readers.get("spacy_convkernels.BioNLPStandoff.v1")(path=corpus, split="test")
    write_doc(corpus, TEXT, A1, A2, name="notes")
    command = ["convert", "--format", "standoff", str(corpus), str(tmp_path / "o.spacy")]
    assert main(command + ["--dev", str(tmp_path / "d.spacy"), "--dev-articles", "0.2"]) == 1
    assert "notes.txt: the document name holds no article id" in capsys.readouterr().err
    assert main(command + ["--dev-articles", "0.2"]) == 1
    assert "--dev-articles splits standoff documents" in capsys.readouterr().err
    assert not (tmp_path / "o.spacy").exists()


@pytest.mark.slow
@pytest.mark.parametrize("order", ["outer first", "inner first"])
def test_the_nesting_cap_does_not_depend_on_the_order_of_the_lines(tmp_path, order):
    """Issue 36: a 2,000-deep chain passed when its inner events came first."""
    chain = [f"E{k}\tPositive_regulation:T5 Theme:E{k + 1}" for k in range(1, 2000)] + ["E2000\tBinding:T6 Theme:T2"]
    chain = chain if order == "outer first" else chain[::-1]
    write_doc(tmp_path, TEXT, A1, A2[:2] + chain)
    first, line = ("E1", 3) if order == "outer first" else ("E1900", 103)  # the first too deep in the file
    with pytest.raises(CorpusFormatError, match=rf"doc.a2, line {line}: events nested more than 100 deep \({first} > "):
        list(read_standoff(tmp_path))
    errors = []
    with pytest.warns(CorpusWarning):
        (doc,) = read_standoff(tmp_path, skip_errors=True, errors=errors)
    assert len(errors) == 1900 and {i["event"] for i in doc._.kernel_interactions} == {
        f"E{k}" for k in range(1901, 2001)
    }  # the 100 innermost levels, each with theme T2
    ring = [f"E{k}\tPositive_regulation:T5 Theme:E{k % 300 + 1}" for k in range(1, 301)]  # a cycle of 300
    write_doc(tmp_path, TEXT, A1, A2[:2] + ring[::-1] + ["E301\tPositive_regulation:T5 Theme:E7"])
    errors = []
    with pytest.warns(CorpusWarning, match="nested in itself"):
        (doc,) = read_standoff(tmp_path, skip_errors=True, errors=errors)
    assert len(errors) == 301 and doc._.kernel_interactions == []
    assert "event E301 nests E7, which is nested in itself" in str(errors[-1])


@pytest.mark.slow
def test_a_document_that_expands_beyond_its_cap_keeps_the_first_interactions_with_a_warning(tmp_path):
    # 10 Binding events over 30 equivalent proteins: 30 * 29 variants each
    events = [f"E{k}\tBinding:T31 Theme:T{k} Theme2:T{k + 1}" for k in range(1, 11)]
    path = many_proteins(tmp_path, 30, events + ["*\tEquiv " + " ".join(f"T{i}" for i in range(1, 31))])
    (every,) = read_standoff(path, max_interactions_per_event=None, max_interactions_per_document=None)
    assert len(every._.kernel_interactions) == 10 * 30 * 29
    with pytest.warns(
        ConvKernelsWarning, match=r"doc\.a2: the document expands to more than 2000 interactions.*per_document"
    ):
        (doc,) = read_standoff(path, max_interactions_per_event=None, max_interactions_per_document=2000)
    assert flat(doc) == flat(every)[:2000]
    for bad in (0, 1.5, "5", True):
        with pytest.raises(InvalidParameterError, match="max_interactions_per_document"):
            list(read_standoff(path, max_interactions_per_document=bad))


DOCUMENT_SCRIPT = """
import json, sys, warnings
from pathlib import Path
sys.path.insert(0, sys.argv[2])
import spacy
from spacy_convkernels.corpora import read_standoff
from test_standoff import many_proteins

nlp = spacy.blank("en")
folder = Path(sys.argv[1])
events = [f"E{k}\\tBinding:T2001 Theme:T{2 * k - 1} Theme2:T{2 * k}" for k in range(1, 1001)]
path = many_proteins(folder, 2000, events + ["*\\tEquiv " + " ".join(f"T{i}" for i in range(1, 2001))])
list(read_standoff(path, nlp, max_interactions_per_event=1, max_interactions_per_document=1))
limit_address_space(200)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    (doc,) = read_standoff(path, nlp)
print(json.dumps([len(doc._.kernel_interactions), sum("per_document" in str(w.message) for w in caught)]))
"""


@pytest.mark.slow  # a new process (spaCy imported), then seconds of memory-bound work
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc and an address-space limit")
def test_the_document_of_issue_36_reads_in_200_megabytes(tmp_path):
    """1,000 Binding events over a 2,000-protein ``Equiv`` group (122 KB; uncapped per
    document: 1 million interactions, 1.58 GB, 21 s), under 200 MB of address space."""
    done = run_limited(DOCUMENT_SCRIPT, tmp_path, ROOT / "tests", timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == [10_000, 1]


def test_a_byte_order_mark_starting_the_text_is_dropped_and_offsets_count_after_it(tmp_path):
    """Issue 36: a ``.txt`` with a mark was refused while the other readers drop it."""
    write_doc(tmp_path, "\ufeff" + TEXT, A1, A2)
    (doc,) = read_standoff(tmp_path)
    assert doc.text == TEXT and [s.text for s in doc.spans["proteins"]] == ["RAS", "RAF", "MEK1", "ERK"]
    write_doc(tmp_path, TEXT, A1, A2, name="plain")
    docs = list(read_standoff(tmp_path))
    assert flat(docs[0]) == flat(docs[1])
    shifted = ["T1\tProtein 1 4\tRAS"]  # offsets that counted the mark as a character
    write_doc(tmp_path, "\ufeff" + TEXT, shifted, name="doc")
    with pytest.raises(CorpusFormatError, match=r"doc\.a1, line 1: .*offsets count from after the \.txt's byte-order"):
        list(read_standoff(tmp_path / "doc.txt"))


@pytest.mark.slow
def test_a_text_over_max_length_names_the_txt_and_is_skipped_on_request(tmp_path, capsys):
    """Issue 36: spaCy's E088 without a file, ``skip_errors`` stopped there, ``convert`` a traceback."""
    nlp = spacy.blank("en")
    nlp.max_length = 40
    write_doc(tmp_path, TEXT, A1, A2, name="a")
    write_doc(tmp_path, "RAS.", ["T1\tProtein 0 3\tRAS"], name="b")
    with pytest.raises(
        CorpusFormatError, match=r"a\.txt, line 1: a text of more than the pipeline.s nlp\.max_length \(40\) characters"
    ):
        list(read_standoff(tmp_path, nlp))
    errors = []
    with pytest.warns(CorpusWarning, match="skipped a document"):
        assert [d.text for d in read_standoff(tmp_path, nlp, skip_errors=True, errors=errors)] == ["RAS."]
    assert [e.path.split("/")[-1] for e in errors] == ["a.txt"]
    nlp.max_length = len(TEXT)  # 49 characters, and a byte-order mark that is not one of them
    write_doc(tmp_path, "\ufeff" + TEXT, A1, A2, name="a")
    assert [d.text for d in read_standoff(tmp_path, nlp)] == [TEXT, "RAS."]
    write_doc(tmp_path, TEXT + " " + "x" * 1_000_000, A1, A2, name="a")
    out = tmp_path.with_name(tmp_path.name + "-ge.spacy")  # outside the input folder
    assert main(["convert", "--format", "standoff", str(tmp_path), str(out)]) == 1
    assert (
        "a.txt, line 1: a text of more than the pipeline's nlp.max_length (1,000,000) characters"
        in capsys.readouterr().err
        and not out.exists()
    )
    with pytest.warns(CorpusWarning, match="nlp.max_length"):
        assert main(["convert", "--format", "standoff", str(tmp_path), str(out), "--skip-errors"]) == 0
    assert len(DocBin().from_disk(out)) == 1
