"""python -m spacy_convkernels trees: parsed docs or raw text to the five tree representations."""

import json
import re
import sys
import zlib

import numpy as np
import pytest
import spacy
from address_space import refused_in_one_line
from bombs import zlib_zeros
from data_paths import CORPORA, need_shared
from kelp_parses import doc_from_grct
from spacy.tokens import Doc, DocBin

from spacy_convkernels.cli import main
from spacy_convkernels.cli.pipelines import MAX_DOCBIN_BYTES, read_docbin
from spacy_convkernels.corpora import read_klp
from spacy_convkernels.errors import CorpusFormatError
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


DOCBIN_BOMB_SCRIPT = """
import contextlib, io, json, sys, time
from spacy_convkernels.cli import main
from spacy_convkernels.cli.pipelines import MAX_DOCBIN_BYTES, read_docbin

docbin, out = sys.argv[1:]
limit_address_space(500)
start, err = time.perf_counter(), io.StringIO()
with contextlib.redirect_stderr(err):
    status = main(["trees", docbin, "-o", out, "--quiet"])
print(json.dumps([status, err.getvalue(), time.perf_counter() - start]))
"""


@pytest.mark.slow  # a new process
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc and an address-space limit")
def test_a_docbin_bomb_is_refused_in_500_megabytes(tmp_path):
    """Issue 62: a 3.1 MB zlib'd DocBin of 3 GiB of zeros took 6.4 GB and 22 s (a
    MemoryError under 2 GB): inflated a chunk at a time and refused at MAX_DOCBIN_BYTES."""
    bomb, out = tmp_path / "bomb.spacy", tmp_path / "trees.txt"
    bomb.write_bytes(zlib_zeros(b"", 3 << 30))
    assert bomb.stat().st_size < 3.2e6
    refused_in_one_line(
        DOCBIN_BOMB_SCRIPT,
        bomb,
        out,
        output=out,
        message=f"spacy-convkernels trees: error: {bomb}, line 1: its DocBin data exceed 67,108,864 bytes "
        "(cli.pipelines.MAX_DOCBIN_BYTES) once byte 66,297 of the file is inflated",
    )


@pytest.mark.parametrize(
    "size, message",
    [
        (MAX_DOCBIN_BYTES, "not a spaCy DocBin (ExtraData"),  # inflated whole: zeros are no msgpack
        (MAX_DOCBIN_BYTES + 1, f"its DocBin data exceed {MAX_DOCBIN_BYTES:,} bytes"),
        (100 << 20, f"its DocBin data exceed {MAX_DOCBIN_BYTES:,} bytes"),
    ],
    ids=["at the limit", "one byte more", "100 MiB"],
)
def test_docbin_data_may_expand_to_the_limit_and_no_more(tmp_path, size, message):
    path = tmp_path / "zeros.spacy"
    path.write_bytes(zlib_zeros(b"", size))
    with pytest.raises(CorpusFormatError, match=re.escape(f"{path}, line 1: {message}")):
        read_docbin(path, spacy.blank("en").vocab)


def test_a_docbin_whose_zlib_data_are_followed_by_other_bytes_is_read(tmp_path):
    """spaCy's zlib.decompress stops at the end of the data; so does the check before it."""
    docs = parsed_docs(3)
    (tmp_path / "trailing.spacy").write_bytes(DocBin(docs=docs).to_bytes() + b"\0" * (MAX_DOCBIN_BYTES + 1))
    assert [doc.text for doc in read_docbin(tmp_path / "trailing.spacy", spacy.blank("en").vocab)] == [
        doc.text for doc in docs
    ]


@pytest.mark.shared
@pytest.mark.slow  # converts GE 2013 train (222 documents)
def test_real_corpora_are_far_below_the_docbin_limit(tmp_path):
    """The DocBins convert writes of GE 2013 train and TREC's 5,452 training questions
    expand to 8.4 and 1.2 MB (en_core_web_md's parses of them: 8.1 and 6.7 MB)."""
    corpora = {
        "ge.spacy": (need_shared("data/bionlp-st-2013-ge/original-data/train"), ["--format", "standoff"], 222),
        "trec.spacy": (need_shared("data/trec-qc-kelp/train_5500.coarse.klp.gz"), [], 5452),
    }
    for name, (source, options, count) in corpora.items():
        assert main(["convert", str(source), "-o", str(tmp_path / name), *options]) == 0
        assert len(zlib.decompress((tmp_path / name).read_bytes())) < MAX_DOCBIN_BYTES / 7
        assert len(read_docbin(tmp_path / name, spacy.blank("en").vocab)) == count


def _docbin_file(path, **fields) -> None:
    """A .spacy file of a DocBin payload with ``fields`` in place of an empty one's."""
    import srsly

    empty = {"version": 2, "attrs": [65], "tokens": b"", "spaces": b"", "lengths": b"", "strings": []}
    path.write_bytes(zlib.compress(srsly.msgpack_dumps({**empty, "cats": [], "flags": [], **fields}), 1))


def test_a_docbin_of_too_many_items_or_tokens_is_refused_before_spacy_builds_it(tmp_path, capsys):
    """Issue 62: within the 64 MiB bound, a 58 KB DocBin of 60 million empty flags took
    4.6 GB, a 94 KB one of 7.4 million tokens in one Doc 1.2 GB: refused from the payload's
    structure, each list and map at most MAX_DOCBIN_TOKENS items, the tokens too."""
    import srsly

    from spacy_convkernels.cli.pipelines import MAX_DOCBIN_TOKENS

    flags = tmp_path / "flags.spacy"
    header = b"\xdd" + (MAX_DOCBIN_TOKENS + 1).to_bytes(4, "big")  # an array of MAX + 1 empty maps
    empty = {"version": 2, "attrs": [65], "tokens": b"", "spaces": b"", "lengths": b"", "strings": [], "cats": []}
    payload = srsly.msgpack_dumps(empty)
    payload = (
        bytes([payload[0] + 1])
        + payload[1:]
        + srsly.msgpack_dumps("flags")
        + header
        + b"\x80" * (MAX_DOCBIN_TOKENS + 1)
    )
    flags.write_bytes(zlib.compress(payload, 1))
    tokens = tmp_path / "tokens.spacy"
    _docbin_file(
        tokens, tokens=bytes(8 * (MAX_DOCBIN_TOKENS + 1)), lengths=(MAX_DOCBIN_TOKENS + 1).to_bytes(4, "little")
    )
    assert flags.stat().st_size < 100_000 and tokens.stat().st_size < 100_000
    vocab = spacy.blank("en").vocab
    with pytest.raises(CorpusFormatError, match=f"a list or map of more than {MAX_DOCBIN_TOKENS:,} items"):
        read_docbin(flags, vocab)
    with pytest.raises(CorpusFormatError, match=f"holds {MAX_DOCBIN_TOKENS + 1:,} tokens, more than"):
        read_docbin(tokens, vocab)
    assert main(["trees", str(flags), "-o", str(tmp_path / "t.txt"), "--quiet"]) == 1
    assert "flags.spacy, line 1: its DocBin holds a list or map of more than" in capsys.readouterr().err
    _docbin_file(tmp_path / "fine.spacy")
    assert read_docbin(tmp_path / "fine.spacy", vocab) == []


def test_a_pipeline_whose_vector_table_declares_more_than_its_file_is_refused_before_loading(tmp_path, capsys):
    """Issue 62: a 928-byte vocab/vectors declaring 10**6 x 10**6 floats made spaCy's loader
    ask numpy for 7.3 TiB (a raw MemoryError): refused from the header, naming the file."""
    from bombs import npy_header

    nlp = spacy.blank("en")
    nlp.vocab.set_vector("cat", np.array([1.0, 0.0], dtype=np.float32))
    nlp.to_disk(tmp_path / "model")
    table = tmp_path / "model" / "vocab" / "vectors"
    table.write_bytes(npy_header((10**6, 10**6), "<f4") + bytes(800))
    (tmp_path / "texts.txt").write_text("A text.\n", encoding="utf-8")
    assert main(["trees", str(tmp_path / "texts.txt"), "--model", str(tmp_path / "model"), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert f"{table} declares (1000000, 1000000) float32 values" in err and "holds 800 bytes" in err
