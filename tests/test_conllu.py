import zlib

import pytest
import spacy
from broken_files import gzip_then_broken
from data_paths import need_shared
from spacy.util import registry

from spacy_convkernels import ConvKernelsError, CorpusFormatError
from spacy_convkernels.corpora import CorpusWarning, read_conllu
from spacy_convkernels.errors import CorpusFileError
from spacy_convkernels.structures import span_to_tree
from spacy_convkernels.utils import text_lines

SENTENCES = """# newdoc id = d1
# sent_id = s1
# text = I don't know.
1	I	I	PRON	PRP	Case=Nom	4	nsubj	4:nsubj	_
2-3	don't	_	_	_	_	_	_	_	_
2	do	do	AUX	VBP	_	4	aux	4:aux	_
3	n't	not	PART	RB	_	4	advmod	4:advmod	_
4	know	know	VERB	VB	VerbForm=Inf	0	root	0:root	SpaceAfter=No
5	.	.	PUNCT	.	_	4	punct	4:punct	_

# sent_id = s2
1	Go	go	VERB	VB	_	0	root	0:root	_
1.1	went	go	VERB	VBD	_	_	_	1:conj	CopyOf=1
2	home	home	ADV	RB	_	1	advmod	1:advmod	SpaceAfter=No
3	!	!	PUNCT	.	_	1	punct	1:punct	_
"""


@pytest.fixture
def conllu(tmp_path):
    path = tmp_path / "sample.conllu"
    path.write_text(SENTENCES, encoding="utf-8")
    return path


def test_reads_tokens_heads_and_multiword_tokens(conllu):
    first, second = read_conllu(conllu)
    assert first.text == "I don't know."
    assert [t.text for t in first] == ["I", "do", "n't", "know", "."]
    assert [t.lemma_ for t in first] == ["I", "do", "not", "know", "."]
    assert [t.tag_ for t in first] == ["PRP", "VBP", "RB", "VB", "."]
    assert [t.pos_ for t in first] == ["PRON", "AUX", "PART", "VERB", "PUNCT"]
    assert [t.head.i for t in first] == [3, 3, 3, 3, 3]
    assert [t.dep_ for t in first] == ["nsubj", "aux", "advmod", "root", "punct"]
    assert str(first[0].morph) == "Case=Nom"
    assert second.text == "Go home!" and len(second) == 3  # the empty node 1.1 is left out
    assert str(span_to_tree(second[:], "loct")) == "(LEX##go::v(LEX##home::r))"


def test_several_sentences_per_doc(conllu):
    (doc,) = read_conllu(conllu, n_sents=2)
    assert doc.text == "I don't know. Go home!"
    assert [s.text for s in doc.sents] == ["I don't know.", "Go home!"]
    assert [str(span_to_tree(s, "loct")) for s in doc.sents] == [
        "(LEX##know::v(LEX##i::p)(LEX##do::v)(LEX##not::r))",
        "(LEX##go::v(LEX##home::r))",
    ]


BAD_TOKENS = [
    ("1\tGo\tgo\tVERB\tVB\t_\t0\troot\t_\n", "10", 1),
    ("1\tGo\tgo\tVERB\tVB\t_\tx\troot\t_\t_\n", "head 'x'", 1),
    ("1\tGo\tgo\tVERB\tVB\t_\t0\troot\t_\t_\n3\tnow\tnow\tADV\tRB\t_\t1\tadvmod\t_\t_\n", "token id '3'", 2),
    ("1\tGo\tgo\tVERB\tVB\t_\t0\troot\t_\t_\n2\tnow\tnow\tADV\tRB\t_\t7\tadvmod\t_\t_\n", "beyond", 2),
    ("1\tGo\tgo\tVERB\tVB\t_\t2\tdep\t_\t_\n2\tnow\tnow\tADV\tRB\t_\t1\tadvmod\t_\t_\n", "no root", 1),
    (
        "1\tGo\tgo\tVERB\tVB\t_\t0\troot\t_\t_\n2\tnow\tnow\tADV\tRB\t_\t3\tdep\t_\t_\n3\tx\tx\tX\tFW\t_\t2\tdep\t_\t_\n",
        "token 2 is on a cycle",
        2,
    ),
    ("1\tGo\tgo\tVERB\tVB\t_\t0\troot\t_\t_\n2\tnow\tnow\tADVERB\tRB\t_\t1\tdep\t_\t_\n", "UPOS", 2),
    ("1\tGo\tgo\tVERBAL\tVB\t_\t0\troot\t_\t_\n", "UPOS", 1),
    ("1-x\tGo\t_\t_\t_\t_\t_\t_\t_\t_\n", "multi-word", 1),
    ("1\tGo\tgo\tVERB\tVB\tMood=Imp|\t0\troot\t_\t_\n", "features 'Mood=Imp|'", 1),
    ("1\tGo\tgo\tVERB\tVB\tMood=Imp|Mood=Ind\t0\troot\t_\t_\n", "distinct names", 1),
]


@pytest.mark.parametrize("bad, words, offset", BAD_TOKENS)
def test_malformed_sentence_names_file_and_line(tmp_path, bad, words, offset):
    good = "1\tOk\tok\tINTJ\tUH\t_\t0\troot\t_\t_\n"
    path = tmp_path / "bad.conllu"
    path.write_text(good + "\n# comment\n" + bad + "\n" + good, encoding="utf-8")
    with pytest.raises(CorpusFormatError) as info:
        list(read_conllu(path))
    assert isinstance(info.value, ConvKernelsError)
    assert info.value.line == 3 + offset  # lines 1-3: a good sentence, a blank line, a comment
    assert str(path) in str(info.value) and words in str(info.value)


def test_skipping_reports_and_goes_on(tmp_path):
    good = "1\tOk\tok\tINTJ\tUH\t_\t0\troot\t_\t_\n"
    path = tmp_path / "bad.conllu"
    path.write_text(good + "\n" + "1\tGo\tgo\n" + "\n" + good + "\n" + good, encoding="utf-8")
    errors = []
    with pytest.warns(CorpusWarning, match="line 3"):
        docs = list(read_conllu(path, skip_errors=True, errors=errors))
    assert len(docs) == 3 and [e.line for e in errors] == [3]


def test_registered_spacy_reader(conllu):
    nlp = spacy.blank("en")
    reader = registry.readers.get("spacy_convkernels.ConllU.v1")(path=conllu)
    examples = list(reader(nlp))
    assert len(examples) == 2
    assert [t.dep_ for t in examples[0].reference] == ["nsubj", "aux", "advmod", "root", "punct"]
    assert examples[0].predicted.text == examples[0].reference.text


@pytest.mark.slow
@pytest.mark.shared
def test_reads_all_of_ud_english_ewt():
    folder = need_shared("data/ud-english-ewt")
    sizes = {}
    for part in ("train", "dev", "test"):
        docs = list(read_conllu(folder / f"en_ewt-ud-{part}.conllu"))
        sizes[part] = len(docs)
        assert all(doc.has_annotation("DEP") and doc.has_annotation("TAG") for doc in docs)
    assert sizes == {"train": 12544, "dev": 2001, "test": 2077}


GOOD = "1\tOk\tok\tINTJ\tUH\t_\t0\troot\t_\t_\n"


def test_a_byte_order_mark_is_dropped(tmp_path):
    path = tmp_path / "bom.conllu"
    path.write_bytes(b"\xef\xbb\xbf# sent_id = 1\n" + GOOD.encode() + b"\n" + GOOD.encode())
    assert [d.text for d in read_conllu(path)] == ["Ok", "Ok"]  # the first line is a comment without its mark
    starts_with_a_token = tmp_path / "bom2.conllu"
    starts_with_a_token.write_bytes(b"\xef\xbb\xbf" + GOOD.encode())
    assert [t.text for t in next(read_conllu(starts_with_a_token))] == ["Ok"]


def test_an_undecodable_line_loses_its_sentence_only(tmp_path):
    path = tmp_path / "latin1.conllu"
    bad = "1\tcaf\xe9\tcaf\xe9\tNOUN\tNN\t_\t0\troot\t_\t_\n".encode("latin-1")
    path.write_bytes(GOOD.encode() + b"\n" + bad + GOOD.replace("1", "2", 1).encode() + b"\n" + GOOD.encode())
    with pytest.raises(CorpusFormatError, match="line 3: not UTF-8") as info:
        list(read_conllu(path))
    assert isinstance(info.value.__cause__, UnicodeDecodeError)
    errors = []
    with pytest.warns(CorpusWarning, match="line 3"):
        docs = list(read_conllu(path, skip_errors=True, errors=errors))
    assert [d.text for d in docs] == ["Ok", "Ok"] and [e.line for e in errors] == [3]


def test_a_corrupted_deflate_stream(tmp_path):
    path = tmp_path / "broken.conllu.gz"
    path.write_bytes(gzip_then_broken(GOOD + "\n" + GOOD))
    with pytest.raises(CorpusFormatError, match="line 4: unreadable gzip data") as info:
        list(read_conllu(path))
    assert isinstance(info.value.__cause__, zlib.error)
    errors = []
    with pytest.warns(CorpusWarning, match="gzip"):
        docs = list(read_conllu(path, skip_errors=True, errors=errors))
    # the second sentence may have been cut short by the break: it is lost with the stream
    assert [d.text for d in docs] == ["Ok"] and [e.line for e in errors] == [4]


def test_a_file_that_cannot_be_opened(tmp_path):
    with pytest.raises(CorpusFileError, match="cannot open"):
        list(read_conllu(tmp_path))


def test_carriage_return_line_ends_are_refused_not_read_as_one_comment(tmp_path):
    """Issue 36: a file with ``\\r`` line ends and a leading comment gave 0 sentences and no warning."""
    path = tmp_path / "cr.conllu"
    path.write_bytes(("# sent_id = 1\n" + GOOD + "\n" + GOOD).replace("\n", "\r").encode())
    with pytest.raises(CorpusFormatError, match=r"cr\.conllu, line 1: a carriage return inside the line"):
        list(read_conllu(path))
    with pytest.warns(CorpusWarning, match="carriage return"):
        assert list(read_conllu(path, skip_errors=True)) == []
    crlf = tmp_path / "crlf.conllu"
    crlf.write_bytes(("# sent_id = 1\n" + GOOD + "\n" + GOOD).replace("\n", "\r\n").encode())
    assert [d.text for d in read_conllu(crlf)] == ["Ok", "Ok"]
    inside = tmp_path / "inside.conllu"
    inside.write_bytes((GOOD + "\n" + GOOD.replace("Ok\tok", "O\rk\tok") + "\n" + GOOD).encode())
    with pytest.warns(CorpusWarning, match="line 3: a carriage return"):
        assert [d.text for d in read_conllu(inside, skip_errors=True)] == ["Ok", "Ok"]


def test_a_long_line_loses_its_sentence_only(tmp_path, monkeypatch):
    monkeypatch.setattr(text_lines, "MAX_LINE_BYTES", 100)
    path = tmp_path / "long.conllu"
    path.write_text(GOOD + "\n" + GOOD.replace("Ok", "O" * 100) + "\n" + GOOD, encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=r"line 3: a line longer than 100 bytes"):
        list(read_conllu(path))
    with pytest.warns(CorpusWarning, match="line 3"):
        assert [d.text for d in read_conllu(path, skip_errors=True)] == ["Ok", "Ok"]
