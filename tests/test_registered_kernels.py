"""Every kernel is usable from a spaCy config, with exactly its class's parameters, and
every list of the kernels follows the registration (``kernels.KERNELS``; pyproject.toml's
entry points: ``test_config_reference.py``)."""

import importlib
import inspect
import pkgutil

import pytest
from confection import Config
from spacy.util import registry

from spacy_convkernels import Tree, kernels
from spacy_convkernels.cli import kernel_inputs
from spacy_convkernels.errors import InvalidParameterError
from spacy_convkernels.kernels import (
    KERNELS,
    CompositionalSmoothedPartialTreeKernel,
    PartialTreeKernel,
    SubsequencePathKernel,
    SubsetTreeKernel,
    SubtreeKernel,
)
from spacy_convkernels.kernels.tuple_kernels import TupleKernel


def kernel_classes_of_the_package() -> set:
    """The public classes of the kernels' modules whose instances compute a kernel (their
    default instance names a kind of the engine)."""
    found = set()
    for info in pkgutil.iter_modules(kernels.__path__):
        for name, cls in vars(importlib.import_module(f"{kernels.__name__}.{info.name}")).items():
            if inspect.isclass(cls) and issubclass(cls, kernels.Kernel) and not name.startswith("_"):
                try:
                    cls()._configuration()
                except (AttributeError, NotImplementedError):  # a base class: TreeKernel, TupleKernel
                    continue
                found.add(cls)
    return found


def test_every_kernel_of_the_package_is_registered():
    assert kernel_classes_of_the_package() == set(KERNELS)
    assert {name for name in kernels.__all__ if getattr(kernels, name) in KERNELS} == {k.__name__ for k in KERNELS}


def test_the_command_line_offers_every_kernel_over_plain_trees():
    """The command line reads trees of plain labels: every kernel over them (tuple labels
    are not plain), each once. It lists them by hand, as its help imports no kernel."""
    over_trees = {k.__name__ for k in KERNELS if k.structure_type is Tree and not issubclass(k, TupleKernel)}
    assert sorted(kernel_inputs.KERNELS.values()) == sorted(over_trees)


@pytest.mark.parametrize("kernel_class", KERNELS, ids=lambda c: c.__name__)
def test_every_kernel_is_registered_with_its_class_parameters(kernel_class):
    function = registry.misc.get(f"spacy_convkernels.{kernel_class.__name__}.v1")
    assert list(inspect.signature(function).parameters) == list(inspect.signature(kernel_class).parameters)
    kernel = function(**{"vectors": None} if "vectors" in inspect.signature(kernel_class).parameters else {})
    assert isinstance(kernel, kernel_class)


def test_a_config_sets_any_parameter_including_label_weights():
    config = Config().from_str("""
    [kernel]
    @misc = "spacy_convkernels.SubsetTreeKernel.v1"
    lam = 0.3
    label_weights = {"SYNT##det": 0.0}
    """)
    kernel = registry.resolve(config)["kernel"]
    assert kernel.get_params() == {"lam": 0.3, "label_weights": {"SYNT##det": 0.0}, "max_work": 10**8}


@pytest.mark.parametrize("kernel_class", KERNELS, ids=lambda c: c.__name__)
def test_constructors_take_keywords_after_the_first_parameter(kernel_class):
    parameters = list(inspect.signature(kernel_class).parameters.values())
    assert parameters[0].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in parameters[1:])
    assert set(kernel_class._parameter_constraints) == {p.name for p in parameters}


@pytest.mark.parametrize(
    "kernel, message",
    [
        (PartialTreeKernel(mu=0), "PartialTreeKernel: mu must be a finite number in (0, inf), got 0"),
        (SubtreeKernel(variant="fast"), "SubtreeKernel: variant must be one of 'textbook', 'kelp', got 'fast'"),
        (SubsequencePathKernel(lam=1), "SubsequencePathKernel: lam must be a finite number in (0, 1), got 1"),
        (
            SubsetTreeKernel(label_weights={"a": -1}),
            "label_weights must be a dict of label -> finite weight >= 0 or None",
        ),
        (CompositionalSmoothedPartialTreeKernel(lexical="yes"), "lexical must be True or False, got 'yes'"),
    ],
)
def test_parameters_are_checked_by_one_table_with_clear_messages(kernel, message):
    with pytest.raises(InvalidParameterError) as error:
        kernel.gram([])
    assert message in str(error.value)
