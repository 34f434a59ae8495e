"""python -m spacy_convkernels convert: KeLP question files to .spacy DocBins."""

import gzip
import subprocess
import sys

import pytest
import spacy
from data_paths import CORPORA, ROOT
from spacy.tokens import DocBin

from spacy_convkernels.cli import main
from spacy_convkernels.cli.convert import CLASSES, convert
from spacy_convkernels.corpora import read_klp
from spacy_convkernels.errors import CorpusFormatError

SAMPLE = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"
STANDOFF = CORPORA / "bionlp-st-2013-ge-sample"
RELATIONS = CORPORA / "relations-sample" / "relations.jsonl"


def docs(path):
    return list(DocBin().from_disk(path).get_docs(spacy.blank("en").vocab))


@pytest.mark.slow
def test_questions_and_one_hot_cats_with_every_tenth_for_dev(tmp_path):
    examples = list(read_klp(SAMPLE))
    counts = convert(SAMPLE, tmp_path / "train.spacy", dev=tmp_path / "dev.spacy")
    assert counts == {str(tmp_path / "train.spacy"): 54, str(tmp_path / "dev.spacy"): 6}
    dev = docs(tmp_path / "dev.spacy")
    train = docs(tmp_path / "train.spacy")
    assert [d.text for d in dev] == [examples[i].texts["quest"] for i in range(9, 60, 10)]
    assert train[9].text == examples[10].texts["quest"]
    for doc, example in zip(dev, examples[9::10]):
        assert doc.cats == {name: float(name == example.labels[0]) for name in CLASSES}


def test_without_dev_every_question_is_written(tmp_path):
    convert(SAMPLE, tmp_path / "test.spacy")
    assert len(docs(tmp_path / "test.spacy")) == 60


def test_bad_label_names_file_and_line(tmp_path):
    lines = gzip.open(SAMPLE, "rt").read().splitlines()[:3]
    bad = tmp_path / "bad.klp"
    bad.write_text("\n".join([lines[0], "", "COLOR" + lines[1][lines[1].index(" ") :], lines[2]]) + "\n")
    with pytest.raises(CorpusFormatError, match=r"bad.klp, line 3: labels \['COLOR'\]"):
        convert(bad, tmp_path / "out.spacy")
    assert not (tmp_path / "out.spacy").exists()


def test_command_line_reports_one_line_and_fails(tmp_path, capsys):
    bad = tmp_path / "bad.klp"
    bad.write_text("NUM |BS:quest| How far ? |ES| |BT:grct| (a (b) |ET|\n")
    assert main(["convert", str(bad), str(tmp_path / "out.spacy")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("spacy-convkernels convert: error: ") and "line 1" in err
    assert main(["convert", str(tmp_path / "absent.klp"), str(tmp_path / "out.spacy")]) == 1
    assert "absent.klp" in capsys.readouterr().err
    assert (
        main(
            ["convert", str(SAMPLE), str(tmp_path / "t.spacy"), "--dev", str(tmp_path / "d.spacy"), "--dev-every", "1"]
        )
        == 1
    )
    assert "--dev-every must be at least 2" in capsys.readouterr().err


@pytest.mark.slow
def test_the_format_comes_from_the_inputs_name(tmp_path, capsys):
    for source, format in ((SAMPLE, "klp"), (STANDOFF, "standoff"), (RELATIONS, "relations-jsonl")):
        assert main(["convert", str(source), str(tmp_path / "named.spacy")]) == 0, format
        assert main(["convert", "--format", format, str(source), str(tmp_path / "given.spacy")]) == 0, format
        printed = capsys.readouterr().out.splitlines()
        assert printed[0].split(" to ")[0] == printed[1].split(" to ")[0], format
        assert len(docs(tmp_path / "named.spacy")) == len(docs(tmp_path / "given.spacy")), format


def test_an_input_of_another_name_says_which_format_to_give(tmp_path, capsys):
    questions, relations, other = tmp_path / "questions.txt", tmp_path / "relations.txt", tmp_path / "other.txt"
    questions.write_bytes(gzip.decompress(SAMPLE.read_bytes()))
    relations.write_bytes(RELATIONS.read_bytes())
    other.write_text("hello\n", encoding="utf-8")
    out = str(tmp_path / "out.spacy")
    for source, message in (
        (questions, "it looks like KeLP examples: give --format klp"),
        (relations, "it looks like JSON lines: give --format relations-jsonl"),
        (other, "give --format klp (TREC/KeLP questions), standoff (a BioNLP directory) or relations-jsonl"),
        (tmp_path / "absent.txt", "absent.txt: no such file or directory"),
    ):
        assert main(["convert", str(source), out]) == 1, source
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("spacy-convkernels convert: error: ") and message in err, err
        if source != other and source.exists():
            assert f"cannot tell the format of {source} from its name" in err
    assert main(["convert", "--format", "klp", str(questions), out]) == 0 and len(docs(out)) == 60


@pytest.mark.slow
def test_python_dash_m_entry(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "spacy_convkernels", "convert", str(SAMPLE), str(tmp_path / "test.spacy")],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0 and "60 questions" in done.stdout
