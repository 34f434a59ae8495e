"""``spacy_convkernels.KernelBlocks.v1``: several kernel feature blocks side by side.

    [components.textcat.model.kernel_features]
    @architectures = "spacy_convkernels.KernelBlocks.v1"

    [components.textcat.model.kernel_features.*.csptk]
    @architectures = "spacy_convkernels.KernelSVMFeatures.v1"
    representation = "clct"
    ...

    [components.textcat.model.kernel_features.*.ptk]
    @architectures = "spacy_convkernels.KernelNystroemFeatures.v1"
    representation = "grct"
    ...

Each block goes through its own normalization, then the blocks are concatenated: a layer
norm for a block whose unit-norm rows spread over many coordinates (Nyström vectors,
KLSH bits), none for a block that says its values are on a scale of their own
(``attrs["layer_norm"]`` False: SVM decisions, whose margin means something). The blocks
take whatever the model above gives them (Docs; Docs and their candidates).
``KernelTextCat.v1`` and ``RelationModel.v1`` put a single block through
:func:`kernel_blocks` too, so one block and several behave alike.
"""

from spacy.util import registry
from thinc.api import LayerNorm, Model, chain
from thinc.types import Floats2d


@registry.architectures("spacy_convkernels.KernelBlocks.v1")
def kernel_blocks(*blocks: Model) -> Model:
    """The blocks, each normalized, concatenated (see the module)."""
    parts: list[Model] = []
    refs: dict[str, Model | None] = {}
    for i, block in enumerate(blocks):
        refs[f"block{i}"] = block
        if block.attrs.get("layer_norm", True):
            norm = refs[f"norm{i}"] = LayerNorm()
            parts.append(chain(block, norm))
        else:
            parts.append(block)
    return Model("kernel_blocks", blocks_forward, init=blocks_init, layers=parts, refs=refs, dims={"nO": None})


def as_kernel_blocks(features: Model) -> Model:
    """``features`` as a :func:`kernel_blocks` model (itself if it is one)."""
    return features if features.name == "kernel_blocks" else kernel_blocks(features)


def blocks_of(model: Model) -> list[Model]:
    """The feature blocks of a :func:`kernel_blocks` model, in order."""
    return [model.get_ref(f"block{i}") for i in range(len(model.layers))]


def blocks_forward(model: Model, inputs, is_train: bool):
    outputs, backprops = zip(*(part(inputs, is_train) for part in model.layers))
    widths = [rows.shape[1] for rows in outputs]

    def backprop(d_rows: Floats2d):
        start = 0
        for width, backprop_part in zip(widths, backprops):
            backprop_part(d_rows[:, start : start + width])
            start += width
        return []

    return model.ops.xp.hstack(outputs), backprop


def blocks_init(model: Model, X=None, Y=None) -> None:
    """Initialize (fit) every block on ``X`` and ``Y``, then each layer norm from its
    block's width, without computing the blocks' features on ``X``."""
    width = 0
    for i, block in enumerate(blocks_of(model)):
        block.initialize(X=X, Y=Y)
        block_width = block.get_dim("nO") if block.has_dim("nO") else block.predict(X).shape[1]
        if model.has_ref(f"norm{i}"):
            model.get_ref(f"norm{i}").initialize(X=model.ops.alloc2f(1, block_width))
        width += block_width
    model.set_dim("nO", width, force=True)
