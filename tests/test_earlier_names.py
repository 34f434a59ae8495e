"""Names with one meaning (issue 64 point 3): a module or registered name that meant two
things was renamed; its earlier name, where users reach it, still works and warns, naming
the new one."""

import importlib
import sys

import pytest

from spacy_convkernels.errors import SettingDeprecationWarning

# earlier import path -> (its new path, a name both give)
EARLIER_MODULES = {
    "spacy_convkernels.learn.forest": ("spacy_convkernels.learn.klsh_forest", "KLSHForestClassifier"),
}


@pytest.mark.parametrize("earlier", sorted(EARLIER_MODULES))
def test_an_earlier_import_path_warns_and_gives_the_same_objects(earlier):
    new, name = EARLIER_MODULES[earlier]
    sys.modules.pop(earlier, None)
    with pytest.warns(SettingDeprecationWarning, match=rf"{earlier} is now {new}"):
        module = importlib.import_module(earlier)
    assert getattr(module, name) is getattr(importlib.import_module(new), name)
