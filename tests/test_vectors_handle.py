"""Kernels hold spaCy word vectors through a light handle: clones share it, pickles store
it once as an array, and values do not change."""

import pickle

import numpy as np
from sklearn.base import clone
from spacy.vocab import Vocab

from spacy_convkernels import Tree
from spacy_convkernels.approx import Nystroem
from spacy_convkernels.kernels import SmoothedPartialTreeKernel, SubsequencePathKernel, WordVectors
from spacy_convkernels.structures.paths import PathTuples

WORDS = ["dog", "cat", "run", "walk", "city", "town", "big", "large"]


def small_vocab() -> Vocab:
    vocab = Vocab()
    rng = np.random.default_rng(0)
    for word in WORDS:
        vocab.set_vector(word, rng.normal(size=6).astype(np.float32))
    vocab.set_vector("hound", vocab.get_vector("dog"))  # two words on one row
    return vocab


TREES = [
    Tree.from_string(f"(SYNT##root (LEX##{a}::n) (LEX##{b}::n))")
    for a, b in [("dog", "city"), ("cat", "town"), ("hound", "big"), ("walk", "large")]
]


def test_a_vocab_is_held_as_a_shared_read_only_handle():
    kernel = SmoothedPartialTreeKernel(vectors=small_vocab())
    assert isinstance(kernel.vectors, WordVectors)
    assert not kernel.vectors.matrix.flags.writeable
    copy = clone(Nystroem(kernel, n_components=2)).kernel
    assert copy.vectors is kernel.vectors
    np.testing.assert_array_equal(copy.gram(TREES), kernel.gram(TREES))
    later = SmoothedPartialTreeKernel().set_params(vectors=small_vocab())  # as the components set it
    assert isinstance(later.vectors, WordVectors)


def test_pickled_kernels_store_the_table_once_and_give_identical_values():
    vocab = small_vocab()
    for kernel, X in [
        (SmoothedPartialTreeKernel(vectors=vocab), TREES),
        (SubsequencePathKernel(vectors=vocab), [PathTuples([("a", w), ("b", "dog")]) for w in WORDS]),
    ]:
        restored = pickle.loads(pickle.dumps(kernel))
        assert restored.vectors.rows == kernel.vectors.rows
        np.testing.assert_array_equal(restored.vectors.matrix, kernel.vectors.matrix)
        np.testing.assert_array_equal(restored.gram(X), kernel.gram(X))
    assert len(pickle.dumps(SmoothedPartialTreeKernel(vectors=vocab))) < len(pickle.dumps(vocab))
