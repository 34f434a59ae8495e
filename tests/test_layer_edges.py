"""The package's layers import downwards only, read from the source with ``ast`` (lazy
imports inside functions included), so that an edge cannot come back unnoticed."""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "spacy_convkernels"
SPACY_LAYER = {"components", "ml", "cli", "__main__"}

#: Modules below the spaCy layer that use spaCy: readers make Docs and Examples, the
#: extension attributes are spaCy's, the configuration reference lists the registered
#: functions, beam forests read a parser.
USE_SPACY = {"corpora", "extensions", "config_reference", "structures.forest"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """The modules ``path`` imports, in-package ones relative to the package ("kernels.base"),
    others by their top name ("spacy")."""
    name = _module_name(path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top, _, rest = alias.name.partition(".")
                found.add(rest if top == "spacy_convkernels" else top)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1] + (node.module.split(".") if node.module else [])
                target = ".".join(base)
            else:
                top, _, rest = (node.module or "").partition(".")
                if top != "spacy_convkernels":
                    found.add(top)
                    continue
                target = rest
            found.add(target)
            for alias in node.names:  # `from . import kernels`: the submodule itself
                submodule = f"{target}.{alias.name}".strip(".")
                if (PACKAGE / submodule.replace(".", "/")).with_suffix(".py").exists() or (
                    PACKAGE / submodule.replace(".", "/")
                ).is_dir():
                    found.add(submodule)
    return {target for target in found if target}


MODULES = {_module_name(path): _imports(path) for path in sorted(PACKAGE.rglob("*.py"))}


def _layer(module: str) -> str:
    return module.split(".")[0]


def _edges(where, what) -> set[tuple[str, str]]:
    return {
        (module, target) for module, targets in MODULES.items() if where(module) for target in targets if what(target)
    }


@pytest.mark.parametrize(
    "lower, upper",
    [
        ("structures", {"kernels", "approx", "learn", "corpora", "distributed", "plots", *SPACY_LAYER}),
        ("kernels", {"approx", "learn", "corpora", "distributed", "plots", *SPACY_LAYER}),
        ("approx", {"learn", "corpora", "distributed", "plots", *SPACY_LAYER}),
        ("learn", {"corpora", "distributed", "plots", *SPACY_LAYER}),
        ("extensions", {"corpora", *SPACY_LAYER}),
    ],
)
def test_a_layer_does_not_import_the_layers_above_it(lower, upper):
    assert not _edges(lambda m: _layer(m) == lower, lambda t: _layer(t) in upper)


def test_only_the_spacy_layer_imports_components_ml_and_cli():
    assert not _edges(lambda m: _layer(m) not in SPACY_LAYER, lambda t: _layer(t) in SPACY_LAYER)


def test_spacy_and_thinc_are_imported_by_the_spacy_layer_and_the_readers_only():
    def allowed(module):
        return _layer(module) in SPACY_LAYER or module in USE_SPACY or _layer(module) in USE_SPACY

    assert not _edges(lambda m: not allowed(m), lambda t: t in ("spacy", "thinc"))


def test_no_module_imports_a_private_module_of_another_subpackage():
    def private_elsewhere(module, target):
        parts = target.split(".")
        return parts[-1].startswith("_") and not parts[-1].startswith("__") and parts[:-1] != module.split(".")[:-1]

    assert not {(m, t) for m, targets in MODULES.items() for t in targets if private_elsewhere(m, t)}


def test_the_reader_sees_the_edges():
    assert "kernels.base" in MODULES["approx.nystroem"]
    assert "structures.labels" in MODULES["structures.dependency"]
    assert "extensions" in MODULES["corpora.standoff"] and "extensions" in MODULES["components.kernel_trees"]
