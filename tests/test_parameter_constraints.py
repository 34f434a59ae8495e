"""Every table of parameter constraints in the package (a class's ``_parameter_constraints``,
or a function's or constructor's through ``validate_params``), found by walking the
package, refuses an invalid value of each of its entries where the work starts (a
kernel's ``gram``, an estimator's ``fit``, the call), in the one message form."""

import importlib
import inspect
import pkgutil
import re

import pytest
import spacy

import spacy_convkernels
from spacy_convkernels.errors import InvalidParameterError
from spacy_convkernels.kernels import Kernel, PartialTreeKernel
from spacy_convkernels.utils.validation import Anything

INVALID = "<an invalid value>"

#: Valid values of the constrained parameters that have no default, by name.
REQUIRED = {
    "kernel": PartialTreeKernel(),
    "nlp": spacy.blank("en"),
    "name": "tested",
    "representation": "grct",
    "n_components": 2,
    "n_references": 30,
    "n_bits": 8,
}


def _tables() -> list[tuple[str, object, dict]]:
    """(kind, owner, table) of every non-empty table in the package: kind "class" for a
    class that validates its attributes, "call" for a decorated function or constructor."""
    found = []
    for module_info in pkgutil.walk_packages(spacy_convkernels.__path__, "spacy_convkernels."):
        if module_info.name.endswith(".__main__"):  # runs the command line
            continue
        module = importlib.import_module(module_info.name)
        for value in vars(module).values():
            if getattr(value, "__module__", None) != module.__name__:
                continue
            if inspect.isclass(value) and getattr(value, "_parameter_constraints", None):
                found.append(("class", value, value._parameter_constraints))
            elif inspect.isclass(value) and hasattr(value.__init__, "_parameter_constraints"):
                found.append(("call", value, value.__init__._parameter_constraints))
            elif inspect.isfunction(value) and hasattr(value, "_parameter_constraints"):
                found.append(("call", value, value._parameter_constraints))
    return found


TABLES = _tables()
ENTRIES = [
    pytest.param(kind, owner, name, id=f"{owner.__module__}.{owner.__qualname__}.{name}")
    for kind, owner, table in TABLES
    for name, constraints in table.items()
    if not any(isinstance(c, Anything) for c in constraints)  # anything is valid there
]


def _arguments(callable_) -> dict:
    """Valid values for the parameters of ``callable_`` without a default (None where no
    constraint applies: the checks come before the work)."""
    parameters = inspect.signature(callable_).parameters.values()
    return {
        p.name: REQUIRED.get(p.name)
        for p in parameters
        if p.default is inspect.Parameter.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    }


def test_the_walk_finds_the_tables_of_every_layer():
    modules = {owner.__module__.split(".")[1] for _, owner, _ in TABLES}
    assert {"kernels", "approx", "learn", "components", "ml", "corpora"} <= modules


@pytest.mark.parametrize("kind, owner, name", ENTRIES)
def test_every_entry_refuses_an_invalid_value(kind, owner, name):
    message = rf"^\S.*: {name} must be .+, got {re.escape(repr(INVALID))}$"
    if kind == "class":
        obj = owner(**_arguments(owner)).set_params(**{name: INVALID})
        with pytest.raises(InvalidParameterError, match=message):
            obj.gram([]) if isinstance(obj, Kernel) else obj.fit([], [])
    else:
        with pytest.raises(InvalidParameterError, match=message):
            owner(**{**_arguments(owner), name: INVALID})


@pytest.mark.parametrize("kind, owner, table", TABLES, ids=lambda value: getattr(value, "__qualname__", ""))
def test_every_entry_names_a_parameter(kind, owner, table):
    assert set(table) <= set(inspect.signature(owner).parameters)
