"""``spacy_convkernels.PooledTok2Vec.v1``: each Doc's vector, the mean of its tok2vec rows.

    [components.textcat.model.text_features]
    @architectures = "spacy_convkernels.PooledTok2Vec.v1"

    [components.textcat.model.text_features.tok2vec]
    @architectures = "spacy-transformers.TransformerListener.v1"
    grad_factor = 1.0
    upstream = "transformer"

    [components.textcat.model.text_features.tok2vec.pooling]
    @layers = "reduce_mean.v1"

The ``text_features`` of ``KernelTextCat.v1`` from any tok2vec (a transformer listener,
spaCy's ``Tok2VecListener.v1``, an own ``Tok2Vec.v2``): the mean of the rows of the Doc's
tokens (a row of zeros for a Doc without tokens), so that the transformer's pooled Doc
vector and the kernel blocks go side by side into one head; gradients flow back into the
tok2vec (into the transformer when its component is trained). Its width ``nO`` is the
tok2vec's, known at initialization (a transformer listener learns it from its upstream
component, initialized before); give ``nO`` in the config when it is not.
"""

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from ..errors import InvalidParameterError
from ..utils.validation import COUNT, validate_params


@registry.architectures("spacy_convkernels.PooledTok2Vec.v1")
@validate_params({"nO": [COUNT, None]}, owner="PooledTok2Vec")
def pooled_tok2vec(tok2vec: Model[list[Doc], list[Floats2d]], nO: int | None = None) -> Model[list[Doc], Floats2d]:
    """Each Doc's vector, the mean of its ``tok2vec`` rows (zeros for a Doc without tokens),
    of width ``nO``: the tok2vec's when null (a transformer listener's, from its upstream)."""
    return Model("pooled_tok2vec", forward, init=init, layers=[tok2vec], refs={"tok2vec": tok2vec}, dims={"nO": nO})


def forward(model: Model, docs: list[Doc], is_train: bool):
    rows, backprop_tok2vec = model.layers[0](docs, is_train)
    lengths = model.ops.asarray1i([len(r) for r in rows])
    if not rows:
        return model.ops.alloc2f(0, model.get_dim("nO")), lambda d_pooled: []
    pooled = model.ops.reduce_mean(model.ops.flatten(rows), lengths)

    def backprop(d_pooled: Floats2d) -> list:
        d_rows = model.ops.backprop_reduce_mean(d_pooled, lengths)
        return backprop_tok2vec(model.ops.unflatten(d_rows, lengths))

    return pooled, backprop


def init(model: Model, X: list[Doc] | None = None, Y=None) -> None:
    """Initialize the tok2vec, then take its width (see the module)."""
    tok2vec = model.layers[0]
    tok2vec.initialize(X=X)
    if model.has_dim("nO"):
        return
    for layer in (tok2vec, tok2vec.get_ref("listener") if tok2vec.has_ref("listener") else None):
        if layer is not None and layer.has_dim("nO"):
            model.set_dim("nO", layer.get_dim("nO"))
            return
    raise InvalidParameterError(
        "PooledTok2Vec: the width of its tok2vec is unknown at initialization; give nO in the config"
    )
