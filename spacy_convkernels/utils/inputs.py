"""What an estimator over structures takes: its input checked (a sequence of the
structures its kernel compares, labels that agree) and described to scikit-learn (tags)."""

from collections.abc import Sequence

import numpy as np

from ..errors import InvalidParameterError, StructureTypeError
from .validation import validate_parameters


def structure_list(X, owner: str) -> list:
    """``X`` as a list, after checking it is a sequence of items (not a string, nor one object)."""
    if isinstance(X, (str, bytes)) or not hasattr(X, "__iter__"):
        raise StructureTypeError(f"{owner} needs a sequence of structures, got {type(X).__name__}")
    return list(X)


def check_structures(kernel, X, owner: str | None = None) -> list:
    """``X`` as a list of structures ``kernel`` compares (each item through
    ``kernel.as_structure``); a refusal names ``owner`` (an estimator) and the kernel."""
    who = type(kernel).__name__ if owner is None else f"{owner} with {type(kernel).__name__}"
    X = [kernel.as_structure(x) for x in structure_list(X, who)]
    for k, x in enumerate(X):
        if not isinstance(x, kernel.structure_type):
            raise StructureTypeError(
                f"{who} compares {kernel.structure_type.__name__} objects; item {k} is {type(x).__name__}"
            )
    return X


def training_set(estimator, X: Sequence, y, minimum: int, *, multilabel: bool = False) -> tuple[list, np.ndarray]:
    """X as a list and y as an array, after validating the estimator's parameters and
    checking that X holds structures of its kernel, that X and y agree (y one label per
    structure, or one row when ``multilabel``) and that they hold ``minimum`` structures."""
    validate_parameters(estimator)
    owner = type(estimator).__name__
    X = check_structures(estimator.kernel, X, owner)
    if y is None:
        raise InvalidParameterError(f"{owner} requires y to be passed, but the target y is None")
    y = np.asarray(y)
    if (y.ndim != 1 and not multilabel) or len(X) != len(y) or len(X) < minimum:
        raise InvalidParameterError(
            f"{owner}: X and y must hold at least {minimum} structure(s) and agree, "
            f"got {len(X)} sample(s) and labels of shape {y.shape}"
        )
    return X, y


def structure_tags(tags):
    """scikit-learn's tags of an estimator whose input is a list of structures (trees,
    path tuples), not an array: ``two_d_array`` is False. No other input tag describes
    structures (``string``, ``categorical`` and ``dict`` would have the checks feed
    strings, integers or dicts), so scikit-learn's checks that feed arrays do not apply."""
    tags.input_tags.two_d_array = False
    return tags
