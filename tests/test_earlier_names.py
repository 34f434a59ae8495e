"""Names with one meaning (issue 64 point 3): a module whose name meant two things was
renamed; a name imported from its earlier path, where users reach it, is the new
module's, with a warning naming the new path."""

import importlib

import pytest

from spacy_convkernels.errors import SettingDeprecationWarning

# earlier module -> its new path
EARLIER_MODULES = {"spacy_convkernels.learn.forest": "spacy_convkernels.learn.klsh_forest"}


@pytest.mark.parametrize("earlier", sorted(EARLIER_MODULES))
def test_a_name_from_an_earlier_import_path_warns_and_is_the_same_object(earlier):
    new = EARLIER_MODULES[earlier]
    module = importlib.import_module(earlier)
    assert module.MOVED
    for name in module.MOVED:
        with pytest.warns(SettingDeprecationWarning, match=rf"{earlier}\.{name} moved to {new}\.{name}"):
            assert getattr(module, name) is getattr(importlib.import_module(new), name)
    with pytest.raises(AttributeError):
        module.nothing_of_that_name  # noqa: B018
