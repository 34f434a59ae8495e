"""Prodigy relations JSONL reader: Docs with entities and Doc._.kernel_rel, errors, registry, convert."""

import json
import warnings
from collections import Counter

import pytest
import spacy
from data_paths import CORPORA
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spacy.tokens import DocBin

from spacy_convkernels.cli import main
from spacy_convkernels.corpora import read_relations_jsonl
from spacy_convkernels.errors import (
    CorpusFileError,
    CorpusFormatError,
    CorpusWarning,
    InvalidParameterError,
    SettingDeprecationWarning,
)

SAMPLE = CORPORA / "relations-sample" / "relations.jsonl"
GOOD = {
    "text": "RAS activates RAF.",
    "spans": [{"start": 0, "end": 3, "label": "GENE"}, {"start": 14, "end": 17, "label": "GENE", "token_start": 2}],
    "relations": [{"head_span": {"start": 0, "end": 3}, "child_span": {"start": 14, "end": 17}, "label": "ACTIVATES"}],
}


def write(path, *records):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")
    return path


def test_sample_gives_entities_and_gold_relations_by_token_starts():
    counts = Counter()
    docs = list(read_relations_jsonl(SAMPLE, counts=counts))
    assert len(docs) == 5  # the rejected record is not gold
    assert [(e.text, e.label_) for e in docs[0].ents] == [("RAS", "GENE"), ("RAF", "GENE"), ("MEK1", "GENE")]
    assert docs[0]._.kernel_rel == {(0, 2): {"ACTIVATES": 1.0}, (2, 6): {"PHOSPHORYLATES": 1.0}}
    assert docs[2]._.kernel_rel == {(5, 0): {"PHOSPHORYLATES": 1.0}}  # head ATM after child p53
    assert docs[3]._.kernel_rel == {} and [e.text for e in docs[3].ents] == ["CD8"]
    assert counts == Counter(documents=5, spans=12, relations=6, misaligned=1, rejected=1)
    assert docs[1].ents[-1].text == "NF-kB."  # "NF-kB" ends inside the token "NF-kB."


def test_readers_given_no_pipeline_share_one_blank_english_pipeline(tmp_path):
    """Building a blank English tokenizer takes longer than reading a small corpus."""
    from spacy_convkernels.corpora import read_standoff

    first = next(read_relations_jsonl(SAMPLE))
    again = next(read_relations_jsonl(write(tmp_path / "one.jsonl", GOOD)))
    standoff = next(read_standoff(CORPORA / "bionlp-st-2013-ge-sample"))
    assert first.vocab is again.vocab is standoff.vocab and first.lang_ == "en"
    mine = spacy.blank("en")
    assert next(read_relations_jsonl(SAMPLE, mine)).vocab is mine.vocab


def test_two_labels_of_one_pair_and_a_blank_line(tmp_path):
    second = dict(GOOD, relations=GOOD["relations"] + [dict(GOOD["relations"][0], label="BINDS")])
    (doc,) = read_relations_jsonl(write(tmp_path / "r.jsonl", "", second))
    assert doc._.kernel_rel == {(0, 2): {"ACTIVATES": 1.0, "BINDS": 1.0}}


@pytest.mark.parametrize(
    "bad, message",
    [
        ("{not json", "not JSON"),
        ("[1, 2]", "a JSON list, not an object"),
        ('{"text": "a \\ud800 b"}', "a lone surrogate escape ('\\ud800')"),
        (dict(GOOD, text=3), "no 'text' string"),
        (dict(GOOD, spans={}), "'spans' is a dict, not a list"),
        (dict(GOOD, spans=[{"start": 0, "end": 30, "label": "G"}], relations=[]), "span 0-30 is not a non-blank span"),
        (dict(GOOD, spans=[{"start": 0, "end": 3}], relations=[]), "span 0-3 has no 'label' string"),
        (dict(GOOD, spans=[{"start": 0.0, "end": 3, "label": "G"}], relations=[]), "no integer 'start' and 'end'"),
        (dict(GOOD, spans=GOOD["spans"] + [{"start": 1, "end": 5, "label": "G"}]), "spans overlap at character 1"),
        (
            dict(
                GOOD,
                relations=[{"head_span": {"start": 0, "end": 3}, "child_span": {"start": 4, "end": 7}, "label": "A"}],
            ),
            "relation child_span 4-7 is not one of the spans",
        ),
        (dict(GOOD, relations=[{"head_span": {"start": 0, "end": 3}, "label": "A"}]), "relation child_span None"),
        (dict(GOOD, relations=[{"head_span": {}, "child_span": {}}]), "is not an object with a 'label' string"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path, bad, message):
    path = write(tmp_path / "r.jsonl", GOOD, bad, GOOD)
    with pytest.raises(CorpusFormatError, match=r"r.jsonl, line 2: ") as raised:
        list(read_relations_jsonl(path, _NLP))  # one pipeline for every case (a new one is 0.25 s)
    assert message in str(raised.value) and raised.value.line == 2


def test_spans_widened_into_one_token_are_malformed(tmp_path):
    record = {
        "text": "IL-2Ralpha",
        "spans": [{"start": 0, "end": 4, "label": "G"}, {"start": 5, "end": 10, "label": "G"}],
    }
    with pytest.raises(CorpusFormatError, match="line 1: spans widened to whole tokens overlap"):
        list(read_relations_jsonl(write(tmp_path / "r.jsonl", record)))


def test_skip_errors_skips_warns_and_collects(tmp_path):
    path = write(tmp_path / "r.jsonl", GOOD, "{", dict(GOOD, text=None), GOOD)
    path.write_bytes(path.read_bytes() + b'{"text": "\xff"}\n' + json.dumps(GOOD).encode() + b"\n")
    errors = []
    with pytest.warns(CorpusWarning, match="skipped a record"):
        docs = list(read_relations_jsonl(path, skip_errors=True, errors=errors))
    assert len(docs) == 3 and [e.line for e in errors] == [2, 3, 5]
    assert "not UTF-8" in str(errors[2])


def test_unreadable_file(tmp_path):
    with pytest.raises(CorpusFileError, match="absent.jsonl: cannot open"):
        list(read_relations_jsonl(tmp_path / "absent.jsonl"))


@pytest.mark.slow
def test_registered_reader():
    read = spacy.registry.readers.get("spacy_convkernels.RelationsJsonl.v1")(path=SAMPLE)
    examples = list(read(spacy.blank("en")))
    assert len(examples) == 5 and examples[0].reference._.kernel_rel == {
        (0, 2): {"ACTIVATES": 1.0},
        (2, 6): {"PHOSPHORYLATES": 1.0},
    }
    # the predicted Doc has the text and the given entities, not the relations
    predicted, reference = examples[0].predicted, examples[0].reference
    assert predicted.text == reference.text and predicted._.kernel_rel == {}
    assert [(e.start, e.end, e.label_) for e in predicted.ents] == [(e.start, e.end, e.label_) for e in reference.ents]
    text_only = spacy.registry.readers.get("spacy_convkernels.RelationsJsonl.v1")(path=SAMPLE, give_entities="none")
    assert not next(iter(text_only(spacy.blank("en")))).predicted.ents
    # the entities as the span group "entities", so that a ner can learn doc.ents
    read = spacy.registry.readers.get("spacy_convkernels.RelationsJsonl.v1")
    for_ner = read(path=SAMPLE, give_entities="span_group")
    predicted, reference = next(iter(for_ner(spacy.blank("en")))).predicted, examples[0].reference
    assert not predicted.ents and [(e.start, e.end, e.label_) for e in predicted.spans["entities"]] == [
        (e.start, e.end, e.label_) for e in reference.ents
    ]


@pytest.mark.slow
def test_convert_writes_a_docbin_that_reloads_with_the_same_annotations(tmp_path, capsys):
    train, dev = tmp_path / "train.spacy", tmp_path / "dev.spacy"
    args = ["convert", "--format", "relations-jsonl", str(SAMPLE), str(train), "--dev", str(dev), "--dev-every", "2"]
    assert main(args) == 0
    assert "3 documents to" in capsys.readouterr().out
    vocab = spacy.blank("en").vocab
    reloaded = list(DocBin().from_disk(train).get_docs(vocab)) + list(DocBin().from_disk(dev).get_docs(vocab))
    originals = list(read_relations_jsonl(SAMPLE))
    originals = originals[0::2] + originals[1::2]
    assert [d.text for d in reloaded] == [d.text for d in originals]
    for doc, original in zip(reloaded, originals):
        assert doc._.kernel_rel == original._.kernel_rel
        assert [(e.start, e.end, e.label_) for e in doc.ents] == [(e.start, e.end, e.label_) for e in original.ents]


def test_convert_stops_at_a_malformed_line_unless_skipping(tmp_path, capsys):
    path = write(tmp_path / "r.jsonl", GOOD, "[]")
    assert main(["convert", "--format", "relations-jsonl", str(path), str(tmp_path / "o.spacy")]) == 1
    assert "r.jsonl, line 2: a JSON list" in capsys.readouterr().err
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        args = ["convert", "--format", "relations-jsonl", "--skip-errors", str(path), str(tmp_path / "o.spacy")]
        assert main(args) == 0
    assert len(DocBin().from_disk(tmp_path / "o.spacy")) == 1


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 40)
    | st.floats(allow_nan=True)
    | st.text(max_size=12)
    | st.text(st.sampled_from("ab -\n\u00e9\ud800"), max_size=6),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=12,
)
_SPAN = st.fixed_dictionaries(
    {"start": st.integers(-2, 25), "end": st.integers(-2, 25)}, optional={"label": st.text(max_size=4) | _JSON}
)
_RECORD = st.fixed_dictionaries(
    {},
    optional={
        "text": st.text(max_size=25) | st.text(st.sampled_from("ab -\u00e9\ud800"), max_size=8) | _JSON,
        "spans": st.lists(_SPAN | _JSON, max_size=4) | _JSON,
        "relations": st.lists(
            st.fixed_dictionaries(
                {}, optional={"head_span": _SPAN | _JSON, "child_span": _SPAN | _JSON, "label": _JSON}
            ),
            max_size=3,
        )
        | _JSON,
        "answer": st.sampled_from(["accept", "reject", 1]),
    },
)
_NLP = spacy.blank("en")
_LINE = (
    _RECORD.map(json.dumps)
    | st.text(st.characters(exclude_categories=["Cs"]), max_size=40)
    | _JSON.map(json.dumps)
    | st.just("[" * 5000)
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(_LINE, min_size=1, max_size=4))
def test_random_lines_give_docs_or_corpus_format_errors_only(tmp_path, lines):
    path = tmp_path / "fuzz.jsonl"
    path.write_text("\n".join(line.replace("\n", " ").replace("\r", " ") for line in lines) + "\n", encoding="utf-8")
    try:
        for doc in read_relations_jsonl(path, _NLP):
            assert isinstance(doc._.kernel_rel, dict)
    except CorpusFormatError:
        pass
    errors = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        docs = list(read_relations_jsonl(path, _NLP, skip_errors=True, errors=errors))
    assert len(docs) + len(errors) <= len(lines)


@pytest.mark.slow
def test_a_text_over_max_length_names_file_and_line_and_is_skipped_on_request(tmp_path, capsys):
    """Issue 36: spaCy's E088 without file or line, ``skip_errors`` stopped there, ``convert`` a traceback."""
    long = dict(GOOD, text="RAS activates RAF." + " and so on" * 100_000)  # 1,000,018 characters
    path = write(tmp_path / "long.jsonl", GOOD, long, GOOD)
    with pytest.raises(CorpusFormatError, match=r"long\.jsonl, line 2: a text of 1,000,018 characters, more than"):
        list(read_relations_jsonl(path))
    errors = []
    with pytest.warns(CorpusWarning, match="nlp.max_length"):
        assert len(list(read_relations_jsonl(path, skip_errors=True, errors=errors))) == 2
    assert [e.line for e in errors] == [2]
    nlp = spacy.blank("en")
    nlp.max_length = 2_000_000
    assert len(list(read_relations_jsonl(path, nlp))) == 3
    out = tmp_path / "rel.spacy"
    assert main(["convert", "--format", "relations-jsonl", str(path), str(out)]) == 1
    assert "long.jsonl, line 2: a text of 1,000,018 characters" in capsys.readouterr().err and not out.exists()
    with pytest.warns(CorpusWarning, match="nlp.max_length"):
        assert main(["convert", "--format", "relations-jsonl", str(path), str(out), "--skip-errors"]) == 0
    assert len(DocBin().from_disk(out)) == 2


def test_a_line_over_the_length_cap_is_a_malformed_record(tmp_path, monkeypatch):
    from spacy_convkernels.utils import text_lines

    monkeypatch.setattr(text_lines, "MAX_LINE_BYTES", 400)
    path = write(tmp_path / "r.jsonl", GOOD, dict(GOOD, text="RAS activates RAF." + " x" * 300), GOOD)
    with pytest.warns(CorpusWarning, match="line 2: a line longer than 400 bytes"):
        assert len(list(read_relations_jsonl(path, skip_errors=True))) == 2


@pytest.mark.parametrize(
    "earlier, meant",
    [
        ({"given_entities": False}, "none"),
        ({"given_ents": False}, "span_group"),
        ({"given_entities": True, "given_ents": False}, "span_group"),
        ({"given_entities": True, "given_ents": True}, "doc.ents"),
    ],
)
def test_the_earlier_entity_settings_read_as_give_entities_with_a_warning(earlier, meant):
    """given_entities and given_ents, whose names differ by four letters, are one setting
    now; configs written with them still train, and are told the new name."""
    read = spacy.registry.readers.get("spacy_convkernels.RelationsJsonl.v1")
    with pytest.warns(SettingDeprecationWarning, match=f'earlier spelling of give_entities = "{meant}"'):
        earlier_reader = read(path=SAMPLE, **earlier)
    nlp = spacy.blank("en")
    got, expected = next(iter(earlier_reader(nlp))), next(iter(read(path=SAMPLE, give_entities=meant)(nlp)))
    assert [e.text for e in got.predicted.ents] == [e.text for e in expected.predicted.ents]
    assert sorted(got.predicted.spans) == sorted(expected.predicted.spans)


def test_a_give_entities_setting_out_of_its_choices_or_against_an_earlier_one_is_refused():
    read = spacy.registry.readers.get("spacy_convkernels.RelationsJsonl.v1")
    with pytest.raises(InvalidParameterError, match='give_entities must be one of "doc.ents", "span_group", "none"'):
        read(path=SAMPLE, give_entities="ents")
    with pytest.raises(
        InvalidParameterError, match='give_entities = "none" and the earlier given_ents = false disagree'
    ):
        read(path=SAMPLE, give_entities="none", given_ents=False)
