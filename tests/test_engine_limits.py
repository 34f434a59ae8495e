"""The compiled engine at its limits: very wide structures in bounded memory, Ctrl-C
during long calls, and arguments that do not belong together."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import reference_kernels as ref
from address_space import run_limited
from hypothesis import given, settings
from hypothesis import strategies as st
from interrupts import assert_interruptible, default_sigint
from random_trees import random_pairs, random_tree, wide_tree
from sklearn.base import clone
from smoothed_data import CASES as SMOOTHED_CASES
from smoothed_data import LABELS as SMOOTHED_LABELS
from smoothed_data import VECTORS, sigma_key

from spacy_convkernels import Tree
from spacy_convkernels.errors import ConvKernelsError, InvalidParameterError, StructureSizeError
from spacy_convkernels.kernels import (
    CompositionalSmoothedPartialTreeKernel,
    PartialTreeKernel,
    SmoothedPartialTreeKernel,
    SubsequencePathKernel,
    SubsetTreeKernel,
    SubtreeKernel,
    ZelenkoTreeKernel,
)
from spacy_convkernels.kernels._driver import gram, pairs
from spacy_convkernels.kernels._packing import PackedSequences, PackedTrees
from spacy_convkernels.kernels._settings import EngineSettings
from spacy_convkernels.kernels._tables import NodeSimilarity, TupleTable
from spacy_convkernels.kernels._tree_kernels import set_stored_pairs
from spacy_convkernels.kernels.kinds import KernelKind
from spacy_convkernels.kernels.work import reads_table, structure_work
from spacy_convkernels.structures.paths import PathTuples

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
SANITIZED = os.environ.get("SPACY_CONVKERNELS_SANITIZE") == "1"


# closed forms for a root whose n children are leaves with distinct labels: only the
# pairs (i, i) match, so every subsequence sum runs along the diagonal
def diagonal_sum(n, lam, d, factor=1.0):
    """Sum over index subsequences I of 1..n of prod (factor * d) * lam^(2 gaps(I))."""
    reach = total = 0.0
    for _ in range(n):
        e = factor * d * (1.0 + reach)
        total += e
        reach = e + lam * lam * reach
    return total


def wide_ptk(n, lam=0.4, mu=0.4, terminal_factor=1.0):
    leaf = mu * lam**2 * terminal_factor
    return n * leaf + mu * (lam**2 + diagonal_sum(n, lam, leaf))


def wide_path(n, lam=0.5):
    return diagonal_sum(n, lam, 1.0, factor=lam**2)


def wide_zelenko(n, lam=0.5):
    """K(root, root) = 1 + child term, every child pair (i, i) with k = K = 1."""
    reach_prod = reach_sum = total = 0.0
    for _ in range(n):
        e_prod = lam**2 * (1.0 + reach_prod)
        e_sum = lam**2 * ((1.0 + reach_prod) + reach_sum)
        total += e_sum
        reach_prod, reach_sum = e_prod + lam**2 * reach_prod, e_sum + lam**2 * reach_sum
    return 1.0 + total


def flat_tree(n):
    return Tree("S", [Tree(f"w{i}") for i in range(n)])


def test_closed_forms_equal_the_references():
    tree = flat_tree(7)
    assert wide_ptk(7) == pytest.approx(ref.partial_tree(tree, tree, lam=0.4, mu=0.4), rel=1e-12)
    path = PathTuples([("e", f"n{i}") for i in range(6)])
    k = ref.tuple_kernel()
    assert wide_path(6) == pytest.approx(ref.subsequence_path(path.labels, path.labels, k), rel=1e-12)
    star = Tree("/root", [Tree(f"e/n{i}") for i in range(6)])
    assert wide_zelenko(6) == pytest.approx(ref.zelenko(star, star, k, enumerate_children=True), rel=1e-12)


@pytest.mark.slow
def test_wide_trees_match_the_reference():
    rng = np.random.default_rng(12)
    trees = [wide_tree(rng, n) for n in (40, 41, 90)]
    index = [(0, 1), (1, 2), (2, 2), (0, 2)]
    values = PartialTreeKernel(terminal_factor=2).pairs(trees, index, normalize=False)
    expected = [ref.partial_tree(trees[i], trees[j], terminal_factor=2.0) for i, j in index]
    np.testing.assert_allclose(values, expected, rtol=1e-9)


@pytest.mark.parametrize("kernel", [PartialTreeKernel(), SmoothedPartialTreeKernel()], ids=["ptk", "sptk"])
def test_five_thousand_children(kernel):
    tree = flat_tree(5000)
    value = kernel.pairs([tree], [(0, 0)], normalize=False, n_jobs=1)[0]
    assert value == pytest.approx(wide_ptk(5000), rel=1e-9)


MEMORY_SCRIPT = """
import json, sys
from spacy_convkernels import Tree
from spacy_convkernels.kernels import (PartialTreeKernel, SmoothedPartialTreeKernel, SubsequencePathKernel,
                                       ZelenkoTreeKernel)
from spacy_convkernels.structures.paths import PathTuples

n = int(sys.argv[1])
flat = Tree("S", [Tree(f"w{i}") for i in range(n)])
star = Tree("/root", [Tree(f"e/n{i}") for i in range(n)])
path = PathTuples([("e", f"n{i}") for i in range(n)])
cases = [("ptk", PartialTreeKernel(max_work=None), flat), ("sptk", SmoothedPartialTreeKernel(max_work=None), flat),
         ("path", SubsequencePathKernel(max_work=None), path), ("zelenko", ZelenkoTreeKernel(max_work=None), star)]
for _, kernel, x in cases:  # tables and packing warmed up before the limit
    kernel.pairs([x], [(0, 0)], normalize=False, n_jobs=1)
limit_address_space(512)
values = {name: float(kernel.pairs([x], [(0, 0)], normalize=False, n_jobs=1)[0]) for name, kernel, x in cases}
print(json.dumps(values))
"""


@pytest.mark.slow
@pytest.mark.skipif(
    not sys.platform.startswith("linux") or SANITIZED,
    reason="needs /proc and an address-space limit (meaningless under ASan)",
)
def test_wide_structures_fit_in_half_a_gigabyte():
    """Roots with 12,000 children (an n x m scratch matrix would need 1.15 GB) computed
    under an address-space limit of 512 MB above what the process already maps (by
    kernels without ``max_work``, which refuses them by default: 1.4 s of PTK)."""
    n = 12_000
    done = run_limited(MEMORY_SCRIPT, n, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    values = json.loads(done.stdout)
    assert values["ptk"] == pytest.approx(wide_ptk(n), rel=1e-9)
    assert values["sptk"] == pytest.approx(wide_ptk(n), rel=1e-9)
    assert values["path"] == pytest.approx(wide_path(n), rel=1e-9)
    assert values["zelenko"] == pytest.approx(wide_zelenko(n), rel=1e-9)


def nested_tree(n, period=None, zelenko=False):
    """``(r (c0 x) (c1 x) ...)``: n children, each with a child ``x``, their labels distinct
    or repeating every ``period`` (issue 26, point 5); Zelenko's labels are edge/node."""
    e = "e/" if zelenko else ""
    return Tree(f"{'/' if zelenko else ''}r", [Tree(f"{e}c{i % (period or n)}", [Tree(f"{e}x")]) for i in range(n)])


def nested_ptk(n, lam=0.4, mu=0.4):
    """PTK K(t, t) of ``nested_tree(n)``: n * n pairs of x leaves, the n pairs (c_i, c_i)
    and the roots, whose child pairs match along the diagonal."""
    leaf = mu * lam**2
    child = mu * (lam**2 + leaf)
    return n * n * leaf + n * child + mu * (lam**2 + diagonal_sum(n, lam, child))


def nested_st(n, lam=0.4):
    """ST (either variant): n * n pairs of leaves, n pairs (c_i, c_i) of Delta lam, the roots lam^(n + 1)."""
    return lam * n * n + lam * n + lam ** (n + 1)


@pytest.mark.parametrize("period", [None, 1, 3, 7])
def test_wide_nodes_whose_children_have_children_match_the_references(period):
    trees = [nested_tree(n, period) for n in (11, 14)]
    index = [(0, 0), (0, 1), (1, 1)]
    cases = [
        (PartialTreeKernel(terminal_factor=2), lambda a, b: ref.partial_tree(a, b, terminal_factor=2.0)),
        (SmoothedPartialTreeKernel(), lambda a, b: ref.partial_tree(a, b)),  # no vectors: exact matching
        (SubtreeKernel(variant="kelp"), ref.subtree_kelp),
        (SubtreeKernel(), ref.subtree_textbook),
        (SubsetTreeKernel(), ref.subset_tree),
    ]
    for kernel, reference in cases:
        values = kernel.pairs(trees, index, normalize=False, n_jobs=1)
        np.testing.assert_allclose(values, [reference(trees[i], trees[j]) for i, j in index], rtol=1e-12)
    stars = [nested_tree(n, period, zelenko=True) for n in (5, 6)]
    k = ref.tuple_kernel()
    values = ZelenkoTreeKernel().pairs(stars, index, normalize=False, n_jobs=1)
    np.testing.assert_allclose(values, [ref.zelenko(stars[i], stars[j], k) for i, j in index], rtol=1e-12)
    if period is None:
        assert PartialTreeKernel().pairs(trees, [(1, 1)], normalize=False)[0] == pytest.approx(
            nested_ptk(14), rel=1e-12
        )
        assert SubtreeKernel().pairs(trees, [(1, 1)], normalize=False)[0] == pytest.approx(nested_st(14), rel=1e-12)


@pytest.fixture
def top_down():
    """Every pair of trees evaluated top-down, as pairs with millions of matching node pairs are."""
    previous = set_stored_pairs(0)
    yield
    set_stored_pairs(previous)


@pytest.mark.slow
def test_top_down_evaluation_equals_the_stored_one(top_down):
    """The two ways of ``_tree_kernels`` (stored Deltas, top-down frames) on random trees,
    wide, deep and single-node ones among them, for every kind of tree kernel and SPTK's
    similarities, with and without vectors (the stored way is checked against the
    references by their own tests; ST, SST and PTK here too)."""
    from smoothed_data import CASES, LABELS

    pairs_ = random_pairs(seed=77, n_pairs=60, labels=LABELS)
    X = [t for pair in pairs_ for t in pair]
    index = [(2 * k, 2 * k + 1) for k in range(len(pairs_))] + [(k, k) for k in range(0, len(X), 5)]
    kernels = [
        PartialTreeKernel(terminal_factor=0.5),
        SubtreeKernel(),
        SubtreeKernel(variant="kelp"),
        SubsetTreeKernel(),
        SmoothedPartialTreeKernel(),
    ] + [kernel for kernel, _ in CASES]
    top = [kernel.pairs(X, index, normalize=False, n_jobs=2) for kernel in kernels]
    set_stored_pairs(1 << 21)
    stored = [kernel.pairs(X, index, normalize=False, n_jobs=2) for kernel in kernels]
    for kernel, t, s in zip(kernels, top, stored):
        np.testing.assert_allclose(t, s, rtol=1e-12, atol=1e-300, err_msg=repr(kernel))
    reference = [ref.partial_tree(X[i], X[j], terminal_factor=0.5) for i, j in index]
    np.testing.assert_allclose(top[0], reference, rtol=1e-12)
    np.testing.assert_allclose(top[3], [ref.subset_tree(X[i], X[j]) for i, j in index], rtol=1e-12)


NESTED_SCRIPT = """
import json, sys
sys.path.insert(0, sys.argv[3])
from test_engine_limits import nested_tree
from spacy_convkernels.kernels import PartialTreeKernel, SmoothedPartialTreeKernel, SubtreeKernel, ZelenkoTreeKernel

n, period = int(sys.argv[1]), int(sys.argv[2]) or None
tree, star = nested_tree(n, period), nested_tree(n, period, zelenko=True)
cases = [("ptk", PartialTreeKernel(max_work=None), tree), ("sptk", SmoothedPartialTreeKernel(max_work=None), tree),
         ("st", SubtreeKernel(max_work=None), tree), ("zelenko", ZelenkoTreeKernel(max_work=None), star)]
small, small_star = nested_tree(3, period), nested_tree(3, period, zelenko=True)
for _, kernel, x in cases:  # tables warmed up before the limit
    kernel.pairs([small_star if x is star else small], [(0, 0)], normalize=False, n_jobs=1)
    kernel.prepare([x])
limit_address_space(500)
print(json.dumps({name: float(kernel.pairs([x], [(0, 0)], normalize=False, n_jobs=1)[0]) for name, kernel, x in cases}))
"""


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or SANITIZED,
    reason="needs /proc and an address-space limit (meaningless under ASan)",
)
@pytest.mark.slow
@pytest.mark.parametrize("period", [0, 50], ids=["distinct", "repeated"])
def test_wide_nodes_whose_children_have_children_fit_in_half_a_gigabyte(period):
    """A root with 12,000 children, each with a child x (distinct labels, or repeating every
    50): 144 million pairs of x leaves match, whose Deltas (1.15 GB) are not kept; K(t, t)
    under an address-space limit of 500 MB above what the process maps (kernels without
    ``max_work``)."""
    n = 12_000
    done = run_limited(NESTED_SCRIPT, n, period, TESTS, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    values = json.loads(done.stdout)
    assert all(np.isfinite(v) and v > 0 for v in values.values())
    assert values["sptk"] == pytest.approx(values["ptk"], rel=1e-12)
    if not period:
        assert values["ptk"] == pytest.approx(nested_ptk(n), rel=1e-9)
        assert values["st"] == pytest.approx(nested_st(n), rel=1e-12)


INTERRUPT_SCRIPT = """
import sys, time
import numpy as np
sys.path.insert(0, sys.argv[2])
from random_trees import random_tree
from spacy_convkernels.kernels import PartialTreeKernel

mode = sys.argv[1]
rng = np.random.default_rng(5)
base = [random_tree(rng, 60) for _ in range(50)]
X = base * 120  # 6,000 trees: 18 million pairs, far more than a second of work
kernel = PartialTreeKernel()
expected_gram = kernel.gram(base[:12], n_jobs=1)
index = rng.integers(0, len(X), size=(20_000_000, 2))
expected_pairs = kernel.pairs(base, index[:500] % len(base), n_jobs=1)
print("started", flush=True)
try:
    if mode == "pairs":
        kernel.pairs(X, index, normalize=False, n_jobs=2)
    else:
        kernel.gram(X, normalize=False, n_jobs=int(mode))
    print("finished", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
assert np.array_equal(kernel.gram(base[:12], n_jobs=1), expected_gram)
assert np.array_equal(kernel.gram(base[:12], n_jobs=2), expected_gram)
assert np.array_equal(kernel.pairs(base, index[:500] % len(base), n_jobs=2), expected_pairs)
print("usable", flush=True)
"""


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["1", "2", "pairs"], ids=["gram-1-thread", "gram-2-threads", "pairs"])
def test_ctrl_c_stops_a_long_call(mode):
    """SIGINT a second into a long call: KeyboardInterrupt within 3 s, and the kernel still
    gives the values it gave before."""
    assert_interruptible(INTERRUPT_SCRIPT, mode)


PAIR_INTERRUPT_SCRIPT = """
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from random_trees import random_tree
from spacy_convkernels import Tree
from spacy_convkernels.kernels import (PartialTreeKernel, SmoothedPartialTreeKernel, SubsequencePathKernel,
                                       ZelenkoTreeKernel)
from spacy_convkernels.structures.paths import PathTuples

n = 60_000
flat = lambda: Tree("S", [Tree(f"w{i}") for i in range(n)])
star = lambda: Tree("/root", [Tree(f"e/n{i}") for i in range(n)])
path = lambda: PathTuples([("e", f"n{i}") for i in range(n)])
rng = np.random.default_rng(3)
small_trees = [random_tree(rng, 12) for _ in range(4)]
small_tuples = [Tree("/r", [Tree(f"e/n{i % 3}") for i in range(k)]) for k in range(1, 5)]
small_paths = [PathTuples([("e", f"n{i % 3}") for i in range(k)]) for k in range(1, 5)]
CASES = {
    "ptk": (PartialTreeKernel, flat, small_trees),
    "sptk": (SmoothedPartialTreeKernel, flat, small_trees),
    "zelenko": (ZelenkoTreeKernel, star, small_tuples),
    "path": (SubsequencePathKernel, path, small_paths),
}
for name in sys.argv[2:]:
    kind, indexed = name.split(":")
    make_kernel, make, small = CASES[kind]
    kernel, big = make_kernel(max_work=None), make()
    against = (lambda X: kernel.prepare(X)) if indexed == "indexed" else (lambda X: X)
    expected = kernel.gram(small, against(small), n_jobs=1)
    fixed = against([big])
    print("started", name, flush=True)
    try:
        kernel.gram([big], fixed, normalize=False, n_jobs=1)
        print("finished", flush=True)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    assert np.array_equal(kernel.gram(small, against(small), n_jobs=1), expected)
    assert np.array_equal(kernel.gram(small, against(small), n_jobs=2), expected)
    print("usable", flush=True)
"""
PAIR_CASES = [f"{kind}:{path}" for kind in ("ptk", "sptk", "zelenko", "path") for path in ("plain", "indexed")]


@pytest.mark.slow
@pytest.mark.skipif(SANITIZED, reason="minutes under the sanitizers")
def test_ctrl_c_stops_a_single_huge_pair():
    """SIGINT a second into K(t, t) of one structure with 60,000 children (a minute of work
    for its single pair, plain or against an indexed set, by kernels without ``max_work``,
    which refuses it by default): KeyboardInterrupt within 0.5 s,
    for every kernel kind, and the kernel then gives the values it gave before."""
    proc = subprocess.Popen(
        [sys.executable, "-c", PAIR_INTERRUPT_SCRIPT, str(TESTS), *PAIR_CASES],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        preexec_fn=default_sigint,
    )
    delays = {}
    try:
        for case in PAIR_CASES:
            line = proc.stdout.readline().strip()
            assert line == f"started {case}", proc.stderr.read()[-2000:] if not line else line
            time.sleep(1.0)
            proc.send_signal(signal.SIGINT)
            sent = time.monotonic()
            line = proc.stdout.readline().strip()
            delays[case] = time.monotonic() - sent
            assert line == "interrupted", (case, line)
            assert proc.stdout.readline().strip() == "usable", case
        proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0
    assert max(delays.values()) < 0.5, delays


# arguments that do not belong together: refused before the engine runs
def packed(trees, key="content"):
    return PackedTrees([t.compiled for t in trees], key=key)


def ptk(
    A,
    B,
    *,
    index=None,
    inv_a=None,
    inv_b=None,
    symmetric=False,
    n_threads=1,
    kind=KernelKind.PARTIAL_TREE,
    similarity=None,
):
    settings = EngineSettings(kind, lam=0.4, mu=0.4, similarity=similarity)
    if index is None:
        return gram(settings, A, B, symmetric=symmetric, inv_norm_a=inv_a, inv_norm_b=inv_b, n_threads=n_threads)
    return pairs(settings, A, B, index, inv_norm_a=inv_a, inv_norm_b=inv_b, n_threads=n_threads)


TREES = [Tree.from_string(s) for s in ["(S (A a) (B b))", "(S (A a))", "(A a)"]]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda A, B: ptk(A, B, inv_a=np.ones(3), inv_b=np.ones(3)), "inv_norm_b has 3 values for 2"),
        (lambda A, B: ptk(A, B, inv_a=np.ones(3)), "together"),
        (lambda A, B: ptk(A, B, index=np.array([[0, 3]])), "outside"),
        (lambda A, B: ptk(A, B, index=np.array([[-1, 0]])), "outside"),
        (lambda A, B: ptk(A, B, index=np.array([[0, 1, 2]])), "shape"),
        (lambda A, B: ptk(A, B, index=np.array([[0.5, 1.0]])), "integer"),
        (lambda A, B: ptk(A, B, index=np.array([[0, 0]]), inv_a=np.ones(2), inv_b=np.ones(3)), "inv_norm_a"),
        (lambda A, B: ptk(A, B, symmetric=True), "A is B"),
        (lambda A, B: ptk(A, B, n_threads=0), "n_threads"),
        (lambda A, B: ptk(A, B, kind=99), "unknown kernel kind"),
        (lambda A, B: ptk(None, B), "not a packed"),
        (lambda A, B: ptk(A, packed(TREES, "label")), "keyed by 'content'"),
        (lambda A, B: ptk(A, B, kind=KernelKind.SUBSET_TREE), "keyed by 'production'"),
        (lambda A, B: ptk(A, PackedSequences([])), "PackedTrees"),
        (lambda A, B: ptk(PackedSequences([]), PackedSequences([]), kind=KernelKind.SUBSEQUENCE_PATH), "TupleTable"),
        (lambda A, B: ptk(A, B, kind=KernelKind.SMOOTHED_PARTIAL_TREE), "NodeSimilarity"),
        (
            lambda A, B: ptk(
                A,
                B,
                similarity=NodeSimilarity(
                    [0], groups=[0], rows=[-1], weights=[0.0], vectors=np.zeros((0, 1)), threshold=0.0
                ),
            ),
            "covers label ids 0..0",
        ),
    ],
)
def test_inconsistent_arguments_are_refused(call, message):
    A, B = packed(TREES), packed(TREES[:2])
    with pytest.raises(InvalidParameterError, match=message):
        call(A, B)


def test_settings_and_tables_are_initialized_once_and_only_used_initialized():
    """A table whose initialization failed, or settings never initialized, are refused; settings
    cannot be initialized again (the engine would read a table that is no longer kept)."""
    half_built = NodeSimilarity.__new__(NodeSimilarity)
    with pytest.raises(InvalidParameterError):
        half_built.__init__(
            [0],
            groups=[0],
            rows=[-1],
            weights=[1.0],
            vectors=np.zeros((1, 1)),
            threshold=0.0,
            own_words=np.zeros((5, 2)),
            own_parts=np.zeros((5, 2)),
        )
    with pytest.raises(InvalidParameterError, match="not initialized"):
        EngineSettings(KernelKind.SMOOTHED_PARTIAL_TREE, lam=0.4, similarity=half_built)
    with pytest.raises(InvalidParameterError, match="not initialized"):
        TupleTable([0], nodes=[0], weights=[1.0], node_similarity=half_built)
    A = packed(TREES)
    with pytest.raises(InvalidParameterError, match="not initialized"):
        gram(EngineSettings.__new__(EngineSettings), A, A)
    settings = EngineSettings(KernelKind.PARTIAL_TREE, lam=0.4)
    with pytest.raises(InvalidParameterError, match="twice"):
        settings.__init__(KernelKind.SUBSET_TREE, lam=0.9)


def test_smoothed_nodes_must_agree_with_the_table():
    """A set packed with no smoothed node is refused by a table that smooths one of its labels."""
    compiled = Tree.from_string("(S (A a) (B b))").compiled
    n_labels = int(compiled.labels.max()) + 1
    exact = np.zeros(n_labels, dtype=np.int32)
    A = PackedTrees([compiled], key="label", smooth_kinds=exact)
    kinds = exact.copy()
    kinds[compiled.labels[0]] = 1  # the root's label smoothed (LEXICAL) by the table

    def table(kinds):
        return NodeSimilarity(
            kinds,
            groups=np.zeros(n_labels),
            rows=np.full(n_labels, -1),
            weights=np.ones(n_labels),
            vectors=np.zeros((0, 1)),
            threshold=0.01,
        )

    def sptk(similarity):
        settings = EngineSettings(KernelKind.SMOOTHED_PARTIAL_TREE, lam=0.4, mu=0.4, similarity=similarity)
        return gram(settings, A, A, symmetric=True)

    with pytest.raises(InvalidParameterError, match="other similarity kinds"):
        sptk(table(kinds))
    value = sptk(table(exact))
    assert value[0, 0] > 0


def fake(compiled, **changes):
    """A copy of a compiled tree's arrays with some replaced."""
    names = [name for name in dir(compiled) if not name.startswith("_") and name != "self_kernels"]
    return SimpleNamespace(**{name: getattr(compiled, name) for name in names} | changes)


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"n_nodes": 0}, "no nodes"),
        ({"n_nodes": 6}, "has 5 entries for 6 nodes"),
        ({"child_idx": np.array([1, 3, 2, 9])}, "children must follow"),
        ({"child_idx": np.array([3, 1, 2, 4])}, "children must follow"),
        ({"child_ptr": np.array([0, 4, 2, 3, 4, 4])}, "child_ptr must rise"),
        ({"by_content": np.array([0, 0, 1, 2, 3])}, "permutation"),
        ({"rank_by_content": np.array([0, 1, 2, 3, 7])}, "permutation"),
        ({"contents": np.array([9, 1, 2, 3, 4])}, "sort the nodes"),
        ({"labels": np.array([0, -1, 0, 0, 0])}, "negative"),
    ],
)
def test_broken_compiled_trees_are_refused(changes, message):
    compiled = Tree.from_string("(S (A a) (B b))").compiled
    with pytest.raises(InvalidParameterError, match=message):
        PackedTrees([compiled, fake(compiled, **changes)], key="content")


def test_packed_data_cannot_change():
    A = packed(TREES)
    with pytest.raises(ValueError):
        A.label[0] = 10**6
    with pytest.raises(ValueError):
        A.label.flags.writeable = True
    with pytest.raises(InvalidParameterError, match="twice"):
        A.__init__([Tree("x").compiled], key="content")
    similarity = NodeSimilarity([0], groups=[0], rows=[-1], weights=[1.0], vectors=np.zeros((0, 1)), threshold=0.0)
    with pytest.raises(ValueError):
        similarity.rows[0] = 10**6
    with pytest.raises(InvalidParameterError, match="twice"):
        similarity.__init__(
            [0] * 9, groups=[0] * 9, rows=[-1] * 9, weights=[1.0] * 9, vectors=np.zeros((0, 1)), threshold=0.0
        )


def test_productions_of_another_interner_do_not_match():
    """Equal production ids with different child counts (trees compiled against two
    interners): the pair does not match, and nothing past the children is read."""
    two = Tree.from_string("(S a b)").compiled
    one = Tree.from_string("(S a)").compiled
    productions = np.array([two.productions[0], two.productions[1]], dtype=np.int32)
    order = np.argsort(productions, kind="stable").astype(np.int32)
    ranks = np.argsort(order).astype(np.int32)
    forged = fake(one, productions=productions, by_production=order, rank_by_production=ranks)
    A = PackedTrees([two], key="production")
    B = PackedTrees([forged], key="production")
    value = gram(EngineSettings(KernelKind.SUBSET_TREE, lam=0.4), A, B)
    assert value[0, 0] == pytest.approx(0.4)  # the leaf pair (a, a) only


@settings(max_examples=60, deadline=None)
@given(
    index=st.lists(st.tuples(st.integers(-3, 5), st.integers(-3, 5)), max_size=6),
    n_inv_a=st.integers(0, 4),
    n_inv_b=st.integers(0, 4),
    normalize=st.booleans(),
    threads=st.integers(-1, 3),
)
def test_random_engine_arguments_give_values_or_package_errors(index, n_inv_a, n_inv_b, normalize, threads):
    A, B = packed(TREES), packed(TREES[:2])
    inv_a, inv_b = (np.ones(n_inv_a), np.ones(n_inv_b)) if normalize else (None, None)
    try:
        values = ptk(
            A, B, index=np.array(index, dtype=np.int64).reshape(-1, 2), inv_a=inv_a, inv_b=inv_b, n_threads=threads
        )
    except ConvKernelsError:
        return
    expected = [ref.partial_tree(TREES[i], TREES[j]) for i, j in index]
    np.testing.assert_allclose(values, expected, rtol=1e-12)


def test_path_and_zelenko_still_match_the_references_on_wide_inputs():
    rng = np.random.default_rng(3)
    nodes = ["a", "b", "c"]
    paths = [PathTuples([(str(rng.choice(["e", "f"])), str(rng.choice(nodes))) for _ in range(n)]) for n in (35, 40)]
    stars = [Tree("/r", [Tree(f"{rng.choice(['e', 'f'])}/{rng.choice(nodes)}") for _ in range(n)]) for n in (9, 11)]
    k = ref.tuple_kernel()
    path_values = SubsequencePathKernel().pairs(paths, [(0, 1), (1, 1)], normalize=False)
    np.testing.assert_allclose(
        path_values,
        [
            ref.subsequence_path(paths[0].labels, paths[1].labels, k),
            ref.subsequence_path(paths[1].labels, paths[1].labels, k),
        ],
        rtol=1e-9,
    )
    zelenko_values = ZelenkoTreeKernel().pairs(stars, [(0, 1), (1, 1)], normalize=False)
    np.testing.assert_allclose(
        zelenko_values, [ref.zelenko(stars[0], stars[1], k), ref.zelenko(stars[1], stars[1], k)], rtol=1e-9
    )


def test_sst_unchanged_on_random_trees():
    rng = np.random.default_rng(8)
    trees = [random_tree(rng, int(rng.integers(1, 30))) for _ in range(12)]
    np.testing.assert_allclose(
        SubsetTreeKernel().gram(trees, normalize=False),
        [[ref.subset_tree(a, b) for b in trees] for a in trees],
        rtol=1e-9,
    )


CHAIN_SCRIPT = """
import sys, time
from spacy_convkernels import Tree
from spacy_convkernels.errors import StructureSizeError
from spacy_convkernels.kernels import (
    CompositionalSmoothedPartialTreeKernel, PartialTreeKernel, SmoothedPartialTreeKernel, SubsetTreeKernel,
)

n = int(sys.argv[1])
chain = Tree.from_flat(["a"] * n, range(-1, n - 1))
chain.compiled
limit_address_space(500)
for kernel in (PartialTreeKernel(), SmoothedPartialTreeKernel(), CompositionalSmoothedPartialTreeKernel(),
               SubsetTreeKernel()):
    for call in (lambda: kernel(chain, chain), lambda: kernel.gram([chain]), lambda: kernel.prepare([chain])):
        try:
            call()
        except StructureSizeError as error:
            assert "above max_work = 100,000,000" in str(error), error
        else:
            raise AssertionError(f"{type(kernel).__name__} computed a {n}-node chain")
print("refused")
"""


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or SANITIZED,
    reason="needs /proc and an address-space limit (meaningless under ASan)",
)
@pytest.mark.slow  # a new process each; the next tests check the bound in this process
@pytest.mark.parametrize("n", [40_000, 200_000])
def test_a_single_label_chain_is_refused_before_any_work(n):
    """A chain of n nodes of one label has n * n matching inner node pairs (quadratic
    work, minutes at 200,000): every tree kernel refuses it with StructureSizeError, under
    500 MB and well within the timeout (the check reads label histograms only)."""
    done = run_limited(CHAIN_SCRIPT, n, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "refused"


def star(n: int, label: str = "x", root: str = "r") -> Tree:
    """``(r x x ... x)``: a root with n leaves of one label (issue 62)."""
    return Tree.from_flat([root] + [label] * n, [-1] + [0] * n)


def blocks(m: int, c: int, label: str = "a") -> Tree:
    """A root with m children ``label``, each with c leaves ``x`` (issue 62: 64 x 1,000, a 128 KB tree)."""
    labels, parents = ["r"], [-1]
    for _ in range(m):
        parents += [0] + [len(labels)] * c
        labels += [label] + ["x"] * c
    return Tree.from_flat(labels, parents)


def tree_kernels(**params) -> list:
    return [
        PartialTreeKernel(**params),
        SmoothedPartialTreeKernel(**params),
        CompositionalSmoothedPartialTreeKernel(**params),
        SubsetTreeKernel(**params),
        SubtreeKernel(**params),
        SubtreeKernel(variant="kelp", **params),
    ]


@pytest.mark.parametrize(
    "shape, sst, st",
    [
        (lambda: star(40_000), 0.4 * (40_000**2 + 1), 0.4 * (40_000**2 + 1)),
        (lambda: blocks(64, 1000), 0.4 * (64_000**2 + 64**2) + 0.4 * 1.4**64, 0.4 * (64_000**2 + 64**2) + 0.4**65),
    ],
    ids=["root-of-40000-leaves", "64-nodes-of-1000-children"],
)
def test_the_wide_nodes_of_issue_62_are_refused_before_any_work(shape, sst, st):
    """``(r x ... x)`` with 40,000 children (PTK 10 s for a 1 x 1 Gram) and 64 nodes of
    1,000 children each (33 s): the PTK kinds, whose child-subsequence programme is
    quadratic in the children, refuse them with StructureSizeError naming the bound, the
    work and the parameter; ST and SST, which read the children aligned (linear work),
    compute them (lam per pair of equal leaves, the pairs of equal productions as the
    closed forms say)."""
    tree = shape()
    for kernel in tree_kernels():
        if isinstance(kernel, (SubsetTreeKernel, SubtreeKernel)):
            continue
        for call in (kernel.gram, kernel.prepare, lambda X, k=kernel: k(X[0], X[0])):
            with pytest.raises(StructureSizeError, match=r"units of work .* above max_work = 100,000,000; raise"):
                call([tree])
    assert SubsetTreeKernel().pairs([tree], [(0, 0)], normalize=False)[0] == pytest.approx(sst, rel=1e-12)
    assert SubtreeKernel(variant="kelp").pairs([tree], [(0, 0)], normalize=False)[0] == pytest.approx(st, rel=1e-12)


KLP_SCRIPT = """
import sys
from spacy_convkernels.corpora import read_klp
from spacy_convkernels.errors import CorpusFormatError, StructureSizeError
from spacy_convkernels.structures.tree import Tree
from spacy_convkernels.kernels import PartialTreeKernel, SmoothedPartialTreeKernel

wide = Tree.from_string("(r" + " x" * 400_000 + ")")  # under the node cap: the work bound refuses it
limit_address_space(500)
for kernel in (PartialTreeKernel(), SmoothedPartialTreeKernel()):
    try:
        kernel.gram([wide])
    except StructureSizeError as error:
        assert "max_work" in str(error), error
    else:
        raise AssertionError(f"{type(kernel).__name__} computed {wide.n_nodes} nodes")
try:
    list(read_klp(sys.argv[1]))
except CorpusFormatError as error:
    assert "a tree of more than 1,000,000 nodes (structures.tree.MAX_TREE_NODES)" in str(error), error
    assert isinstance(error.__cause__, StructureSizeError) and ", line 1:" in str(error)
else:
    raise AssertionError("the 4-million-node line was read")
print("refused")
"""


@pytest.mark.slow
def test_a_one_line_klp_of_four_million_children_is_refused_before_any_work(tmp_path):
    """An 8 MB .klp line (under the 10 MiB line cap) of ``(r x x ... x)`` with 4 million
    children ran 300 s at 985 MB before it was killed (a day of work): refused as it is
    parsed, past MAX_TREE_NODES (StructureSizeError, named as the line's error), under
    500 MB; a root of 400,000 children, under the node cap, is refused by the work bound."""
    path = tmp_path / "wide.klp"
    path.write_text("A |BT:grct| (r" + " x" * 4_000_000 + ")|ET|\n", encoding="utf-8")
    assert path.stat().st_size < 10 << 20
    done = run_limited(KLP_SCRIPT, path, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "refused"


def test_structures_below_the_bound_give_the_reference_values_and_one_unit_more_is_refused():
    """Wide, blocked and chained trees, a star of tuples and a path: at max_work = their
    work they give the plain-Python references' values; one unit below, StructureSizeError."""
    chain = Tree.from_flat(["a"] * 25, range(-1, 24))
    trees = [star(40), blocks(4, 9), chain, random_tree(np.random.default_rng(2), 40)]
    cases = [
        (PartialTreeKernel(terminal_factor=2), lambda a, b: ref.partial_tree(a, b, terminal_factor=2.0)),
        (SmoothedPartialTreeKernel(), ref.partial_tree),
        (SubsetTreeKernel(), ref.subset_tree),
        (SubtreeKernel(), ref.subtree_textbook),
        (SubtreeKernel(variant="kelp"), ref.subtree_kelp),
    ]
    k = ref.tuple_kernel()
    stars = [star(30, "e/x", "/r"), Tree("/r", [Tree("e/x", [Tree("f/y")]) for _ in range(12)])]
    paths = [PathTuples([("e", "n")] * 30)]
    cases_of = [(kernel, reference, trees) for kernel, reference in cases]
    # SPTK with word vectors (a clone: the shared kernel keeps its bound): smoothed nodes, similarities
    smoothed, sigma = clone(SMOOTHED_CASES[0][0]), SMOOTHED_CASES[0][1]
    params = dict(lam=smoothed.lam, mu=smoothed.mu, terminal_factor=smoothed.terminal_factor, threshold=0.01)
    words = [Tree("SYNT##root", [Tree(label, [Tree("POS##NN")]) for label in SMOOTHED_LABELS[:12] * 3])]
    words.append(random_tree(np.random.default_rng(4), 40, labels=SMOOTHED_LABELS))
    cases_of.append((smoothed, lambda a, b: ref.smoothed_partial_tree(a, b, sigma, **params, match=sigma_key), words))
    cases_of.append((ZelenkoTreeKernel(), lambda a, b: ref.zelenko(a, b, k), stars))
    cases_of.append((SubsequencePathKernel(), lambda a, b: ref.subsequence_path(a.labels, b.labels, k), paths))
    for kernel, reference, X in cases_of:
        spec, tables = kernel._configuration()
        published = None if tables is None else tables.cover_structures(X)
        works = structure_work(spec.kind, [x.compiled for x in X], spec.match_key, published)
        for x, work in zip(X, works):
            kernel.set_params(max_work=int(work))
            value = kernel.pairs([x], [(0, 0)], normalize=False, n_jobs=1)[0]
            assert value == pytest.approx(reference(x, x), rel=1e-9), repr(kernel)
            kernel.set_params(max_work=int(work) - 1)
            with pytest.raises(StructureSizeError, match=f"needs {int(work):,} units of work"):
                kernel.pairs([x], [(0, 0)], normalize=False, n_jobs=1)


def engine_work(kernel, a: Tree, b: Tree) -> float:
    """The work of K(a, b) counted pair by pair, as the engine does it: every pair of inner
    nodes with equal match keys (productions for ST, SST; contents for PTK), each the
    child-subsequence programme of PTK (1 + |ch(x)|) * (1 + |ch(y)|) or the aligned
    children of ST and SST, 1 + |ch(x)|."""
    spec, _ = kernel._configuration()
    trees = [a.compiled, b.compiled]
    aligned = spec.match_key == "production"
    keys = [getattr(t, f"{spec.match_key}s") for t in trees]
    children = [np.diff(t.child_ptr) for t in trees]
    total = 0.0
    for x in np.flatnonzero(children[0]):
        for y in np.flatnonzero(children[1]):
            if keys[0][x] == keys[1][y]:
                total += 1 + children[0][x] if aligned else (1 + children[0][x]) * (1 + children[1][y])
    return total


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_trees=st.integers(1, 5))
def test_the_work_of_each_tree_is_counted_in_one_pass_and_bounds_every_pair(seed, n_trees):
    """structure_work, one pass over many trees, is each tree's own K(t, t) work counted
    pair by pair; the work of every pair (a, b) is at most sqrt(work(a) work(b))
    (Cauchy-Schwarz), so bounding each structure bounds every pair."""
    rng = np.random.default_rng(seed)
    trees = [random_tree(rng, int(rng.integers(1, 30)), labels="ab") for _ in range(n_trees)]
    trees += [wide_tree(rng, int(rng.integers(1, 30)), labels="ab")]
    for kernel in (PartialTreeKernel(), SubsetTreeKernel()):
        spec, _ = kernel._configuration()
        works = structure_work(spec.kind, [t.compiled for t in trees], spec.match_key)
        np.testing.assert_allclose(works, [engine_work(kernel, t, t) for t in trees], rtol=1e-12)
        for i, a in enumerate(trees):
            for j, b in enumerate(trees):
                assert engine_work(kernel, a, b) <= np.sqrt(works[i] * works[j]) * (1 + 1e-12)


def test_the_count_before_the_tables_is_a_lower_bound():
    """The kernels count each structure's work before their tables describe its labels:
    that count (smoothed nodes and tuples grouped by label, no similarities) is at most
    the count with the table (grouped by similarity group or edge, similarities added)."""
    rng = np.random.default_rng(6)
    trees = [random_tree(rng, int(rng.integers(1, 60)), labels=SMOOTHED_LABELS) for _ in range(30)]
    trees.append(Tree("SYNT##root", [Tree(label, [Tree("POS##NN")]) for label in SMOOTHED_LABELS * 4]))
    tuples = [Tree("/r", [Tree(f"{e}/{w}", [Tree("f/x")]) for e in "ef" for w in ("dog", "cat", "run")] * 3)]
    paths = [PathTuples([(e, w) for e in "ef" for w in ("dog", "cat", "run")] * 5)]
    cases = [(kernel, trees) for kernel, _ in SMOOTHED_CASES]
    cases += [(ZelenkoTreeKernel(vectors=VECTORS), tuples), (SubsequencePathKernel(vectors=VECTORS), paths)]
    for kernel, X in cases:
        spec, tables = kernel._configuration()
        assert reads_table(spec.kind)
        compiled = [x.compiled for x in X]
        before = structure_work(spec.kind, compiled, spec.match_key)
        after = structure_work(spec.kind, compiled, spec.match_key, tables.cover_structures(X))
        assert (before <= after).all() and (before < after).any(), repr(kernel)


def test_the_refused_structure_is_the_one_named():
    small, chain = Tree.from_string("(S (a) (b))"), Tree.from_flat(["a"] * 30, range(-1, 29))
    kernel = PartialTreeKernel(max_work=100)
    with pytest.raises(StructureSizeError, match=r"structure 2 \(30 nodes\) needs 3,364 units of work"):
        kernel.gram([small, small, chain, small])


def test_paths_and_forests_are_bounded_too():
    """A path of 20,000 tuples (its programme: 400 million cells, 2 s) and the forest of 64
    nodes of 1,000 leaves (a double per pair of equal leaves: 32 GB, MemoryError before)."""
    from spacy_convkernels.kernels import ForestKernel
    from spacy_convkernels.structures.forest import Forest

    with pytest.raises(StructureSizeError, match="SubsequencePathKernel: structure 0 .* max_work"):
        SubsequencePathKernel().gram([PathTuples([("e", "n")] * 20_000)])
    with pytest.raises(StructureSizeError, match="ForestKernel: structure 0 .* max_work"):
        ForestKernel().gram([Forest.from_tree(blocks(64, 1000))])
    assert ForestKernel().gram([Forest.from_tree(blocks(4, 9))]) == pytest.approx(1.0)


@pytest.mark.parametrize("kernel", tree_kernels() + [ZelenkoTreeKernel(), SubsequencePathKernel()], ids=repr)
def test_max_work_is_a_parameter_that_get_params_and_clone_carry(kernel):
    from spacy_convkernels.kernels.work import DEFAULT_MAX_WORK

    assert kernel.get_params()["max_work"] == DEFAULT_MAX_WORK == 10**8
    copy = clone(kernel.set_params(max_work=1234))
    assert copy.get_params()["max_work"] == 1234 and copy is not kernel
    assert clone(kernel.set_params(max_work=None)).max_work is None
    assert type(kernel)(**kernel.get_params()).max_work is None


def test_the_bound_is_per_kernel_and_survives_pickling_and_configs():
    import pickle

    from spacy.util import Config, registry

    tree = star(12_000)
    with pytest.raises(StructureSizeError):
        PartialTreeKernel().gram([tree])
    roomy = PartialTreeKernel(max_work=2 * 10**8)
    assert pickle.loads(pickle.dumps(roomy)).gram([tree]) == pytest.approx(1.0)
    config = Config().from_str("""
    [kernel]
    @misc = "spacy_convkernels.PartialTreeKernel.v1"
    max_work = 5
    """)
    kernel = registry.resolve(config)["kernel"]
    assert kernel.max_work == 5
    with pytest.raises(StructureSizeError, match="above max_work = 5;"):
        kernel.gram([Tree.from_string("(S (a) (b))")])


def test_the_earlier_name_max_matching_pairs_warns_and_sets_max_work():
    from spacy_convkernels.errors import SettingDeprecationWarning

    kernel = PartialTreeKernel()
    with pytest.warns(SettingDeprecationWarning, match="max_matching_pairs is now max_work"):
        kernel.max_matching_pairs = 100
    assert kernel.max_work == 100 and kernel.get_params()["max_work"] == 100
    with pytest.warns(SettingDeprecationWarning):
        assert kernel.max_matching_pairs == 100
    with pytest.raises(StructureSizeError, match="above max_work = 100;"):
        kernel.gram([Tree.from_flat(["a"] * 30, range(-1, 29))])


@pytest.mark.slow
@pytest.mark.parametrize(
    "landmark", ["(a " * 199_999 + "a" + ")" * 199_999, "(r" + " x" * 40_000 + ")"], ids=["chain", "wide"]
)
def test_a_saved_model_whose_landmark_is_too_large_fails_fast_at_load(tmp_path, landmark):
    """A kernel_vectors landmark swapped for a 200,000-node single-label chain (minutes at
    load and predict) or for a root of 40,000 children (10 s a pair, under
    max_matching_pairs before): load stops with the component's error naming the file and
    the bound."""
    import spacy
    import srsly
    from data_paths import CORPORA
    from kelp_parses import doc_from_grct
    from spacy.training import Example

    from spacy_convkernels.corpora import read_klp
    from spacy_convkernels.errors import ModelFileError
    from spacy_convkernels.utils.saved_arrays import sealed

    nlp = spacy.blank("en")
    sample = CORPORA / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"
    docs = [doc_from_grct(nlp.vocab, e.trees["grct"]) for e in read_klp(sample)][:20]
    config = {"representation": "lct", "n_components": 5, "kernel": {"@misc": "spacy_convkernels.PartialTreeKernel.v1"}}
    nlp.add_pipe("kernel_vectors", config=config)
    nlp.initialize(lambda: [Example(d.copy(), d) for d in docs])
    nlp.to_disk(tmp_path / "model")
    path = tmp_path / "model" / "kernel_vectors" / "model.msgpack"
    state = srsly.read_msgpack(path)
    state["landmarks"][0] = landmark
    del state["hashes"]
    srsly.write_msgpack(path, sealed(state))  # resealed: the content hashes hold
    with pytest.raises(ModelFileError, match="model.msgpack.*max_work"):
        spacy.load(tmp_path / "model")
