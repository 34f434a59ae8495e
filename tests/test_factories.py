"""The package's spaCy factories (components/factories.py): light to load, each building its component."""

import inspect
import subprocess
import sys
from importlib.metadata import entry_points

import pytest
from spacy.language import Language
from spacy.util import registry

from spacy_convkernels.components import factories

# the installed package's (pyproject.toml's [project.entry-points.spacy_factories])
ENTRY_POINTS = {
    entry.name: entry.value
    for entry in entry_points(group="spacy_factories")
    if entry.value.startswith("spacy_convkernels.")
}
# what loading the entry points must not import: scikit-learn, SciPy, the engine, any component
HEAVY = ("sklearn", "scipy", "spacy_convkernels.kernels", "spacy_convkernels.ml", "spacy_convkernels.approx")


@pytest.mark.slow
def test_loading_the_entry_points_registers_every_factory_and_imports_no_component():
    """spaCy loads every installed package's factories whenever it makes a pipeline: ours
    register their names and import neither their components nor scikit-learn, SciPy or
    the engine (about 2 s of every spaCy process before, spacy-transformers aside)."""
    script = (
        "import sys\n"
        "from importlib.metadata import entry_points\n"
        "from spacy.language import Language\n"
        "before = set(sys.modules)\n"
        "ours = [e for e in entry_points(group='spacy_factories') if e.value.startswith('spacy_convkernels.')]\n"
        "for entry in ours:\n"
        "    entry.load()\n"
        "print(sorted(e.name for e in ours if Language.has_factory(e.name)))\n"
        f"heavy = {HEAVY!r}\n"
        "print(sorted(m for m in set(sys.modules) - before if m.startswith(heavy)))\n"
        "print(sorted(m for m in sys.modules if m.startswith('spacy_convkernels.components.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    registered, heavy, components = out.stdout.splitlines()
    assert registered == str(sorted(ENTRY_POINTS))
    assert heavy == "[]"
    assert components == "['spacy_convkernels.components.factories']"


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_each_factory_is_the_entry_point_and_names_its_component(name):
    module, function = ENTRY_POINTS[name].split(":")
    assert module == factories.__name__
    make = getattr(factories, function)
    assert registry.factories.get(name) is make
    assert Language.get_factory_meta(name).factory == name
    component = getattr(factories, inspect.signature(make).return_annotation)
    assert component.__module__ == f"{factories.__package__}.{factories.COMPONENT_MODULES[component.__name__]}"


def test_a_name_that_is_no_component_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'Nothing'"):
        factories.Nothing  # noqa: B018
