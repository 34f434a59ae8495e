"""Declarative parameter constraints, in the spirit of scikit-learn's ``_parameter_constraints``.

Whatever takes parameters (a kernel, an estimator, a spaCy component, an ``ml/``
architecture, a reader) lists, per parameter, the values it accepts::

    _parameter_constraints = {"lam": [POSITIVE], "label_weights": [Weights(), None]}

A class that stores its constructor's parameters (kernels, estimators) holds the table as
a class attribute and calls :func:`validate_parameters` at the entry of the work (a
kernel's ``gram``, an estimator's ``fit``), as scikit-learn validates in ``fit``. A
function, or a component's constructor, is decorated with :func:`validate_params`, which
checks each call's arguments and keeps the table as the function's
``_parameter_constraints``. Either way :func:`check_parameters` refuses a value with an
:class:`~spacy_convkernels.errors.InvalidParameterError` in one form:
``owner: name must be ..., got value``. ``None`` in a list accepts None; an
:class:`Interval` bound may name a parameter listed before it.
"""

import functools
import inspect
import math
import numbers
from collections.abc import Callable, Mapping

from ..errors import InvalidParameterError


class Interval:
    """A real (or, with ``integer=True``, integral) number between ``low`` and ``high``
    (None: unbounded; a string: the value of that parameter); ``closed`` is "both",
    "left", "right" or "neither"."""

    def __init__(self, low, high, *, closed: str = "both", integer: bool = False):
        self.low, self.high, self.closed, self.integer = low, high, closed, integer
        self.shown: tuple = ("-inf" if low is None else low, "inf" if high is None else high)

    def bound(self, values: Mapping) -> "Interval":
        """This interval with the bounds that name a parameter replaced by its value."""
        low, high = (values[b] if isinstance(b, str) else b for b in (self.low, self.high))
        bound = Interval(low, high, closed=self.closed, integer=self.integer)
        bound.shown = tuple(
            f"{b}={values[b]!r}" if isinstance(b, str) else s for b, s in zip((self.low, self.high), bound.shown)
        )
        return bound

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
        low, high = self.shown
        return f"{'an integer' if self.integer else 'a finite number'} in {left}{low}, {high}{right}"


POSITIVE = Interval(0, None, closed="neither")
NON_NEGATIVE = Interval(0, None, closed="left")
COUNT = Interval(1, None, integer=True)
NATURAL = Interval(0, None, integer=True)
SHARE = Interval(0, 1)
SEED = Interval(0, 2**32 - 1, integer=True)


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
            isinstance(label, str) and NON_NEGATIVE.accepts(weight) for label, weight in value.items()
        )

    def __str__(self) -> str:
        return "a dict of label -> finite weight >= 0"


class Boolean:
    """True or False (numpy's bool too)."""

    def accepts(self, value) -> bool:
        return isinstance(value, bool) or type(value).__name__ == "bool_"

    def __str__(self) -> str:
        return "True or False"


class Satisfies:
    """A value for which ``test(value)`` is true, described as ``description`` (for
    example "a kernel of spacy_convkernels")."""

    def __init__(self, test: Callable, description: str):
        self.test, self.description = test, description

    def accepts(self, value) -> bool:
        return bool(self.test(value))

    def __str__(self) -> str:
        return self.description


class Anything:
    """Any value: checked where it is used (for example word-vector sources, on loading)."""

    def __init__(self, description: str):
        self.description = description

    def accepts(self, value) -> bool:
        return True

    def __str__(self) -> str:
        return self.description


def check_parameters(owner: str, values: Mapping, constraints: Mapping) -> None:
    """Refuse the first of ``values`` that none of its ``constraints`` (None: the value
    None) accepts, in the one message form: ``owner: name must be ..., got value``."""
    for name, allowed in constraints.items():
        value = values[name]
        if value is None and None in allowed:
            continue
        allowed = [c.bound(values) if isinstance(c, Interval) else c for c in allowed]
        if not any(c is not None and c.accepts(value) for c in allowed):
            described = " or ".join(str(c) if c is not None else "None" for c in allowed)
            raise InvalidParameterError(f"{owner}: {name} must be {described}, got {value!r}")


def validate_parameters(obj) -> None:
    """Check ``obj``'s parameters (its attributes) against ``type(obj)._parameter_constraints``."""
    constraints = type(obj)._parameter_constraints
    values = {name: getattr(obj, name) for name in constraints}
    check_parameters(type(obj).__name__, values, constraints)


def validate_params(constraints: dict, *, owner: str | None = None):
    """Decorator: check each call's arguments against ``constraints`` before the call.
    The owner named in messages is the ``name`` argument when the function takes one (a
    spaCy component, named as in the pipeline), else ``owner``, else the function's
    (a constructor's: its class's) name."""

    def decorate(function):
        signature = inspect.signature(function)
        default_owner = owner or function.__qualname__.removesuffix(".__init__")

        @functools.wraps(function)
        def checked(*args, **kwargs):
            arguments = signature.bind(*args, **kwargs)
            arguments.apply_defaults()
            named = arguments.arguments.get("name")
            check_parameters(named if isinstance(named, str) else default_owner, arguments.arguments, constraints)
            return function(*args, **kwargs)

        checked._parameter_constraints = constraints
        return checked

    return decorate
