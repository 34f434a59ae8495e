"""The package's kernels as registered functions, so spaCy configs can name them:

    [components.kernel_vectors.kernel]
    @misc = "spacy_convkernels.PartialTreeKernel.v1"
    lam = 0.4

For the smoothed kernels ``vectors = "vocab"`` (the default) stands for the vectors of
the pipeline the component belongs to; any other string is a path to a vectors file.
"""
from spacy.util import registry

from ..kernels import (
    CompositionalSmoothedPartialTreeKernel,
    PartialTreeKernel,
    SmoothedPartialTreeKernel,
    SubsetTreeKernel,
    SubtreeKernel,
)

PIPELINE_VECTORS = "vocab"


@registry.misc("spacy_convkernels.SubtreeKernel.v1")
def subtree_kernel(lam: float = 0.4, variant: str = "textbook") -> SubtreeKernel:
    return SubtreeKernel(lam=lam, variant=variant)


@registry.misc("spacy_convkernels.SubsetTreeKernel.v1")
def subset_tree_kernel(lam: float = 0.4) -> SubsetTreeKernel:
    return SubsetTreeKernel(lam=lam)


@registry.misc("spacy_convkernels.PartialTreeKernel.v1")
def partial_tree_kernel(lam: float = 0.4, mu: float = 0.4, terminal_factor: float = 1.0) -> PartialTreeKernel:
    return PartialTreeKernel(lam=lam, mu=mu, terminal_factor=terminal_factor)


@registry.misc("spacy_convkernels.SmoothedPartialTreeKernel.v1")
def smoothed_partial_tree_kernel(lam: float = 0.4, mu: float = 0.4, terminal_factor: float = 1.0,
                                 threshold: float = 0.01, vectors: str = PIPELINE_VECTORS,
                                 shared_rows: str = "kelp", dilution: float = 0.25) -> SmoothedPartialTreeKernel:
    return SmoothedPartialTreeKernel(lam, mu, terminal_factor, threshold, vectors, shared_rows, dilution)


@registry.misc("spacy_convkernels.CompositionalSmoothedPartialTreeKernel.v1")
def compositional_smoothed_partial_tree_kernel(
    lam: float = 0.4, mu: float = 0.4, terminal_factor: float = 1.0, threshold: float = 0.01,
    vectors: str = PIPELINE_VECTORS, alpha: float = 1.0, beta: float = 1.0, lexical: bool = False,
    syntactic_restriction: bool = False, shared_rows: str = "kelp", dilution: float = 0.25,
) -> CompositionalSmoothedPartialTreeKernel:
    return CompositionalSmoothedPartialTreeKernel(lam, mu, terminal_factor, threshold, vectors, alpha, beta, lexical,
                                                  syntactic_restriction, shared_rows, dilution)


def bind_pipeline_vectors(kernel, vocab):
    """The kernel with ``vectors="vocab"`` replaced by the pipeline's vocab."""
    if getattr(kernel, "vectors", None) == PIPELINE_VECTORS:
        kernel.set_params(vectors=vocab)
    return kernel
