"""One home per concept: every exception and warning class is defined in errors.py and
exported from the package root; the structures are exported from spacy_convkernels.structures."""

import importlib
import inspect
import pkgutil

import spacy_convkernels
from spacy_convkernels import errors, structures
from spacy_convkernels.structures import interactions, paths, semantic_graph, tree


def package_modules():
    yield spacy_convkernels
    for info in pkgutil.walk_packages(spacy_convkernels.__path__, prefix="spacy_convkernels."):
        if not info.name.endswith(".__main__"):  # importing it runs the command line
            yield importlib.import_module(info.name)


def test_every_public_exception_and_warning_class_is_defined_in_errors():
    """Private classes (``_Malformed`` of the corpus readers) signal inside one module and
    never reach a caller, so they are left out."""
    found = {
        f"{module.__name__}.{name}"
        for module in package_modules()
        for name, cls in vars(module).items()
        if inspect.isclass(cls)
        and issubclass(cls, BaseException)
        and cls.__module__ == module.__name__
        and not name.startswith("_")
    }
    assert found and all(where.startswith("spacy_convkernels.errors.") for where in found), sorted(found)


def test_every_class_of_errors_is_exported_from_the_package_root():
    classes = {name: cls for name, cls in vars(errors).items() if inspect.isclass(cls)}
    assert len(classes) >= 16
    for name, cls in classes.items():
        assert name in spacy_convkernels.__all__ and getattr(spacy_convkernels, name) is cls
        assert issubclass(cls, (errors.ConvKernelsError, errors.ConvKernelsWarning))


def test_structures_exports_paths_and_interaction_structures_like_tree():
    exported = {
        "Tree": tree.Tree,
        "PathTuples": paths.PathTuples,
        "SemanticGraph": semantic_graph.SemanticGraph,
        "InteractionCandidate": interactions.InteractionCandidate,
        "find_candidates": interactions.find_candidates,
        "amr_candidates": interactions.amr_candidates,
        "dependency_candidates": interactions.dependency_candidates,
    }
    for name, thing in exported.items():
        assert name in structures.__all__ and getattr(structures, name) is thing
    assert all(hasattr(structures, name) for name in structures.__all__)
