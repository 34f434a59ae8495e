"""scikit-learn's conventions for the package's estimators, whose input is a list of structures.

Each estimator declares that input with the tag ``input_tags.two_d_array = False``
(``__sklearn_tags__``, as ``DictVectorizer`` does); scikit-learn then yields only
``check_estimator_cloneable`` for it and warns that it cannot test the rest (first test).

To run every scikit-learn check that applies, each estimator is also checked as a subclass
claiming array input (``...OnArrays``): scikit-learn generates its whole list; the API
checks that need no data pass, and each check that feeds arrays of numbers is listed in
``NOT_STRUCTURES`` with the reason it does not apply, as an expected failure in strict
mode (a listed check that passes fails the test, so the list stays exact). What those
checks test with data is then tested here with structures (``test_structure_*``).
"""

import pickle
import warnings
from unittest import SkipTest

import joblib
import numpy as np
import pytest
import sklearn
from data_paths import CORPORA, skip_unless_ci
from sklearn.base import clone, is_classifier
from sklearn.exceptions import NotFittedError, SkipTestWarning
from sklearn.neighbors import KNeighborsClassifier
from sklearn.utils.estimator_checks import estimator_checks_generator, parametrize_with_checks

from spacy_convkernels.approx import KLSH, Nystroem
from spacy_convkernels.corpora import read_klp
from spacy_convkernels.kernels import InvalidParameterError, KernelTransformer, PartialTreeKernel
from spacy_convkernels.learn import (
    KernelKNeighborsClassifier,
    KernelSVC,
    KLSHForestClassifier,
    NonstationaryKernelLearner,
    kernel_knn_graph,
)

if tuple(int(p) for p in sklearn.__version__.split(".")[:2]) < (1, 8):
    skip_unless_ci(
        f"the checks' expected-failure lists need scikit-learn >= 1.8, not {sklearn.__version__}",
        "CI=true installs the newest scikit-learn",
        module_level=True,
    )

SAMPLE = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"


def estimators():
    kernel = PartialTreeKernel()
    return [
        Nystroem(kernel, n_components=10, random_state=0),
        Nystroem(kernel, n_components=10, landmark_init="pivoted_cholesky", random_state=0),
        Nystroem(kernel, n_components=10, landmark_init="ridge_leverage", random_state=0),
        KLSH(kernel, n_references=10, n_bits=24, subset_size=3, random_state=0),
        KLSH(kernel, n_references=10, n_bits=24, subset_size=3, hash_function="kulis_grauman", random_state=0),
        KernelKNeighborsClassifier(kernel, n_neighbors=3),
        KernelKNeighborsClassifier(
            kernel, n_neighbors=3, method="klsh", n_references=10, n_bits=4, subset_size=3, random_state=0
        ),
        KLSHForestClassifier(
            kernel, n_references=10, n_bits=60, n_estimators=10, subspace_bits=8, subset_size=3, random_state=0
        ),
        KernelSVC(kernel, C=2.0),
        NonstationaryKernelLearner(kernel, n_labels=2, n_samples=5, n_trials=1, method="exact", random_state=0),
        KernelTransformer(kernel),
    ]


ARRAYS = "feeds an array of numbers: the input is a list of structures (StructureTypeError)"
NOT_STRUCTURES = {
    "check_fit_score_takes_y": ARRAYS,
    "check_estimators_overwrite_params": ARRAYS + "; test_structure_params_kept",
    "check_dont_overwrite_parameters": ARRAYS + "; test_structure_params_kept",
    "check_estimators_fit_returns_self": ARRAYS + "; test_structure_fit_returns_self",
    "check_readonly_memmap_input": "feeds a read-only memmap of numbers: not structures",
    "check_n_features_in_after_fitting": "structures have no feature count (no n_features_in_)",
    "check_n_features_in": "structures have no feature count (no n_features_in_)",
    "check_positive_only_tag_during_fit": ARRAYS,
    "check_estimators_dtypes": "feeds arrays of several number dtypes: not structures",
    "check_complex_data": "feeds complex numbers: not structures",
    "check_dtype_object": "feeds an object array of numbers and strings: not structures",
    "check_estimators_empty_data_messages": ARRAYS + "; empty input: test_structure_bad_fit_input",
    "check_pipeline_consistency": ARRAYS + "; pipelines: test_kernel_transformer.py",
    "check_estimators_nan_inf": "feeds NaN and inf: structures hold no numbers",
    "check_estimator_sparse_tag": "feeds a sparse matrix: not structures",
    "check_estimator_sparse_array": "feeds a sparse array: not structures",
    "check_estimator_sparse_matrix": "feeds a sparse matrix: not structures",
    "check_estimators_pickle": ARRAYS + "; test_structure_pickle",
    "check_array_api_input": "array-API arrays: not structures (skipped by scikit-learn without SCIPY_ARRAY_API)",
    "check_f_contiguous_array_estimator": "feeds a Fortran-ordered array: not structures",
    "check_transformer_data_not_an_array": "feeds an array-like of numbers: not structures",
    "check_transformer_general": ARRAYS + "; test_structure_fit_idempotent",
    "check_transformer_preserve_dtypes": "feeds float32/float64 arrays: structures have no dtype",
    "check_classifier_data_not_an_array": "feeds an array-like of numbers: not structures",
    "check_classifiers_one_label": ARRAYS + "; test_structure_targets",
    "check_classifiers_classes": ARRAYS + "; test_structure_targets",
    "check_classifiers_train": ARRAYS + "; test_structure_targets",
    "check_classifiers_regression_target": ARRAYS + "; test_structure_targets",
    "check_supervised_y_no_nan": ARRAYS + "; test_structure_targets",
    "check_supervised_y_2d": ARRAYS + "; test_structure_targets",
    "check_requires_y_none": ARRAYS + "; test_structure_targets",
    "check_methods_sample_order_invariance": ARRAYS + "; test_structure_order_and_subset_invariance",
    "check_methods_subset_invariance": ARRAYS + "; test_structure_order_and_subset_invariance",
    "check_fit2d_1sample": ARRAYS + "; test_structure_bad_fit_input",
    "check_fit2d_1feature": ARRAYS,
    "check_dict_unchanged": ARRAYS + "; test_structure_methods_change_nothing",
    "check_fit_idempotent": ARRAYS + "; test_structure_fit_idempotent",
    "check_fit_check_is_fitted": ARRAYS + "; test_structure_unfitted",
    "check_fit1d": "feeds a 1-D array of numbers: not structures",
    "check_fit2d_predict1d": ARRAYS,
    "check_class_weight_classifiers": ARRAYS + "; test_kernel_svm.py",
    "check_classifiers_multilabel_representation_invariance": ARRAYS + "; test_kernel_svm.py",
    "check_classifiers_multilabel_output_format_predict": ARRAYS + "; test_kernel_svm.py",
    "check_classifiers_multilabel_output_format_predict_proba": ARRAYS + "; test_kernel_svm.py",
    "check_classifiers_multilabel_output_format_decision_function": ARRAYS + "; test_kernel_svm.py",
}


def claiming_arrays(estimator):
    """The estimator as an instance of a subclass whose tags claim 2-D array input."""
    cls = type(estimator)
    name = cls.__name__ + "OnArrays"
    if name not in globals():

        def tags(self):
            tags = super(subclass, self).__sklearn_tags__()
            tags.input_tags.two_d_array = True
            return tags

        subclass = type(name, (cls,), {"__sklearn_tags__": tags, "__module__": __name__, "__qualname__": name})
        globals()[name] = subclass
    return globals()[name](**estimator.get_params(deep=False))


@pytest.mark.parametrize("estimator", estimators(), ids=lambda e: type(e).__name__)
def test_scikit_learn_sees_the_structure_input_tag(estimator):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        checks = [check for _, check in estimator_checks_generator(estimator)]
    assert [check.func.__name__ for check in checks] == ["check_estimator_cloneable"]
    assert any(issubclass(w.category, SkipTestWarning) and "Can't test estimator" in str(w.message) for w in caught)
    checks[0](estimator)


@pytest.mark.slow
@parametrize_with_checks(
    [
        claiming_arrays(e)
        for e in estimators()
        if e.get_params().get("method") != "klsh" and e.get_params().get("hash_function") != "kulis_grauman"
    ],  # one of each class
)
def test_scikit_learn_checks(estimator, check):
    """A check of ``NOT_STRUCTURES`` is an expected failure, strict: one that passes fails.
    Its exception is dropped before ``pytest.xfail``: pytest would format the traceback of
    each, deep in scikit-learn (a third of a second apiece, 300 of them)."""
    reason = NOT_STRUCTURES.get(getattr(check, "func", check).__name__)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            check(estimator)
        except SkipTest:  # scikit-learn's own skip (check_array_api_input without SCIPY_ARRAY_API)
            raise
        except Exception as error:
            if reason is None:
                raise
            failure = f"{type(error).__name__}: {str(error)[:200]}"
        else:
            assert reason is None, f"a check listed in NOT_STRUCTURES passes: {reason}"
            return
    pytest.xfail(f"{reason} ({failure})")


# The same conventions with structures ---------------------------------------------------


@pytest.fixture(scope="module")
def data():
    examples = list(read_klp(SAMPLE))
    return [e.trees["grct"] for e in examples], np.array([e.labels[0] for e in examples])


def methods(estimator):
    """The methods that use a fitted estimator, with the arguments to call them on ``X``."""
    names = ("predict", "predict_proba", "transform", "similarities", "kneighbors", "get_feature_names_out")
    found = {name: lambda X, name=name: getattr(estimator, name)(X) for name in names if hasattr(estimator, name)}
    if "get_feature_names_out" in found:
        found["get_feature_names_out"] = lambda X: estimator.get_feature_names_out()
    if "kneighbors" in found:
        found["kneighbors (training)"] = lambda X: estimator.kneighbors()
    return found


def fitted(estimator, data):
    X, y = data
    return clone(estimator).fit(X[:40], y[:40])


def outputs(estimator, X):
    found = {name: method(X) for name, method in methods(estimator).items()}
    if hasattr(estimator, "weights_"):  # NonstationaryKernelLearner: what it learned
        found["weights_"] = np.array(sorted(estimator.weights_.items()))
    return found


def assert_close(a, b, name):
    """Equal, up to rounding for floating-point outputs."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "f":
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14, err_msg=name)
    else:
        np.testing.assert_array_equal(a, b, err_msg=name)


def assert_same_outputs(a, b):
    assert a.keys() == b.keys()
    for name in a:
        for x, y in zip(*(v if isinstance(v, tuple) else (v,) for v in (a[name], b[name]))):
            np.testing.assert_array_equal(x, y, err_msg=name)


@pytest.mark.parametrize("estimator", estimators(), ids=lambda e: type(e).__name__)
def test_structure_fit_returns_self(estimator, data):
    model = clone(estimator)
    assert model.fit(data[0][:40], data[1][:40]) is model


@pytest.mark.parametrize("estimator", estimators(), ids=lambda e: type(e).__name__)
def test_structure_unfitted(estimator, data):
    model = clone(estimator)
    for _name, method in methods(model).items():
        with pytest.raises(NotFittedError):
            method(data[0][:5])
    if is_classifier(model):
        with pytest.raises(NotFittedError):
            model.score(data[0][:5], data[1][:5])


@pytest.mark.slow
@pytest.mark.parametrize("estimator", estimators(), ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("unpickled", [False, True], ids=["fitted", "unpickled"])
def test_structure_methods_change_nothing(estimator, data, unpickled):
    """predict, transform, kneighbors... leave every attribute as it was (the same objects,
    the same content), also on a model just unpickled."""
    model = fitted(estimator, data)
    if unpickled:
        model = pickle.loads(pickle.dumps(model))
    before, digest = dict(model.__dict__), joblib.hash(model)
    outputs(model, data[0][40:])
    if is_classifier(model):
        model.score(data[0][40:], data[1][40:])
    assert model.__dict__.keys() == before.keys()
    assert all(model.__dict__[name] is value for name, value in before.items())
    assert joblib.hash(model) == digest


@pytest.mark.parametrize("estimator", estimators(), ids=lambda e: type(e).__name__)
def test_structure_params_kept(estimator, data):
    """fit changes no parameter, and what it adds is public only with a trailing '_'."""
    model = clone(estimator)
    params = joblib.hash(model.get_params(deep=True))
    names = set(vars(model))
    model.fit(data[0][:40], data[1][:40])
    assert joblib.hash(model.get_params(deep=True)) == params
    added = set(vars(model)) - names
    assert added and all(name.endswith("_") or name.startswith("_") for name in added)


@pytest.mark.slow
@pytest.mark.parametrize("estimator", estimators(), ids=lambda e: type(e).__name__)
def test_structure_fit_idempotent(estimator, data):
    once = fitted(estimator, data)
    twice = clone(estimator).fit(*data).fit(data[0][:40], data[1][:40])
    assert_same_outputs(outputs(once, data[0][40:]), outputs(twice, data[0][40:]))


@pytest.mark.parametrize("estimator", estimators(), ids=lambda e: type(e).__name__)
def test_structure_order_and_subset_invariance(estimator, data):
    model = fitted(estimator, data)
    X = data[0][40:]
    whole = outputs(model, X)
    order = np.random.RandomState(0).permutation(len(X))
    for name, method in methods(model).items():
        if name in ("get_feature_names_out", "kneighbors (training)"):
            continue
        expected = whole[name] if isinstance(whole[name], tuple) else (whole[name],)
        permuted = method([X[i] for i in order])
        for a, b in zip(expected, permuted if isinstance(permuted, tuple) else (permuted,)):
            assert_close(a[order], b, name)
        halves = [method(X[:10]), method(X[10:])]
        for k, a in enumerate(expected):
            parts = [h[k] if isinstance(h, tuple) else h for h in halves]
            assert_close(a, np.concatenate(parts), name)


@pytest.mark.parametrize("estimator", estimators(), ids=lambda e: type(e).__name__)
def test_structure_pickle(estimator, data):
    model = fitted(estimator, data)
    assert_same_outputs(outputs(model, data[0][40:]), outputs(pickle.loads(pickle.dumps(model)), data[0][40:]))


@pytest.mark.parametrize("estimator", estimators(), ids=lambda e: type(e).__name__)
def test_structure_bad_fit_input(estimator, data):
    model = clone(estimator)
    for bad in ([], [np.zeros(3)] * 4, "(S (NP a))", np.zeros((4, 0))):
        with pytest.raises((InvalidParameterError, TypeError)):
            model.fit(bad, data[1][: len(bad)])
    if type(model) in (KLSHForestClassifier, NonstationaryKernelLearner):  # they need two structures
        with pytest.raises(InvalidParameterError, match="1 sample"):
            model.fit(data[0][:1], data[1][:1])


@pytest.mark.parametrize("estimator", [e for e in estimators() if is_classifier(e)], ids=lambda e: type(e).__name__)
def test_structure_targets(estimator, data):
    X, y = data
    model = clone(estimator)
    with pytest.raises(InvalidParameterError, match="requires y to be passed, but the target y is None"):
        model.fit(X[:40], None)
    with pytest.raises(ValueError, match="Unknown label type"):
        model.fit(X[:40], np.linspace(0, 1, 40))
    with pytest.raises(ValueError, match="Unknown label type|NaN"):
        model.fit(X[:40], np.linspace(0, 1, 40) * np.nan)
    if not model.__sklearn_tags__().classifier_tags.multi_label:
        with pytest.raises(InvalidParameterError, match="labels of shape"):
            model.fit(X[:40], np.zeros((40, 2)))
    single = clone(estimator).fit(X[:40], ["DESC"] * 40)
    assert list(single.classes_) == ["DESC"] and set(single.predict(X[40:])) == {"DESC"}
    numeric = clone(estimator).fit(X[:40], np.searchsorted(np.unique(y), y[:40]))
    assert set(numeric.predict(X[40:])) <= set(range(len(np.unique(y))))


# kneighbors follows scikit-learn -------------------------------------------------------


def test_kneighbors_gives_ascending_kernel_distances(data):
    X, y = data
    kernel = PartialTreeKernel()
    model = KernelKNeighborsClassifier(kernel, n_neighbors=5).fit(X[:40], y[:40])
    distances, indices = model.kneighbors(X[40:])
    assert np.all(np.diff(distances, axis=1) >= 0)
    K = kernel.gram(X[40:], X[:40])
    np.testing.assert_allclose(distances, np.sqrt(np.maximum(2 - 2 * np.take_along_axis(K, indices, 1), 0)))
    D = np.sqrt(np.maximum(2 - 2 * K, 0))
    theirs, _ = (
        KNeighborsClassifier(5, metric="precomputed")
        .fit(np.sqrt(np.maximum(2 - 2 * kernel.gram(X[:40]), 0)), y[:40])
        .kneighbors(D)
    )
    np.testing.assert_allclose(distances, theirs)
    np.testing.assert_array_equal(model.kneighbors(X[40:], return_distance=False), indices)
    training, graph = model.kneighbors(n_neighbors=3)
    similarities, expected, _ = kernel_knn_graph(kernel, X[:40], 3)
    np.testing.assert_array_equal(graph, expected)
    np.testing.assert_allclose(training, np.sqrt(np.maximum(2 - 2 * similarities, 0)))
    assert not np.any(graph == np.arange(40)[:, None])  # a training structure is not its own neighbour


def test_hashed_kneighbors_mark_missing_neighbours(data):
    X, y = data
    model = KernelKNeighborsClassifier(
        PartialTreeKernel(), n_neighbors=50, method="klsh", n_references=10, n_bits=4, subset_size=3, random_state=0
    ).fit(X[:40], y[:40])
    distances, indices = model.kneighbors(X[40:])
    assert np.all((indices == -1) == np.isinf(distances)) and np.any(indices == -1)
    np.testing.assert_array_equal(np.sort(distances, axis=1), distances)


def test_nystroem_feature_names(data):
    model = Nystroem(PartialTreeKernel(), n_components=7, random_state=0).fit(data[0])
    assert model.get_feature_names_out().tolist() == [f"nystroem{i}" for i in range(7)]
