"""``spacy_convkernels.KernelTextCat.v1``: a text classifier over kernel features, a text
representation, or both.

    [components.textcat.model]
    @architectures = "spacy_convkernels.KernelTextCat.v1"
    exclusive_classes = true
    hidden_width = 256

    [components.textcat.model.kernel_features]
    @architectures = "spacy_convkernels.KernelFeatures.v1"
    nO = ${components.kernel_vectors.n_components}

    [components.textcat.model.text_features]
    @architectures = "spacy.TextCatBOW.v3"      # bag of n-grams as a learned embedding
    exclusive_classes = true
    ngram_size = 2
    no_output_layer = true
    length = 65536
    nO = 32

The two feature blocks (any ``Model[List[Doc], Floats2d]``; ``text_features`` may also
be a mean-pooled ``tok2vec`` listener, see docs/results/qc_textcat.md) are concatenated, go
through a maxout hidden layer of ``hidden_width`` units (none when null; its dropout is
``[training] dropout``), then a softmax (``exclusive_classes``) or logistic output of
one unit per label. ``kernel_features`` may be one block or several
(``spacy_convkernels.KernelBlocks.v1``), each through its own normalization (a layer
norm for vectors, none for SVM decisions). Either part may be null: kernel only, text
only or both are overrides of one config.
"""

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Linear, Logistic, Maxout, Model, Softmax, chain, concatenate, glorot_uniform_init
from thinc.types import Floats2d

from ..errors import InvalidParameterError
from ..utils.validation import COUNT, validate_params
from .kernel_blocks import as_kernel_blocks


@registry.architectures("spacy_convkernels.KernelTextCat.v1")
@validate_params({"hidden_width": [COUNT, None]}, owner="KernelTextCat")
def kernel_textcat(
    kernel_features: Model[list[Doc], Floats2d] | None = None,
    text_features: Model[list[Doc], Floats2d] | None = None,
    exclusive_classes: bool = True,
    hidden_width: int | None = 256,
    nO: int | None = None,
) -> Model[list[Doc], Floats2d]:
    """The classifier of the module docstring."""
    if kernel_features is not None:
        kernel_features = as_kernel_blocks(kernel_features)
    parts = [part for part in (kernel_features, text_features) if part is not None]
    if not parts:
        raise InvalidParameterError("KernelTextCat: kernel_features and text_features are both null; give one")
    layers: list[Model] = [concatenate(*parts) if len(parts) > 1 else parts[0]]
    if hidden_width is not None:
        layers.append(Maxout(nO=hidden_width, nP=3, dropout=0.0))  # the rate is set by training
    # random output weights: a text block starts at 0 (spaCy's bag of words), which zero weights would keep there
    output = Softmax(nO=nO, init_W=glorot_uniform_init) if exclusive_classes else Linear(nO=nO)
    layers.append(output)
    if not exclusive_classes:
        layers.append(Logistic())
    model: Model[list[Doc], Floats2d] = chain(*layers)
    model.init = init
    model.set_ref("output_layer", output)
    for name, part in (("kernel_features", kernel_features), ("text_features", text_features)):
        if part is not None:
            model.set_ref(name, part)
    if nO is not None:
        model.set_dim("nO", nO)
    model.attrs["multi_label"] = not exclusive_classes
    return model


def init(model: Model, X: list[Doc] | None = None, Y=None) -> None:
    """Initialize the feature blocks on ``X``, then the layers above them from the blocks'
    widths and ``Y``, without running the kernel features on ``X`` (spaCy initializes a
    textcat on reference docs, which carry no kernel vectors)."""
    width = 0
    for name in ("kernel_features", "text_features"):
        if model.has_ref(name):
            part = model.get_ref(name)
            part.initialize(X=X)
            width += part.get_dim("nO") if part.has_dim("nO") else part.predict(X).shape[1]
    inputs = model.ops.alloc2f(1 if Y is None else len(Y), width)
    for layer in model.layers[1:]:
        layer.initialize(X=inputs, Y=Y if layer is model.get_ref("output_layer") else None)
        inputs = layer.predict(inputs)
    if Y is None and not model.get_ref("output_layer").has_dim("nO"):
        raise InvalidParameterError("KernelTextCat: the number of labels is unknown; initialize with labelled examples")
    model.set_dim("nO", model.get_ref("output_layer").get_dim("nO"), force=True)
