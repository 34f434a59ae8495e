"""One kernel object shared by Python threads gives the values it gives on one thread.

Each thread brings words the kernel has never seen, so the label tables grow while other
threads compute (issue: a race on the lazily grown table gave bare ValueErrors, values off
by 0.3, and wrong self-kernels cached in the trees)."""

import threading

import pytest
from thread_checks import VECTORS, check_shared_by_threads

from spacy_convkernels import Tree
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


@pytest.mark.slow
@pytest.mark.parametrize("kernel, make", KERNELS, ids=[f"{type(k).__name__}-{i}" for i, (k, _) in enumerate(KERNELS)])
def test_a_kernel_shared_by_threads_gives_single_threaded_values(kernel, make):
    check_shared_by_threads(kernel, make)


@pytest.mark.slow
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
    lease = LABELS.lease([label, later])  # held to the end: the ids stay these labels'
    label_id, later_id = lease.ids.tolist()
    table = SimilarityTable([SlowLexical(VECTORS)])
    table.cover([later_id], [later])  # the table's arrays already reach past label_id
    first = threading.Thread(target=table.cover, args=([label_id], [label]))
    first.start()
    time.sleep(0.1)  # the first thread is inside describe now
    published = table.cover([label_id], [label])
    kind, row = published.kinds[label_id], published.rows[label_id]  # what an engine call would read now
    first.join()
    assert kind == SimilarityKind.LEXICAL and row >= 0
