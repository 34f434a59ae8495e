"""The engine's ``.pyi`` stubs say what the compiled modules really offer."""

import ast
import enum
import importlib
import inspect
import re
from pathlib import Path

import pytest

import spacy_convkernels.kernels as kernels_package
import spacy_convkernels.structures as structures_package

PACKAGES = (kernels_package, structures_package)
STUBS = sorted(path for package in PACKAGES for path in Path(package.__file__).parent.glob("_*.pyi"))


def stub_parameters(node: ast.FunctionDef) -> list:
    """(name, kind) of a stub's parameters, ``self`` left out."""
    args = node.args
    positional = [(a.arg, "POSITIONAL_OR_KEYWORD") for a in args.posonlyargs + args.args if a.arg != "self"]
    return positional + [(a.arg, "KEYWORD_ONLY") for a in args.kwonlyargs]


def real_parameters(function) -> list:
    parameters = inspect.signature(function).parameters.values()
    return [(p.name, p.kind.name) for p in parameters if p.name != "self"]


def source_init_parameters(source: str, class_name: str) -> list:
    """(name, kind) of ``__init__``'s parameters of a ``cdef class`` in Cython source (a
    compiled class's ``__init__`` has no introspectable signature)."""
    body = source[source.index(f"cdef class {class_name}") :]
    header = re.search(r"def __init__\(self, (.*?)\):", body, re.S).group(1)
    parameters, kind = [], "POSITIONAL_OR_KEYWORD"
    for part in (p.strip() for p in header.split(",")):
        if part == "*":
            kind = "KEYWORD_ONLY"
            continue
        name = re.match(r"(?:[\w\[\]:]+\s+)*?(\w+)\s*(?:=|not None|$)", part).group(1)
        parameters.append((name, kind))
    return parameters


def test_every_compiled_module_with_a_python_api_has_a_stub():
    assert {stub.stem for stub in STUBS} == {
        "_driver",
        "_index",
        "_openmp",
        "_packing",
        "_settings",
        "_tables",
        "_trees",
        "_dependency",
    }


@pytest.mark.parametrize("stub", STUBS, ids=lambda stub: stub.stem)
def test_stub_matches_the_compiled_module(stub):
    module = importlib.import_module(f"spacy_convkernels.{stub.parent.name}.{stub.stem}")
    source = stub.with_suffix(".pyx").read_text()
    tree = ast.parse(stub.read_text())
    declared = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            declared.add(node.name)
            assert real_parameters(getattr(module, node.name)) == stub_parameters(node), node.name
        elif isinstance(node, ast.ClassDef):
            declared.add(node.name)
            cls = getattr(module, node.name)
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    expected = source_init_parameters(source, node.name)
                    assert expected == stub_parameters(item), f"{node.name}.__init__"
                elif isinstance(item, ast.AnnAssign):
                    assert hasattr(cls, item.target.id), f"{node.name}.{item.target.id}"
                elif isinstance(item, ast.Assign):  # an enum member and its value
                    name = item.targets[0].id
                    assert getattr(cls, name) == ast.literal_eval(item.value), f"{node.name}.{name}"
            if isinstance(cls, enum.EnumMeta):  # every member declared
                members = {item.targets[0].id for item in node.body if isinstance(item, ast.Assign)}
                assert members == set(cls.__members__), node.name
    public = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and getattr(value, "__module__", None) == module.__name__
    }
    assert public == declared
