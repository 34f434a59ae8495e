import gzip
import json
import sys
import zlib

import numpy as np
import pytest
from address_space import run_limited
from broken_files import gzip_then_broken
from data_paths import CORPORA

from spacy_convkernels import ConvKernelsError, CorpusFormatError, Tree, TreeParseError
from spacy_convkernels.corpora import CorpusWarning, parse_klp_line, read_klp
from spacy_convkernels.errors import CorpusFileError
from spacy_convkernels.utils import text_lines

SAMPLE = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"


def test_reads_the_bundled_sample():
    examples = list(read_klp(SAMPLE))
    assert len(examples) == 60
    first = examples[0]
    assert first.labels == ("NUM",)
    assert first.texts == {"quest": "How far is it from Denver to Aspen ?"}
    assert set(first.trees) == {"grct", "lct", "loct", "cgrct", "clct"}
    assert all(isinstance(t, Tree) for t in first.trees.values())
    assert first.vectors["bow"]["_?__."] == 1.0  # feature "_?__." written "_?__.:1.0"
    assert first.vectors["bow"]["_denver__n"] == 1.0
    assert str(first.trees["loct"]) == (
        "(LEX##be::v(LEX##far::r(LEX##how::w))(LEX##it::p)(LEX##denver::n(LEX##aspen::n)))"
    )


def test_reads_the_full_qc_files(qc_dir):
    train = list(read_klp(qc_dir / "train_5500.coarse.klp.gz"))
    test = list(read_klp(qc_dir / "TREC_10.coarse.klp.gz"))
    assert (len(train), len(test)) == (5452, 500)
    assert {e.labels[0] for e in train} == {"ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM"}


def test_all_kinds_and_unnamed_representations():
    example = parse_klp_line(
        "A B |BV| f:1 g:x:2.5 |EV| |BDV:d| 1 2.5 -3 |EDV| |BT| (S(x)) |ET| |BT| (T) |ET| |BS:s| a  b |ES|"
    )
    assert example.labels == ("A", "B")
    assert example.vectors["0"] == {"f": 1.0, "g:x": 2.5}
    np.testing.assert_array_equal(example.vectors["d"], [1.0, 2.5, -3.0])
    # unnamed representations are named by their position among all of them, as KeLP does
    assert [str(example.trees[k]) for k in ("2", "3")] == ["(S(x))", "(T)"]
    assert example.texts == {"s": "a  b"}
    both = parse_klp_line("X |BV| a:1 |EV| |BDV| 1 2 |EDV|")
    assert set(both.vectors) == {"0", "1"}


@pytest.mark.parametrize(
    "line, words",
    [
        ("NUM just a label\n", "no representation"),
        ("NUM |BT:t| (S(x)) \n", "not closed"),
        ("NUM |BT:t| (S(x)) |EV|\n", "not closed"),
        ("NUM |ET| |BT:t| (S) |ET|\n", "without a matching begin"),
        ("NUM |BT:t| (S(x) |ET|\n", "tree 't': unclosed '('"),
        ("NUM |BV:v| a:1 b |EV|\n", "is not feature:value"),
        ("NUM |BV:v| a:one |EV|\n", "is not feature:value"),
        ("NUM |BDV:v| 1 two |EDV|\n", "not a finite number"),
        ("NUM |BT:t| (S) |ET| junk |BS:s| x |ES|\n", "unexpected text"),
        ("NUM |BT:t| (S) |ET| |BT:t| (S) |ET|\n", "two representations named 't'"),
        ("NUM |BT:t| (S) |ET| |BS:t| x |ES|\n", "two representations named 't'"),
        ("NUM |BV:v| a:nan |EV|\n", "finite"),
        ("NUM |BDV:v| 1 inf |EDV|\n", "finite"),
        ("NUM |BT:t| (S) |ET| trailing\n", "after the last"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path, line, words):
    path = tmp_path / "bad.klp.gz"
    good = "NUM |BT:t| (S(x)) |ET|\n"
    with gzip.open(path, "wt", encoding="utf-8") as out:
        out.write(good + "\n" + good + line + good)
    reader = read_klp(path)
    assert len([next(reader), next(reader)]) == 2
    with pytest.raises(CorpusFormatError) as info:
        next(reader)
    error = info.value
    assert isinstance(error, ConvKernelsError)
    assert error.line == 4 and error.path == str(path)
    assert f"{path}, line 4" in str(error)
    assert words in str(error)


def test_undecodable_and_broken_files_name_the_line(tmp_path):
    bad_bytes = tmp_path / "latin1.klp"
    bad_bytes.write_bytes(b"A |BS:s| ok |ES|\nB |BS:s| caf\xe9 |ES|\n")
    with pytest.raises(CorpusFormatError, match="line 2: not UTF-8"):
        list(read_klp(bad_bytes))
    truncated = tmp_path / "cut.klp.gz"
    data = gzip.compress("".join(f"A |BS:s| {i * 7919 % 104729} |ES|\n" for i in range(5000)).encode())
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorpusFormatError, match="gzip"):
        list(read_klp(truncated))
    not_gzip = tmp_path / "plain.klp.gz"
    not_gzip.write_bytes(b"A |BS:s| ok |ES|\n")
    with pytest.raises(CorpusFormatError, match="line 1: unreadable gzip"):
        list(read_klp(not_gzip))


def test_a_carriage_return_inside_a_line_does_not_split_it(tmp_path):
    path = tmp_path / "cr.klp"
    path.write_bytes(b"A |BS:s| one\rtwo |ES|\r\nB |BS:s| three |ES|\n")
    examples = list(read_klp(path))
    assert [e.labels for e in examples] == [("A",), ("B",)]
    assert examples[0].texts["s"] == "one\rtwo"


def test_errors_survive_pickling():
    import pickle

    error = CorpusFormatError("bad", "f.klp", 3)
    again = pickle.loads(pickle.dumps(error))
    assert (type(again), str(again), again.line, again.path) == (CorpusFormatError, str(error), 3, "f.klp")


def test_a_byte_order_mark_is_not_part_of_the_first_label(tmp_path):
    plain, gzipped = tmp_path / "bom.klp", tmp_path / "bom.klp.gz"
    data = "\ufeffNUM |BS:s| x |ES|\nLOC |BS:s| y |ES|\n".encode("utf-8")
    plain.write_bytes(data)
    gzipped.write_bytes(gzip.compress(data))
    for path in (plain, gzipped):
        assert [e.labels for e in read_klp(path)] == [("NUM",), ("LOC",)]


def test_an_undecodable_line_is_skipped_on_request(tmp_path):
    path = tmp_path / "latin1.klp"
    path.write_bytes(b"A |BS:s| ok |ES|\nB |BS:s| caf\xe9 |ES|\nC |BS:s| ok |ES|\n")
    with pytest.raises(CorpusFormatError) as info:
        list(read_klp(path))
    assert info.value.line == 2 and isinstance(info.value.__cause__, UnicodeDecodeError)
    errors = []
    with pytest.warns(CorpusWarning, match="line 2: not UTF-8"):
        examples = list(read_klp(path, skip_errors=True, errors=errors))
    assert [e.labels for e in examples] == [("A",), ("C",)] and [e.line for e in errors] == [2]


def test_a_malformed_line_is_skipped_on_request(tmp_path):
    path = tmp_path / "bad.klp"
    path.write_text("A |BS:s| ok |ES|\nB |BT:t| (S(x) |ET|\nC |BS:s| ok |ES|\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError) as info:
        list(read_klp(path))
    assert isinstance(info.value.__cause__, TreeParseError)
    with pytest.warns(CorpusWarning, match="line 2"):
        assert [e.labels for e in read_klp(path, skip_errors=True)] == [("A",), ("C",)]


def test_a_corrupted_deflate_stream(tmp_path):
    path = tmp_path / "broken.klp.gz"
    path.write_bytes(gzip_then_broken("A |BS:s| x |ES|\nB |BS:s| y |ES|\n"))
    reader = read_klp(path)
    assert [next(reader).labels, next(reader).labels] == [("A",), ("B",)]
    with pytest.raises(CorpusFormatError, match="line 3: unreadable gzip data") as info:
        next(reader)
    assert isinstance(info.value.__cause__, zlib.error)
    errors = []
    with pytest.warns(CorpusWarning, match="gzip"):
        assert len(list(read_klp(path, skip_errors=True, errors=errors))) == 2
    assert [e.line for e in errors] == [3]


def test_a_file_that_cannot_be_opened(tmp_path):
    for path in (tmp_path, tmp_path / "missing.klp"):
        with pytest.raises(CorpusFileError, match=str(path)) as info:
            list(read_klp(path))
        assert isinstance(info.value, ConvKernelsError) and isinstance(info.value.__cause__, OSError)


def test_a_byte_order_mark_at_the_start_of_a_later_line_is_dropped(tmp_path):
    """Files joined together (``cat a.klp b.klp``) carry the second one's mark inside."""
    path = tmp_path / "joined.klp"
    path.write_bytes(b"\xef\xbb\xbfA |BS:s| one |ES|\n\xef\xbb\xbfB |BS:s| two |ES|\n")
    assert [e.labels for e in read_klp(path)] == [("A",), ("B",)]


@pytest.mark.parametrize("suffix", [".klp", ".klp.gz"])
def test_a_line_over_the_length_cap_is_refused_and_skipped_on_request(tmp_path, monkeypatch, suffix):
    monkeypatch.setattr(text_lines, "MAX_LINE_BYTES", 100)
    good = b"A |BS:s| ok |ES|\n"
    data = good + b"B |BS:s| " + b"x" * 300 + b" |ES|\n" + good + b"C |BS:s| " + b"y" * 87 + b"|ES|\n"
    path = tmp_path / f"long{suffix}"
    path.write_bytes(gzip.compress(data) if suffix.endswith(".gz") else data)
    with pytest.raises(CorpusFormatError, match=r"line 2: a line longer than 100 bytes") as raised:
        list(read_klp(path))
    assert isinstance(raised.value.__cause__, ValueError)
    errors = []
    with pytest.warns(CorpusWarning, match="line 2"):
        examples = list(read_klp(path, skip_errors=True, errors=errors))
    assert [e.labels for e in examples] == [("A",), ("A",), ("C",)]  # a line of exactly 100 bytes is read
    assert [e.line for e in errors] == [2]


LONG_LINE_SCRIPT = """
import gzip, json, sys, warnings
from spacy_convkernels.corpora import read_klp
from spacy_convkernels.errors import CorpusFormatError

path = sys.argv[1]
with gzip.open(path, "wb") as out:  # one line of 300 MB: a 291 KB .klp.gz, then a good line
    out.write(b"A |BS:s| ")
    for _ in range(300):
        out.write(b"x" * (1 << 20))
    out.write(b" |ES|\\nB |BS:s| ok |ES|\\n")
limit_address_space(200)
try:
    list(read_klp(path))
except CorpusFormatError as error:
    refused = str(error)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    labels = [e.labels for e in read_klp(path, skip_errors=True)]
print(json.dumps([refused, labels]))
"""


@pytest.mark.slow  # a new process that reads a 300 MB line
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc and an address-space limit")
def test_a_300_megabyte_line_is_refused_in_200_megabytes(tmp_path):
    """Issue 36: a 291 KB ``.klp.gz`` holding one 300 MB line took 899 MB."""
    done = run_limited(LONG_LINE_SCRIPT, tmp_path / "long.klp.gz", timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    refused, labels = json.loads(done.stdout)
    assert "long.klp.gz, line 1: a line longer than 10,485,760 bytes" in refused
    assert labels == [["B"]]
