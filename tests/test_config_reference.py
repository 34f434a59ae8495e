"""The generated configuration reference in docs/ matches the package's registrations."""

import importlib.util
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from spacy.language import Language
from spacy.util import registry

from spacy_convkernels.kernels import KERNELS

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("make_config_reference", ROOT / "docs" / "make_config_reference.py")
_maker = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_maker)
config_reference, package_factories, package_functions = (
    _maker.config_reference,
    _maker.package_factories,
    _maker.package_functions,
)
tomllib = pytest.importorskip("tomllib")


def entry_points(group: str) -> dict[str, str]:
    with open(ROOT / "pyproject.toml", "rb") as file:
        return tomllib.load(file)["project"]["entry-points"][group]


def test_committed_reference_is_current():
    committed = (ROOT / "docs" / "config_reference.md").read_text(encoding="utf-8")
    assert committed == config_reference(), "run: python docs/make_config_reference.py"


def test_reference_covers_every_entry_point():
    config_reference()  # imports the registering modules
    assert set(package_factories()) == set(entry_points("spacy_factories"))
    for registry_name in ("architectures", "misc", "readers", "callbacks"):
        assert set(package_functions(registry_name)) == set(entry_points(f"spacy_{registry_name}"))


def test_every_registered_kernel_has_the_entry_point_of_its_function():
    """One per kernel of the registration (``kernels.KERNELS``), loading its registered function."""
    target = "spacy_convkernels.components.registered_kernels:functions."
    expected = {f"spacy_convkernels.{kernel.__name__}.v1": target + kernel.__name__ for kernel in KERNELS}
    declared = entry_points("spacy_misc")
    assert {name: value for name, value in declared.items() if value.startswith(target)} == expected
    for name, value in expected.items():
        assert EntryPoint(name, value, "spacy_misc").load() is registry.misc.get(name)


def test_reference_lists_each_factory_setting_assigns_and_requires():
    text = config_reference()
    for name in package_factories():
        meta = Language.get_factory_meta(name)
        section = text.split(f"### `{name}`\n")[1].split("\n### ")[0]
        for setting in meta.default_config:
            assert f"\n| {setting} | " in section
        for attribute in [*meta.assigns, *meta.requires]:
            assert f"`{attribute}`" in section


def test_reference_describes_settings_from_docstrings():
    section = config_reference().split("### `kernel_vectors`\n")[1].split("\n### ")[0]
    assert "| n_components | `500` | The number of landmark trees, the length of the vectors" in section
    assert '`@misc = "spacy_convkernels.PartialTreeKernel.v1"`' in section
