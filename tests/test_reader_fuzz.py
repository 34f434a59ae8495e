"""Property-based tests of the corpus and word-vector readers on random and mutated files.

Whatever the bytes, a reader raises only package exceptions (ConvKernelsError); with
``skip_errors=True`` it raises nothing, and it reads every valid record: a file made of
records separated by blank lines gives, skipping, exactly what each record gives read
alone.
"""

import gzip
import warnings

import penman
import pytest
import spacy
from data_paths import CORPORA
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_convkernels import ConvKernelsError
from spacy_convkernels.corpora import CorpusWarning, read_conllu, read_klp, read_penman
from spacy_convkernels.kernels import WordVectors
from spacy_convkernels.structures.interactions import amr_candidates

FUZZ = settings(max_examples=200, deadline=None)

with gzip.open(CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz", "rb") as sample:
    KLP_LINES = sample.read().splitlines()[:8]

CONLLU_SENTENCES = [
    b"# text = I don't know.\n1\tI\tI\tPRON\tPRP\tCase=Nom\t4\tnsubj\t4:nsubj\t_\n2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n"
    b"2\tdo\tdo\tAUX\tVBP\t_\t4\taux\t4:aux\t_\n3\tn't\tnot\tPART\tRB\t_\t4\tadvmod\t4:advmod\t_\n"
    b"4\tknow\tknow\tVERB\tVB\tVerbForm=Inf\t0\troot\t0:root\tSpaceAfter=No\n5\t.\t.\tPUNCT\t.\t_\t4\tpunct\t4:punct\t_",
    b"1\tGo\tgo\tVERB\tVB\t_\t0\troot\t0:root\t_\n1.1\twent\tgo\tVERB\tVBD\t_\t_\t_\t1:conj\tCopyOf=1\n"
    b"2\thome\thome\tADV\tRB\t_\t1\tadvmod\t1:advmod\tSpaceAfter=No\n3\t!\t!\tPUNCT\t.\t_\t1\tpunct\t1:punct\t_",
    "1\tCaf\u00e9\tcaf\u00e9\tNOUN\tNN\tNumber=Sing\t0\troot\t_\t_".encode(),
]

AMR_GRAPHS = [
    b"# ::id fig1 ::date 2018\n# ::snt GEFs such as Sos have allosteric sites for Ras binding .\n"
    b'(h / have-03\n   :ARG0 (p / protein-family :name (n / name :op1 "GEF")\n'
    b'         :example (p2 / protein :name (n2 / name :op1 "Sos")))\n'
    b"   :ARG1 (s / site :mod (a / allosteric)\n"
    b'         :purpose (b / bind-01 :ARG1 (e / enzyme :name (n3 / name :op1 "Ras")))))',
    b'# ::id tok1\n# ::tok Sos binds Ras .\n(b / bind-01 :ARG0 (p / protein :name (n / name :op1 "Sos"))\n'
    b'   :ARG1 (p2 / protein :name (n2 / name :op1 "Ras")) :ARG0-of (b))',
    b"# ::id x ::snt inline\n# ::snt A b .\n(a / and :op1 (b / bind-01~e.1 :ARG1 (p / protein)) :op2 b :polarity -)",
]

PIECES = {
    "klp": [
        "|BT:t|",
        "|ET|",
        "|BV:v|",
        "|EV|",
        "|BDV:d|",
        "|EDV|",
        "|BS:s|",
        "|ES|",
        "|BT|",
        "|BS|",
        "(",
        ")",
        " ",
        "\t",
        "NUM",
        "a:1",
        "1.5",
        "nan",
        "-inf",
        ":",
        "|",
        "(S(x))",
        "(a b)",
        "\r",
        "\x00",
        "\ufeff",
        "\xa0",
        "\x85",
        "\u2028",
    ],
    "conllu": [
        "\t",
        "1",
        "2",
        "0",
        "-",
        ".",
        "_",
        "root",
        "nsubj",
        "NOUN",
        "VERB",
        "NN",
        "SpaceAfter=No",
        "Case=Nom",
        "|",
        "=",
        "#",
        " ",
        "\r",
        "\xa0",
        "\x00",
        "\ufeff",
        "\n",
        "1-2",
        "1.1",
        "a",
        "Caf\u00e9",
    ],
    "penman": [
        "(",
        ")",
        "/",
        ":ARG0",
        ":op1",
        " ",
        "\n",
        "a",
        "b",
        "c",
        "bind-01",
        "protein",
        '"x y"',
        '"',
        "# ::snt a b",
        "# ::tok a b",
        "# ::id g",
        "~e.1",
        "-",
        "#",
        "\xa0",
        "\x85",
        "\u2028",
        "\r",
        ":name",
        "name",
        "\\",
        ":",
        "~",
    ],
}
VALID = {"klp": KLP_LINES, "conllu": CONLLU_SENTENCES, "penman": AMR_GRAPHS}


def _records(kind):
    """A record: a valid one, a valid one mutated, random pieces of the format, or random bytes."""
    valid = st.sampled_from(VALID[kind])
    pieces = st.lists(st.one_of(st.sampled_from(PIECES[kind]), st.text(max_size=4)), max_size=16)
    return st.one_of(
        valid,
        _mutated(valid),
        pieces.map(lambda p: "".join(p).encode("utf-8", "surrogatepass")),
        st.binary(max_size=60),
    )


@st.composite
def _mutated(draw, valid):
    data = bytearray(draw(valid))
    for _ in range(draw(st.integers(1, 4))):
        start = draw(st.integers(0, len(data)))
        end = draw(st.integers(start, min(len(data), start + 8)))
        data[start:end] = draw(
            st.one_of(
                st.just(b""),
                st.binary(min_size=1, max_size=4),
                st.sampled_from([b"\n", b"\t", b"(", b")", b"\xff", b"\xef\xbb\xbf"]),
            )
        )
    return bytes(data)


def _separated(kind, record: bytes) -> bytes:
    """A record as a unit of its file: a .klp line holds no line end; CoNLL-U sentences
    and PENMAN graphs end at a blank line, so a record's own blank lines only split it."""
    return record.replace(b"\n", b" ") if kind == "klp" else record


NLP = spacy.blank("en")
READERS = {
    "klp": (read_klp, ".klp"),
    "conllu": (lambda path, **options: read_conllu(path, NLP.vocab, **options), ".conllu"),
    "penman": (lambda path, **options: read_penman(path, NLP, **options), ".txt"),
}


def _key(kind, item):
    """A comparable form of what a reader yields."""
    if kind == "klp":
        return (
            item.labels,
            {k: str(v) for k, v in item.trees.items()},
            item.texts,
            {k: v if isinstance(v, dict) else v.tolist() for k, v in item.vectors.items()},
        )
    tokens = tuple((t.text, t.whitespace_, t.head.i, t.dep_, t.tag_, t.pos_, t.lemma_, str(t.morph)) for t in item)
    return tokens, (item._.kernel_amr if item.has_extension("kernel_amr") else None)  # set once an AMR reader ran


def _read(kind, path, skip_errors):
    reader, _ = READERS[kind]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CorpusWarning)
        items = list(reader(path, skip_errors=skip_errors))
    if kind == "penman":
        for doc in items:  # a graph that was read must be usable
            amr_candidates(doc._.kernel_amr)
            penman.decode(doc._.kernel_amr)
    return [_key(kind, item) for item in items]


def _read_or_package_error(kind, path):
    try:
        return _read(kind, path, skip_errors=False)
    except ConvKernelsError:
        return None


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["klp", "conllu", "penman"])
@FUZZ
@given(data=st.binary(max_size=400), gzipped=st.booleans())
def test_random_bytes_give_package_errors_only(folder, kind, data, gzipped):
    path = folder / f"random{READERS[kind][1]}{'.gz' if gzipped else ''}"
    path.write_bytes(data)
    _read_or_package_error(kind, path)
    _read(kind, path, skip_errors=True)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["klp", "conllu", "penman"])
@FUZZ
@given(data=st.data())
def test_skipping_reads_every_valid_record(folder, kind, data):
    records = [_separated(kind, r) for r in data.draw(st.lists(_records(kind), min_size=1, max_size=6))]
    path = folder / f"records{READERS[kind][1]}"
    alone = []
    for record in records:
        path.write_bytes(b"\n" + record + b"\n")  # after an empty line, as in the joined file below
        alone += _read_or_package_error(kind, path) or _read(kind, path, skip_errors=True)
    path.write_bytes(b"\n" + b"\n\n".join(records) + b"\n")
    everything = _read_or_package_error(kind, path)
    skipping = _read(kind, path, skip_errors=True)
    assert skipping == alone
    assert everything is None or everything == skipping


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["klp", "conllu", "penman"])
@FUZZ
@given(data=st.data())
def test_mutated_gzip_streams(folder, kind, data):
    records = data.draw(st.lists(st.sampled_from(VALID[kind]), min_size=1, max_size=4))
    packed = bytearray(gzip.compress(b"\n\n".join(records) + b"\n"))
    start = data.draw(st.integers(0, len(packed)))
    end = data.draw(st.integers(start, len(packed)))
    packed[start:end] = data.draw(st.binary(max_size=8))
    path = folder / f"mutated{READERS[kind][1]}.gz"
    path.write_bytes(bytes(packed))
    _read_or_package_error(kind, path)
    _read(kind, path, skip_errors=True)


VECTOR_PIECES = ["\t", " ", ",", "1", "0.5", "-2e3", "nan", "inf", "2 3", "dog", "dog::n", "\xa0", "\r", "\n", "x"]


@FUZZ
@given(
    data=st.one_of(
        st.binary(max_size=300),
        st.lists(st.sampled_from(VECTOR_PIECES), max_size=40).map(lambda p: "".join(p).encode()),
    ),
    gzipped=st.booleans(),
)
@pytest.mark.slow
def test_vector_files_give_package_errors_only(folder, data, gzipped):
    path = folder / f"vectors.txt{'.gz' if gzipped else ''}"
    path.write_bytes(data)
    try:
        vectors = WordVectors.load(path)
    except ConvKernelsError:
        return
    assert vectors.matrix.ndim == 2 and all(0 <= row < len(vectors.matrix) for row in vectors.rows.values())
