"""PooledTok2Vec.v1: each Doc's mean tok2vec row, its gradient, its width and its errors."""

import numpy as np
import pytest
import spacy
from spacy.util import registry
from thinc.api import Model

from spacy_convkernels.errors import InvalidParameterError
from spacy_convkernels.ml.pooled_tok2vec import pooled_tok2vec


def fixed_rows(nO=None) -> Model:
    """A tok2vec whose rows are (token index + 1) times a row of ones, and which records its gradient."""

    def forward(model, docs, is_train):
        rows = [np.outer(np.arange(1, len(doc) + 1), np.ones(3)).astype("f") for doc in docs]

        def backprop(d_rows):
            model.attrs["d_rows"] = d_rows
            return []

        return rows, backprop

    return Model("fixed_rows", forward, dims={"nO": nO}, attrs={})


def test_each_doc_gets_its_mean_row_and_shares_its_gradient():
    nlp = spacy.blank("en")
    docs = [nlp("one two three four"), nlp(""), nlp("five")]
    model = pooled_tok2vec(fixed_rows(nO=3))
    model.initialize(X=docs)
    pooled, backprop = model(docs, is_train=True)
    np.testing.assert_allclose(pooled, [[2.5] * 3, [0.0] * 3, [1.0] * 3])
    backprop(model.ops.asarray2f(np.ones((3, 3))))
    d_rows = model.layers[0].attrs["d_rows"]
    assert [len(d) for d in d_rows] == [4, 0, 1]
    np.testing.assert_allclose(d_rows[0], np.full((4, 3), 0.25))
    np.testing.assert_allclose(d_rows[2], np.ones((1, 3)))
    assert model.get_dim("nO") == 3
    assert model.predict([]).shape == (0, 3)


def test_width_from_the_config_the_tok2vec_or_an_error():
    docs = [spacy.blank("en")("a b")]
    given = pooled_tok2vec(fixed_rows(), nO=3)
    given.initialize(X=docs)
    assert given.get_dim("nO") == 3
    with pytest.raises(InvalidParameterError, match="give nO in the config"):
        pooled_tok2vec(fixed_rows()).initialize(X=docs)
    with pytest.raises(InvalidParameterError, match=r"nO must be an integer in \[1, inf\]"):
        pooled_tok2vec(fixed_rows(), nO=0)


def test_registered():
    assert registry.architectures.get("spacy_convkernels.PooledTok2Vec.v1") is pooled_tok2vec
