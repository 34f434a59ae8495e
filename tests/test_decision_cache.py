"""StackedSVM keeps the decisions of at most memo_size structures, the most recently used
(a long-running process that scores ever new structures does not grow without bound)."""

import pickle
import threading

import numpy as np
import pytest
from data_paths import CORPORA

from spacy_convkernels.corpora import read_klp
from spacy_convkernels.errors import InvalidParameterError
from spacy_convkernels.kernels import PartialTreeKernel
from spacy_convkernels.ml.kernel_encoders import MEMO_SIZE, DecisionCache, StackedSVM

SAMPLE = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"


@pytest.fixture(scope="module")
def questions():
    examples = list(read_klp(SAMPLE))
    return [e.trees["grct"] for e in examples], np.array([e.labels[0] for e in examples])


def fitted(questions, memo_size=MEMO_SIZE) -> StackedSVM:
    trees, labels = questions
    svm = StackedSVM(PartialTreeKernel(), C=1.0, n_folds=2, memo_size=memo_size)
    svm.fit(list(range(30)), trees[:30], labels[:30] == labels[0])
    return svm


def test_the_cache_keeps_the_most_recently_used_and_no_more():
    cache = DecisionCache(3)
    for key in "abcd":
        cache.put(key, np.array([ord(key)]))
    assert list(cache) == ["b", "c", "d"] and len(cache) == 3  # a, the oldest, out
    assert cache.get("b") == pytest.approx([ord("b")])  # b now the most recent
    cache.put("e", np.array([0.0]))
    assert list(cache) == ["d", "b", "e"] and cache.get("c") is None
    cache.put("d", np.array([1.0]))  # an update is a use, no growth
    assert list(cache) == ["b", "e", "d"] and cache.get("d") == pytest.approx([1.0])
    cache.clear()
    assert len(cache) == 0


def test_a_cache_of_size_0_keeps_nothing_and_a_negative_size_is_refused():
    cache = DecisionCache(0)
    cache.put("a", np.zeros(1))
    assert len(cache) == 0 and cache.get("a") is None
    with pytest.raises(InvalidParameterError, match=r"DecisionCache: size must be an integer in \[0, inf\], got -1"):
        DecisionCache(-1)


def test_the_cache_is_not_pickled():
    cache = DecisionCache(5)
    cache.put("a", np.zeros(1))
    copy = pickle.loads(pickle.dumps(cache))
    assert copy.size == 5 and len(copy) == 0
    copy.put("b", np.zeros(1))  # its lock works
    assert list(copy) == ["b"]


def test_threads_sharing_a_cache_keep_it_within_its_size():
    cache = DecisionCache(50)

    def work(offset):
        for i in range(2000):
            cache.put((offset, i), np.zeros(1))
            cache.get((offset, i // 2))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(cache) == 50


def test_stacked_svm_scores_more_structures_than_it_keeps_with_the_same_decisions(questions):
    trees, _ = questions
    svm = fitted(questions, memo_size=5)
    new = trees[30:]
    exact = svm.estimator.decision_function(new).reshape(len(new), -1)
    rows = svm.transform([None] * len(new), new, False)
    assert rows == pytest.approx(exact, abs=1e-5)
    assert len(svm.decisions) == 5 and list(svm.decisions) == list(dict.fromkeys(new))[-5:]
    again = svm.transform([None] * len(new), new, False)  # evicted ones computed again, the same
    assert again == pytest.approx(exact, abs=1e-5) and len(svm.decisions) == 5


def test_stacked_svm_reuses_kept_decisions(questions, monkeypatch):
    trees, _ = questions
    svm = fitted(questions)
    new = trees[30:40]
    first = svm.transform([None] * len(new), new, False)
    assert set(svm.decisions) == set(new)
    monkeypatch.setattr(svm.estimator, "decision_function", lambda X: pytest.fail("computed again"))
    assert svm.transform([None] * len(new), new, False) == pytest.approx(first)
    monkeypatch.undo()
    assert len(fitted(questions, memo_size=0).transform([None] * len(new), new, False)) == len(new)
    unpickled = pickle.loads(pickle.dumps(svm))
    assert len(unpickled.decisions) == 0 and unpickled.decisions.size == MEMO_SIZE


def test_with_a_text_weight_decisions_are_kept_by_structure_and_text(questions, monkeypatch):
    """A dev set scored at every evaluation of spacy train is computed once with the n-gram
    cosine too; the same tree under another text is another input."""
    trees, labels = questions
    texts = [f"question {i}" for i in range(len(trees))]
    svm = StackedSVM(PartialTreeKernel(), C=1.0, n_folds=2, text_weight=0.5)
    svm.fit(list(range(30)), trees[:30], labels[:30] == labels[0], texts[:30])
    new, new_texts = trees[30:40], texts[30:40]
    first = svm.transform([None] * 10, new, False, new_texts)
    K = svm.estimator.support_rows(new) + 0.5 * svm.text_kernel.gram(new_texts, svm.support_texts)
    assert first == pytest.approx(svm.estimator.decision_function_from_rows(K).reshape(10, -1), abs=1e-5)
    assert set(svm.decisions) == {(tree, None, text) for tree, text in zip(new, new_texts)}  # no tree weight
    monkeypatch.setattr(svm.estimator, "support_rows", lambda X: pytest.fail("computed again"))
    assert svm.transform([None] * 10, new, False, new_texts) == pytest.approx(first)
    monkeypatch.undo()
    other = svm.transform([None] * 10, new, False, texts[:10])  # other texts: other inputs, computed
    assert len(svm.decisions) == 20 and other.shape == first.shape


def test_an_encoder_pickled_with_a_plain_dict_gets_a_bounded_cache(questions):
    svm = fitted(questions)
    state = dict(svm.__dict__, decisions={})  # the state pickles had before the cache was bounded
    old = StackedSVM.__new__(StackedSVM)
    old.__setstate__(state)
    assert isinstance(old.decisions, DecisionCache) and old.decisions.size == MEMO_SIZE
