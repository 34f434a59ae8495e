import numpy as np
import pytest

from spacy_convkernels import ConvKernelsError, Tree
from spacy_convkernels.kernels import SmoothedPartialTreeKernel, VectorsError, WordVectors

from conftest import CORPORA, need_shared

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
