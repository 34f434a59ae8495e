"""One kernel object shared by Python threads gives the values it gives on one thread.

Each thread brings words the kernel has never seen, so the label tables grow while other
threads compute (issue: a race on the lazily grown table gave bare ValueErrors, values off
by 0.3, and wrong self-kernels cached in the trees)."""

import threading

import numpy as np
import pytest
from sklearn.base import clone

from spacy_convkernels import Tree
from spacy_convkernels.kernels import (
    CompositionalSmoothedPartialTreeKernel,
    PartialTreeKernel,
    SmoothedPartialTreeKernel,
    SubsequencePathKernel,
    SubsetTreeKernel,
    SubtreeKernel,
    WordVectors,
    ZelenkoTreeKernel,
)
from spacy_convkernels.structures.paths import PathTuples

N_THREADS, N_CALLS, PER_CALL = 4, 20, 6
COMMON = [f"common{k}" for k in range(5)]


def words(thread: int, call: int) -> list:
    """Words new to the kernel in this call, plus a few every thread shares."""
    return [f"w{thread}x{call}x{k}" for k in range(4)] + COMMON


ALL_WORDS = COMMON + [w for t in range(N_THREADS) for c in range(N_CALLS) for w in words(t, c)[:4]]
RNG = np.random.default_rng(5)
# a few directions only, so that words of different threads are similar to each other
VECTORS = WordVectors.from_arrays(
    ALL_WORDS, RNG.normal(size=(3, 8))[RNG.integers(0, 3, len(ALL_WORDS))] + 0.3 * RNG.normal(size=(len(ALL_WORDS), 8))
)


def lexical_tree(rng, vocabulary) -> Tree:
    leaves = [Tree("SYNT##dep", [Tree("POS##NN"), Tree(f"LEX##{rng.choice(vocabulary)}::n")]) for _ in range(3)]
    return Tree("SYNT##root", leaves + [Tree(f"LEX##{rng.choice(vocabulary)}::v")])


def compositional_tree(rng, vocabulary) -> Tree:
    def comp():
        return f"COMP##dep<{rng.choice(vocabulary)}::n,{rng.choice(vocabulary)}::n>"

    return Tree(comp(), [Tree(comp(), [Tree(f"LEX##{rng.choice(vocabulary)}::n")]) for _ in range(3)])


def tuple_tree(rng, vocabulary) -> Tree:
    return Tree(f"/{rng.choice(vocabulary)}", [Tree(f"arg{k}/{rng.choice(vocabulary)}") for k in range(3)])


def path(rng, vocabulary) -> PathTuples:
    return PathTuples([(f"arg{k % 2}", str(rng.choice(vocabulary))) for k in range(5)])


KERNELS = [
    (SubtreeKernel(), lexical_tree),
    (SubsetTreeKernel(label_weights={"SYNT##dep": 0.5}), lexical_tree),
    (PartialTreeKernel(), lexical_tree),
    (SmoothedPartialTreeKernel(vectors=VECTORS), lexical_tree),
    (SmoothedPartialTreeKernel(vectors=VECTORS, shared_rows="diluted"), lexical_tree),
    (CompositionalSmoothedPartialTreeKernel(vectors=VECTORS, lexical=True), compositional_tree),
    (SubsequencePathKernel(vectors=VECTORS), path),
    (ZelenkoTreeKernel(vectors=VECTORS), tuple_tree),
]


def batches(make):
    """Per thread, per call: structures built from that call's words (fresh objects)."""
    result = []
    for t in range(N_THREADS):
        rng = np.random.default_rng(t)
        result.append([[make(rng, words(t, c)) for _ in range(PER_CALL)] for c in range(N_CALLS)])
    return result


def rebuilt(structures):
    """The same structures as new objects, with no cached self-kernels."""
    return [Tree.from_string(str(s)) if isinstance(s, Tree) else PathTuples(s.tuples) for s in structures]


@pytest.mark.parametrize("kernel, make", KERNELS, ids=[f"{type(k).__name__}-{i}" for i, (k, _) in enumerate(KERNELS)])
def test_a_kernel_shared_by_threads_gives_single_threaded_values(kernel, make):
    work = batches(make)
    reference_kernel = clone(kernel)
    anchors = rebuilt(work[0][0])
    expected = [
        [reference_kernel.gram(rebuilt(batch), rebuilt(anchors), n_jobs=1) for batch in calls] for calls in work
    ]
    shared = clone(kernel)
    results = [[None] * N_CALLS for _ in range(N_THREADS)]
    errors = []
    start = threading.Barrier(N_THREADS)

    def run(t):
        try:
            start.wait()
            for c, batch in enumerate(work[t]):
                results[t][c] = shared.gram(batch, anchors, n_jobs=2)
        except Exception as error:  # reported below, with the thread that raised it
            errors.append((t, repr(error)))

    threads = [threading.Thread(target=run, args=(t,)) for t in range(N_THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for t in range(N_THREADS):
        for c in range(N_CALLS):
            np.testing.assert_allclose(results[t][c], expected[t][c], rtol=1e-12, atol=1e-14)
    # the self-kernels the threads cached in the structures are the right ones
    for t in range(N_THREADS):
        np.testing.assert_allclose(shared.gram(work[t][0], anchors), expected[t][0], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(shared.diag(work[t][1]), reference_kernel.diag(rebuilt(work[t][1])), rtol=1e-12)


def test_a_label_being_described_is_not_read_before_it_is_published():
    """While one thread describes a label (slowly), another that needs the same label waits
    for the publication instead of reading the half-written entry."""
    import time

    from spacy_convkernels.kernels._tables import SimilarityKind
    from spacy_convkernels.kernels.node_similarity import LexicalSimilarity, SimilarityTable
    from spacy_convkernels.structures.interning import LABELS

    class SlowLexical(LexicalSimilarity):
        def describe(self, label):
            time.sleep(0.3)
            return super().describe(label)

    label, later = "LEX##common0::n", "LEX##a-label-interned-later::n"
    label_id, later_id = LABELS.ids([label, later])
    table = SimilarityTable([SlowLexical(VECTORS)])
    table.cover([later_id], [later])  # the table's arrays already reach past label_id
    first = threading.Thread(target=table.cover, args=([label_id], [label]))
    first.start()
    time.sleep(0.1)  # the first thread is inside describe now
    published = table.cover([label_id], [label])
    kind, row = published.kinds[label_id], published.rows[label_id]  # what an engine call would read now
    first.join()
    assert kind == SimilarityKind.LEXICAL and row >= 0
