"""One kernel object shared by Python threads against the same kernel on one thread: the
words, the structures and the check that test_thread_safety.py and test_shared_features.py run."""

import threading

import numpy as np
from sklearn.base import clone

from spacy_convkernels import Tree
from spacy_convkernels.kernels import WordVectors
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


def check_shared_by_threads(kernel, make):
    """The values a clone of ``kernel`` shared by N_THREADS threads gives on structures from
    ``make(rng, words)`` are those of another clone on one thread, its cached self-kernels too."""
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
