"""KLSH codes, hashed k-NN, KLSH forests with reference optimization, sigma learning."""

import pickle

import numpy as np
import pytest
import spacy
from data_paths import CORPORA, ROOT, require_extra
from kelp_parses import doc_from_grct
from scipy.stats import spearmanr
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from spacy.training import Example

from spacy_convkernels import ConvKernelsError
from spacy_convkernels.approx import KLSH, Nystroem, hamming_distances, unpack_codes
from spacy_convkernels.corpora import read_klp
from spacy_convkernels.kernels import (
    InvalidParameterError,
    PartialTreeKernel,
    SmoothedPartialTreeKernel,
    SubsequencePathKernel,
    SubsetTreeKernel,
)
from spacy_convkernels.learn import (
    KernelKNeighborsClassifier,
    KLSHForestClassifier,
    NonstationaryKernelLearner,
    kernel_knn_graph,
)
from spacy_convkernels.structures.paths import PathTuples

SAMPLE = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"


@pytest.fixture(scope="module")
def qc():
    examples = list(read_klp(SAMPLE))
    trees = [e.trees[name] for e in examples for name in ("grct", "cgrct", "lct")]
    labels = np.array([e.labels[0] for e in examples for _ in range(3)])
    return trees, labels


@pytest.mark.parametrize("hash_function", ["random_knn", "kulis_grauman"])
def test_near_structures_share_more_bits(qc, hash_function):
    trees, _ = qc
    kernel = PartialTreeKernel(terminal_factor=5)
    klsh = KLSH(
        kernel, n_references=40, n_bits=512, subset_size=6, hash_function=hash_function, packed=True, random_state=0
    )
    codes = klsh.fit(trees).transform(trees)
    assert codes.shape == (len(trees), 64) and codes.dtype == np.uint8
    assert klsh.n_kernel_evaluations_ == (0 if hash_function == "random_knn" else 40 * 39 // 2)  # fit only
    G = kernel.gram(trees)
    upper = np.triu_indices(len(trees), 1)
    agreement = np.array([1 - hamming_distances(codes, codes[i]) / 512 for i in range(len(trees))])[upper]
    similarity = G[upper]
    assert spearmanr(similarity, agreement).statistic > 0.3
    near, far = similarity >= np.quantile(similarity, 0.9), similarity <= np.quantile(similarity, 0.1)
    assert agreement[near].mean() > agreement[far].mean() + 0.05


def test_codes_are_reproducible_and_unpack(qc):
    trees, _ = qc
    kernel = PartialTreeKernel()
    params = dict(n_references=20, n_bits=70, subset_size=5, packed=True, random_state=3)
    a = KLSH(kernel, **params).fit(trees).transform(trees[:10])
    b = KLSH(kernel, **params).fit(trees).transform(trees[:10])
    np.testing.assert_array_equal(a, b)
    bits = unpack_codes(a, 70)
    assert bits.shape == (10, 70) and set(np.unique(bits)) <= {0, 1}
    with pytest.raises(InvalidParameterError):
        KLSH(kernel, hash_function="magic").fit(trees)
    with pytest.raises(InvalidParameterError, match="packed must be True or False"):
        KLSH(kernel, packed="yes").fit(trees)


@pytest.mark.parametrize("hash_function", ["random_knn", "kulis_grauman"])
def test_transform_gives_one_bit_per_column_and_packed_bytes_on_request(qc, hash_function):
    trees, _ = qc
    params = dict(n_references=20, n_bits=70, subset_size=5, hash_function=hash_function, random_state=3)
    klsh = KLSH(PartialTreeKernel(), **params).fit(trees)
    bits = klsh.transform(trees[:10])
    assert bits.shape == (10, 70) and bits.dtype == np.uint8 and set(np.unique(bits)) == {0, 1}
    assert klsh.get_feature_names_out().tolist() == [f"klsh{i}" for i in range(70)]
    packed = klsh.set_params(packed=True).transform(trees[:10])
    assert packed.shape == (10, 9) and packed.dtype == np.uint8
    np.testing.assert_array_equal(unpack_codes(packed, 70), bits)
    assert klsh.get_feature_names_out().tolist() == [f"klsh{i}" for i in range(9)]
    np.testing.assert_array_equal(klsh.codes_from_similarities(klsh.similarities(trees[:10])), packed)
    np.testing.assert_array_equal(
        KLSH(PartialTreeKernel(), **params).fit_transform(trees), klsh.set_params(packed=False).transform(trees)
    )


def test_klsh_has_set_output_as_scikit_learn_transformers_do(qc):
    trees, _ = qc
    klsh = KLSH(PartialTreeKernel(), n_references=20, n_bits=12, subset_size=5, random_state=0)
    assert klsh.set_output(transform="default") is klsh
    with pytest.raises(NotFittedError):
        klsh.get_feature_names_out()
    assert klsh.fit(trees).transform(trees[:5]).shape == (5, 12)


def test_pandas_for_set_output_is_an_extra_of_its_own_and_of_dev():
    tomllib = pytest.importorskip("tomllib")
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert [requirement.split(">")[0] for requirement in extras["pandas"]] == ["pandas"]
    assert "pandas" in extras["dev"][0].split("[")[1].rstrip("]").split(",")


def test_klsh_codes_as_a_dataframe(qc):
    pd = require_extra("pandas", "pandas")
    trees, _ = qc
    klsh = KLSH(PartialTreeKernel(), n_references=20, n_bits=12, subset_size=5, random_state=0)
    frame = klsh.set_output(transform="pandas").fit(trees).transform(trees[:5])
    assert isinstance(frame, pd.DataFrame) and list(frame.columns) == [f"klsh{i}" for i in range(12)]
    assert frame.shape == (5, 12)


def test_a_klsh_pickled_before_packed_existed_unpickles_with_the_default(qc):
    trees, _ = qc
    klsh = KLSH(PartialTreeKernel(), n_references=20, n_bits=12, subset_size=4, random_state=0).fit(trees[:40])
    expected = klsh.transform(trees[:5])
    del klsh.packed  # as the estimator was before the parameter
    old = pickle.loads(pickle.dumps(klsh))
    assert old.packed is False and old.get_params()["packed"] is False
    assert np.array_equal(old.transform(trees[:5]), expected)


@pytest.mark.parametrize("hash_function", ["random_knn", "kulis_grauman"])
def test_restored_klsh_codes_as_the_fitted_one(qc, hash_function):
    trees, _ = qc
    kernel = PartialTreeKernel()
    params = dict(n_references=15, n_bits=40, subset_size=4, hash_function=hash_function, random_state=5)
    fitted = KLSH(kernel, **params).fit(trees[:100])
    saved = {"subsets": fitted.subsets_} if hash_function == "random_knn" else {"hyperplanes": fitted.hyperplanes_}
    restored = KLSH(kernel, **params).restore(fitted.references_, **saved)
    np.testing.assert_array_equal(restored.transform(trees), fitted.transform(trees))
    assert restored.n_kernel_evaluations_ == 0
    # fitting to given references draws hash functions from the seed given
    redrawn = KLSH(kernel, **params).fit_references(fitted.references_, random_state=1)
    assert redrawn.n_kernel_evaluations_ == (0 if hash_function == "random_knn" else 15 * 14 // 2)
    np.testing.assert_array_equal(
        KLSH(kernel, **params).fit_references(fitted.references_, random_state=1).transform(trees),
        redrawn.transform(trees),
    )
    with pytest.raises(InvalidParameterError, match="KLSH.restore"):
        KLSH(kernel, **params).restore(fitted.references_)  # no saved hash functions
    wrong = {"hyperplanes": np.zeros((15, 40))} if hash_function == "random_knn" else {"subsets": fitted.references_}
    with pytest.raises(InvalidParameterError, match="KLSH.restore"):
        KLSH(kernel, **params).restore(fitted.references_, **wrong)
    with pytest.raises(InvalidParameterError, match="KLSH.restore"):
        KLSH(kernel, **params).restore(fitted.references_, **saved, indices=[0, 1])  # one index per reference


def test_restore_refuses_broken_subsets_and_changes_nothing_on_failure(qc):
    trees, _ = qc
    params = dict(n_references=15, n_bits=40, subset_size=4, random_state=5)
    fitted = KLSH(PartialTreeKernel(), **params).fit(trees[:100])
    for broken in (fitted.subsets_.astype(float), fitted.subsets_[:, :, :0]):  # float indices; alpha = 0
        with pytest.raises(InvalidParameterError, match="integer indices"):
            KLSH(PartialTreeKernel(), **params).restore(fitted.references_, subsets=broken)
    before = (fitted.references_, fitted.subsets_)
    with pytest.raises(ConvKernelsError):  # the references are not trees: nothing is replaced
        fitted.restore(["not a tree"] * 15, subsets=fitted.subsets_)
    assert (fitted.references_, fitted.subsets_) == before


def test_old_parameter_names_and_positions_are_refused(qc):
    kernel = PartialTreeKernel()
    for make in (
        lambda: KLSH(kernel, 20),
        lambda: KernelKNeighborsClassifier(kernel, 3),
        lambda: KLSHForestClassifier(kernel, 20),
        lambda: NonstationaryKernelLearner(kernel, 3),
        lambda: KLSHForestClassifier(kernel, n_subspaces=20),
        lambda: NonstationaryKernelLearner(kernel, hashing=False),
        lambda: kernel_knn_graph(kernel, qc[0], 3, None),
        lambda: kernel_knn_graph(kernel, qc[0], 3, klsh=None),
        lambda: Nystroem(kernel, 10),
        lambda: Nystroem(kernel, landmarks="kmeans++"),
    ):
        with pytest.raises(TypeError):
            make()
    with pytest.raises(AttributeError):
        KLSH(kernel).set_references(qc[0][:10])
    with pytest.raises(InvalidParameterError, match="method"):
        KernelKNeighborsClassifier(kernel, method="hashed").fit(*qc)


def test_hashed_neighbours_beat_random_candidates(qc):
    """Buckets hold the true neighbours far more often than random candidate sets of the same size."""
    trees, _ = qc
    kernel = PartialTreeKernel(terminal_factor=5)
    _, exact, exact_evaluations = kernel_knn_graph(kernel, trees, 5)
    _, hashed, hashed_evaluations = kernel_knn_graph(
        kernel, trees, 5, method="klsh", n_references=30, n_bits=6, subset_size=5, random_state=1, probes=1
    )
    overlap = np.mean([len(set(a) & set(b)) / 5 for a, b in zip(exact, hashed)])
    candidates = (hashed_evaluations - len(trees) * 30) / len(trees)  # per query, beyond its code
    assert overlap > 1.5 * candidates / len(trees)
    assert exact_evaluations == len(trees) * (len(trees) - 1) // 2 and hashed_evaluations < exact_evaluations


def test_hashed_and_exact_neighbours_agree_on_qc(qc_dir):
    trees = [e.trees["grct"] for e in read_klp(qc_dir / "train_5500.coarse.klp.gz")][:2000]
    kernel = PartialTreeKernel(terminal_factor=5)
    _, exact, exact_evaluations = kernel_knn_graph(kernel, trees, 5)
    _, hashed, hashed_evaluations = kernel_knn_graph(
        kernel,
        trees,
        5,
        method="klsh",
        n_references=100,
        n_bits=12,
        subset_size=10,
        hash_function="kulis_grauman",
        random_state=1,
        probes=2,
    )
    assert np.mean([len(set(a) & set(b)) / 5 for a, b in zip(exact, hashed)]) > 0.55
    assert hashed_evaluations < exact_evaluations / 3  # of the n(n-1)/2 pairs


class CountingTreeKernel(PartialTreeKernel):
    """Counts the kernel values between two structures that its Gram and pair calls compute."""

    def gram(self, X, Y=None, **kwargs):
        self.__dict__["counted"] = self.__dict__.get("counted", 0) + (
            len(X) * (len(X) - 1) // 2 if Y is None else len(X) * len(Y)
        )
        return super().gram(X, Y, **kwargs)

    def pairs(self, X, index_pairs, **kwargs):
        self.__dict__["counted"] = self.__dict__.get("counted", 0) + len(index_pairs)
        return super().pairs(X, index_pairs, **kwargs)


def test_knn_classifier_exact_and_hashed(qc):
    trees, labels = qc
    exact_kernel, hashed_kernel = CountingTreeKernel(), CountingTreeKernel()
    exact = KernelKNeighborsClassifier(exact_kernel, n_neighbors=3).fit(trees[::2], labels[::2])
    hashed = KernelKNeighborsClassifier(
        hashed_kernel, n_neighbors=3, method="klsh", n_references=20, n_bits=6, subset_size=5, random_state=0
    ).fit(trees[::2], labels[::2])
    assert exact.n_kernel_evaluations_ == 0 and hashed.n_kernel_evaluations_ == hashed_kernel.counted == 90 * 20
    for model in (exact, hashed):
        proba = model.predict_proba(trees[1::2])
        assert proba.shape == (len(trees[1::2]), len(model.classes_))
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        assert (model.predict(trees[1::2]) == labels[1::2]).mean() > 0.4
    assert exact_kernel.counted == 2 * 90 * 90  # predict_proba and predict each compare 90 queries with 90
    assert hashed_kernel.counted - 90 * 20 < exact_kernel.counted / 2


def _synthetic_paths(n, rng):
    """Two classes told apart by a signal tuple, buried in noise tuples shared by both."""
    X, y = [], []
    for i in range(n):
        label = i % 2
        noise = [("noise", "xyz"[rng.integers(3)]) for _ in range(int(rng.integers(6, 10)))]
        filler = [("arg1", "pq"[rng.integers(2)]) for _ in range(int(rng.integers(1, 3)))]
        X.append(PathTuples(noise[: len(noise) // 2] + [("sig", "ab"[label])] * 2 + filler + noise[len(noise) // 2 :]))
        y.append(label)
    return X, np.array(y)


@pytest.mark.slow
def test_sigma_learning_drops_planted_noise_labels():
    X, y = _synthetic_paths(300, np.random.default_rng(0))
    learner = NonstationaryKernelLearner(
        SubsequencePathKernel(lam=0.8), n_labels=3, n_samples=20, n_trials=3, positive_class=1, random_state=0
    ).fit(X, y)
    assert learner.weights_["noise"] == 0.0 and learner.weights_["sig"] == 1.0
    assert learner.kernel_.edge_weights["noise"] == 0.0
    without, with_ = learner.losses_["noise"]
    assert without < with_  # ignoring the noise lowers the k-NN loss
    knn = KernelKNeighborsClassifier(learner.kernel_, n_neighbors=1).fit(X[:200], y[:200])
    assert (knn.predict(X[200:]) == y[200:]).mean() > 0.95


@pytest.mark.slow
def test_mutual_information_bound_does_not_decrease():
    X, y = _synthetic_paths(120, np.random.default_rng(1))
    forest = KLSHForestClassifier(
        SubsequencePathKernel(lam=0.8),
        n_references=6,
        n_bits=60,
        n_estimators=20,
        subspace_bits=10,
        subset_size=2,
        optimize_references=True,
        mi_samples=10**6,
        mi_trees=8,
        bucket_bits=3,
        random_state=0,
    ).fit(X, y)
    history = np.array(forest.mi_history_)
    assert len(history) == 7 and np.all(np.diff(history) >= -1e-12) and history[-1] > history[0]
    assert (forest.predict(X) == y).mean() > 0.9


class CountingPathKernel(SubsequencePathKernel):
    """Records every pair of structures whose kernel value a Gram computes."""

    def gram(self, X, Y=None, **kwargs):
        K = super().gram(X, Y, **kwargs)
        xs = list(getattr(X, "structures", X))
        ys = xs if Y is None else list(getattr(Y, "structures", Y))
        self.__dict__.setdefault("computed", []).extend((id(x), id(y)) for x in xs for y in ys)
        return K


@pytest.mark.slow
@pytest.mark.parametrize("mi_samples", [10**6, 50])
def test_forest_counts_every_kernel_value_and_computes_none_twice_per_sample(mi_samples):
    X, y = _synthetic_paths(120, np.random.default_rng(1))
    kernel = CountingPathKernel(lam=0.8)
    forest = KLSHForestClassifier(
        kernel,
        n_references=6,
        n_bits=60,
        n_estimators=20,
        subspace_bits=10,
        subset_size=2,
        optimize_references=True,
        mi_samples=mi_samples,
        mi_trees=8,
        bucket_bits=3,
        random_state=0,
    ).fit(X, y)
    assert forest.n_kernel_evaluations_ == len(kernel.computed)
    if mi_samples >= len(X):  # one sample: every value computed at most once
        assert len(set(kernel.computed)) == len(kernel.computed)
    assert forest.mi_history_[-1] != forest.mi_history_[0]  # some reference was replaced


def test_forest_estimator_protocol(qc):
    trees, labels = qc
    forest = KLSHForestClassifier(
        PartialTreeKernel(),
        n_references=25,
        n_bits=200,
        n_estimators=30,
        subspace_bits=20,
        subset_size=5,
        random_state=0,
    ).fit(trees, labels)
    proba = forest.predict_proba(trees[:12])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    again = clone(forest).fit(trees, labels)
    np.testing.assert_array_equal(again.predict_proba(trees[:12]), proba)
    assert (forest.predict(trees) == labels).mean() > 0.9  # it fits its training data
    with pytest.raises(InvalidParameterError):
        KLSHForestClassifier(PartialTreeKernel(), hash_function="kulis_grauman", optimize_references=True).fit(
            trees, labels
        )


@pytest.mark.slow
@pytest.mark.parametrize("hash_function", ["random_knn", "kulis_grauman"])
def test_klsh_codes_component(tmp_path, hash_function):
    nlp = spacy.blank("en")
    docs = [doc_from_grct(nlp.vocab, e.trees["grct"]) for e in read_klp(SAMPLE)]
    nlp.add_pipe(
        "kernel_klsh_codes", config={"n_references": 20, "n_bits": 64, "subset_size": 4, "hash_function": hash_function}
    )
    nlp.initialize(lambda: [Example(d.copy(), d) for d in docs[:40]])
    doc = nlp(docs[50].copy())
    (code,) = doc._.kernel_klsh_code
    assert code.dtype == np.uint8 and code.shape == (8,)
    np.testing.assert_array_equal(list(doc.sents)[0]._.kernel_klsh_code, code)
    codes = [d._.kernel_klsh_code[0] for d in nlp.pipe(d.copy() for d in docs[40:])]
    nlp.to_disk(tmp_path / "model")
    reloaded = spacy.load(tmp_path / "model")
    np.testing.assert_array_equal([d._.kernel_klsh_code[0] for d in reloaded.pipe(d.copy() for d in docs[40:])], codes)


@pytest.mark.slow
@pytest.mark.parametrize("kernel", [SubsetTreeKernel(), SmoothedPartialTreeKernel()], ids=["sst", "sptk"])
def test_sigma_learning_on_tree_labels(qc, kernel):
    trees, labels = qc
    grct = trees[::3]
    learner = NonstationaryKernelLearner(
        kernel, n_labels=4, n_samples=10, n_trials=2, method="exact", random_state=0
    ).fit(grct, labels[::3])
    assert len(learner.weights_) == 4 and set(learner.weights_.values()) <= {0.0, 1.0}
    for label, (without, with_) in learner.losses_.items():  # sigma = 0 exactly when ignoring lowers the loss
        assert learner.weights_[label] == (0.0 if without < with_ else 1.0)
    assert learner.kernel_.label_weights == learner.weights_
    assert learner.kernel_.gram(grct[:5]).shape == (5, 5)


def test_klsh_codes_needs_more_training_sentences_than_subset_size():
    nlp = spacy.blank("en")
    docs = [doc_from_grct(nlp.vocab, e.trees["grct"]) for e in read_klp(SAMPLE)]
    nlp.add_pipe("kernel_klsh_codes", config={"n_references": 30, "n_bits": 64, "subset_size": 20})
    with pytest.raises(ConvKernelsError, match="kernel_klsh_codes: 12 training sentences with a tree, at least 21"):
        nlp.initialize(lambda: [Example(d.copy(), d) for d in docs[:12]])


def _full_graph(kernel, X, n_neighbors):
    """The exact k-NN graph as it was computed before the row blocks: the whole Gram, a stable sort."""
    K = kernel.gram(X)
    np.fill_diagonal(K, -np.inf)
    indices = np.argsort(-K, axis=1, kind="stable")[:, : min(n_neighbors, len(X))]
    similarities = np.take_along_axis(K, indices, axis=1)
    return similarities, np.where(np.isfinite(similarities), indices, -1)


@pytest.mark.slow
@pytest.mark.parametrize("rows", [1, 7, 512])
@pytest.mark.parametrize("n_neighbors", [1, 4, 9, 200])
def test_blocked_knn_graph_equals_the_full_one(qc, monkeypatch, rows, n_neighbors):
    """Row blocks keeping the k best give the graph of the full Gram, value for value and in
    the same order on ties (each tree appears three times: many exact ties)."""
    from spacy_convkernels.utils import row_blocks

    trees, _ = qc
    X = trees[:30] + trees[:30] + trees[:30]  # every neighbour tied with two copies
    kernel = PartialTreeKernel(terminal_factor=5)
    expected = _full_graph(kernel, X, n_neighbors)
    monkeypatch.setattr(row_blocks, "ROWS", rows)
    similarities, indices, evaluations = kernel_knn_graph(kernel, X, n_neighbors)
    np.testing.assert_array_equal(indices, expected[1])
    np.testing.assert_array_equal(similarities, expected[0])
    assert evaluations == 90 * 89 // 2


def test_blocked_knn_graph_on_paths(monkeypatch):
    from spacy_convkernels.utils import row_blocks

    X, _ = _synthetic_paths(50, np.random.default_rng(2))
    kernel = SubsequencePathKernel(lam=0.8)
    expected = _full_graph(kernel, X, 5)
    monkeypatch.setattr(row_blocks, "ROWS", 8)
    similarities, indices, _ = kernel_knn_graph(kernel, X, 5)
    np.testing.assert_array_equal(indices, expected[1])
    np.testing.assert_array_equal(similarities, expected[0])


@pytest.mark.slow
def test_blocked_knn_graph_holds_one_block(qc, monkeypatch):
    """No kernel call computes more than one block of rows against the rest."""
    from spacy_convkernels.utils import row_blocks

    trees, _ = qc
    sizes = []
    gram = PartialTreeKernel.gram

    def recording(self, X, Y=None, **kwargs):
        sizes.append(len(X) * (len(X) if Y is None else len(Y)))
        return gram(self, X, Y, **kwargs)

    monkeypatch.setattr(row_blocks, "ROWS", 16)
    monkeypatch.setattr(PartialTreeKernel, "gram", recording)
    kernel_knn_graph(PartialTreeKernel(), trees, 3)
    assert max(sizes) <= 16 * len(trees)


@pytest.mark.slow
def test_progress_bars_only_when_asked(qc, capsys):
    trees, labels = qc
    kernel = PartialTreeKernel()
    klsh = dict(n_references=10, n_bits=16, subset_size=3, random_state=0)
    quiet = [
        KLSH(kernel, **klsh).fit(trees).transform(trees),
        KLSHForestClassifier(
            kernel, n_references=10, n_bits=40, n_estimators=5, subspace_bits=5, subset_size=3, random_state=0
        )
        .fit(trees, labels)
        .predict(trees),
        kernel_knn_graph(kernel, trees, 3)[1],
    ]
    assert capsys.readouterr().err == ""
    loud = [
        KLSH(kernel, **klsh, verbose=True).fit(trees).transform(trees),
        KLSHForestClassifier(
            kernel,
            n_references=10,
            n_bits=40,
            n_estimators=5,
            subspace_bits=5,
            subset_size=3,
            random_state=0,
            verbose=True,
        )
        .fit(trees, labels)
        .predict(trees),
        kernel_knn_graph(kernel, trees, 3, verbose=True)[1],
    ]
    err = capsys.readouterr().err
    assert "KLSH codes" in err and "k-NN graph" in err and f"{len(trees)}/{len(trees)}" in err
    for a, b in zip(quiet, loud):
        np.testing.assert_array_equal(a, b)
    KLSHForestClassifier(
        SubsequencePathKernel(lam=0.8),
        n_references=4,
        n_bits=20,
        n_estimators=4,
        subspace_bits=4,
        subset_size=2,
        optimize_references=True,
        mi_samples=40,
        mi_trees=3,
        bucket_bits=2,
        random_state=0,
        verbose=True,
    ).fit(*_synthetic_paths(40, np.random.default_rng(0)))
    assert "KLSH references" in capsys.readouterr().err


@pytest.mark.slow
def test_forest_is_a_bagging_of_subspace_trees(qc):
    trees, labels = qc
    forest = KLSHForestClassifier(
        PartialTreeKernel(),
        n_references=20,
        n_bits=100,
        n_estimators=12,
        subspace_bits=9,
        subset_size=4,
        random_state=0,
        n_jobs=2,
    ).fit(trees, labels)
    assert len(forest.forest_.estimators_) == 12
    assert all(len(features) == 9 and len(set(features)) == 9 for features in forest.forest_.estimators_features_)
    serial = clone(forest).set_params(n_jobs=1).fit(trees, labels)
    # the jobs sum the trees' probabilities in another order
    np.testing.assert_allclose(forest.predict_proba(trees), serial.predict_proba(trees), rtol=1e-12)


def test_hamming_distances_count_differing_bits():
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2, size=(50, 77)).astype(np.uint8)
    codes = np.packbits(bits, axis=1)
    for i in (0, 17, 49):
        np.testing.assert_array_equal(hamming_distances(codes, codes[i]), (bits != bits[i]).sum(axis=1))
