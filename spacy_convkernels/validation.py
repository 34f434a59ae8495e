"""Declarative parameter constraints, in the spirit of scikit-learn's ``_parameter_constraints``.

A class lists, per constructor parameter, the values it accepts::

    _parameter_constraints = {"lam": [Interval(0, None, closed="neither")], "label_weights": [Weights(), None]}

and :func:`validate_parameters` checks an object against its class's table once, at the
entry of the work (a kernel's ``gram``, an estimator's ``fit``), raising
:class:`~spacy_convkernels.errors.InvalidParameterError` naming the class, the
parameter and the value. ``None`` in a list accepts None.
"""

import math
import numbers
from collections.abc import Mapping

from .errors import InvalidParameterError


class Interval:
    """A real (or, with ``integer=True``, integral) number between ``low`` and ``high``
    (None: unbounded); ``closed`` is "both", "left", "right" or "neither"."""

    def __init__(self, low: float | None, high: float | None, *, closed: str = "both", integer: bool = False):
        self.low, self.high, self.closed, self.integer = low, high, closed, integer

    def accepts(self, value) -> bool:
        kind = numbers.Integral if self.integer else numbers.Real
        if not isinstance(value, kind) or isinstance(value, bool) or not math.isfinite(value):
            return False
        if self.low is not None and (value < self.low or (value == self.low and self.closed in ("right", "neither"))):
            return False
        return self.high is None or not (
            value > self.high or (value == self.high and self.closed in ("left", "neither"))
        )

    def __str__(self) -> str:
        left = "[" if self.closed in ("both", "left") else "("
        right = "]" if self.closed in ("both", "right") else ")"
        low = "-inf" if self.low is None else self.low
        high = "inf" if self.high is None else self.high
        return f"{'an integer' if self.integer else 'a finite number'} in {left}{low}, {high}{right}"


class Options:
    """One of the given values."""

    def __init__(self, *values):
        self.values = values

    def accepts(self, value) -> bool:
        return any(value == option and type(value) is type(option) for option in self.values)

    def __str__(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)


class Weights:
    """A mapping from label strings to finite weights >= 0."""

    def accepts(self, value) -> bool:
        return isinstance(value, Mapping) and all(
            isinstance(label, str) and Interval(0, None).accepts(weight) for label, weight in value.items()
        )

    def __str__(self) -> str:
        return "a dict of label -> finite weight >= 0"


class Boolean:
    """True or False (numpy's bool too)."""

    def accepts(self, value) -> bool:
        return isinstance(value, bool) or type(value).__name__ == "bool_"

    def __str__(self) -> str:
        return "True or False"


class Anything:
    """Any value: checked where it is used (for example word-vector sources, on loading)."""

    def __init__(self, description: str):
        self.description = description

    def accepts(self, value) -> bool:
        return True

    def __str__(self) -> str:
        return self.description


def validate_parameters(obj) -> None:
    """Check ``obj``'s parameters against ``type(obj)._parameter_constraints``."""
    for name, constraints in type(obj)._parameter_constraints.items():
        check_value(type(obj).__name__, name, getattr(obj, name), constraints)


def check_value(owner: str, name: str, value, constraints: list) -> None:
    """Refuse ``value`` unless one of ``constraints`` (None: the value None) accepts it, in
    the one message form: ``owner: name must be ..., got value``."""
    if value is None and None in constraints:
        return
    if not any(c is not None and c.accepts(value) for c in constraints):
        allowed = " or ".join(str(c) if c is not None else "None" for c in constraints)
        raise InvalidParameterError(f"{owner}: {name} must be {allowed}, got {value!r}")
