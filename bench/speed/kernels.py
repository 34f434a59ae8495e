"""Kernel evaluations: pairs of TREC trees, one question against many trees, Nyström,
Bio-AMR paths and subgraphs, very wide trees, the interners, the k-NN graph, a kernel
holding spaCy's word vectors. Every kernel of KeLP's TREC set-up takes KeLP's reference
parameters (word vectors: the md300 word space of the data set)."""

import gc
import os
import pickle
from functools import cache

import common  # bench/, on the path once bench.speed is imported
import numpy as np

from bench.speed import rate, setting

CORES = os.cpu_count()


def kelp_kernels(name: str):
    """(representation, kernel factory) of KeLP's TREC set-up (``common.kelp_kernels``)."""
    return common.kelp_kernels(setting("data") / "trec-qc-kelp" / "wordspace_md300.txt.gz")[name]


@cache
def trec(split: str) -> list:
    """KeLP's TREC examples: "train" (the 5,452 of train_5500), "test" (TREC-10's 500)."""
    from spacy_convkernels.corpora import read_klp

    folder = setting("data") / "trec-qc-kelp"
    if not folder.exists():
        raise NotImplementedError(f"{folder} is absent")
    return list(read_klp(folder / ("train_5500.coarse.klp.gz" if split == "train" else "TREC_10.coarse.klp.gz")))


class PairRates:
    """Normalized evaluations of random pairs of the 5,452 training trees, self-kernels
    kept (as KeLP's cache) and the trees prepared once (formerly bench/tree_kernels.py;
    ``--against COMMIT`` replaces bench/versus_commit.py, ``track_sum`` its check that
    both engines compute the same values)."""

    params = [["ST", "SST", "PTK", "SPTK", "CSPTK"], [1, CORES]]
    param_names = ["kernel", "threads"]
    n = 2_000_000

    def setup(self, name, threads):
        representation, make = kelp_kernels(name)
        trees = [e.trees[representation] for e in trec("train")]
        self.kernel = make()
        self.kernel.diag(trees)
        self.prepared = self.kernel.prepare(trees)
        self.pairs = np.random.default_rng(0).integers(0, len(trees), size=(self.n, 2))

    @rate("pairs")
    def time_pairs(self, name, threads):
        self.kernel.pairs(self.prepared, self.pairs, n_jobs=threads)

    def track_sum(self, name, threads):
        return float(np.sum(self.kernel.pairs(self.prepared, self.pairs[:100_000], n_jobs=threads)))


class OneAgainstMany:
    """The 500 test and 545 dev questions against 4,000 training trees (uniform, seed 0,
    of the 4,907 that are not dev), with and without the one-against-many index
    (``kernel.prepare``), self-kernels kept (formerly bench/one_against_many.py)."""

    params = [["PTK", "CSPTK", "SPTK", "ST", "ST-textbook", "SST"], [False, True]]
    param_names = ["kernel", "index"]

    def setup(self, name, index):
        representation, make = kelp_kernels(name)
        train = [e for i, e in enumerate(trec("train"), 1) if i % 10]
        dev = [e for i, e in enumerate(trec("train"), 1) if not i % 10]
        chosen = np.random.default_rng(0).permutation(len(train))[:4000]
        self.fixed = [train[i].trees[representation] for i in chosen]
        self.queries = [e.trees[representation] for e in trec("test") + dev]
        self.kernel, self.n = make(), len(self.queries)
        self.kernel.diag(self.fixed)
        self.kernel.diag(self.queries)
        self.prepared = self.kernel.prepare(self.fixed, index=index)

    def time_prepare(self, name, index):
        self.kernel.prepare(self.fixed, index=index)

    @rate("questions")
    def time_gram(self, name, index):
        self.kernel.gram(self.queries, self.prepared)

    def track_difference(self, name, index):
        """The largest difference between the indexed and the plain Gram block."""
        if not index:
            return "-"
        plain = self.kernel.gram(self.queries, self.kernel.prepare(self.fixed, index=False))
        return float(np.abs(self.kernel.gram(self.queries, self.prepared) - plain).max())


class IndexedRows:
    """500 training trees against the one-against-many index of 2,000 others, one thread,
    normalized (formerly bench/versus_commit.py --indexed; ``track_sum`` checks that two
    engines compute the same values)."""

    params = [["ST", "SST", "PTK", "SPTK", "CSPTK"]]
    param_names = ["kernel"]
    n = 500

    def setup(self, name):
        representation, make = kelp_kernels(name)
        trees = [e.trees[representation] for e in trec("train")]
        self.kernel, self.queries = make(), trees[2000:2500]
        self.kernel.diag(trees[:2500])
        self.fixed = self.kernel.prepare(trees[:2000])

    @rate("questions")
    def time_rows(self, name):
        self.kernel.gram(self.queries, self.fixed, n_jobs=1)

    def track_sum(self, name):
        return float(np.sum(self.kernel.gram(self.queries, self.fixed, n_jobs=1)))


class SymmetricGram:
    """``kernel.gram(X)`` of the first 2,000 of the 4,907 training trees that are not dev,
    normalized: pair by pair (the upper triangle) or indexed (X indexed on the fly, each row
    against all of X), as ``Kernel.gram`` chooses from ``INDEXED_GRAM_MIN`` structures on
    (formerly bench/one_against_many.py --symmetric)."""

    params = [["PTK", "CSPTK", "SPTK", "ST", "SST"], [False, True], [2000]]
    param_names = ["kernel", "indexed", "N"]
    repeat = 1

    def setup(self, name, indexed, n):
        representation, make = kelp_kernels(name)
        self.trees = [e.trees[representation] for i, e in enumerate(trec("train"), 1) if i % 10][:n]
        self.kernel = make()
        self.kernel.diag(self.trees)

    def time_gram(self, name, indexed, n):
        from spacy_convkernels.kernels import base

        threshold = base.INDEXED_GRAM_MIN
        try:
            base.INDEXED_GRAM_MIN = threshold if indexed else n + 1
            self.kernel.gram(self.trees)
        finally:
            base.INDEXED_GRAM_MIN = threshold


@cache
def fitted_nystroem(name: str, landmarks: int):
    """A Nyström transformer fitted on the 5,452 training trees, with the landmarks' Gram."""
    from spacy_convkernels.approx import Nystroem
    from spacy_convkernels.utils.row_blocks import symmetric_gram

    representation, make = kelp_kernels(name)
    kernel = make()
    model = Nystroem(kernel, n_components=landmarks, random_state=0)
    model.fit([e.trees[representation] for e in trec("train")])
    return model, symmetric_gram(kernel, model.components_), representation


class NystroemFit:
    """Nyström at M = 4,000 uniform landmarks (seed 0) of the 5,452 training trees: the
    fit, its parts (the landmarks' Gram, the eigendecomposition), and the kernel rows of
    the 1,045 test and dev questions against the prepared landmarks, what ``transform``
    computes before its projection (formerly bench/nystroem_speed.py)."""

    params = [["PTK", "CSPTK"], [4000]]
    param_names = ["kernel", "landmarks"]
    repeat = 1

    def setup(self, name, landmarks):
        from spacy_convkernels.approx import Nystroem

        self.model, self.W, representation = fitted_nystroem(name, landmarks)
        self.make = lambda: Nystroem(kelp_kernels(name)[1](), n_components=landmarks, random_state=0)
        self.train = [e.trees[representation] for e in trec("train")]
        self.X = [e.trees[representation] for e in trec("test") + trec("train")[9::10]]
        self.n = len(self.X)

    def time_fit(self, name, landmarks):
        self.make().fit(self.train)

    def time_eigendecomposition(self, name, landmarks):
        from spacy_convkernels.approx.nystroem import nystroem_normalization

        nystroem_normalization(self.W)

    @rate("questions")
    def time_rows(self, name, landmarks):
        from spacy_convkernels.utils.row_blocks import gram_rows

        gram_rows(self.model.kernel, self.X, self.model._landmarks)


class NystroemTransform(NystroemFit):
    """``transform`` of the 1,045 questions for each eigenvalue cutoff and dtype, with the rank r kept."""

    params = [["PTK", "CSPTK"], [4000], [1e-10, 1e-4], ["float64", "float32"]]
    param_names = ["kernel", "landmarks", "rtol", "dtype"]
    repeat = 3
    time_fit = time_eigendecomposition = time_rows = None

    def setup(self, name, landmarks, rtol, dtype):
        from spacy_convkernels.approx.nystroem import nystroem_normalization

        super().setup(name, landmarks)
        self.model.set_params(eigenvalue_rtol=rtol, dtype=dtype)
        self.model.set_landmarks(self.model.components_, nystroem_normalization(self.W, rtol=rtol))

    @rate("questions")
    def time_transform(self, *params):
        self.model.transform(self.X)

    def track_rank(self, *params):
        return self.model.n_features_out_


class AmrPaths:
    """Interaction candidates of the 1,000 Bio-AMR graphs of the dev and test files
    (PENMAN decoding included, reading the file not), and normalized evaluations of random
    pairs of their paths (subsequence path kernel) and subgraphs (Zelenko), lam 0.5
    (formerly bench/amr_paths.py)."""

    params = [["candidates", "path", "zelenko"], [1, CORES]]
    param_names = ["structures", "threads"]

    def setup(self, what, threads):
        from spacy_convkernels.corpora import read_penman
        from spacy_convkernels.kernels import SubsequencePathKernel, ZelenkoTreeKernel
        from spacy_convkernels.structures.interactions import amr_candidates

        folder = setting("data") / "bio-amr"
        if not folder.exists():
            raise NotImplementedError(f"{folder} is absent")
        names = ("amr-release-dev-bio.txt", "amr-release-test-bio.txt")
        self.graphs = [d._.kernel_amr for name in names for d in read_penman(folder / name)]
        self.candidates = lambda: [c for g in self.graphs for c in amr_candidates(g)]
        found = self.candidates()
        self.n = len(found) if what == "candidates" else 1_000_000
        if what != "candidates":
            self.kernel = SubsequencePathKernel(lam=0.5) if what == "path" else ZelenkoTreeKernel(lam=0.5)
            structures = [c.path if what == "path" else c.subgraph for c in found]
            self.kernel.diag(structures)
            self.prepared = self.kernel.prepare(structures)
            self.pairs = np.random.default_rng(0).integers(0, len(found), size=(self.n, 2))

    @rate("items")
    def time_run(self, what, threads):
        if what == "candidates":
            return self.candidates() and None
        self.kernel.pairs(self.prepared, self.pairs, n_jobs=threads)


class PathRows:
    """Kernel rows of candidate paths against a fixed set, as an SVM's decisions are: the
    2,000 first distinct candidate paths of the Bio-AMR test graphs, in the order the
    graphs give them (a trigger's paths together), against the 3,000 first of the dev
    graphs, normalized, subsequence path kernel lam 0.5."""

    params = [[1, CORES]]
    param_names = ["threads"]
    n = 2000

    def setup(self, threads):
        from spacy_convkernels.corpora import read_penman
        from spacy_convkernels.kernels import SubsequencePathKernel
        from spacy_convkernels.structures.interactions import amr_candidates

        folder = setting("data") / "bio-amr"
        if not folder.exists():
            raise NotImplementedError(f"{folder} is absent")

        def paths(name: str, count: int) -> list:
            graphs = [d._.kernel_amr for d in read_penman(folder / name)]
            return list(dict.fromkeys(c.path for g in graphs for c in amr_candidates(g)))[:count]

        self.kernel = SubsequencePathKernel(lam=0.5)
        self.queries = paths("amr-release-test-bio.txt", self.n)
        self.fixed = self.kernel.prepare(paths("amr-release-dev-bio.txt", 3000))
        self.kernel.diag(self.queries)

    @rate("paths")
    def time_rows(self, threads):
        self.kernel.gram(self.queries, self.fixed, n_jobs=threads)

    def track_sum(self, threads):
        return float(np.sum(self.kernel.gram(self.queries, self.fixed, n_jobs=threads)))


class ForestPairs:
    """Normalized evaluations of random pairs of 1,000 synthetic parse forests (the forest
    kernel, lam 0.4): each the packed forest of 4 random trees over the same 6 to 14
    words, the k-best parses of one sentence as a beam parser gives them."""

    params = [[1, CORES]]
    param_names = ["threads"]
    n = 200_000

    def setup(self, threads):
        from spacy_convkernels import Tree
        from spacy_convkernels.kernels import ForestKernel
        from spacy_convkernels.structures.forest import Forest

        rng = np.random.default_rng(0)
        words, labels = [f"w{i}" for i in range(30)], ["S", "NP", "VP", "PP", "ADJP"]

        def parse(leaves: list) -> Tree:
            level = [Tree(word) for word in leaves]
            while len(level) > 1:
                i = int(rng.integers(0, len(level) - 1))
                level[i : i + 2] = [Tree(labels[int(rng.integers(len(labels)))], level[i : i + 2])]
            return Tree("TOP", level)

        def forest() -> Forest:
            leaves = list(rng.choice(words, size=int(rng.integers(6, 15))))
            return Forest.from_trees([(parse(leaves), float(rng.uniform(0.1, 1))) for _ in range(4)])

        forests = [forest() for _ in range(1000)]
        self.kernel = ForestKernel(lam=0.4)
        self.kernel.diag(forests)
        self.prepared = self.kernel.prepare(forests)
        self.pairs = rng.integers(0, len(forests), size=(self.n, 2))

    @rate("pairs")
    def time_pairs(self, threads):
        self.kernel.pairs(self.prepared, self.pairs, n_jobs=threads)

    def track_sum(self, threads):
        return float(np.sum(self.kernel.pairs(self.prepared, self.pairs[:20_000], n_jobs=threads)))


class WideTrees:
    """K(t, t), unnormalized, one thread, of a root with n children (issue 26, point 5;
    formerly bench/wide_trees.py): ``leaves`` of distinct labels; ``repeated``:
    ``(r (c0 x) ... (c49 x) (c0 x) ...)``, labels repeating over 50 (n * n pairs of ``x``
    leaves match); ``distinct``: ``(r (c0 x) (c1 x) ...)``; ``chain``: ``(a (a (a ...)))``
    of n nodes (n * n matching inner pairs). The engine's own figures: the kernels take
    ``max_work=None``, as by default they refuse the shapes whose work exceeds it
    (:class:`StructureWork`). Peak MB over the built structure's."""

    params = [["leaves", "repeated", "distinct", "chain"], ["ptk", "sptk", "sst"], [20_000, 100_000]]
    param_names = ["shape", "kernel", "n"]

    def setup(self, shape, name, n):
        from spacy_convkernels import Tree
        from spacy_convkernels import kernels as k

        kernels = {"ptk": k.PartialTreeKernel, "sptk": k.SmoothedPartialTreeKernel, "sst": k.SubsetTreeKernel}
        labels = [f"n{i % 50 if shape == 'repeated' else i}" for i in range(n)]
        self.kernel = kernels[name]()
        if "max_work" in self.kernel.get_params():  # the engine unbounded (--against: earlier commits lack it)
            self.kernel.set_params(max_work=None)
        if shape == "chain":
            self.structure = Tree.from_flat(["a"] * n, range(-1, n - 1))
        elif shape == "leaves":
            self.structure = Tree("S", [Tree(label) for label in labels])
        else:
            self.structure = Tree("r", [Tree(label, [Tree("x")]) for label in labels])
        _ = self.structure.compiled

    def peakmem_self_kernel(self, *params):
        return f"K(t, t) = {float(self.kernel.pairs([self.structure], [(0, 0)], normalize=False, n_jobs=1)[0]):.6g}"


class StructureWork:
    """The bound ``max_work`` on the wide shapes of issue 62: ``star``, ``(r x x ... x)`` with
    40,000 children (PTK: 10 s for a 1 x 1 Gram before); ``blocks``, 64 nodes of 1,000
    leaves each (a 128 KB tree, 33 s); ``klp``, a one-line 8 MB ``.klp`` of ``(r x x ...)``
    with 4 million children (300 s at 985 MB before it was killed, a day extrapolated).
    Set-up reads (``read_klp``, for ``klp``) and compiles the tree; then the 1 x 1 Gram,
    which the kernels whose work is quadratic in the children refuse with
    StructureSizeError before any work (seconds and peak MB of the refusal), and SST
    computes (its aligned children are linear work)."""

    params = [["star", "blocks", "klp"], ["ptk", "sptk", "sst"]]
    param_names = ["shape", "kernel"]

    def setup(self, shape, name):
        import tempfile
        from pathlib import Path

        from spacy_convkernels import Tree
        from spacy_convkernels import kernels as k
        from spacy_convkernels.corpora import read_klp

        kernels = {"ptk": k.PartialTreeKernel, "sptk": k.SmoothedPartialTreeKernel, "sst": k.SubsetTreeKernel}
        self.kernel = kernels[name]()
        if shape == "star":
            self.structure = Tree.from_flat(["r"] + ["x"] * 40_000, [-1] + [0] * 40_000)
        elif shape == "blocks":
            labels, parents = ["r"], [-1]
            for _ in range(64):
                parents += [0] + [len(labels)] * 1000
                labels += ["a"] + ["x"] * 1000
            self.structure = Tree.from_flat(labels, parents)
        else:
            with tempfile.TemporaryDirectory() as folder:
                path = Path(folder) / "wide.klp"
                path.write_text("A |BT:grct| (r" + " x" * 4_000_000 + ")|ET|\n", encoding="utf-8")
                (example,) = read_klp(path)
            self.structure = example.trees["grct"]
        _ = self.structure.compiled

    def _gram(self):
        from spacy_convkernels.errors import StructureSizeError

        try:
            value = self.kernel.gram([self.structure], normalize=False, n_jobs=1)[0, 0]
        except StructureSizeError as error:
            return "refused: " + str(error).split(": ", 1)[1].split(" (pairs")[0]
        return f"K(t, t) = {value:.6g}"

    def time_gram(self, *params):
        return self._gram()

    def peakmem_gram(self, *params):
        return self._gram()


class RealWork:
    """The work (``kernels.work``) of the structures of real corpora against the default
    ``max_work``: the largest of KeLP's TREC questions (the 5,452 training and 500 test
    ones, each kernel on its representation, SPTK and CSPTK with the md300 word space),
    of the sentences of the stored ``en_core_web_md`` parses (60 TREC questions and 21 GE
    documents, every representation), of those documents whole (their sentences joined
    under a virtual root, as the document kernels compare them; CSPTK too, on CLCT) and of
    the Bio-AMR candidate paths and subgraphs."""

    params = [["trec", "md-parses", "md-documents", "amr"]]
    param_names = ["corpus"]

    def setup(self, corpus):
        from spacy_convkernels import kernels as k

        self.sets = []  # (name, kernel, structures)
        if corpus == "trec":
            for name in ("ST", "SST", "PTK", "SPTK", "CSPTK"):
                representation, make = kelp_kernels(name)
                self.sets.append((name, make(), [e.trees[representation] for e in trec("train") + trec("test")]))
        elif corpus in ("md-parses", "md-documents"):
            from spacy.tokens import DocBin

            from spacy_convkernels.data.samples import PARSES
            from spacy_convkernels.structures.dependency import REPRESENTATIONS, join_sentences, span_to_tree

            docs = list(DocBin().from_disk(PARSES).get_docs(_blank_vocab()))
            wordspace = setting("data") / "trec-qc-kelp" / "wordspace_md300.txt.gz"
            for representation in REPRESENTATIONS:
                sentences = [[span_to_tree(sentence, representation) for sentence in doc.sents] for doc in docs]
                if corpus == "md-documents":
                    trees = [join_sentences(trees) for trees in sentences]
                else:
                    trees = [tree for trees in sentences for tree in trees]
                trees = [tree for tree in trees if tree is not None]
                kernels = [k.PartialTreeKernel(), k.SubsetTreeKernel(), k.SmoothedPartialTreeKernel(vectors=wordspace)]
                if representation == "clct":
                    kernels.append(k.CompositionalSmoothedPartialTreeKernel(vectors=wordspace))
                self.sets += [(f"{type(kernel).__name__} {representation}", kernel, trees) for kernel in kernels]
        else:
            from spacy_convkernels.corpora import read_penman
            from spacy_convkernels.structures.interactions import amr_candidates

            folder = setting("data") / "bio-amr"
            if not folder.exists():
                raise NotImplementedError(f"{folder} is absent")
            names = ("amr-release-dev-bio.txt", "amr-release-test-bio.txt")
            found = [c for name in names for d in read_penman(folder / name) for c in amr_candidates(d._.kernel_amr)]
            self.sets.append(("path", k.SubsequencePathKernel(), [c.path for c in found]))
            self.sets.append(("zelenko", k.ZelenkoTreeKernel(), [c.subgraph for c in found]))

    def track_largest(self, corpus):
        from spacy_convkernels.kernels.work import DEFAULT_MAX_WORK, structure_work

        notes = []
        for name, kernel, structures in self.sets:
            spec, tables = kernel._configuration()
            published = None if tables is None else tables.cover_structures(structures)
            work = structure_work(spec.kind, [s.compiled for s in structures], spec.match_key, published)
            notes.append(f"{name}: {work.max():,.0f} (1/{DEFAULT_MAX_WORK / work.max():,.0f} of the bound)")
        return f"{len(self.sets[0][2]):,} structures; " + "; ".join(notes)


def _blank_vocab():
    import spacy

    return spacy.blank("en").vocab


class InternerMemory:
    """Resident memory a process keeps after compiling and dropping trees of 2 million
    distinct labels, 1,000 leaves a tree (issue 26, point 4): the interners keep only the
    labels of live structures; ``sptk`` also grows the kernel's per-label tables (words
    with vectors: 1,000 shared rows). Formerly bench/interner_memory.py."""

    params = [["ptk", "sptk"], [2_000_000]]
    param_names = ["kernel", "labels"]
    fresh = True

    def setup(self, name, labels):
        from spacy_convkernels import Tree
        from spacy_convkernels.kernels import PartialTreeKernel, SmoothedPartialTreeKernel, WordVectors

        if name == "sptk":
            matrix = np.random.default_rng(0).normal(size=(1000, 50))
            vectors = WordVectors({f"w{i}": i % 1000 for i in range(labels)}, matrix)
            self.kernel, self.leaf = SmoothedPartialTreeKernel(vectors=vectors), "LEX##w{}::n"
        else:
            self.kernel, self.leaf = PartialTreeKernel(), "w{}"
        self.kernel.pairs([Tree("S", [Tree("a")])], [(0, 0)])  # tables and imports before the first reading

    def track_growth(self, name, labels):
        from common import rss_mb

        from spacy_convkernels import Tree
        from spacy_convkernels.structures.interning import LABELS

        gc.collect()
        before = rss_mb()
        for first in range(0, labels, 1000):
            tree = Tree("S", [Tree(self.leaf.format(i)) for i in range(first, min(first + 1000, labels))])
            self.kernel.pairs([tree], [(0, 0)], n_jobs=1)
        del tree
        gc.collect()
        return f"{rss_mb() - before:.1f} MB, {len(LABELS):,d} labels interned"


class KnnGraph:
    """``kernel_knn_graph`` (blocked: k best of each row block) against the whole N x N
    Gram it replaced (full: diagonal -inf, a stable argsort of every row), k = 4, N TREC
    training trees (the 5,452 repeated), PTK (formerly bench/knn_graph_memory.py)."""

    params = [["blocked", "full"], [5000, 20_000]]
    param_names = ["method", "N"]

    def setup(self, method, n):
        from spacy_convkernels.kernels import PartialTreeKernel

        trees = [e.trees["grct"] for e in trec("train")]
        self.X = (trees * (n // len(trees) + 1))[:n]
        self.kernel = PartialTreeKernel(lam=0.4, mu=0.4, terminal_factor=5.0)
        self.kernel.diag(trees)

    def peakmem_graph(self, method, n):
        from spacy_convkernels.learn import kernel_knn_graph

        if method == "blocked":
            return kernel_knn_graph(self.kernel, self.X, 4) and None
        K = self.kernel.gram(self.X)
        np.fill_diagonal(K, -np.inf)
        np.argsort(-K, axis=1, kind="stable")[:, :4]


class VectorsKernel:
    """A Nyström transformer over SPTK with ``vectors=nlp.vocab`` (en_core_web_md): made,
    cloned (``sklearn.base.clone``) and pickled (formerly bench/clone_pickle.py)."""

    def setup(self):
        import spacy

        if not setting("md_model").exists():
            raise NotImplementedError(f"{setting('md_model')} is absent")
        self.vocab = spacy.load(setting("md_model")).vocab
        self.time_make()

    def time_make(self):
        from spacy_convkernels.approx import Nystroem
        from spacy_convkernels.kernels import SmoothedPartialTreeKernel

        self.model = Nystroem(SmoothedPartialTreeKernel(vectors=self.vocab), n_components=500)

    def time_clone(self):
        from sklearn.base import clone

        clone(self.model)

    def track_pickled(self):
        return len(pickle.dumps(self.model.kernel)) / 1e6

    track_pickled.unit = "MB"

    def track_vector_table(self):
        return self.vocab.vectors.data.nbytes / 1e6

    track_vector_table.unit = "MB"
