"""The protein gazetteer and trigger lexicon (corpora/lexicon.py) and ``python -m spacy_convkernels lexicon``."""

import json
import shutil
import textwrap

import pytest
import spacy
from data_paths import CORPORA, need_shared
from spacy.tokens import Doc, Span
from spacy.util import load_config_from_str, load_model_from_config

from spacy_convkernels.cli import main
from spacy_convkernels.corpora import lexicon as lexicon_module
from spacy_convkernels.corpora import read_relations_jsonl, read_standoff
from spacy_convkernels.corpora.lexicon import (
    KEYS,
    RULERS,
    add_lexicon,
    build_lexicon,
    create_lexicon_patterns,
    entity_gazetteer,
    read_lexicon,
    read_patterns,
    shape_patterns,
    write_lexicon,
)
from spacy_convkernels.corpora.standoff import split_articles
from spacy_convkernels.errors import CorpusFileError, CorpusFormatError, CorpusWarning, InvalidParameterError

SAMPLE = CORPORA / "bionlp-st-2013-ge-sample"
BIND = [{"label": "Binding", "pattern": [{"LOWER": "bind"}]}]
SENTENCE = "RAS activates RAF, which phosphorylates MEK1."
TOKENIZER = spacy.blank("en").tokenizer  # the lexicon command's without --model


@pytest.fixture(scope="module")
def sample_docs():
    return list(read_standoff(SAMPLE))


def pipeline(lexicon, base=None):
    nlp = base or spacy.blank("en")
    add_lexicon(nlp, lexicon)
    return nlp


def found(doc, key):
    return [(span.text, span.label_) for span in doc.spans[key]]


def spans(doc, key):
    return {(span.start, span.end, span.label_) for span in doc.spans[key]}


def test_patterns_from_the_sample_find_its_mentions_in_its_own_text(sample_docs):
    nlp = pipeline(build_lexicon(sample_docs, min_precision=0.0, protein_min_precision=0.0, shapes=False))
    for gold in sample_docs:
        predicted = nlp(gold.text)
        for key in KEYS:
            assert spans(gold, key) <= spans(predicted, key), (gold.text[:30], key)
        assert [(e.start, e.end, e.label_) for e in predicted.ents] == sorted(spans(predicted, "proteins"))
    counted = {key: sum(len(gold.spans[key]) for gold in sample_docs) for key in KEYS}
    assert counted == {"proteins": 72, "triggers": 21}


def test_pattern_format_and_labels(sample_docs):
    lexicon = build_lexicon(sample_docs, shapes=False)
    assert {"label": "Gene_expression", "pattern": [{"LOWER": "expression"}]} in lexicon["triggers"]
    assert {"label": "Transcription", "pattern": [{"LOWER": "mrna"}, {"LOWER": "expression"}]} in lexicon["triggers"]
    assert {"label": "Protein", "pattern": [{"LOWER": "runx3"}]} in lexicon["proteins"]
    assert {p["label"] for p in lexicon["proteins"]} == {"Protein"}
    assert {p["label"] for p in lexicon["triggers"]} == {
        "Binding",
        "Gene_expression",
        "Negative_regulation",
        "Positive_regulation",
        "Regulation",
        "Transcription",
    }


def made_doc(words, annotated):
    """A Doc of ``words`` with single-token triggers at the given (index, label) pairs."""
    doc = Doc(spacy.blank("en").vocab, words=words)
    doc.spans["triggers"] = [Span(doc, i, i + 1, label=label) for i, label in annotated]
    doc.spans["proteins"] = []
    return doc


def test_min_precision_keeps_frequent_triggers_and_drops_common_words():
    words = "the expression of the gene and the expression and the expression of the protein".split()
    # "expression": 2 of its 3 occurrences are triggers; "the": 1 of 5
    doc = made_doc(words, [(1, "Gene_expression"), (7, "Gene_expression"), (0, "Gene_expression")])
    kept = {p["pattern"][0]["LOWER"] for p in build_lexicon([doc], min_precision=0.5, shapes=False)["triggers"]}
    assert kept == {"expression"}
    kept = {p["pattern"][0]["LOWER"] for p in build_lexicon([doc], min_precision=0.2, shapes=False)["triggers"]}
    assert kept == {"expression", "the"}
    kept = {p["pattern"][0]["LOWER"] for p in build_lexicon([doc], min_count=2, min_precision=0.0)["triggers"]}
    assert kept == {"expression"}


@pytest.mark.slow
def test_a_trigger_with_several_types_gives_a_pattern_per_type_passing_alone():
    words = "expression expression expression expression binding".split()
    doc = made_doc(
        words, [(0, "Gene_expression"), (1, "Gene_expression"), (2, "Gene_expression"), (3, "Transcription")]
    )
    labels = {p["label"] for p in build_lexicon([doc], min_precision=0.2, shapes=False)["triggers"]}
    assert labels == {"Gene_expression", "Transcription"}
    labels = {p["label"] for p in build_lexicon([doc], min_precision=0.5, shapes=False)["triggers"]}
    assert labels == {"Gene_expression"}
    nlp = pipeline(build_lexicon([doc], min_precision=0.2))
    assert sorted(found(nlp("Its expression rose."), "triggers")) == [
        ("expression", "Gene_expression"),
        ("expression", "Transcription"),
    ]


@pytest.mark.slow
def test_protein_min_precision_filters_the_gazetteer_and_the_shapes(sample_docs):
    # in the sample, "GFP" is a protein in 6 of its 9 occurrences (once inside "IRES-GFP")
    def proteins(threshold):
        lexicon = build_lexicon(sample_docs, protein_min_precision=threshold)
        return {tuple(t.get("LOWER") for t in p["pattern"]) for p in lexicon["proteins"]}

    assert ("gfp",) in proteins(0.5) and ("gfp",) not in proteins(0.8)
    nlp = pipeline(build_lexicon(sample_docs))
    assert found(nlp("The mRNA and DNA of MEK1 and p53."), "proteins") == [("MEK1", "Protein"), ("p53", "Protein")]
    nlp = pipeline(build_lexicon(sample_docs, protein_min_precision=0.0))
    assert ("mRNA", "Protein") in found(nlp("The mRNA of MEK1."), "proteins")


def test_shape_patterns_find_unseen_gene_names(sample_docs):
    nlp = pipeline(build_lexicon(sample_docs))
    doc = nlp("NF-kappaB, TGF-beta and c-Jun bind IL-2 in CD4 cells, not The or cells or 2B.")
    assert [span.text for span in doc.spans["proteins"]] == ["NF-kappaB", "TGF-beta", "c-Jun", "IL-2", "CD4"]
    nlp = pipeline(build_lexicon(sample_docs, shapes=False))
    assert found(nlp("NF-kappaB, TGF-beta and c-Jun bind IL-2."), "proteins") == [("IL-2", "Protein")]


@pytest.mark.slow
def test_shape_exclusions_are_learned_per_pattern():
    nlp = spacy.blank("en")
    doc = nlp("NF-kappaB binds p50. NF-kappaB binds TGF-beta. DNA binds MEK1.")
    # annotated: p50, TGF-beta, MEK1; NF-kappaB (a complex in GE) and DNA are not proteins
    starts = {name: doc.text.find(name) for name in ("p50", "TGF-beta", "MEK1")}
    doc.spans["proteins"] = [doc.char_span(i, i + len(name), label="Protein") for name, i in starts.items()]
    patterns = shape_patterns([doc])
    assert [p["pattern"][0]["TEXT"].get("NOT_IN") for p in patterns] == [["DNA", "kappaB"], ["NF"], None]
    nlp = pipeline({"proteins": patterns, "triggers": BIND})
    text = "NF-kappaB, TGF-beta and DNA bind ERK2."
    assert found(nlp(text), "proteins") == [("TGF-beta", "Protein"), ("ERK2", "Protein")]
    nlp = pipeline({"proteins": shape_patterns(), "triggers": BIND})
    assert [name for name, _ in found(nlp(text), "proteins")] == ["NF-kappaB", "TGF-beta", "DNA", "ERK2"]


def test_raw_sentence_gets_proteins_and_the_triggers_the_sample_has(sample_docs):
    nlp = pipeline(build_lexicon(sample_docs))
    doc = nlp(SENTENCE)
    assert found(doc, "proteins") == [("RAS", "Protein"), ("RAF", "Protein"), ("MEK1", "Protein")]
    assert [(e.text, e.label_) for e in doc.ents] == found(doc, "proteins")
    # the sample has no "activates" nor "phosphorylates" trigger (the full train set has: see below)
    assert found(doc, "triggers") == []
    doc = nlp("RAS regulates the expression of RAF.")
    assert found(doc, "triggers") == [("regulates", "Regulation"), ("expression", "Gene_expression")]
    assert found(pipeline(build_lexicon(sample_docs, shapes=False))(SENTENCE), "proteins") == []


@pytest.mark.slow
def test_rulers_save_and_load_with_the_pipeline(sample_docs, tmp_path):
    nlp = pipeline(build_lexicon(sample_docs))
    nlp.to_disk(tmp_path / "pipeline")
    loaded = spacy.load(tmp_path / "pipeline")
    assert loaded.pipe_names == [RULERS["proteins"], RULERS["triggers"]]
    for text in (SENTENCE, "RAS regulates the expression of RAF."):
        before, after = nlp(text), loaded(text)
        assert [spans(after, key) for key in KEYS] == [spans(before, key) for key in KEYS]
        assert spans(after, "proteins")


@pytest.mark.slow
def test_the_documented_config_blocks_build_the_rulers(sample_docs, tmp_path):
    write_lexicon(build_lexicon(sample_docs, tokenizer=TOKENIZER), tmp_path / "lexicon")
    documented = textwrap.dedent(
        lexicon_module.__doc__[lexicon_module.__doc__.index("    [components.protein_ruler]") :]
    )
    documented = documented.replace('path = "lexicon"', f'path = "{tmp_path / "lexicon"}"')
    head = '[nlp]\nlang = "en"\npipeline = ["protein_ruler", "trigger_ruler"]\n\n[components]\n\n'
    head_init = "[initialize]\n\n[initialize.components]\n\n"
    components, initialize = documented.split("[initialize.components.protein_ruler]")
    config = head + components + head_init + "[initialize.components.protein_ruler]" + initialize
    nlp = load_model_from_config(load_config_from_str(config), auto_fill=True)
    nlp.initialize()
    expected = pipeline(build_lexicon(sample_docs))
    for text in (SENTENCE, "RAS regulates the expression of RAF."):
        assert [spans(nlp(text), key) for key in KEYS] == [spans(expected(text), key) for key in KEYS]
    doc = nlp(SENTENCE)
    assert [(e.text, e.label_) for e in doc.ents] == [("RAS", "Protein"), ("RAF", "Protein"), ("MEK1", "Protein")]
    with pytest.raises(InvalidParameterError, match="group must be one of 'proteins', 'triggers', got"):
        create_lexicon_patterns(tmp_path / "lexicon", "entities")


@pytest.mark.shared
def test_full_train_lexicon_in_the_md_pipeline(tmp_path):
    train = need_shared("data/bionlp-st-2013-ge/original-data/train")
    model = need_shared("models/en_core_web_md-3.8.0")
    assert main(["lexicon", str(train), str(tmp_path / "lexicon")]) == 0
    nlp = pipeline(tmp_path / "lexicon", base=spacy.load(model))
    nlp.to_disk(tmp_path / "pipeline")
    doc = spacy.load(tmp_path / "pipeline")(SENTENCE)
    assert found(doc, "proteins") == [("RAS", "Protein"), ("RAF", "Protein"), ("MEK1", "Protein")]
    assert [(e.text, e.label_) for e in doc.ents] == found(doc, "proteins")  # the ner's entities replaced
    assert found(doc, "triggers") == [("activates", "Positive_regulation"), ("phosphorylates", "Phosphorylation")]
    assert doc.has_annotation("DEP")


@pytest.mark.slow
def test_command_writes_the_pattern_files(sample_docs, tmp_path, capsys):
    out = tmp_path / "lexicon"
    assert main(["lexicon", str(SAMPLE), str(out), "--min-count", "2"]) == 0
    written = {key: [json.loads(line) for line in (out / f"{key}.jsonl").read_text().splitlines()] for key in KEYS}
    assert written == build_lexicon(sample_docs, min_count=2, tokenizer=TOKENIZER)
    assert any(isinstance(p["pattern"], str) for p in written["triggers"])
    assert read_lexicon(out) == written
    message = capsys.readouterr().out.strip()
    assert message == (
        f"3 documents (72 proteins, 21 triggers): {len(written['proteins'])} patterns to {out / 'proteins.jsonl'}, "
        f"{len(written['triggers'])} patterns to {out / 'triggers.jsonl'}"
    )
    assert main(["lexicon", str(SAMPLE), str(out), "--no-shapes", "--min-precision", "0.5"]) == 0
    assert read_lexicon(out) == build_lexicon(sample_docs, min_precision=0.5, shapes=False, tokenizer=TOKENIZER)


@pytest.mark.slow
def test_dev_articles_leave_the_readers_dev_split_out_of_the_lexicon(tmp_path, capsys):
    two_articles = tmp_path / "train"
    two_articles.mkdir()
    for path in SAMPLE.glob("PMC-*"):  # the abstract becomes a second article beside the captions
        shutil.copy(path, two_articles / path.name.replace("PMC-2626671-00-", "PMC-1000000-00-"))
    out = tmp_path / "lexicon"
    for seed in (0, 1):
        assert main(["lexicon", str(two_articles), "-o", str(out), "--dev-articles", "0.3", "--seed", str(seed)]) == 0
        kept, held = split_articles(two_articles, share=0.3, seed=seed)
        assert kept and held
        assert read_lexicon(out) == build_lexicon(read_standoff(kept), tokenizer=TOKENIZER)
        assert capsys.readouterr().out.startswith(f"{len(kept)} documents")
    assert read_lexicon(out) != build_lexicon(read_standoff(two_articles), tokenizer=TOKENIZER)
    assert main(["lexicon", str(SAMPLE), "-o", str(out), "--dev-articles", "0.2"]) == 1
    assert "1 article(s); a split by article needs 2 or more" in capsys.readouterr().err


@pytest.mark.slow
def test_command_fails_cleanly_on_bad_input(tmp_path, capsys):
    unannotated = tmp_path / "test-set"
    unannotated.mkdir()
    for path in SAMPLE.glob("*.a1"):
        shutil.copy(path, unannotated)
        shutil.copy(path.with_suffix(".txt"), unannotated)
    cases = {
        (str(tmp_path / "missing"),): "no such directory",
        (str(unannotated),): "without .a2 files",
        (str(SAMPLE), "--min-precision", "2"): "min_precision must be a finite number in [0, 1], got 2.0",
        (str(SAMPLE), "--min-count", "0"): "min_count must be an integer in [1, inf], got 0",
    }
    malformed = tmp_path / "malformed"
    shutil.copytree(SAMPLE, malformed)
    with open(malformed / "PMC-2626671-00-TIAB.a2", "a", encoding="utf-8") as out:
        out.write("E99\tBinding:T999\n")
    lines = len((malformed / "PMC-2626671-00-TIAB.a2").read_text(encoding="utf-8").splitlines())
    cases[(str(malformed),)] = f"PMC-2626671-00-TIAB.a2, line {lines}"
    for arguments, message in cases.items():
        assert main(["lexicon", *arguments, str(tmp_path / "out")]) == 1, arguments
        err = capsys.readouterr().err.strip()
        assert err.startswith("spacy-convkernels lexicon: error:") and message in err and "\n" not in err, arguments
    with pytest.warns(CorpusWarning, match=f"line {lines}"):
        assert main(["lexicon", str(malformed), str(tmp_path / "out"), "--skip-errors"]) == 0


def test_reading_a_bad_lexicon_names_file_and_line(sample_docs, tmp_path):
    write_lexicon(build_lexicon(sample_docs), tmp_path)
    with open(tmp_path / "triggers.jsonl", "a", encoding="utf-8") as out:
        out.write('{"label": "Binding", "pattern": "binds"}\n')
    assert read_lexicon(tmp_path)["triggers"][-1] == {"label": "Binding", "pattern": "binds"}
    for bad in ('" "', "[]", "3", '["binds"]'):
        with open(tmp_path / "triggers.jsonl", "a", encoding="utf-8") as out:
            out.write(f'{{"label": "Binding", "pattern": {bad}}}\n')
        lines = len((tmp_path / "triggers.jsonl").read_text().splitlines())
        with pytest.raises(CorpusFormatError, match=rf"triggers\.jsonl, line {lines}: not a pattern"):
            read_lexicon(tmp_path)
        (tmp_path / "triggers.jsonl").write_text(
            "".join((tmp_path / "triggers.jsonl").read_text().splitlines(keepends=True)[:-1])
        )
    (tmp_path / "triggers.jsonl").write_text("{not json\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=r"triggers\.jsonl, line 1: not JSON"):
        add_lexicon(spacy.blank("en"), tmp_path)
    (tmp_path / "proteins.jsonl").unlink()
    with pytest.raises(CorpusFileError, match=r"proteins\.jsonl: no such lexicon file"):
        read_lexicon(tmp_path)


def test_phrase_patterns_find_what_token_patterns_find(sample_docs):
    """Given the tokenizer, a pattern whose words it gives back from their text is a phrase
    (matched on LOWER by the rulers), one it splits otherwise stays a token pattern; both
    lexicons find the same spans, in any case of the text."""
    tokens, phrases = build_lexicon(sample_docs), build_lexicon(sample_docs, tokenizer=TOKENIZER)
    assert all(isinstance(p["pattern"], list) for key in KEYS for p in tokens[key])
    words = {
        key: [[t["LOWER"] for t in p["pattern"]] for p in tokens[key] if "LOWER" in p["pattern"][0]] for key in KEYS
    }
    assert [p["pattern"] for p in phrases["triggers"]] == [" ".join(w) for w in words["triggers"]]
    assert [p for p in phrases["proteins"] if not isinstance(p["pattern"], str)] == shape_patterns(sample_docs)
    by_tokens, by_phrases = pipeline(tokens), pipeline(phrases)
    for text in [gold.text for gold in sample_docs] + [SENTENCE.upper(), "Expression of IL-2 BINDS RAS."]:
        assert [spans(by_phrases(text), key) for key in KEYS] == [spans(by_tokens(text), key) for key in KEYS]
    split = Doc(TOKENIZER.vocab, words=["RAS", "cannot", "bind"])
    split.spans["triggers"] = [Span(split, 1, 2, label="Negative_regulation"), Span(split, 2, 3, label="Binding")]
    patterns = build_lexicon([split], shapes=False, tokenizer=TOKENIZER)["triggers"]
    assert [p["pattern"] for p in patterns] == ["bind", [{"LOWER": "cannot"}]]  # "cannot" is "can" "not"


def test_adding_the_rulers_twice_is_refused(sample_docs):
    nlp = pipeline(build_lexicon(sample_docs))
    with pytest.raises(InvalidParameterError, match="protein_ruler"):
        add_lexicon(nlp, build_lexicon(sample_docs))
    with pytest.raises(InvalidParameterError, match="keys proteins, triggers, got proteins"):
        add_lexicon(spacy.blank("en"), {"proteins": []})


def relations_docs(tmp_path, records):
    path = tmp_path / "train.jsonl"
    lines = []
    for text, names in records:
        spans = [
            {"start": text.index(name), "end": text.index(name) + len(name), "label": label} for name, label in names
        ]
        lines.append(json.dumps({"text": text, "spans": spans, "relations": []}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return list(read_relations_jsonl(path))


def test_the_entity_gazetteer_keeps_names_annotated_in_most_of_their_occurrences(tmp_path):
    docs = relations_docs(
        tmp_path,
        [
            ("John Smith lives in Italy .", [("John Smith", "Peop"), ("Italy", "Loc")]),
            ("Italy beat Spain in May .", [("Italy", "Org"), ("Spain", "Org")]),
            ("ITALY won .", [("ITALY", "Loc")]),
            ("May said so in May .", [("May", "Peop")]),  # 1 of 3 occurrences of "may"
        ],
    )
    tokenizer = spacy.blank("en").tokenizer
    patterns = entity_gazetteer(docs, tokenizer=tokenizer)
    # "italy": Loc twice and Org once, in 3 occurrences: Loc, 2/3; "may": 1 of 3 occurrences
    assert patterns == [
        {"label": "Loc", "pattern": "italy"},
        {"label": "Peop", "pattern": "john smith"},
        {"label": "Org", "pattern": "spain"},
    ]
    lenient = entity_gazetteer(docs, min_precision=0.3)
    assert {"label": "Peop", "pattern": [{"LOWER": "may"}]} in lenient
    assert {"label": "Org", "pattern": [{"LOWER": "italy"}]} not in lenient
    assert [p["pattern"] for p in entity_gazetteer(docs, min_count=2, tokenizer=tokenizer)] == ["italy"]
    nlp = spacy.blank("en")
    nlp.add_pipe("entity_ruler", config={"phrase_matcher_attr": "LOWER"}).add_patterns(patterns)
    assert [(e.text, e.label_) for e in nlp("Did john smith visit ITALY?").ents] == [
        ("john smith", "Peop"),
        ("ITALY", "Loc"),
    ]


def test_ruler_patterns_initialize_an_entity_ruler_from_a_config_and_name_a_bad_line(tmp_path):
    path = tmp_path / "gazetteer.jsonl"
    path.write_text('{"label": "Loc", "pattern": "italy"}\n\n{"label": "Peop", "pattern": [{"LOWER": "may"}]}\n')
    config = textwrap.dedent(
        f"""
        [nlp]
        lang = "en"
        pipeline = ["entity_ruler"]

        [components]

        [components.entity_ruler]
        factory = "entity_ruler"
        phrase_matcher_attr = "LOWER"

        [initialize]

        [initialize.components]

        [initialize.components.entity_ruler]

        [initialize.components.entity_ruler.patterns]
        @readers = "spacy_convkernels.RulerPatterns.v1"
        path = "{path}"
        """
    )
    nlp = load_model_from_config(load_config_from_str(config), auto_fill=True)
    nlp.initialize()
    assert [(e.text, e.label_) for e in nlp("May went to Italy").ents] == [("May", "Peop"), ("Italy", "Loc")]
    assert read_patterns(path) == [
        {"label": "Loc", "pattern": "italy"},
        {"label": "Peop", "pattern": [{"LOWER": "may"}]},
    ]
    path.write_text('{"label": "Loc", "pattern": "italy"}\n{"label": "Loc"}\n')
    with pytest.raises(CorpusFormatError, match=r"gazetteer\.jsonl, line 2: not a pattern"):
        read_patterns(path)
    with pytest.raises(CorpusFileError, match=r"absent\.jsonl: no such patterns file"):
        read_patterns(tmp_path / "absent.jsonl")
