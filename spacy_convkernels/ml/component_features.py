"""``spacy_convkernels.KernelFeatures.v1``: each Doc's kernel vector as model input.

    [components.textcat.model.kernel_features]
    @architectures = "spacy_convkernels.KernelFeatures.v1"
    extension = "kernel_vector"
    nO = ${components.kernel_vectors.n_components}

A thinc ``Model[List[Doc], Floats2d]`` without weights: one row per Doc, read from
``Doc._.kernel_vector`` (written by ``kernel_vectors``) or ``Doc._.kernel_klsh_code`` (written by
``kernel_klsh_codes``; the bits of its sentences' codes, averaged over the sentences, so 0/1 for
a one-sentence Doc). A Doc the component left without a value (no sentence with a tree)
gives a row of zeros. Gradients stop here.

The width ``nO`` is best given in the config: spaCy initializes a textcat model on the
examples' reference docs, which no component has annotated. Without it, ``initialize``
reads it from the first annotated Doc of its sample. The ``kernel_vectors`` component,
initialized before, sets ``nO`` of these layers to the width it produces
(:func:`set_feature_widths`): with fewer training sentences than ``n_components``, its
vectors have fewer values. A Doc the component did not process raises
:class:`~spacy_convkernels.errors.MissingAnnotationError`.
"""

from typing import cast

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from ..errors import InvalidParameterError, MissingAnnotationError
from ..extensions import user_data
from ..utils.validation import COUNT, Options, validate_params

EXTENSIONS = {
    "kernel_vector": "kernel_vectors",
    "kernel_klsh_code": "kernel_klsh_codes",
}  # extension: component writing it


@registry.architectures("spacy_convkernels.KernelFeatures.v1")
@validate_params({"extension": [Options(*EXTENSIONS)], "nO": [COUNT, None]}, owner="KernelFeatures")
def kernel_features(extension: str = "kernel_vector", nO: int | None = None) -> Model[list[Doc], Floats2d]:
    """The Docs' ``Doc._.<extension>`` as rows of a float32 matrix (see the module docstring)."""
    # the width is set at initialization (or by loading), so a saved width that followed the data loads
    attrs = {"extension": extension, "width": nO}
    return Model("kernel_features", forward, init=init, dims={"nO": None}, attrs=attrs)


def forward(model: Model, docs: list[Doc], is_train: bool):
    extension = model.attrs["extension"]
    width = model.get_dim("nO")
    rows = np.zeros((len(docs), width), dtype=np.float32)
    for i, doc in enumerate(docs):
        value = doc_value(doc, extension)
        if value is not None:
            padding = range(8) if extension == "kernel_klsh_code" else range(1)  # packed codes end in 0-7 zero bits
            if len(value) - width not in padding:
                raise InvalidParameterError(
                    f"KernelFeatures: nO is {width} but Doc._.{extension} of {doc.text[:40]!r} has {len(value)} values"
                )
            rows[i] = value[:width]

    def backprop(d_rows: Floats2d) -> list[Doc]:
        return []

    return model.ops.asarray2f(cast(Floats2d, rows)), backprop


def init(model: Model, X: list[Doc] | None = None, Y=None) -> None:
    """Take ``nO`` from the config, else from the first annotated Doc of ``X`` (unless the
    component writing the vectors set it, :func:`set_feature_widths`)."""
    if model.has_dim("nO"):
        return
    if model.attrs["width"] is not None:
        model.set_dim("nO", model.attrs["width"])
        return
    extension = model.attrs["extension"]
    for doc in X or []:
        if _written(doc, extension):
            value = doc_value(doc, extension)
            if value is not None:
                model.set_dim("nO", len(value))
                return
    raise MissingAnnotationError(
        f"KernelFeatures: its width nO is not set and no Doc of the initialization sample has "
        f"Doc._.{extension}; set nO in the config (the {EXTENSIONS[extension]} component's "
        f"{'n_components' if extension == 'kernel_vector' else 'n_bits'})"
    )


def set_feature_widths(nlp: Language, *, extension: str, width: int) -> None:
    """Set ``nO`` of every KernelFeatures layer of the pipeline's models that reads
    ``Doc._.<extension>`` to ``width``, the width its component produces."""
    for _, component in nlp.components:
        model = getattr(component, "model", None)
        if isinstance(model, Model):
            for node in model.walk():
                if node.name == "kernel_features" and node.attrs.get("extension") == extension:
                    node.set_dim("nO", width, force=True)


def doc_value(doc: Doc, extension: str) -> np.ndarray | None:
    """The Doc's feature vector (None when the component found no tree in it)."""
    if not _written(doc, extension):
        raise MissingAnnotationError(
            f"KernelFeatures: Doc._.{extension} was not written on {doc.text[:40]!r}; put the "
            f"{EXTENSIONS[extension]} component before this model (annotating, when training)"
        )
    value = doc._.get(extension)
    if extension == "kernel_vector" or value is None:
        return value
    codes = [np.unpackbits(code) for code in value if code is not None]
    return np.mean(codes, axis=0) if codes else None


def _written(doc: Doc, extension: str) -> bool:
    """Whether a component set ``Doc._.<extension>`` (even to None), as opposed to its default."""
    return Doc.has_extension(extension) and doc._._get_key(extension) in user_data(doc)
