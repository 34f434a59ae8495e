"""python -m spacy_convkernels trees: parsed docs or raw text to the five tree representations."""

import json

import pytest
import spacy
from data_paths import CORPORA, need_shared
from kelp_parses import doc_from_grct
from spacy.tokens import Doc, DocBin

from spacy_convkernels.cli import main
from spacy_convkernels.corpora import read_klp
from spacy_convkernels.structures import span_to_trees
from spacy_convkernels.structures.dependency import REPRESENTATIONS

SAMPLE = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"


def parsed_docs(n=12):
    """Docs with the dependency parses of KeLP's trees of the sample's first questions."""
    vocab = spacy.blank("en").vocab
    return [doc_from_grct(vocab, example.trees["grct"]) for example, _ in zip(read_klp(SAMPLE), range(n))]


def test_docbin_to_json_lines_gives_the_component_trees(tmp_path):
    docs = parsed_docs()
    DocBin(docs=docs).to_disk(tmp_path / "parsed.spacy")
    out = tmp_path / "trees.jsonl"
    assert main(["trees", str(tmp_path / "parsed.spacy"), "--format", "jsonl", "-o", str(out)]) == 0
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    expected = [(d, s, sentence) for d, doc in enumerate(docs) for s, sentence in enumerate(doc.sents)]
    assert [(r["doc"], r["sentence"]) for r in records] == [(d, s) for d, s, _ in expected]
    for record, (_, _, sentence) in zip(records, expected):
        trees = span_to_trees(sentence)
        assert record["text"] == sentence.text
        assert {name: record[name] for name in REPRESENTATIONS} == {name: str(t) for name, t in trees.items()}


def test_tab_separated_lines_with_chosen_representations(tmp_path, capsys):
    docs = parsed_docs(3)
    DocBin(docs=docs).to_disk(tmp_path / "parsed.spacy")
    assert main(["trees", str(tmp_path / "parsed.spacy"), "--representations", "loct", "grct"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    first = next(iter(docs[0].sents))
    trees = span_to_trees(first, ["loct", "grct"])
    assert lines[0].split("\t") == ["0", "0", str(trees["loct"]), str(trees["grct"])]
    assert captured.err.strip() == f"{len(lines)} sentences"


def test_bad_inputs_end_with_one_line_on_stderr_and_status_1(tmp_path, capsys):
    DocBin(docs=[Doc(spacy.blank("en").vocab, words=["no", "parse"])]).to_disk(tmp_path / "unparsed.spacy")
    (tmp_path / "broken.spacy").write_bytes(b"not a docbin")
    (tmp_path / "texts.txt").write_text("A question?\n", encoding="utf-8")
    cases = {
        "unparsed.spacy": "no dependency parse",
        "broken.spacy": "not a spaCy DocBin",
        "texts.txt": "needs --model",
        "missing.spacy": "missing.spacy",
    }
    for name, message in cases.items():
        assert main(["trees", str(tmp_path / name)]) == 1, name
        err = capsys.readouterr().err.strip()
        assert err.startswith("spacy-convkernels trees: error:") and message in err and "\n" not in err, name


@pytest.mark.shared
def test_raw_text_parsed_by_the_md_model(tmp_path):
    model = need_shared("models/en_core_web_md-3.8.0")
    (tmp_path / "texts.txt").write_text("Who wrote Hamlet?\n\nThe cat sat on the mat. It slept.\n", encoding="utf-8")
    out = tmp_path / "trees.tsv"
    assert main(["trees", str(tmp_path / "texts.txt"), "--model", str(model), "-o", str(out)]) == 0
    rows = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()]
    assert [row[:2] for row in rows] == [["0", "0"], ["1", "0"], ["1", "1"]]
    assert all(len(row) == 2 + len(REPRESENTATIONS) and row[2].startswith("(SYNT##root") for row in rows)


def test_standard_output_in_ascii_gets_exact_json_or_escaped_lines_with_a_warning(tmp_path, monkeypatch, capsys):
    import io
    import sys

    vocab = spacy.blank("en").vocab
    words = ["café", "serves", "crème"]
    tags, deps = ["NN", "VBZ", "NN"], ["nsubj", "ROOT", "dobj"]
    doc = Doc(vocab, words=words, lemmas=words, tags=tags, deps=deps, heads=[1, 1, 1])
    DocBin(docs=[doc]).to_disk(tmp_path / "parsed.spacy")
    assert main(["trees", str(tmp_path / "parsed.spacy"), "--format", "jsonl", "-o", str(tmp_path / "t.jsonl")]) == 0
    expected = json.loads((tmp_path / "t.jsonl").read_text(encoding="utf-8"))
    assert "café" in expected["text"]
    for format in ("jsonl", "lines"):
        stdout = io.TextIOWrapper(io.BytesIO(), encoding="ascii", errors="strict", newline="\n")
        monkeypatch.setattr(sys, "stdout", stdout)
        capsys.readouterr()
        assert main(["trees", str(tmp_path / "parsed.spacy"), "--format", format]) == 0  # a traceback before
        stdout.flush()
        written = stdout.buffer.getvalue().decode("ascii")
        assert stdout.errors == "strict"  # put back
        err = capsys.readouterr().err
        if format == "jsonl":  # JSON's own escapes: exact, no warning
            assert json.loads(written) == expected and "warning" not in err
        else:
            assert "LEX##caf\\xe9::n" in written and written.count("\n") == 1
            assert err.splitlines()[-1].startswith(
                "spacy-convkernels trees: warning: standard output's encoding (ascii) cannot represent some of the text"
            )
