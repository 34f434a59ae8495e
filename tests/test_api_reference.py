"""docs/api.md, the Python API reference, is generated from the docstrings of the public
API (docs/make_api_reference.py) and matches the code; it documents every public name."""

import importlib
import importlib.util

import pytest
from data_paths import ROOT


@pytest.fixture(scope="module")
def maker():
    spec = importlib.util.spec_from_file_location("make_api_reference", ROOT / "docs" / "make_api_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def reference(maker):
    return maker.api_reference()


def test_committed_reference_is_current(reference):
    committed = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert committed == reference, "run: python docs/make_api_reference.py"


def test_every_name_of_every_all_is_documented(maker, reference):
    """The __all__ of the package and of each subpackage with one: every name has its section."""
    modules = ["spacy_convkernels", *(name for name in maker.MODULES if name != "spacy_convkernels")]
    for module_name in modules:
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", maker.MODULES[module_name] or []):
            assert f"### `{module_name}.{name}`\n" in reference, f"{module_name}.{name}"
    for subpackage in ("kernels", "approx", "learn", "structures", "corpora"):
        assert f"spacy_convkernels.{subpackage}" in maker.MODULES


def test_every_component_class_is_documented(maker, reference):
    classes = maker.component_classes()
    assert {factory for factory, _ in classes} >= {"kernel_trees", "kernel_vectors", "kernel_relations"}
    for factory, cls in classes:
        assert f"### `{cls.__module__}.{cls.__name__}`\n" in reference, factory


def test_the_scikit_learn_entry_point_is_documented_with_its_methods(reference):
    section = reference.split("### `spacy_convkernels.kernels.KernelTransformer`\n")[1].split("\n### ")[0]
    for method in ("fit", "transform", "fit_transform"):
        assert f"#### `KernelTransformer.{method}`" in section
    assert "- `kernel` (Kernel):" in section


def test_docstrings_become_markdown(maker):
    """numpydoc sections become lists, reST roles and double quotes become code spans, and
    literal blocks are fenced as text (never run as examples)."""

    def documented():
        """Summary with :class:`~spacy_convkernels.kernels.PartialTreeKernel` and ``code``::

            kernel(a, b)

        Parameters
        ----------
        lam : float, default=0.4
            The decay.
        """

    text = maker.docstring(documented)
    assert "Summary with `PartialTreeKernel` and `code`:\n\n```text\nkernel(a, b)\n```" in text
    assert "**Parameters**\n\n- `lam` (float, default=0.4): The decay." in text
