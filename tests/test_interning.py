"""Interned ids follow the structures alive (issue 26, point 4): an id is freed when the
last structure holding it is collected and given to the next new label, and every table
described by id (node similarities, tuple tables, packed sets) stays right across that."""

import gc
import sys

import numpy as np
import pytest
from address_space import run_limited
from hypothesis import given, settings
from hypothesis import strategies as st
from path_data import EDGES, NODES
from path_data import VECTORS as NODE_VECTORS
from smoothed_data import LABELS as SMOOTHED_LABELS
from smoothed_data import VECTORS

from spacy_convkernels import Tree
from spacy_convkernels.kernels import PartialTreeKernel, SmoothedPartialTreeKernel, SubsequencePathKernel
from spacy_convkernels.kernels._packing import PackedTrees
from spacy_convkernels.structures.interning import LABELS, PRODUCTIONS, Lease
from spacy_convkernels.structures.paths import PathTuples


def held(*labels) -> int:
    """How many of ``labels`` some live structure holds now."""
    gc.collect()
    probe = LABELS.lease([])  # takes the returned leases back
    del probe
    return sum(label in LABELS._ids for label in labels)


@pytest.mark.slow
def test_labels_are_freed_with_the_last_tree_that_holds_them():
    first = Tree.from_string("(interning-a (interning-b) (interning-b))")
    second = Tree.from_string("(interning-a (interning-c))")
    PartialTreeKernel()(first, second)  # both compiled
    assert held("interning-a", "interning-b", "interning-c") == 3
    del first
    assert held("interning-a", "interning-b", "interning-c") == 2  # a is still the second tree's
    del second
    assert held("interning-a", "interning-b", "interning-c") == 0


@pytest.mark.slow
def test_a_freed_id_goes_to_the_next_new_label_with_a_new_birth():
    tree = Tree.from_string("(interning-old)")
    old_id = int(tree.compiled.labels[0])
    birth = int(LABELS.births[old_id])
    del tree
    gc.collect()
    lease = LABELS.lease(["interning-new"])
    assert int(lease.ids[0]) == old_id and LABELS.births[old_id] == birth + 1


@pytest.mark.slow
def test_memory_follows_live_work():
    """Compiling and dropping trees with 20,000 distinct labels leaves the tables as they were."""
    gc.collect()
    sizes, n_ids = (len(LABELS), len(PRODUCTIONS)), LABELS.n_ids
    kernel = PartialTreeKernel()
    for first in range(0, 20_000, 500):
        tree = Tree("S", [Tree(f"interning-w{i}") for i in range(first, first + 500)])
        kernel.pairs([tree], [(0, 0)], n_jobs=1)
    del tree
    gc.collect()
    assert (len(LABELS), len(PRODUCTIONS)) == sizes
    assert LABELS.n_ids <= n_ids + 501  # ids were reused, not appended


CHURN_SCRIPT = """
from spacy_convkernels import Tree
from spacy_convkernels.kernels import PartialTreeKernel

kernel = PartialTreeKernel()
kernel.pairs([Tree("S", [Tree("a")])], [(0, 0)], n_jobs=1)  # tables and imports before the limit
limit_address_space(50)
for first in range(0, 400_000, 1000):
    tree = Tree("S", [Tree(f"w{i}") for i in range(first, first + 1000)])
    kernel.pairs([tree], [(0, 0)], n_jobs=1)
print("done")
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc and an address-space limit")
@pytest.mark.slow
def test_dropping_400000_distinct_labels_fits_in_50_megabytes():
    """The labels of trees compiled and dropped one after another never pile up: 400,000
    distinct labels (about 120 MB when the interners kept them) under an address-space limit
    of 50 MB above what the process maps."""
    done = run_limited(CHURN_SCRIPT, timeout=600)
    assert done.returncode == 0 and done.stdout.strip() == "done", done.stderr[-2000:]


@pytest.mark.slow
def test_a_packed_set_holds_the_ids_it_packed():
    packed = PackedTrees([Tree.from_string("(interning-p (interning-q))").compiled], key="label")
    assert held("interning-p", "interning-q") == 2
    del packed
    assert held("interning-p", "interning-q") == 0


@pytest.mark.slow
def test_a_prepared_index_outlives_its_trees():
    kernel = SmoothedPartialTreeKernel(vectors=VECTORS)
    fixed = [Tree.from_string(text) for text in ("(LEX##run::v (LEX##dog::n))", "(LEX##eat::v (interning-x))")]
    query = Tree.from_string("(LEX##walk::v (LEX##cat::n))")
    expected = kernel.gram([query], fixed, normalize=False)
    prepared = kernel.prepare(fixed)
    del fixed
    gc.collect()
    churn = [Tree.from_string(f"(interning-churn{i} (interning-x{i}))") for i in range(50)]
    kernel.gram(churn, churn)  # new labels, described by the same tables
    np.testing.assert_array_equal(kernel.gram([query], prepared, normalize=False), expected)


def smoothed_tree(rng, alphabet):
    labels = rng.choice(alphabet, size=int(rng.integers(1, 6)))
    return Tree(str(labels[0]), [Tree(str(label)) for label in labels[1:]])


def path(rng, nodes):
    return PathTuples([(str(rng.choice(EDGES)), str(rng.choice(nodes))) for _ in range(int(rng.integers(1, 5)))])


@settings(max_examples=20, deadline=None)
@given(steps=st.lists(st.tuples(st.booleans(), st.integers(0, 2**16)), min_size=4, max_size=16))
@pytest.mark.slow
def test_reused_ids_never_carry_an_old_description(steps):
    """Trees are made and dropped at random, over labels that are described differently by
    the smoothed kernel (words with vectors, POS and syntactic labels) and fresh ones, so ids
    pass from one kind of label to another; a kernel that lives through it all gives what
    a new kernel gives, for trees and for paths."""
    tree_kernel, path_kernel = SmoothedPartialTreeKernel(vectors=VECTORS), SubsequencePathKernel(vectors=NODE_VECTORS)
    trees, paths = [], []
    for keep, seed in steps:
        rng = np.random.default_rng(seed)
        fresh = [f"interning-{seed}-{k}" for k in range(3)]
        if keep or not trees:
            trees.append(smoothed_tree(rng, SMOOTHED_LABELS + fresh))
            paths.append(path(rng, NODES + fresh))
        else:
            del trees[int(rng.integers(len(trees)))], paths[int(rng.integers(len(paths)))]
        np.testing.assert_array_equal(
            tree_kernel.gram(trees, trees, normalize=False, n_jobs=1),
            SmoothedPartialTreeKernel(vectors=VECTORS).gram(trees, trees, normalize=False, n_jobs=1),
        )
        np.testing.assert_array_equal(
            path_kernel.gram(paths, paths, normalize=False, n_jobs=1),
            SubsequencePathKernel(vectors=NODE_VECTORS).gram(paths, paths, normalize=False, n_jobs=1),
        )


def test_a_lease_whose_init_never_ran_is_collected_quietly():
    """A signal's exception can come between Lease.__new__ and __init__ (tools/fuzz.py
    sigterm, seed 37): collecting that lease printed an AttributeError."""
    Lease.__new__(Lease).__del__()
