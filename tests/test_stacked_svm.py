"""StackedSVM, the SVM block of the relation component: the C it chooses by grouped
cross-validation is the same under the same seed and is saved with it; above
``max_train`` it fits on that many structures, drawn at random, and says so."""

import numpy as np
import pytest
from data_paths import CORPORA

from spacy_convkernels.corpora import read_klp
from spacy_convkernels.errors import ConvKernelsWarning
from spacy_convkernels.kernels import PartialTreeKernel
from spacy_convkernels.ml.candidate_svm import relation_f1
from spacy_convkernels.ml.kernel_encoders import StackedSVM

SAMPLE = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"


@pytest.fixture(scope="module")
def questions():
    examples = list(read_klp(SAMPLE))
    trees = [e.trees["grct"] for e in examples]
    labels = np.array([e.labels[0] for e in examples])
    first, second = labels == labels[0], labels == labels[1]
    Y = np.stack([first, second, first | second], axis=1).astype(int)  # two labels, then any label
    return trees, Y


def fit(questions, **settings) -> tuple[StackedSVM, list[str]]:
    trees, Y = questions
    svm = StackedSVM(PartialTreeKernel(), n_folds=3, **settings)
    messages = []
    svm.fit(
        list(range(len(trees))),
        trees,
        Y,
        groups=[i // 2 for i in range(len(trees))],
        score=relation_f1,
        progress=messages.append,
    )
    return svm, messages


def test_the_chosen_c_is_the_same_under_the_seed_and_is_saved(questions):
    first, messages = fit(questions, C=[0.1, 1.0, 10.0], random_state=3)
    again, _ = fit(questions, C=[0.1, 1.0, 10.0], random_state=3)
    assert first.choice == again.choice and set(first.choice["scores"]) == {0.1, 1.0, 10.0}
    assert first.choice["C"] == max(first.choice["scores"], key=first.choice["scores"].get)
    assert any("fold 3/3" in message for message in messages)  # progress while it runs
    loaded = StackedSVM(PartialTreeKernel(), C=[0.1, 1.0, 10.0]).from_bytes(first.to_bytes())
    assert loaded.choice == first.choice and loaded.estimator.C == first.choice["C"]
    trees, _ = questions
    assert np.array_equal(
        loaded.transform(["new"] * 5, trees[:5], False), first.transform(["new"] * 5, trees[:5], False)
    )


def test_above_max_train_the_svms_fit_on_that_many_with_a_warning(questions):
    with pytest.warns(ConvKernelsWarning, match="60 training structures are more than max_train = 40"):
        svm, _ = fit(questions, C=1.0, max_train=40)
    assert len(svm.out_of_fold) == 40 and len(svm.estimator.support_vectors_) <= 40
