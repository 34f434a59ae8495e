"""The package's layers import downwards only and no modules import each other in a cycle,
read from the source (``ast`` for Python, the ``import``/``cimport`` lines of the compiled
engine's ``.pyx``/``.pxd``; lazy imports inside functions included), so that an edge
cannot come back unnoticed."""

import ast
import re
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "spacy_convkernels"
ROOT = ""  # the package's __init__: the exceptions, and Tree on first use

#: The layers, bottom first. A module imports modules of its own top-level package or
#: module, or of a lower layer; never of its own layer's other members, never upwards.
#: ``ml`` is below ``components`` as in spaCy (``spacy/pipeline`` imports ``spacy/ml``).
LAYERS = [
    {"errors"},
    {"utils"},
    {"structures"},
    {ROOT},
    {"pair_scores"},
    {"extensions"},
    {"corpora", "kernels"},
    {"approx"},
    {"learn"},
    {"distributed", "plots", "data", "configs"},
    {"ml"},
    {"components"},
    {"cli"},
    {"__main__"},
]
RANK = {name: rank for rank, layer in enumerate(LAYERS) for name in layer}
SPACY_LAYER = {"ml", "components", "cli", "__main__"}

#: Modules below the spaCy layer that use spaCy: readers make Docs and Examples, the
#: extension attributes are spaCy's, beam forests read a parser, dependency trees are
#: built from a Doc's arrays, the demo's samples are read into Docs.
USE_SPACY = {"corpora", "extensions", "structures.forest", "structures.dependency", "data.samples"}

CYTHON_IMPORT = re.compile(r"^\s*(?:from\s+(\.*[\w.]*)\s+c?import\b|c?import\s+([\w.]+))", re.MULTILINE)


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    path = PACKAGE / name.replace(".", "/")
    return path.is_dir() or any(path.with_suffix(suffix).exists() for suffix in (".py", ".pyx"))


def _statements(path: Path):
    """(level, module, names) of each import of ``path``: ``import a.b`` is (0, "a.b", [])."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import):
                yield from ((0, alias.name, []) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                yield node.level, node.module or "", [alias.name for alias in node.names]
        return
    for relative, absolute in CYTHON_IMPORT.findall(text):  # names after cimport not needed: no `from . cimport`
        module = relative or absolute
        level = len(module) - len(module.lstrip("."))
        yield level, module[level:], []


def _imports(path: Path) -> tuple[set[str], set[str]]:
    """(the in-package modules ``path`` imports, relative to the package: "kernels.base";
    the other modules it imports, by their top name: "spacy")."""
    name = _module_name(path)
    parts = name.split(".") if name else []
    package = parts if path.name == "__init__.py" else parts[:-1]
    internal, external = set(), set()
    for level, module, names in _statements(path):
        if level:
            target = ".".join(package[: len(package) - level + 1] + (module.split(".") if module else []))
        else:
            top, _, target = module.partition(".")
            if top != "spacy_convkernels":
                external.add(top)
                continue
        # `from . import kernels`: the submodule itself; `from .. import __version__`: the package
        submodules = {f"{target}.{alias}".strip(".") for alias in names}
        found = {submodule for submodule in submodules if _is_module(submodule)}
        internal |= found
        if not names or found != submodules:
            internal.add(target)
    return internal - {name}, external


def _read_package() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    internal: dict[str, set[str]] = {}
    external: dict[str, set[str]] = {}
    for path in sorted(path for suffix in ("*.py", "*.pyx", "*.pxd") for path in PACKAGE.rglob(suffix)):
        found, other = _imports(path)
        name = _module_name(path)
        internal.setdefault(name, set()).update(found)
        external.setdefault(name, set()).update(other)
    return internal, external


MODULES, EXTERNAL = _read_package()


def _layer(module: str) -> str:
    return module.split(".")[0]


def _edges(where, what) -> set[tuple[str, str]]:
    return {
        (module, target) for module, targets in MODULES.items() if where(module) for target in targets if what(target)
    }


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as error:
        return error.args[1]
    return []


def test_every_module_is_in_a_layer():
    assert not {module for module in MODULES if _layer(module) not in RANK}, "place a new module in LAYERS"


def test_every_import_goes_down_a_layer_or_stays_in_its_package():
    def upwards_or_sideways(module, target):
        if _layer(module) not in RANK or _layer(target) not in RANK:  # the test above says so
            return False
        return _layer(module) != _layer(target) and RANK[_layer(target)] >= RANK[_layer(module)]

    assert not {(m, t) for m, targets in MODULES.items() for t in targets if upwards_or_sideways(m, t)}


def test_no_packages_import_each_other_in_a_cycle():
    packages: dict[str, set[str]] = {}
    for module, targets in MODULES.items():
        packages.setdefault(_layer(module), set()).update(_layer(t) for t in targets if _layer(t) != _layer(module))
    assert not _cycle(packages)


def test_no_modules_import_each_other_in_a_cycle():
    assert not _cycle({module: {t for t in targets if t in MODULES} for module, targets in MODULES.items()})


def test_every_import_of_the_package_names_one_of_its_modules():
    assert not {(m, t) for m, targets in MODULES.items() for t in targets if t not in MODULES}


@pytest.mark.parametrize("lower", ["errors", "utils", "structures", "corpora", "kernels", "approx", "learn"])
def test_the_library_layers_do_not_import_the_spacy_layer(lower):
    assert not _edges(lambda m: _layer(m) == lower, lambda t: _layer(t) in SPACY_LAYER)


def test_spacy_and_thinc_are_imported_by_the_spacy_layer_and_the_readers_only():
    def allowed(module):
        return _layer(module) in SPACY_LAYER or module in USE_SPACY or _layer(module) in USE_SPACY

    assert not {(m, t) for m, others in EXTERNAL.items() if not allowed(m) for t in others if t in ("spacy", "thinc")}


def test_no_module_imports_a_private_module_of_another_subpackage():
    def private_elsewhere(module, target):
        parts = target.split(".")
        return parts[-1].startswith("_") and not parts[-1].startswith("__") and parts[:-1] != module.split(".")[:-1]

    assert not {(m, t) for m, targets in MODULES.items() for t in targets if private_elsewhere(m, t)}


def test_the_reader_sees_the_edges():
    assert "kernels.base" in MODULES["approx.nystroem"]
    assert "structures.labels" in MODULES["structures.dependency"]
    assert "extensions" in MODULES["corpora.standoff"] and "extensions" in MODULES["components.kernel_trees"]
    assert MODULES["kernels.base"] >= {"kernels._driver"} and "kernels" not in MODULES["kernels.base"]
    assert {"kernels._settings", "kernels._tables", "errors"} <= MODULES["kernels._index"]
    assert "ml.doc_structures" in MODULES["components.sentences"] and "data" in MODULES["data.samples"]
    assert ROOT in MODULES["cli"] and MODULES[ROOT] == {"errors", "structures"}
    assert "distributed" in EXTERNAL["distributed"] and "distributed" not in MODULES["distributed"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}})
    assert not _cycle({"a": {"b"}, "b": set()})
