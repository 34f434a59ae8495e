"""The package's kernels as registered functions, so spaCy configs can name them:

    [components.kernel_vectors.kernel]
    @misc = "spacy_convkernels.PartialTreeKernel.v1"
    lam = 0.4

Each function is made from its kernel class and takes exactly the class's parameters,
as keywords. For the kernels with word vectors, ``vectors = "vocab"`` (the default in a
config) stands for the vectors of the pipeline the component belongs to; any other
string is a path to a vectors file, and null means no vectors.
"""

import inspect
import os

from spacy.util import registry

from ..errors import ModelFileError
from ..kernels import (
    CompositionalSmoothedPartialTreeKernel,
    ForestKernel,
    Kernel,
    PartialTreeKernel,
    SmoothedPartialTreeKernel,
    SubsequencePathKernel,
    SubsetTreeKernel,
    SubtreeKernel,
    ZelenkoTreeKernel,
)

PIPELINE_VECTORS = "vocab"


def register(kernel_class: type[Kernel]):
    """Register ``spacy_convkernels.<class name>.v1``: a function with the class's keyword
    parameters (``vectors`` defaulting to the pipeline's) that makes the kernel."""

    def make(**params) -> Kernel:
        return kernel_class(**params)

    parameters = [
        parameter.replace(
            kind=inspect.Parameter.KEYWORD_ONLY, default=PIPELINE_VECTORS if name == "vectors" else parameter.default
        )
        for name, parameter in inspect.signature(kernel_class).parameters.items()
    ]
    make.__signature__ = inspect.Signature(parameters, return_annotation=kernel_class)  # type: ignore[attr-defined]
    make.__name__ = make.__qualname__ = kernel_class.__name__
    make.__doc__ = kernel_class.__doc__
    return registry.misc(f"spacy_convkernels.{kernel_class.__name__}.v1", func=make)


subtree_kernel = register(SubtreeKernel)
subset_tree_kernel = register(SubsetTreeKernel)
partial_tree_kernel = register(PartialTreeKernel)
smoothed_partial_tree_kernel = register(SmoothedPartialTreeKernel)
compositional_smoothed_partial_tree_kernel = register(CompositionalSmoothedPartialTreeKernel)
subsequence_path_kernel = register(SubsequencePathKernel)
zelenko_tree_kernel = register(ZelenkoTreeKernel)
forest_kernel = register(ForestKernel)


def bind_pipeline_vectors(kernel, vocab):
    """The kernel with ``vectors="vocab"`` replaced by the pipeline's vocab."""
    if getattr(kernel, "vectors", None) == PIPELINE_VECTORS:
        kernel.set_params(vectors=vocab)
    return kernel


def bind_model_vectors(model, vocab) -> None:
    """``bind_pipeline_vectors`` for the kernel of every feature block of a thinc model; a
    component calls it at first use, since ``spacy.load`` creates components before it loads
    the vectors."""
    for kernel in model_kernels(model):
        bind_pipeline_vectors(kernel, vocab)


def refuse_vector_files(kernels, component: str) -> None:
    """Refuse to load a saved component whose kernel's vectors are a path (in the
    pipeline's config.cfg): a saved pipeline never opens another file; its vectors are the
    pipeline's (``vectors = "vocab"``), saved with it."""
    for kernel in kernels:
        vectors = getattr(kernel, "vectors", None)
        if isinstance(vectors, (str, os.PathLike)) and vectors != PIPELINE_VECTORS:
            raise ModelFileError(
                f"{component}: its kernel's vectors name a file (config.cfg); a saved pipeline never opens "
                'another file: train it with vectors = "vocab", the pipeline\'s vectors, saved with it',
                source=component,
            )


def model_kernels(model) -> list:
    """The kernels of the feature blocks of a thinc model."""
    return [node.attrs["encoder"].kernel for node in model.walk() if "encoder" in node.attrs]
