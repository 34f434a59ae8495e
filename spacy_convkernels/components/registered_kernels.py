"""The package's kernels as registered functions, so spaCy configs can name them:

    [components.kernel_vectors.kernel]
    @misc = "spacy_convkernels.PartialTreeKernel.v1"
    lam = 0.4

One function for each kernel of the registration (``kernels.KERNELS``), made from its
class: it takes exactly the class's parameters, as keywords. For the kernels with word
vectors, ``vectors = "vocab"`` (the default in a config) stands for the vectors of the
pipeline the component belongs to; any other string is a path to a vectors file, and null
means no vectors. Nothing else: a block of a registered function (``@readers = ...``) as
the vectors is refused (:func:`check_config_vectors`; the command line finds one before
spaCy runs it, :func:`vector_functions`).
"""

import inspect
import os
from types import SimpleNamespace

from spacy.util import registry

from ..errors import InvalidParameterError, ModelFileError
from ..kernels import KERNELS, Kernel

PIPELINE_VECTORS = "vocab"
#: The names of the registered kernel functions.
KERNEL_FUNCTIONS: set[str] = set()


def register(kernel_class: type[Kernel]):
    """Register ``spacy_convkernels.<class name>.v1``: a function with the class's keyword
    parameters (``vectors`` defaulting to the pipeline's, checked by
    :func:`check_config_vectors`) that makes the kernel."""
    name = f"spacy_convkernels.{kernel_class.__name__}.v1"
    takes_vectors = "vectors" in inspect.signature(kernel_class).parameters

    def make(**params) -> Kernel:
        if takes_vectors:
            check_config_vectors(params.get("vectors", PIPELINE_VECTORS), name)
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
    KERNEL_FUNCTIONS.add(name)
    return registry.misc(name, func=make)


def check_config_vectors(vectors, function: str) -> None:
    """A config's kernel ``vectors``: ``"vocab"``, a path or null. Anything else is the
    value of a registered function the config names there (``@readers``, ``@misc``), which
    may have read any file: refused with :class:`InvalidParameterError`. spaCy calls that
    function before this check (a config's innermost blocks are resolved first), so
    ``spacy.load`` of such a pipeline has run it; the commands refuse the pipeline before
    spaCy reads it (:func:`vector_functions`)."""
    if vectors is None or isinstance(vectors, (str, os.PathLike)):
        return
    raise InvalidParameterError(
        f'{function}: vectors must be "vocab", a path or null, got a {type(vectors).__name__}: the value of a '
        "registered function given as the vectors in the config (@readers, @misc), which is refused"
    )


def vector_functions(config) -> list[str]:
    """The blocks of registered functions (``@readers = ...``) that a config (a nested dict,
    not resolved) gives as the ``vectors`` of a registered kernel, each as
    ``"[components.NAME.kernel.vectors] @readers = 'FUNCTION'"``: found without running
    anything, the arguments of the function (a path) not shown."""
    found: list[str] = []
    blocks = [("", config)]
    while blocks:
        where, block = blocks.pop()
        if block.get("@misc") in KERNEL_FUNCTIONS and isinstance(block.get("vectors"), dict):
            references = [f"{key} = {value!r}" for key, value in block["vectors"].items() if str(key).startswith("@")]
            if references:
                found.append(f"[{where}.vectors] {references[0]}")
        blocks.extend((f"{where}.{key}".lstrip("."), value) for key, value in block.items() if isinstance(value, dict))
    return sorted(found)


functions = SimpleNamespace(**{kernel.__name__: register(kernel) for kernel in KERNELS})
"""The registered function of each kernel, by class name: what the ``spacy_misc`` entry
points of pyproject.toml load (``registered_kernels:functions.NAME``)."""


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
    return [kernel for node in model.walk() if "encoder" in node.attrs for kernel in node.attrs["encoder"].kernels]
