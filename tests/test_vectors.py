import json
import warnings
import zlib
from pathlib import Path

import numpy as np
import pytest
import spacy
from address_space import run_limited
from bombs import npy_header
from broken_files import gzip_then_broken
from data_paths import CORPORA, need_shared

from spacy_convkernels import ConvKernelsError, Tree
from spacy_convkernels.kernels import SmoothedPartialTreeKernel, VectorsError, WordVectors
from spacy_convkernels.utils import text_lines

WORDSPACE = CORPORA / "trec-qc-kelp-sample" / "wordspace_md300.first60.txt.gz"


def test_kelp_word_space():
    vectors = WordVectors.load(WORDSPACE)
    assert len(vectors.rows) == 177 and vectors.matrix.shape[1] == 300
    np.testing.assert_allclose(np.linalg.norm(vectors.matrix, axis=1), 1.0)
    # md vectors are pruned: what and how share one vector, hence one row
    assert vectors.row("what::w") == vectors.row("how::w") >= 0
    assert vectors.lexical_row("what", "w") == vectors.row("what::w")
    assert vectors.row("no-such-word") == -1


def test_text_and_npy_files_give_the_same_table(tmp_path):
    keys = ["dog", "cat", "pup", "nil"]
    data = np.array([[1, 2, 3], [3, 2, 1], [1, 2, 3], [0, 0, 0]], dtype=np.float32)
    text = tmp_path / "w2v.txt"
    text.write_text("4 3\n" + "".join(f"{k} {' '.join(map(str, v))}\n" for k, v in zip(keys, data)), encoding="utf-8")
    np.save(tmp_path / "vectors.npy", data)
    (tmp_path / "vectors.keys").write_text("\n".join(keys), encoding="utf-8")
    for source in (text, tmp_path / "vectors.npy"):
        vectors = WordVectors.load(source)
        assert vectors.row("dog") == vectors.row("pup") != vectors.row("cat")
        assert vectors.row("nil") == -1  # an all-zero vector is no vector
        assert vectors.matrix.shape == (2, 3)


def test_bad_sources(tmp_path):
    with pytest.raises(VectorsError, match="no word-vector file"):
        WordVectors.load(tmp_path / "missing.txt")
    (tmp_path / "lonely.npy").write_bytes(b"")
    with pytest.raises(VectorsError, match="keys"):
        WordVectors.load(tmp_path / "lonely.npy")
    bad = tmp_path / "bad.txt"
    bad.write_text("a 1 2\nb 1 x\n", encoding="utf-8")
    with pytest.raises(VectorsError, match="line 2"):
        WordVectors.load(bad)
    ragged = tmp_path / "ragged.txt"
    ragged.write_text("a 1 2\nb 1 2 3\n", encoding="utf-8")
    with pytest.raises(VectorsError, match="line 2"):
        WordVectors.load(ragged)
    with pytest.raises(VectorsError):
        WordVectors.from_arrays(["a"], np.array([[np.nan, 1.0]]))
    with pytest.raises(ConvKernelsError):
        SmoothedPartialTreeKernel(vectors=42).gram([Tree("a")])


@pytest.mark.shared
def test_spacy_vocab_source():
    import spacy

    model = need_shared("models/en_core_web_md-3.8.0")
    nlp = spacy.load(model, exclude=["tok2vec", "tagger", "parser", "ner", "lemmatizer", "attribute_ruler", "senter"])
    vectors = WordVectors.load(nlp.vocab)
    assert vectors.matrix.shape == (10112, 300)  # 20,000 rows, 10,112 distinct vectors
    assert vectors.row("what") == vectors.row("how") == vectors.row("where")
    assert vectors.row("who") != vectors.row("what")
    spaced = WordVectors.load(nlp.vocab.vectors)
    assert spaced.row("dog") == vectors.row("dog") >= 0
    kelp = WordVectors.load(need_shared("data/trec-qc-kelp/wordspace_md300.txt.gz"))
    np.testing.assert_allclose(kelp.matrix[kelp.row("dog::n")], vectors.matrix[vectors.row("dog")], atol=1e-6)


def test_a_spacy_table_is_made_once_per_content():
    """A pipeline binds its vectors to every kernel: the same table is one handle, a
    changed one (a vector, a key) a new handle with the change."""
    import spacy

    nlp = spacy.blank("en")
    nlp.vocab.set_vector("dog", np.array([1.0, 2.0, 0.0], dtype=np.float32))
    nlp.vocab.set_vector("cat", np.array([0.0, 1.0, 1.0], dtype=np.float32))
    first = WordVectors.load(nlp.vocab)
    assert WordVectors.load(nlp.vocab) is first
    nlp.vocab.vectors.data[nlp.vocab.vectors.key2row[nlp.vocab.strings["cat"]]] = [1.0, 2.0, 0.0]
    changed = WordVectors.load(nlp.vocab)
    assert first.row("cat") != first.row("dog")
    assert changed is not first and changed.row("cat") == changed.row("dog")
    nlp.vocab.set_vector("pup", np.array([3.0, 0.0, 0.0], dtype=np.float32))
    added = WordVectors.load(nlp.vocab)
    assert added.row("pup") >= 0 and changed.row("pup") == -1


@pytest.mark.parametrize("row", [1.0, True, np.int64(0), "0"], ids=["float", "bool", "numpy", "str"])
def test_a_row_that_is_not_a_python_int_is_refused(row):
    with pytest.raises(VectorsError, match="the row of every key must be an integer"):
        WordVectors({"dog": 0, "cat": row}, np.ones((2, 3)))


def test_a_spacy_table_maps_each_key_to_its_distinct_nonzero_row():
    nlp = spacy.blank("en")
    for word, vector in {"dog": [1, 2, 0], "hound": [1, 2, 0], "cat": [0, 1, 1], "void": [0, 0, 0]}.items():
        nlp.vocab.set_vector(word, np.array(vector, dtype=np.float32))
    table = WordVectors.load(nlp.vocab)
    assert table.row("dog") == table.row("hound") >= 0 and table.row("cat") >= 0 and table.row("void") == -1
    assert table.row("dog") != table.row("cat") and len(table.matrix) == 2
    np.testing.assert_allclose(table.matrix[table.row("cat")], np.array([0, 1, 1]) / np.sqrt(2))
    assert table.lemmas_per_row[table.row("dog")] == 2 and table.lemmas_per_row[table.row("cat")] == 1


def _load_fails(path, words):
    with pytest.raises(VectorsError, match=words) as info:
        WordVectors.load(path)
    return info.value


def test_a_first_line_of_a_word_and_a_number_is_data(tmp_path):
    path = tmp_path / "one.txt"
    path.write_text("dog 0.5\ncat -2\n", encoding="utf-8")
    vectors = WordVectors.load(path)
    assert vectors.row("dog") >= 0 and vectors.row("cat") >= 0 and vectors.matrix.shape == (2, 1)
    header = tmp_path / "header.txt"
    header.write_text("2 3\ndog 1 2 3\ncat 3 2 1\n", encoding="utf-8")
    assert WordVectors.load(header).matrix.shape == (2, 3)
    wrong = tmp_path / "wrong_header.txt"
    wrong.write_text("2 4\ndog 1 2 3\n", encoding="utf-8")
    _load_fails(wrong, "line 2: 3 values for 'dog' where 4 were expected .the header")


def test_tab_separated_word2vec_is_not_kelp(tmp_path):
    path = tmp_path / "tabs.txt"
    path.write_text("dog\t1\t2\t3\ncat\t3\t2\t1\npup\t1\t2\t3\n", encoding="utf-8")
    vectors = WordVectors.load(path)
    assert vectors.matrix.shape == (2, 3) and vectors.row("dog") == vectors.row("pup") != vectors.row("cat")
    kelp = tmp_path / "kelp.txt"
    kelp.write_text("dog::n\t1.0\t0\t1,2,3\ncat::n\t1.0\t0\t3,2,1\n", encoding="utf-8")
    assert WordVectors.load(kelp).matrix.shape == (2, 3)


def test_a_key_may_hold_a_no_break_space(tmp_path):
    path = tmp_path / "glove.txt"
    path.write_text("a\u00a0b 1 2\nc 2 1\n", encoding="utf-8")
    assert WordVectors.load(path).row("a\u00a0b") >= 0


def test_bad_values_name_the_line(tmp_path):
    nan = tmp_path / "nan.txt"
    nan.write_text("a 1 2\nb nan 2\n", encoding="utf-8")
    _load_fails(nan, "line 2: the vector of 'b' holds NaN")
    kelp_nan = tmp_path / "kelp_nan.txt"
    kelp_nan.write_text("a\t1\t0\t1,2\nb\t1\t0\t1,inf\n", encoding="utf-8")
    _load_fails(kelp_nan, "line 2: the vector of 'b' holds NaN or infinite")
    sizes = tmp_path / "sizes.txt"
    sizes.write_text("a\t1\t0\t1,2\nb\t1\t0\t1,2,3\n", encoding="utf-8")
    _load_fails(sizes, "line 2: 3 values for 'b' where 2 were expected .the vector on line 1")
    empty = tmp_path / "empty_vector.txt"
    empty.write_text("a\nb\n", encoding="utf-8")
    _load_fails(empty, "line 1: 0 values")


def test_unreadable_files(tmp_path):
    latin = tmp_path / "latin1.txt"
    latin.write_bytes(b"a 1 2\ncaf\xe9 2 1\n")
    assert isinstance(_load_fails(latin, "line 2: not UTF-8").__cause__, UnicodeDecodeError)
    binary = tmp_path / "vectors.bin"
    binary.write_bytes(b"2 3\n" + np.arange(8, dtype=np.float32).tobytes() + b"\xff\xfe\n")
    _load_fails(binary, "line 2: not UTF-8 .* binary word2vec")
    broken = tmp_path / "broken.txt.gz"
    broken.write_bytes(gzip_then_broken("a 1 2\nb 2 1\n"))
    assert isinstance(_load_fails(broken, "line 3: unreadable gzip data").__cause__, zlib.error)
    folder = tmp_path / "folder.txt"
    folder.mkdir()
    assert isinstance(_load_fails(folder, "cannot open").__cause__, OSError)
    bom = tmp_path / "bom.txt"
    bom.write_bytes(b"\xef\xbb\xbf1 2\ndog 1 2\n")
    assert WordVectors.load(bom).matrix.shape == (1, 2)


def test_unreadable_npy(tmp_path):
    (tmp_path / "junk.keys").write_text("a\nb\n", encoding="utf-8")
    (tmp_path / "junk.npy").write_bytes(b"not a matrix")
    _load_fails(tmp_path / "junk.npy", "not a readable .npy")
    (tmp_path / "text.keys").write_text("a\nb\n", encoding="utf-8")
    np.save(tmp_path / "text.npy", np.array([["x", "y"], ["z", "w"]]))
    _load_fails(tmp_path / "text.npy", "not numbers")
    (tmp_path / "folder.keys").write_text("a\n", encoding="utf-8")
    (tmp_path / "folder.npy").mkdir()
    _load_fails(tmp_path / "folder.npy", "not a readable")
    (tmp_path / "ok.keys").write_bytes("\ufeffa\u2028b\nc\n".encode("utf-8"))  # only \n ends a key
    np.save(tmp_path / "ok.npy", np.eye(2))
    assert set(WordVectors.load(tmp_path / "ok.npy").rows) == {"a\u2028b", "c"}


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
def test_the_constructor_refuses_a_row_that_is_not_finite_naming_the_row_and_key(bad):
    matrix = np.array([[1.0, 0.0], [bad, 1.0]])
    with pytest.raises(VectorsError, match=r"row 1 of the matrix \(key 'cat'\) holds NaN or infinite"):
        WordVectors({"dog": 0, "cat": 1}, matrix)
    raw = np.array([[2.0, 0.0], [0.0, bad]], dtype=np.float32)
    with pytest.raises(VectorsError, match="row 1 of the source vectors .key 'cat'. holds NaN"):
        WordVectors({"dog": 0, "cat": 1}, np.eye(2), raw)
    with pytest.raises(VectorsError, match="the vector of 'cat' .row 1. holds NaN or infinite"):
        WordVectors.from_arrays(["dog", "cat"], matrix)


def test_vectors_near_float32s_largest_value_give_no_numpy_warning(tmp_path):
    big = float(np.finfo(np.float32).max)
    near = np.array([[big, big, big], [1.0, 2.0, 3.0]], dtype=np.float32)
    (tmp_path / "near.txt").write_text(f"a {big!r} {big!r} {big!r}\nb 1 2 3\n", encoding="utf-8")
    np.save(tmp_path / "beyond.npy", np.array([[1.0, 2.0], [1e39, 1.0]]))
    (tmp_path / "beyond.keys").write_text("a\nb\n", encoding="utf-8")
    (tmp_path / "beyond.txt").write_text("a 1 2\nb 1e39 1\n", encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's "overflow encountered in reduce" or "in cast" fails the test
        for vectors in (WordVectors.from_arrays(["a", "b"], near), WordVectors.load(tmp_path / "near.txt")):
            np.testing.assert_allclose(vectors.matrix[vectors.row("a")], np.full(3, 3**-0.5))
            arrays = vectors.to_arrays()
            WordVectors.from_saved_arrays(arrays["vector_keys"], arrays["vector_rows"], arrays["vectors"])
            kernel = SmoothedPartialTreeKernel(vectors=vectors)
            trees = [Tree.from_string("(S (NN a))"), Tree.from_string("(S (NN b))")]
            assert np.isfinite(kernel.gram(trees)).all()
        with pytest.raises(VectorsError, match=r"beyond.npy: the vector of 'b' \(row 1\) holds 1e\+39, beyond float32"):
            WordVectors.load(tmp_path / "beyond.npy")
        _load_fails(tmp_path / "beyond.txt", r"line 2: the vector of 'b' holds 1e\+39, beyond float32's range")


@pytest.mark.parametrize(
    "shape, data, held",
    [((10**6, 10**6), 800, "holds 800 bytes"), ((2, 2), 8, "holds 8 bytes"), ((2,), 24, "holds 24 bytes")],
    ids=["8 TB declared", "short", "long"],
)
def test_an_npy_header_that_does_not_fit_the_file_is_refused_before_reading(tmp_path, shape, data, held):
    """Issue 62: a 928-byte ``.npy`` declaring 10**6 x 10**6 floats had numpy ask for 7.3 TiB
    (MemoryError) under ``gram --vectors``; now its header is checked against the file first."""
    (tmp_path / "v.keys").write_text("a\nb\n", encoding="utf-8")
    (tmp_path / "v.npy").write_bytes(npy_header(shape) + bytes(data))
    error = _load_fails(tmp_path / "v.npy", "not a readable .npy matrix")
    assert f"v.npy declares {shape} float64 values" in str(error) and held in str(error)


DEV_ZERO_SCRIPT = """
import json
from spacy_convkernels.kernels import VectorsError, WordVectors

limit_address_space(200)
try:
    WordVectors.load("/dev/zero")
except VectorsError as error:
    print(json.dumps(str(error)))
"""


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero and an address-space limit")
@pytest.mark.slow
def test_a_file_without_line_ends_is_refused_in_bounded_memory():
    """Issue 36: ``gram ... --vectors /dev/zero`` ended in a MemoryError."""
    done = run_limited(DEV_ZERO_SCRIPT, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout).startswith("/dev/zero, line 1: a line longer than 10,485,760 bytes")


def test_a_long_line_names_the_file_and_line(tmp_path, monkeypatch):
    monkeypatch.setattr(text_lines, "MAX_LINE_BYTES", 50)
    path = tmp_path / "long.txt"
    path.write_text("dog 1 2\ncat " + " ".join(["1"] * 40) + "\n", encoding="utf-8")
    with pytest.raises(VectorsError, match=r"long\.txt, line 2: a line longer than 50 bytes"):
        WordVectors.load(path)
