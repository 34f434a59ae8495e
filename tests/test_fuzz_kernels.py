"""Property tests of the kernels through the public API: random structures, parameters
(out-of-range ones too), index pairs, thread counts and prepared sets give either a
package error (:class:`ConvKernelsError`) or right values: finite, symmetric Grams, in
[0, 1] when normalized for the kernels that are positive semidefinite, equal to a fresh
computation on plain lists and, on small cases, to the references of reference_kernels.py."""

import math

import numpy as np
import pytest
import reference_kernels as ref
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from path_data import EDGES, NODES, exponential
from path_data import LABELS as TUPLE_LABELS
from path_data import VECTORS as PATH_VECTORS
from random_trees import ALPHABET, ODD_BUT_VALID_PAIRS, ODD_PARAMETERS, bad_index_pairs, trees
from smoothed_data import LABELS as SMOOTH_LABELS
from smoothed_data import VECTORS as SMOOTH_VECTORS
from smoothed_data import reference_sigma

from spacy_convkernels import ConvKernelsError, Tree
from spacy_convkernels.kernels import (
    CompositionalSmoothedPartialTreeKernel,
    PartialTreeKernel,
    SmoothedPartialTreeKernel,
    SubsequencePathKernel,
    SubsetTreeKernel,
    SubtreeKernel,
    ZelenkoTreeKernel,
)
from spacy_convkernels.structures.paths import PathTuples


def _settings(n):
    return settings(max_examples=n, deadline=None, suppress_health_check=list(HealthCheck))


# --- structures ----------------------------------------------------------------------------


paths = st.lists(st.tuples(st.sampled_from(EDGES), st.sampled_from(NODES)), max_size=7).map(PathTuples)
JUNK = st.sampled_from([None, "(A (B))", 3, b"x", PathTuples([("", "bind")]), Tree("A##x")])

# --- parameters: mostly in range, sometimes anything -----------------------------------------

WEIRD = st.sampled_from(ODD_PARAMETERS)


def maybe(valid, weird=WEIRD, rate=12):
    """``valid`` most of the time, ``weird`` about once in ``rate`` draws."""
    return st.integers(0, rate - 1).flatmap(lambda k: weird if k == 0 else valid)


def unit(lo=0.0, hi=1.0, exclude_min=True):
    return st.floats(lo, hi, exclude_min=exclude_min, allow_nan=False)


def weights(keys, weird=True):
    weight = st.sampled_from([0.0, 0.5, 1.0]) | unit(0.01, 2.0)
    valid = st.none() | st.dictionaries(st.sampled_from(keys), weight, max_size=3)
    odd = st.sampled_from([{keys[0]: math.nan}, {keys[0]: -1.0}, [keys[0]], keys[0], {keys[0]: "1"}, 3])
    return maybe(valid, odd) if weird else valid


def _snap(value):
    """0 for a float so small that the plain-Python references would underflow on it."""
    return 0.0 if isinstance(value, float) and abs(value) < 1e-3 else value


@st.composite
def tree_params(draw, kind, weird=True):
    """Parameters of a tree kernel; with ``weird=False`` all in range (lam and mu >= 0.05,
    where the values neither underflow nor overflow)."""
    pick = (lambda valid, odd=WEIRD: draw(maybe(valid, odd))) if weird else (lambda valid, odd=None: _snap(draw(valid)))
    low = 0.0 if weird else 0.05
    params = dict(lam=pick(unit(low, 1.5)))
    if kind == "st":
        params["variant"] = pick(st.sampled_from(["kelp", "textbook"]), st.sampled_from(["KELP", None, 3]))
    if kind in ("ptk", "sptk", "csptk"):
        params.update(mu=pick(unit(low, 1.5)), terminal_factor=pick(unit(0.0, 2.0, False)))
    if kind in ("sptk", "csptk"):
        params.update(
            threshold=pick(unit(0.0, 1.0 if weird else 0.9, False)),  # 1: rounding decides
            vectors=pick(st.sampled_from([None, SMOOTH_VECTORS]), st.sampled_from(["/no/such/vectors", 3])),
            shared_rows=pick(st.sampled_from(["kelp", "diluted", "exclusive"]), st.sampled_from(["sometimes", None])),
            dilution=pick(unit(0.0, 1.0, False)),
        )
    if kind == "csptk":
        params.update(
            alpha=pick(unit(0.0, 2.0, False)),
            beta=pick(unit(0.0 if weird else 0.05, 2.0, False)),
            lexical=draw(st.booleans()),
            syntactic_restriction=draw(st.booleans()),
        )
    params["label_weights"] = draw(weights(SMOOTH_LABELS if kind in ("sptk", "csptk") else ALPHABET, weird))
    return params


@st.composite
def tuple_params(draw, weird=True):
    pick = (lambda valid, odd=WEIRD: draw(maybe(valid, odd))) if weird else (lambda valid, odd=None: _snap(draw(valid)))
    return dict(
        lam=pick(unit(0.0 if weird else 0.05, 0.95)),
        gamma=pick(unit(-0.95, 0.95)),
        vectors=pick(st.sampled_from([None, PATH_VECTORS]), st.sampled_from(["/no/such/file", 3])),
        edge_weights=draw(weights(EDGES[1:], weird)),
    )


# family: (class, structures); "st" covers both variants of SubtreeKernel
FAMILIES = {
    "st": (SubtreeKernel, trees(ALPHABET)),
    "sst": (SubsetTreeKernel, trees(ALPHABET)),
    "ptk": (PartialTreeKernel, trees(ALPHABET)),
    "sptk": (SmoothedPartialTreeKernel, trees(SMOOTH_LABELS)),
    "csptk": (CompositionalSmoothedPartialTreeKernel, trees(SMOOTH_LABELS)),
    "path": (SubsequencePathKernel, paths),
    "zelenko": (ZelenkoTreeKernel, trees(TUPLE_LABELS)),
}


def params_of(family, weird=True):
    return tuple_params(weird) if family in ("path", "zelenko") else tree_params(family, weird)


def make(family, params):
    return FAMILIES[family][0](**params)


def fresh(kernel):
    """A new kernel of the same parameters: no table, no history."""
    return type(kernel)(**kernel.get_params())


def is_psd(kernel) -> bool:
    """Whether the kernel is positive semidefinite for these parameters (by its definition),
    so that normalized values lie in [0, 1]: not KeLP's ST, not the smoothed similarities,
    and not PTK's terminal factor above 1 (a leaf would then weigh more against an
    internal node than against itself)."""
    if isinstance(kernel, SubtreeKernel):
        return kernel.variant == "textbook"
    if isinstance(kernel, PartialTreeKernel | SmoothedPartialTreeKernel):
        return kernel.terminal_factor <= 1 and getattr(kernel, "vectors", None) is None
    if isinstance(kernel, SubsequencePathKernel | ZelenkoTreeKernel):
        return kernel.vectors is None
    return True


# --- calls ------------------------------------------------------------------------------------

N_JOBS = st.sampled_from([None, 1, 2, -1, -2, 100, 0, 1.5, "2", True])


def index_pairs(n):
    inside = st.integers(0, max(n - 1, 0))
    valid = st.lists(st.tuples(inside, inside), max_size=6)
    return maybe(valid, st.sampled_from(bad_index_pairs(n) + ODD_BUT_VALID_PAIRS), rate=3) if n else st.just([])


@pytest.mark.parametrize(
    "kernel, structures",
    [
        (PartialTreeKernel(), [Tree("A##x"), Tree("B##x")]),
        (SubsequencePathKernel(), [PathTuples([("", "bind")]), PathTuples([("arg0", "bind")])]),
        (ZelenkoTreeKernel(), [Tree("/bind"), Tree("arg0/bind")]),
    ],
    ids=["ptk", "path", "zelenko"],
)
def test_bad_index_pairs_are_refused(kernel, structures):
    for bad in bad_index_pairs(len(structures)):
        with pytest.raises(ConvKernelsError):
            kernel.pairs(structures, bad)


def _check_values(kernel, values, normalize):
    values = np.asarray(values, dtype=np.float64)
    assert np.all(np.isfinite(values)), values
    if normalize and is_psd(kernel):
        assert np.all(values >= 0) and np.all(values <= 1 + 1e-9), values
    elif not normalize:
        assert np.all(values >= 0), values


def _same(values, expected):
    np.testing.assert_allclose(values, expected, rtol=1e-9, atol=1e-12)


def _structures(X):
    return list(X.structures) if hasattr(X, "structures") else list(X)


def _run(kernel, call, X, Y, index, normalize, n_jobs):
    """One public call; returns its result checked against a fresh kernel on plain lists,
    or None when it raised a package error."""
    try:
        if call == "gram":
            result = kernel.gram(X, Y, normalize=normalize, n_jobs=n_jobs)
        elif call == "pairs":
            result = kernel.pairs(X, index, normalize=normalize, n_jobs=n_jobs)
        elif call == "diag":
            result = kernel.diag(X, n_jobs=n_jobs)
        else:
            result = kernel(X[0], X[1], normalize=normalize)
    except ConvKernelsError:
        return None
    other = fresh(kernel)
    xs = _structures(X)
    if call == "gram":
        assert result.shape == (len(xs), len(xs) if Y is None else len(_structures(Y)))
        _check_values(kernel, result, normalize)
        if Y is None:
            assert np.array_equal(result, result.T)
            if normalize:
                assert np.all(np.isclose(np.diag(result), 1.0, rtol=1e-12) | (np.diag(result) == 0))
        _same(result, other.gram(xs, None if Y is None else _structures(Y), normalize=normalize, n_jobs=1))
    elif call == "pairs":
        assert result.shape == (len(np.asarray(index).reshape(-1, 2)),)
        _check_values(kernel, result, normalize)
        _same(result, [other.gram([xs[i]], [xs[j]], normalize=normalize, n_jobs=1)[0, 0] for i, j in index])
    elif call == "diag":
        _check_values(kernel, result, False)
        _same(result, [other.gram([x], normalize=False, n_jobs=1)[0, 0] for x in xs])
    else:
        _check_values(kernel, [result], normalize)
        _same(result, other.gram([xs[0]], [xs[1]], normalize=normalize)[0, 0])
    return result


@st.composite
def calls(draw, family, structures):
    """(call, X, Y, index, normalize, n_jobs, prepare X?, prepare Y?); X and Y are lists
    that now and then hold something that is not a structure of the kernel."""
    X = draw(st.lists(maybe(structures, JUNK, rate=40), max_size=6))
    Y = draw(st.none() | st.lists(maybe(structures, JUNK, rate=40), max_size=4))
    call = draw(st.sampled_from(["gram", "pairs", "diag", "call"] if len(X) >= 2 else ["gram", "pairs", "diag"]))
    return (
        call,
        X,
        Y,
        draw(index_pairs(len(X))),
        draw(st.booleans()),
        draw(N_JOBS),
        draw(st.booleans()),
        draw(st.booleans()),
    )


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::spacy_convkernels.errors.KernelUnderflowWarning")  # tiny lam: warned, as it should
@pytest.mark.parametrize("family", FAMILIES)
@_settings(40)
@given(data=st.data())
def test_random_calls_give_package_errors_or_right_values(family, data):
    """Random parameters, structures, pairs and thread counts; lists, or sets the kernel
    prepared itself, in either argument, several calls in a row on one kernel."""
    structures = FAMILIES[family][1]
    kernel = make(family, data.draw(params_of(family)))
    for _ in range(data.draw(st.integers(1, 3))):
        call, X, Y, index, normalize, n_jobs, prepare_x, prepare_y = data.draw(calls(family, structures))
        try:
            if prepare_x and call in ("gram", "pairs"):
                X = kernel.prepare(X)
            if prepare_y and Y is not None:
                Y = kernel.prepare(Y)
        except ConvKernelsError:
            continue
        _run(kernel, call, X, Y, index, normalize, n_jobs)


@st.composite
def valid_kernel(draw, family):
    """A kernel of ``family`` whose parameters are all in range, and its structures."""
    return make(family, draw(params_of(family, weird=False))), FAMILIES[family][1]


def reference(kernel):
    """The plain-Python reference of ``kernel``'s current parameters, K(a, b) unnormalized."""
    p = kernel.get_params()
    if isinstance(kernel, SubtreeKernel):
        f = ref.subtree_textbook if p["variant"] == "textbook" else ref.subtree_kelp
        return lambda a, b: f(a, b, p["lam"], label_weights=p["label_weights"])
    if isinstance(kernel, SubsetTreeKernel):
        return lambda a, b: ref.subset_tree(a, b, p["lam"], label_weights=p["label_weights"])
    if isinstance(kernel, SmoothedPartialTreeKernel):
        if p["vectors"] is None:

            def sigma(x, y):
                return float(ref.content(x) == ref.content(y))
        elif isinstance(kernel, CompositionalSmoothedPartialTreeKernel):
            sigma = reference_sigma(
                lexical=p["lexical"],
                compositional=True,
                shared_rows=p["shared_rows"],
                alpha=p["alpha"],
                beta=p["beta"],
                syntactic=p["syntactic_restriction"],
                dilution=p["dilution"],
            )
        else:
            sigma = reference_sigma(shared_rows=p["shared_rows"], dilution=p["dilution"])
        return lambda a, b: ref.smoothed_partial_tree(
            a, b, sigma, p["lam"], p["mu"], p["terminal_factor"], p["threshold"], label_weights=p["label_weights"]
        )
    if isinstance(kernel, PartialTreeKernel):
        return lambda a, b: ref.partial_tree(
            a, b, p["lam"], p["mu"], p["terminal_factor"], label_weights=p["label_weights"]
        )
    k = ref.tuple_kernel(None if p["vectors"] is None else exponential(p["gamma"]), p["edge_weights"])
    if isinstance(kernel, SubsequencePathKernel):
        return lambda a, b: ref.subsequence_path(a.labels, b.labels, k, p["lam"])
    return lambda a, b: ref.zelenko(a, b, k, p["lam"])


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
@_settings(25)
@given(data=st.data())
def test_small_cases_equal_the_references(family, data):
    kernel, structures = data.draw(valid_kernel(family))
    X = data.draw(st.lists(structures, min_size=2, max_size=4))
    index = [(i, j) for i in range(len(X)) for j in range(i, len(X))]
    expected = reference(kernel)
    values = [expected(X[i], X[j]) for i, j in index]
    _same(kernel.pairs(X, index, normalize=False, n_jobs=data.draw(st.sampled_from([1, 2]))), values)
    raw = {(i, j): v for (i, j), v in zip(index, values)}
    normalized = [ref.normalize(raw[i, j], raw[i, i], raw[j, j]) for i, j in index]
    _same(kernel.pairs(X, index), normalized)
    G = kernel.gram(X)
    _same([G[i, j] for i, j in index], normalized)
    _check_values(kernel, G, True)


@pytest.mark.parametrize("family", FAMILIES)
@_settings(20)
@given(data=st.data())
def test_a_prepared_set_extended_after_packing_is_refused_or_used_whole(family, data):
    """Adding to ``prepared.structures`` after ``prepare`` must not make the engine read past
    what was packed: either the set cannot be changed, or the kernel refuses or re-packs it."""
    kernel, structures = data.draw(valid_kernel(family))
    prepared = kernel.prepare(data.draw(st.lists(structures, min_size=1, max_size=4)))
    extra = data.draw(st.lists(structures, min_size=1, max_size=3))
    try:
        prepared.structures.extend(extra)
    except (AttributeError, TypeError):
        return  # immutable: nothing to check
    call = data.draw(st.sampled_from(["gram", "gram_xy", "pairs"]))
    n = len(prepared.structures)
    if call == "pairs":
        _run(kernel, "pairs", prepared, None, [(n - 1, n - 1), (0, n - 1)], True, data.draw(N_JOBS))
    else:
        Y = None if call == "gram" else data.draw(st.lists(structures, min_size=1, max_size=3))
        _run(kernel, "gram", prepared, Y, None, data.draw(st.booleans()), data.draw(N_JOBS))


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
@_settings(20)
@given(data=st.data())
def test_a_set_prepared_by_another_kernel_gives_this_kernels_values(family, data):
    """A set prepared by another kernel, of equal parameters but its own history of labels
    (so its own tables), or of another class, mixed with lists and with the kernel's own."""
    kernel, structures = data.draw(valid_kernel(family))
    other_family = data.draw(st.sampled_from([family, family, *FAMILIES]))
    other = fresh(kernel) if other_family == family else FAMILIES[other_family][0]()
    if other_family == family:
        other.gram(data.draw(st.lists(structures, min_size=1, max_size=4)))  # labels in another order
    kernel.gram(data.draw(st.lists(structures, min_size=1, max_size=4)))
    X, Y = data.draw(st.lists(structures, min_size=1, max_size=4)), data.draw(st.lists(structures, max_size=3))
    try:
        foreign = other.prepare(X)
    except ConvKernelsError:
        return  # structures of another type
    own = kernel.prepare(Y)
    for A, B in ((foreign, None), (foreign, Y), (Y, foreign), (foreign, own), (own, foreign)):
        _run(kernel, "gram", A, B, None, data.draw(st.booleans()), data.draw(N_JOBS))
    _run(kernel, "pairs", foreign, None, [(0, len(X) - 1)], True, 1)
