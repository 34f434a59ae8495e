"""StackedSVM, the SVM block of the relation component: the C (and text weight) it
chooses by grouped cross-validation is the same under the same seed and is saved with
it; above ``max_train`` it fits on that many structures, drawn at random, and says so."""

import numpy as np
import pytest
import srsly
from data_paths import CORPORA

from spacy_convkernels.corpora import read_klp
from spacy_convkernels.errors import ConvKernelsWarning, InvalidParameterError, ModelFileError
from spacy_convkernels.kernels import PartialTreeKernel
from spacy_convkernels.ml.candidate_svm import relation_f1
from spacy_convkernels.ml.kernel_encoders import StackedSVM
from spacy_convkernels.utils.saved_arrays import sealed, unsealed

SAMPLE = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"


@pytest.fixture(scope="module")
def questions():
    examples = list(read_klp(SAMPLE))
    trees = [e.trees["grct"] for e in examples]
    labels = np.array([e.labels[0] for e in examples])
    first, second = labels == labels[0], labels == labels[1]
    Y = np.stack([first, second, first | second], axis=1).astype(int)  # two labels, then any label
    return trees, Y


def words(tree) -> str:
    return " ".join(label[5:].split("::")[0] for label in tree.labels if label.startswith("LEX##"))


def fit(questions, **settings) -> tuple[StackedSVM, list[str]]:
    trees, Y = questions
    svm = StackedSVM(PartialTreeKernel(), n_folds=3, **settings)
    messages = []
    svm.fit(
        list(range(len(trees))),
        trees,
        Y,
        texts=[words(tree) for tree in trees],
        groups=[i // 2 for i in range(len(trees))],
        score=relation_f1,
        progress=messages.append,
    )
    return svm, messages


def test_the_chosen_c_is_the_same_under_the_seed_and_is_saved(questions):
    first, messages = fit(questions, C=[0.1, 1.0, 10.0], random_state=3)
    again, _ = fit(questions, C=[0.1, 1.0, 10.0], random_state=3)
    assert first.choice == again.choice
    assert set(first.choice["scores"]) == {(0.0, 0.0, 0.1), (0.0, 0.0, 1.0), (0.0, 0.0, 10.0)}
    assert (0.0, 0.0, first.choice["C"]) == max(first.choice["scores"], key=first.choice["scores"].get)
    assert any("fold 3/3" in message for message in messages)  # progress while it runs
    loaded = StackedSVM(PartialTreeKernel(), C=[0.1, 1.0, 10.0]).from_bytes(first.to_bytes())
    assert loaded.choice == first.choice and loaded.estimator.C == first.choice["C"]
    trees, _ = questions
    assert np.array_equal(
        loaded.transform(["new"] * 5, trees[:5], False), first.transform(["new"] * 5, trees[:5], False)
    )


def test_a_grid_of_text_weights_chooses_one_saves_it_and_decides_as_a_fit_with_it_alone(questions):
    trees, _ = questions
    grid, messages = fit(questions, C=[0.1, 10.0], text_weight=[1.0, 0.0], random_state=3)
    weight, C = grid.choice["text_weight"], grid.choice["C"]
    assert set(grid.choice["scores"]) == {(0.0, w, c) for w in (0.0, 1.0) for c in (0.1, 10.0)}
    assert max(grid.choice["scores"], key=grid.choice["scores"].get) == (0.0, weight, C) == (0.0, grid.text_weight, C)
    assert sum("fold 3/3" in message for message in messages) == 2  # one cross-validation per weight
    alone, _ = fit(questions, C=C, text_weight=weight, random_state=3)
    for i in range(len(trees)):
        np.testing.assert_allclose(grid.out_of_fold[i], alone.out_of_fold[i], rtol=1e-9, atol=1e-9)
    # here the path kernel alone wins, so the final SVMs fit on the Gram taken back from the
    # sum with weight 1: the same up to rounding, their decisions to libsvm's tolerance (1e-3)
    assert weight == 0.0
    probe = {"keys": ["new"] * 8, "structures": trees[:8], "is_train": False, "texts": [words(t) for t in trees[:8]]}
    np.testing.assert_allclose(grid.transform(**probe), alone.transform(**probe), atol=1e-3)
    loaded = StackedSVM(PartialTreeKernel(), C=[0.1, 10.0], text_weight=[0.0, 1.0]).from_bytes(grid.to_bytes())
    assert loaded.choice == grid.choice and loaded.text_weight == weight
    assert np.array_equal(loaded.transform(**probe), grid.transform(**probe))


def test_above_max_train_the_svms_fit_on_that_many_with_a_warning(questions):
    with pytest.warns(ConvKernelsWarning, match="60 training structures are more than max_train = 40"):
        svm, _ = fit(questions, C=1.0, max_train=40)
    assert len(svm.out_of_fold) == 40 and len(svm.estimator.support_vectors_) <= 40


def test_a_choice_saved_before_text_weights_were_chosen_loads_with_the_configured_weight(questions):
    trees, _ = questions
    svm, _ = fit(questions, C=[0.1, 10.0], text_weight=0.5, random_state=3)
    state = unsealed(srsly.msgpack_loads(svm.to_bytes()))
    scores = [[C, score] for (_, _, C), score in svm.choice["scores"].items()]
    state["choice"] = {"C": svm.choice["C"], "scores": scores}
    loaded = StackedSVM(PartialTreeKernel(), C=[0.1, 10.0], text_weight=0.5).from_bytes(
        srsly.msgpack_dumps(sealed(state))
    )
    assert loaded.choice == svm.choice and loaded.text_weight == 0.5
    probe = {"keys": ["new"] * 5, "structures": trees[:5], "is_train": False, "texts": [words(t) for t in trees[:5]]}
    assert np.array_equal(loaded.transform(**probe), svm.transform(**probe))
    state["choice"]["text_weight"] = 0.0  # a weight of 0 with the support vectors' texts saved
    state["choice"]["scores"] = [[0.0, C, score] for C, score in state["choice"]["scores"]]
    with pytest.raises(ModelFileError, match="texts must be saved exactly when the text weight"):
        StackedSVM(PartialTreeKernel(), C=[0.1, 10.0], text_weight=[0.0, 0.5]).from_bytes(
            srsly.msgpack_dumps(sealed(state))
        )


def test_an_encoder_pickled_before_the_weight_was_chosen_still_saves(questions):
    svm, _ = fit(questions, C=[0.1, 10.0], text_weight=0.5, random_state=3)
    state = dict(svm.__dict__, text_weight=0.5)  # the attributes of then: one weight, no list
    del state["text_weights"]
    state["choice"] = {"C": svm.choice["C"], "scores": {C: score for (_, _, C), score in svm.choice["scores"].items()}}
    old = StackedSVM.__new__(StackedSVM)
    old.__setstate__(state)
    assert old.text_weights == [0.5] and old.choice == svm.choice and old.to_bytes() == svm.to_bytes()


def test_several_text_weights_need_a_score_and_a_saved_weight(questions):
    trees, Y = questions
    with pytest.raises(InvalidParameterError, match="several weights needs a score"):
        StackedSVM(PartialTreeKernel(), C=1.0, text_weight=[0.0, 0.5], n_folds=3).fit(
            list(range(len(trees))), trees, Y, texts=[words(tree) for tree in trees]
        )
    svm, _ = fit(questions, C=1.0, text_weight=0.5)
    state = unsealed(srsly.msgpack_loads(svm.to_bytes()))
    state["choice"] = {"C": 1.0, "scores": [[1.0, score] for score in svm.choice["scores"].values()]}
    with pytest.raises(ModelFileError, match="saved without its text weight, and the config gives several"):
        StackedSVM(PartialTreeKernel(), C=1.0, text_weight=[0.0, 0.5]).from_bytes(srsly.msgpack_dumps(sealed(state)))
