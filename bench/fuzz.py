"""Long fuzzing run: random inputs through the bracket parser, the corpus readers and the
kernels, counting crashes, hangs and exceptions that are not the package's own.

    python bench/fuzz.py --examples 200000                  # 5 targets: 1,000,000 inputs
    python bench/fuzz.py --examples 2000 --targets tree,kernels
    python bench/fuzz.py --replay kernels:1234              # one input again, in this process

Inputs are mutations of valid samples (characters or bytes replaced, inserted, deleted,
duplicated, spliced, truncated) and random structures, kernel parameters and calls. Input
``i`` of a target depends on (seed, target, i) only, so any reported input can be replayed.
Each target runs in child processes; a child publishes the index of the input it is on in
a shared page, so when it dies by a signal (or any non-zero exit) that input counts as a
crash, and when it makes no progress for --timeout seconds as a hang; the run then goes on
from the next input in a new child. Outcomes per input: accepted, refused (a
``ConvKernelsError``), other exception, or wrong (a result that breaks a property: a tree
that does not round-trip, a non-finite, asymmetric or out-of-range kernel value, or a
value different from a fresh kernel's on plain lists).
"""

import argparse
import collections
import gzip
import json
import math
import mmap
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KLP_SAMPLE = ROOT / "spacy_convkernels" / "data" / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"
TARGETS = ("tree", "klp", "conllu", "penman", "kernels", "cli")
COUNTERS = ("accepted", "refused", "other", "wrong")  # kept by the child in the shared page, after the index
NOTE_AT, PAGE = 64, 4096  # where in the page the child writes the input it is on (its description)
TREE_IN_KLP = re.compile(r"\|BT(?::[^|]*)?\|(.*?)\|ET\|")
EVENTS_PER_FINDING = 3  # inputs a child reports in full per finding (kind, exception type and place)

# --- input generation ----------------------------------------------------------------------

AWKWARD_TEXT = [
    "(",
    ")",
    " ",
    "  ",
    "\t",
    "\n",
    "\r",
    "\r\n",
    "\x0b",
    "\x0c",
    "\x85",
    "\xa0",
    "\u3000",
    "\u2028",
    "\ufeff",
    "\x00",
    "#",
    "##",
    "::",
    "|",
    "\\",
    "/",
    ":",
    ",",
    "<",
    ">",
    "*",
    "_",
    "-",
    "0",
    "1e308",
    "nan",
    "\ud800",
    "é",
    "\U0001f600",
]
AWKWARD_BYTES = [piece.encode("utf-8", "surrogatepass") for piece in AWKWARD_TEXT] + [
    b"\xff",
    b"\xc3",
    b"\xef\xbb\xbf",
    b"\x80",
    b"\t_",
    b"-1",
    b"99999999999999999999",
    b"1.5",
    b"0.5",
    b"|BT:t|",
    b"|ET|",
    b"|BV:v|",
    b"|EV|",
    b"|BDV:d|",
    b"|EDV|",
    b"|BS|",
    b"|ES|",
    b"# ::snt ",
    b"# ::id x",
    b"# ::tok ",
    b":ARG0",
    b" / ",
    b"(x / y)",
    b'"',
    b"~e.1",
    b"1-2",
    b"1.1",
    b"SpaceAfter=No",
    b"root",
    b"\t0\t",
    b"\t_\t_\t_\t_",
]


def mutate(data, rng: random.Random, pieces, seeds):
    """``data`` (str or bytes) after 1 to about 8 random edits."""
    empty = data[:0]
    for _ in range(1 + min(int(rng.expovariate(0.5)), 7)):
        n = len(data)
        at, length = rng.randint(0, n), min(int(rng.expovariate(0.2)) + 1, n)
        op = rng.randrange(8)
        if op == 0:
            data = data[:at] + rng.choice(pieces) + data[at:]
        elif op == 1:
            data = data[:at] + data[at + length :]
        elif op == 2:
            data = data[:at] + data[at : at + length] * rng.randint(2, 4) + data[at + length :]
        elif op == 3 and n:
            data = data[:at] + _random_unit(rng, empty) + data[at + 1 :]
        elif op == 4:
            other = rng.choice(seeds)
            data = data[:at] + other[rng.randint(0, len(other)) :]
        elif op == 5:
            data = data[:at]
        elif op == 6 and n:
            a, b = sorted((rng.randrange(n), rng.randrange(n)))
            data = data[:a] + data[b : b + length] + data[a + length :]  # move a piece
        else:
            data = data[:at] + _random_unit(rng, empty) * rng.randint(1, 3) + data[at:]
    return data


def _random_unit(rng, empty):
    if isinstance(empty, bytes):
        return bytes([rng.randrange(256)])
    return chr(rng.randrange(0x80) if rng.random() < 0.6 else rng.randrange(0x110000))


def _klp_lines():
    with gzip.open(KLP_SAMPLE, "rb") as handle:
        return [line for line in handle if line.strip()]


CONLLU_SAMPLE = (
    "# newdoc id = d1\n# sent_id = s1\n# text = I don't know.\n"
    "1\tI\tI\tPRON\tPRP\tCase=Nom\t4\tnsubj\t4:nsubj\t_\n"
    "2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "2\tdo\tdo\tAUX\tVBP\t_\t4\taux\t4:aux\t_\n"
    "3\tn't\tnot\tPART\tRB\t_\t4\tadvmod\t4:advmod\t_\n"
    "4\tknow\tknow\tVERB\tVB\tVerbForm=Inf\t0\troot\t0:root\tSpaceAfter=No\n"
    "5\t.\t.\tPUNCT\t.\t_\t4\tpunct\t4:punct\t_\n\n"
    "# sent_id = s2\n"
    "1\tGo\tgo\tVERB\tVB\t_\t0\troot\t0:root\t_\n"
    "1.1\twent\tgo\tVERB\tVBD\t_\t_\t_\t1:conj\tCopyOf=1\n"
    "2\thome\thome\tADV\tRB\t_\t1\tadvmod\t1:advmod\tSpaceAfter=No\n"
    "3\t!\t!\tPUNCT\t.\t_\t1\tpunct\t1:punct\t_\n\n"
    "# sent_id = s3\n"
    "1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_\n"
    "2\tdog\tdog\tNOUN\tNN\tNumber=Sing\t3\tnsubj\t_\t_\n"
    "3\truns\trun\tVERB\tVBZ\t_\t0\troot\t_\tSpaceAfter=No\n"
    "4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_\n"
)
PENMAN_SAMPLE = (
    "# AMR release; corpus: fuzz\n\n"
    "# ::id fig1 ::date 2018\n"
    "# ::snt GEFs such as Sos have allosteric sites for Ras binding .\n"
    "(h / have-03\n"
    '   :ARG0 (p / protein-family :name (n / name :op1 "GEF")\n'
    '         :example (p2 / protein :name (n2 / name :op1 "Sos")))\n'
    "   :ARG1 (s / site\n"
    "         :mod (a / allosteric)\n"
    "         :purpose (b / bind-01\n"
    '               :ARG1 (e / enzyme :name (n3 / name :op1 "Ras")))))\n\n'
    "# ::id two\n# ::tok Ras binds GTP .\n"
    '(b / bind-01 :ARG0 (e / enzyme :name (n / name :op1 "Ras")) :ARG1 (s / small-molecule :wiki -)\n'
    "   :polarity - :ARG2 b)\n"
)


# --- targets: each is setup() -> run(rng, index, current) -> outcome; run describes its input in
# current["input"] before it calls the package, so that an exception can be reported with it


class Wrong(Exception):
    """A result that breaks a property of the target."""


def tree_target():
    from spacy_convkernels import ConvKernelsError, Tree

    seeds = [tree.strip() for line in _klp_lines()[:20] for tree in TREE_IN_KLP.findall(line.decode("utf-8"))]
    seeds += ["(A (B c) d)", "(S (NP (DT the) (NN dog)) (VP runs))", "(A)"]

    def run(rng, index, current):
        text = mutate(rng.choice(seeds), rng, AWKWARD_TEXT, seeds)
        current["input"] = f"Tree.from_string({text!r})"
        try:
            tree = Tree.from_string(text)
        except ConvKernelsError:
            return "refused"
        if Tree.from_string(str(tree)) != tree:
            raise Wrong(f"it does not round-trip through {str(tree)!r}")
        return "accepted"

    return run


def _file_target(suffix, seeds, read):
    """A reader target: a mutated sample written to a file of ``suffix`` (.gz: compressed,
    and now and then damaged after compression), then ``read(path, rng)`` drains it."""
    from spacy_convkernels import ConvKernelsError

    folder = Path(os.environ["FUZZ_WORKDIR"])

    def run(rng, index, current):
        data = mutate(rng.choice(seeds), rng, AWKWARD_BYTES, seeds)
        gz = suffix == ".klp" and rng.random() < 0.15
        path = folder / ("input" + suffix + (".gz" if gz else ""))
        raw = gzip.compress(data, compresslevel=1) if gz else data
        if gz and rng.random() < 0.5:
            raw = mutate(raw, rng, [b"\x00", b"\xff"], [raw])
        path.write_bytes(raw)
        current["input"] = f"{path.name} holding {raw!r}"
        try:
            read(path, rng, index)
        except ConvKernelsError:
            return "refused"
        return "accepted"

    return run


def klp_target():
    from spacy_convkernels import Tree
    from spacy_convkernels.corpora import read_klp

    lines = _klp_lines()
    seeds = [b"".join(lines[i : i + random.Random(i).randint(1, 3)]) for i in range(len(lines))]

    def read(path, rng, index):
        for example in read_klp(path):
            for tree in example.trees.values():
                if Tree.from_string(str(tree)) != tree:
                    raise Wrong(f"tree {tree!r} does not round-trip")

    return _file_target(".klp", seeds, read)


def conllu_target():
    from spacy.vocab import Vocab

    from spacy_convkernels import Tree
    from spacy_convkernels.corpora import read_conllu
    from spacy_convkernels.structures import REPRESENTATIONS, span_to_tree

    sample = CONLLU_SAMPLE.encode("utf-8")
    seeds = [sample, sample.split(b"\n\n")[2], b"\xef\xbb\xbf" + sample]
    state = {}

    def read(path, rng, index):
        if index // 5000 != state.get("epoch"):  # a fresh vocabulary now and then: strings pile up
            state.update(epoch=index // 5000, vocab=Vocab())
        n_sents = rng.choice([1, 1, 2, 3, 0])
        for doc in read_conllu(path, state["vocab"], n_sents=n_sents, skip_errors=rng.random() < 0.3):
            for sentence in doc.sents:
                tree = span_to_tree(sentence, rng.choice(REPRESENTATIONS))
                if Tree.from_string(str(tree)) != tree:
                    raise Wrong(f"tree {str(tree)!r} of {sentence.text!r} does not round-trip")

    return _file_target(".conllu", seeds, read)


def penman_target():
    import penman
    import spacy

    from spacy_convkernels.corpora import read_penman

    sample = PENMAN_SAMPLE.encode("utf-8")
    seeds = [sample, sample.split(b"\n\n", 1)[1], sample.split(b"\n\n")[-1]]
    state = {}

    def read(path, rng, index):
        if index // 5000 != state.get("epoch"):
            state.update(epoch=index // 5000, nlp=spacy.blank("en"))
        for doc in read_penman(path, state["nlp"], skip_errors=rng.random() < 0.3):
            penman.decode(doc._.kernel_amr)

    return _file_target(".txt", seeds, read)


def kernels_target():
    import numpy as np

    from spacy_convkernels import ConvKernelsError, Tree
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

    words = {
        "dog": "n",
        "cat": "n",
        "car": "n",
        "run": "v",
        "walk": "v",
        "eat": "v",
        "red": "j",
        "blue": "j",
        "big": "j",
        "zzz": "n",
    }
    vectors_rng = np.random.default_rng(0)
    raw = {word: vectors_rng.normal(size=6) for word in words if word != "zzz"}
    raw["walk"], raw["blue"] = raw["run"], -raw["red"]  # a shared row and an opposite
    vectors = WordVectors.from_arrays(list(raw), np.array(list(raw.values())))
    lex = [f"LEX##{w}::{p}" for w, p in words.items()]
    comp = [
        f"COMP##{r}<{h}::{words[h]},{m}::{words[m]}>"
        for r in ("nsubj", "amod")
        for h in ("run", "dog", "eat")
        for m in ("cat", "walk", "zzz", "red")
    ] + ["COMP##root<*::*,run::v>"]
    tree_labels = ["A##x", "B##x", "A##y", "B##z", "w", "A##w", "C##y", "SYNT##nsubj", "POS##NN"] + lex + comp
    edges, nodes = ["", "arg0", "arg1", "op1", "arg1-of"], ["bind", "protein", "enzyme", "dog", "cat", "gtp"]
    tuple_labels = [f"{e}/{n}" for e in edges for n in nodes] + ["A##x"]
    weird = [
        0.0,
        -0.5,
        1.0,
        1.5,
        1e308,
        5e-324,
        math.nan,
        math.inf,
        -math.inf,
        True,
        None,
        "0.4",
        [0.4],
        np.float32(0.3),
        np.int64(1),
        1e-200,
    ]
    kernels = [
        SubtreeKernel,
        SubsetTreeKernel,
        PartialTreeKernel,
        SmoothedPartialTreeKernel,
        CompositionalSmoothedPartialTreeKernel,
        SubsequencePathKernel,
        ZelenkoTreeKernel,
    ]
    ranges = {
        "lam": (0.01, 1.5),
        "mu": (0.01, 1.5),
        "terminal_factor": (0.0, 2.0),
        "threshold": (0.0, 1.0),
        "dilution": (0.0, 1.0),
        "alpha": (0.0, 2.0),
        "beta": (0.0, 2.0),
        "gamma": (-0.95, 0.95),
    }
    choices = {
        "variant": ["kelp", "textbook"],
        "shared_rows": ["kelp", "diluted", "exclusive"],
        "vectors": [None, vectors],
        "lexical": [False, True],
        "syntactic_restriction": [False, True],
    }
    odd_choices = ["KELP", None, 3, "/no/such/vectors.txt", "sometimes"]

    def number(rng, name, odd):
        if odd:
            return rng.choice(weird)
        lo, hi = ranges[name]
        if name == "lam" and rng.random() < 0.05:
            return rng.choice([1e-3, 3.0, 10.0])  # underflow and overflow territory
        return rng.uniform(lo, hi)

    def params(rng, cls):
        out = {}
        for name in cls().get_params():
            odd = rng.random() < 0.04
            if name in ranges:
                out[name] = number(rng, name, odd)
            elif name in choices:
                out[name] = rng.choice(odd_choices) if odd else rng.choice(choices[name])
            elif name in ("label_weights", "edge_weights"):
                keys = edges[1:] if name == "edge_weights" else tree_labels
                if odd:
                    out[name] = rng.choice([{keys[0]: math.nan}, {keys[0]: -1.0}, [keys[0]], keys[0], 3])
                elif rng.random() < 0.3:
                    out[name] = {rng.choice(keys): rng.choice([0.0, 0.5, 1.0, 2.0]) for _ in range(rng.randint(1, 3))}
                else:
                    out[name] = None
        return out

    def tree(rng, labels):
        shape = rng.random()
        n = rng.randint(30, 60) if shape < 0.03 else rng.randint(100, 300) if shape < 0.05 else rng.randint(1, 10)
        parents = [-1] + [rng.randrange(i) if shape >= 0.05 else i - 1 for i in range(1, n)]
        children = [[] for _ in range(n)]
        for node in range(1, n):
            children[0 if shape < 0.03 else parents[node]].append(node)
        built = [None] * n
        for node in reversed(range(n)):
            built[node] = Tree(rng.choice(labels), [built[c] for c in children[node]])
        return built[0]

    def structure(rng, cls):
        if rng.random() < 0.02:
            return rng.choice([None, "(A (B))", 3, Tree("A##x"), PathTuples([("", "bind")])])
        if cls is SubsequencePathKernel:
            return PathTuples([(rng.choice(edges), rng.choice(nodes)) for _ in range(rng.randint(0, 10))])
        return tree(rng, tuple_labels if cls is ZelenkoTreeKernel else tree_labels)

    def n_jobs(rng):
        return rng.choice([None, 1, 2, -1]) if rng.random() > 0.05 else rng.choice([0, 1.5, "2", True, 100, -100])

    def index_pairs(rng, n):
        if rng.random() < 0.1 or not n:
            return rng.choice(
                [
                    [(0, n)],
                    [(-1, 0)],
                    [(2**40, 0)],
                    [(0, 1, 2)],
                    [0, 1],
                    [[0], [1, 2]],
                    [(0.0, 1.0)],
                    [(True, False)],
                    np.array([[0, 0]], dtype=np.uint64),
                    np.zeros((1, 2, 1), dtype=int),
                    [("0", "0")],
                    None,
                    [],
                    np.zeros((0, 2)),
                    7,
                    [(0, 2**63)],
                    np.array([[0, -1]]),
                ]
            )
        return [(rng.randrange(n), rng.randrange(n)) for _ in range(rng.randint(1, 6))]

    def is_psd(kernel):
        if isinstance(kernel, SubtreeKernel):
            return kernel.variant == "textbook"
        if isinstance(kernel, (PartialTreeKernel, SmoothedPartialTreeKernel)):
            return kernel.terminal_factor <= 1 and getattr(kernel, "vectors", None) is None
        if isinstance(kernel, (SubsequencePathKernel, ZelenkoTreeKernel)):
            return kernel.vectors is None
        return True

    def check(kernel, values, normalize, expected):
        values, expected = np.asarray(values, dtype=np.float64), np.asarray(expected)
        if values.shape != expected.shape:
            raise Wrong(f"shape {values.shape} where a fresh kernel gives {expected.shape}")
        if not np.all(np.isfinite(values)):
            raise Wrong(f"non-finite values {values}")
        if np.any(values < 0) or (normalize and is_psd(kernel) and np.any(values > 1 + 1e-9)):
            raise Wrong(f"values out of range: {values}")
        if not np.allclose(values, expected, rtol=1e-9, atol=1e-12):
            raise Wrong(f"values {values.ravel()} differ from a fresh kernel's {expected.ravel()}")

    def structures_of(X):
        return list(X.structures) if hasattr(X, "structures") else list(X)

    def run(rng, index, current):
        cls = rng.choice(kernels)
        chosen = params(rng, cls)
        kernel = cls(**chosen)
        shown = {name: "VECTORS" if value is vectors else value for name, value in chosen.items()}
        X = [structure(rng, cls) for _ in range(rng.randint(0, 6))]
        Y = [structure(rng, cls) for _ in range(rng.randint(0, 4))] if rng.random() < 0.5 else None
        op = rng.choice(["gram", "gram", "pairs", "diag", "call", "prepared", "mixed", "extended", "twin"])
        normalize, jobs = rng.random() < 0.7, n_jobs(rng)
        index = index_pairs(rng, len(X)) if op == "pairs" else None
        current["input"] = (
            f"{cls.__name__}(**{shown!r}).{op}(X={[str(x) for x in X]}, Y={Y and [str(y) for y in Y]}, "
            f"normalize={normalize}, n_jobs={jobs!r}, index={index!r})"
        )
        try:
            if op in ("prepared", "mixed", "extended"):
                X = kernel.prepare(X)
                if op == "mixed" and Y is not None and rng.random() < 0.5:
                    X, Y = Y, X
                if op == "extended":
                    try:
                        X.structures.extend([structure(rng, cls) for _ in range(rng.randint(1, 3))])
                    except (AttributeError, TypeError):
                        pass  # immutable
                    current["input"] += f" after extending the prepared X to {[str(x) for x in X.structures]}"
            elif op == "twin":
                twin = type(kernel)(**kernel.get_params())
                twin.gram([structure(rng, cls) for _ in range(3)])
                kernel.gram([structure(rng, cls) for _ in range(3)])
                X = twin.prepare(X)
            if op == "pairs":
                result = kernel.pairs(X, index, normalize=normalize, n_jobs=jobs)
            elif op == "diag":
                result = kernel.diag(X, n_jobs=jobs)
            elif op == "call":
                if len(X) < 2:
                    return "refused"
                result = kernel(X[0], X[1], normalize=normalize)
            else:
                result = kernel.gram(X, Y, normalize=normalize, n_jobs=jobs)
        except ConvKernelsError:
            return "refused"
        try:
            return compare(kernel, type(kernel)(**kernel.get_params()), op, result, X, Y, index, normalize)
        except ConvKernelsError as error:
            raise Wrong(f"the call gave values, but a fresh kernel refuses its structures: {error}") from None

    def compare(kernel, fresh, op, result, X, Y, index, normalize):
        xs = structures_of(X)
        if op == "pairs":
            expected = [fresh.gram([xs[i]], [xs[j]], normalize=normalize, n_jobs=1)[0, 0] for i, j in index]
        elif op == "diag":
            normalize, expected = False, [fresh.gram([x], normalize=False, n_jobs=1)[0, 0] for x in xs]
        elif op == "call":
            expected = fresh.gram([xs[0]], [xs[1]], normalize=normalize)[0, 0]
        else:
            expected = fresh.gram(xs, None if Y is None else structures_of(Y), normalize=normalize, n_jobs=1)
            if Y is None and not np.array_equal(result, np.asarray(result).T):
                raise Wrong("asymmetric Gram")
        check(kernel, result, normalize, expected)
        return "accepted"

    return run


def cli_target():
    """Random argument lists of the command line over real sample files, in this process:
    an exception out of ``main`` is a traceback ("other"); an exit status 0 that changed an
    input, or a failed run that changed an earlier output or left a new or temporary file,
    is "wrong"; argparse's refusals (status 2) and the package's (1) are "refused"."""
    import contextlib
    import io

    from spacy_convkernels.cli import main

    folder = Path(os.environ["FUZZ_WORKDIR"])
    data = ROOT / "spacy_convkernels" / "data"
    inputs = folder / "inputs"
    if not inputs.exists():
        inputs.mkdir()
        shutil.copy(KLP_SAMPLE, inputs / "small.klp.gz")
        shutil.copytree(data / "bionlp-st-2013-ge-sample", inputs / "standoff")
        shutil.copy(data / "relations-sample" / "relations.jsonl", inputs / "relations.jsonl")
        shutil.copy(data / "sample-parses" / "parses.spacy", inputs / "parses.spacy")
        trees = [tree.strip() for line in _klp_lines()[:12] for tree in TREE_IN_KLP.findall(line.decode())[:1]]
        (inputs / "trees.txt").write_text("\n".join(trees) + "\n", encoding="utf-8")
        (inputs / "trees.jsonl").write_text("".join(json.dumps({"grct": t}) + "\n" for t in trees), encoding="utf-8")
        with contextlib.redirect_stderr(io.StringIO()):
            main(["nystroem", "fit", str(inputs / "trees.txt"), str(inputs / "model.npz"), "--n-components", "4"])
        (inputs / "labels.txt").write_text("a\nb\n" * 6, encoding="utf-8")
        (inputs / "bad.txt").write_text("(S (NP x)\n", encoding="utf-8")
    originals = {path: path.read_bytes() for path in inputs.rglob("*") if path.is_file()}
    outputs = folder / "outputs"
    files = [str(path) for path in originals] + [str(inputs), str(inputs / "standoff"), str(folder / "absent.txt")]
    klp, txt, jsonl = inputs / "small.klp.gz", inputs / "trees.txt", inputs / "trees.jsonl"
    corpora = [klp, txt, jsonl]
    commands = {  # positional arguments ("in": fitting inputs; "out": output suffixes), options
        "convert": (
            [("in", [klp, inputs / "standoff", inputs / "relations.jsonl"]), ("out", [".spacy"])],
            ["--dev", "--dev-every", "--lang", "--format", "--skip-errors"],
        ),
        "trees": (
            [("in", [inputs / "parses.spacy"])],
            ["-o", "--representations", "--format", "--batch-size", "--quiet"],
        ),
        "gram": (
            [("in", corpora), ("out", [".npy"])],
            ["--against", "--float32", "--block-size", "--quiet", "--representation", "--kernel", "--lam"],
        ),
        "nystroem fit": (
            [("in", corpora), ("out", [".npz"])],
            ["--n-components", "--landmark-init", "--random-state", "--quiet", "--kernel", "--mu"],
        ),
        "nystroem transform": (
            [("in", [inputs / "model.npz"]), ("in", corpora), ("out", [".npy", ".bin"])],
            ["--float32", "--n-jobs", "--quiet"],
        ),
        "explain": ([], ["--corpus", "-o", "--top", "--kernel", "--representation", "--terminal-factor"]),
        "evaluate qc": ([("in", [klp]), ("in", [klp])], ["--representation", "--C", "--quiet", "--kernel"]),
        "plot": (
            [("in", corpora), ("out", [".png", ".svg", ".pdf"])],
            ["--labels", "--sample", "--random-state", "--kernel", "--no-normalize"],
        ),
        "lexicon": (
            [("in", [inputs / "standoff"]), ("out", [""])],
            ["--min-count", "--min-precision", "--no-shapes", "--skip-errors", "--model"],
        ),
    }
    option_files = {
        "--dev": ("out", [".spacy"]),
        "-o": ("out", [".txt", ".jsonl", ".html", ".svg"]),
        "--against": ("in", corpora),
        "--corpus": ("in", corpora),
        "--labels": ("in", [inputs / "labels.txt"]),
    }
    flags = {"--float32", "--quiet", "--skip-errors", "--no-shapes", "--no-normalize"}
    values = {
        "--format": ["klp", "standoff", "relations-jsonl", "jsonl", "lines", "xml"],
        "--kernel": ["ptk", "sst", "st", "sptk", "csptk", "zz"],
        "--representation": ["grct", "lct", "loct", "cgrct", "clct", "xyz"],
        "--representations": ["grct", "lct xyz"],
        "--landmark-init": ["uniform", "kmeans++", "pivoted_cholesky", "ridge_leverage", "random"],
        "--lang": ["en", "de", "zz", ""],
        "--model": ["en_core_web_zz", str(inputs)],
    }
    numbers = ["1", "2", "3", "4", "0.4", "0", "-1", "1e308", "nan", "x"]

    def path(rng, kind, choices, roles):
        """A file for a positional or an option: mostly one that fits, sometimes any file of
        the workspace or an earlier output; its role ("in" or "out") is remembered."""
        if rng.random() < 0.1:
            chosen = rng.choice(files + [str(outputs / "earlier.npy")])
        elif kind == "in":
            chosen = str(rng.choice(choices))
        else:
            chosen = str(outputs / (rng.choice(["out", "earlier", "sub/out", "dev"]) + rng.choice(choices)))
        roles.setdefault(chosen, set()).add(kind)
        return chosen

    def arguments(rng):
        command = rng.choice(list(commands))
        positionals, options = commands[command]
        argv, roles = command.split(), {}
        if command == "explain":
            argv += [rng.choice(["0", "1", "(S (A b))", "99"]), rng.choice(["2", "(S (A c))", "-1"])]
        argv += [path(rng, kind, choices, roles) for kind, choices in positionals]
        for option in rng.sample(options, rng.randint(0, min(3, len(options)))):
            argv.append(option)
            if option in option_files:
                argv.append(path(rng, *option_files[option], roles))
            elif option not in flags:
                argv += rng.choice(values.get(option, numbers)).split()
        if rng.random() < 0.03:
            del argv[rng.randrange(len(argv))]
        return argv, roles

    def run(rng, index, current):
        shutil.rmtree(outputs, ignore_errors=True)
        outputs.mkdir()
        for suffix in (".npy", ".spacy", ".npz", ".txt", ".png", ".bin", ""):  # earlier outputs to keep or replace
            (outputs / f"earlier{suffix}").write_bytes(b"an earlier output")
        argv, roles = arguments(rng)
        current["input"] = " ".join(argv)
        before = {path: path.read_bytes() for path in outputs.rglob("*") if path.is_file()}
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            try:
                status = main(argv)
            except SystemExit as leaving:
                status = leaving.code
        changed = [path for path, content in originals.items() if not path.exists() or path.read_bytes() != content]
        for path in changed:  # for the next input
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(originals[path])
        leftovers = [path for path in folder.rglob(".*") if path.is_file()]
        lost = [path for path in changed if status != 0 or "out" not in roles.get(str(path), ())]
        if lost:  # a file changed that the run was not asked to write, or a failed run changed one
            raise Wrong(f"status {status} and the files {[str(p) for p in lost]} changed")
        if leftovers:
            raise Wrong(f"status {status} left temporary files {[str(p) for p in leftovers]}")
        if status == 0:
            return "accepted"
        after = {path: path.read_bytes() for path in outputs.rglob("*") if path.is_file()}
        if after != before:
            raise Wrong(f"status {status} changed the outputs: {sorted(set(after) ^ set(before))} or their bytes")
        return "refused"

    return run


SETUPS = {
    "cli": cli_target,
    "tree": tree_target,
    "klp": klp_target,
    "conllu": conllu_target,
    "penman": penman_target,
    "kernels": kernels_target,
}


def input_rng(seed: int, target: str, index: int) -> random.Random:
    return random.Random(f"{seed}:{target}:{index}")


# --- the child: runs inputs start..stop-1, publishing progress in a shared page ---------------


def child(target: str, seed: int, start: int, stop: int, page_path: str) -> None:
    import resource

    import numpy as np

    resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))  # a runaway allocation fails instead of swapping
    warnings.simplefilter("ignore")
    with open(page_path, "r+b") as handle:
        page = mmap.mmap(handle.fileno(), PAGE)
    state = np.frombuffer(page, dtype=np.int64, count=1 + len(COUNTERS))  # [current index, counters...]
    run = SETUPS[target]()
    findings = collections.Counter()
    for index in range(start, stop):
        state[0] = index
        current = _Note(page)
        try:
            outcome = run(input_rng(seed, target, index), index, current)
        except Exception as error:  # every exception is a finding to count: that is the point of the run
            outcome = "wrong" if isinstance(error, Wrong) else "other"
            finding = f"{outcome}: {type(error).__name__} at {_where(error)}"
            findings[finding] += 1
            if findings[finding] <= EVENTS_PER_FINDING:
                event = dict(
                    kind=outcome,
                    finding=finding,
                    index=index,
                    input=current.get("input", "")[:600],
                    error=f"{type(error).__name__}: {error}"[:400],
                )
                print(json.dumps(event), flush=True)
        state[1 + COUNTERS.index(outcome)] += 1
    print(json.dumps(dict(kind="tally", findings=findings)), flush=True)
    state[0] = stop


class _Note(dict):
    """The description of the input being tried, also written to the shared page, where
    the parent finds it when the child dies."""

    def __init__(self, page):
        super().__init__()
        self.page = page

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        data = value.encode("utf-8", "backslashreplace")[: PAGE - NOTE_AT - 4]
        self.page[NOTE_AT : NOTE_AT + 4 + len(data)] = len(data).to_bytes(4, "little") + data


def _where(error) -> str:
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return "" if tb is None else f"{Path(tb.tb_frame.f_code.co_filename).name}:{tb.tb_lineno}"


def replay(target: str, seed: int, index: int) -> None:
    warnings.simplefilter("ignore")
    current = {}
    with tempfile.TemporaryDirectory(prefix="fuzz-") as folder:
        os.environ["FUZZ_WORKDIR"] = folder
        try:
            outcome = SETUPS[target]()(input_rng(seed, target, index), index, current)
        finally:
            print(f"{target}:{index}: {current.get('input')}")
    print(outcome)


# --- the parent: children per chunk of inputs, restarted past crashes and hangs -----------------


class Chunk:
    """Inputs start..stop-1 of one target, run by successive children."""

    def __init__(self, target, start, stop, args, totals, events, tallies):
        self.target, self.next, self.stop, self.args = target, start, stop, args
        self.totals, self.events, self.tallies = totals, events, tallies
        self.page_file = tempfile.NamedTemporaryFile(prefix="fuzz-page-", suffix=".bin")
        self.folder = tempfile.mkdtemp(prefix="fuzz-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
        self.process = None
        self.findings = 0  # crashes and hangs

    def _spawn(self):
        self.page_file.seek(0)
        self.page_file.write((-1).to_bytes(8, "little", signed=True) + bytes(PAGE - 8))
        self.page_file.flush()
        self.page = mmap.mmap(self.page_file.fileno(), PAGE)
        command = [
            sys.executable,
            __file__,
            "--child",
            self.target,
            "--seed",
            str(self.args.seed),
            "--start",
            str(self.next),
            "--stop",
            str(self.stop),
            "--page",
            self.page_file.name,
        ]
        self.stderr = tempfile.TemporaryFile()
        # OpenMP threads that sleep rather than spin at barriers: the engine's many tiny calls
        # with n_jobs > 1 are ten times slower with spinning threads when children share the cores
        env = {"OMP_WAIT_POLICY": "PASSIVE", **os.environ, "FUZZ_WORKDIR": self.folder}  # where inputs are written
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=self.stderr, text=True, start_new_session=True, env=env
        )
        self.reader = threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True)
        self.reader.start()
        self.last_index, self.last_change = -1, time.monotonic()

    def _read(self, stream):
        for line in stream:
            event = json.loads(line)
            if event["kind"] == "tally":
                self.tallies[self.target].update(event["findings"])
            else:
                event["target"] = self.target
                self.events.append(event)

    def _state(self):
        values = [int.from_bytes(self.page[8 * k : 8 * k + 8], "little", signed=True) for k in range(1 + len(COUNTERS))]
        return values[0], dict(zip(COUNTERS, values[1:]))

    def _finish_child(self, finding=None):
        """Add the child's counters; count ``finding`` ('crash' or 'hang') at its current input."""
        self.reader.join(timeout=5)
        index, counters = self._state()
        for name, value in counters.items():
            self.totals[self.target][name] += value
        if finding:
            if index < 0:
                self.stderr.seek(0)
                sys.exit(
                    f"the {self.target} child failed before its first input:\n"
                    f"{self.stderr.read().decode(errors='replace')[-3000:]}"
                )
            self.totals[self.target][{"crash": "crashes", "hang": "hangs"}[finding]] += 1
            code = self.process.returncode
            error = (
                (f"signal {signal.Signals(-code).name}" if code < 0 else f"exit status {code}")
                if finding == "crash"
                else f"no progress for {self.args.timeout} s"
            )
            size = int.from_bytes(self.page[NOTE_AT : NOTE_AT + 4], "little")
            note = self.page[NOTE_AT + 4 : NOTE_AT + 4 + size].decode("utf-8", "replace")
            self.tallies[self.target][f"{finding}: {error}"] += 1
            self.events.append(
                dict(
                    kind=finding,
                    target=self.target,
                    finding=f"{finding}: {error}",
                    index=index,
                    error=error,
                    input=note,
                )
            )
            self.findings += 1
            self.next = index + 1 if self.findings < self.args.max_crashes else self.stop  # else: give up the chunk
        else:
            self.next = self.stop
        self.page.close()
        self.process = None

    def step(self) -> bool:
        """Advance; False once every input of the chunk has been tried."""
        if self.process is None:
            if self.next >= self.stop:
                shutil.rmtree(self.folder, ignore_errors=True)
                return False
            self._spawn()
        code = self.process.poll()
        if code is None:
            index, _ = self._state()
            now = time.monotonic()
            if index != self.last_index:
                self.last_index, self.last_change = index, now
            elif now - self.last_change > self.args.timeout and index >= 0:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
                self._finish_child("hang")
            return True
        self._finish_child(None if code == 0 else "crash")
        if self.next < self.stop:
            return True
        shutil.rmtree(self.folder, ignore_errors=True)
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=20000, help="inputs per target")
    parser.add_argument("--targets", default=",".join(TARGETS), help=f"comma-separated, of {', '.join(TARGETS)}")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="child processes at once")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds without progress that make a hang")
    parser.add_argument(
        "--max-crashes",
        type=int,
        default=50,
        help="crashes and hangs after which a chunk of inputs is given up (each costs a new child)",
    )
    parser.add_argument("--show", type=int, default=3, help="reproducers printed per target and kind")
    parser.add_argument("--replay", metavar="TARGET:INDEX", help="run one input in this process, with its traceback")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--start", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--stop", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--page", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.seed, args.start, args.stop, args.page)
    if args.replay:
        target, index = args.replay.rsplit(":", 1)
        return replay(target, args.seed, int(index))
    targets = [t.strip() for t in args.targets.split(",") if t.strip()]
    unknown = set(targets) - set(TARGETS)
    if unknown:
        parser.error(f"unknown targets {sorted(unknown)}; known: {', '.join(TARGETS)}")
    names = (*COUNTERS, "crashes", "hangs")
    totals = {t: dict.fromkeys(names, 0) for t in targets}
    events = []
    tallies = {t: collections.Counter() for t in targets}  # finding -> inputs, per target
    seconds = dict.fromkeys(targets, 0.0)
    pieces = max(1, args.workers)
    chunks = [
        Chunk(t, args.examples * k // pieces, args.examples * (k + 1) // pieces, args, totals, events, tallies)
        for t in targets
        for k in range(pieces)
    ]
    running, started = [], time.monotonic()
    while chunks or running:
        while chunks and len(running) < args.workers:
            running.append((chunks.pop(0), time.monotonic()))
        still = []
        for chunk, since in running:
            if chunk.step():
                still.append((chunk, since))
            else:
                seconds[chunk.target] += time.monotonic() - since
        running = still
        time.sleep(0.05)
    report(targets, totals, seconds, events, tallies, args, time.monotonic() - started)


def report(targets, totals, seconds, events, tallies, args, wall) -> None:
    header = ("target", "inputs", "accepted", "refused", "crashes", "hangs", "other exc.", "wrong", "child s")
    rows = []
    for t in targets:
        c = totals[t]
        inputs = sum(c[k] for k in COUNTERS) + c["crashes"] + c["hangs"]
        rows.append(
            (
                t,
                inputs,
                c["accepted"],
                c["refused"],
                c["crashes"],
                c["hangs"],
                c["other"],
                c["wrong"],
                round(seconds[t], 1),
            )
        )
    rows.append(("TOTAL", *[round(sum(r[k] for r in rows), 1) for k in range(1, len(header))]))
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    print(
        f"fuzz run: seed {args.seed}, {args.examples} inputs per target, {args.workers} workers, "
        f"timeout {args.timeout} s, {wall:.0f} s wall"
    )
    for row in (header, *rows):
        print("  ".join(str(x).rjust(w) for x, w in zip(row, widths)))
    for t, row in zip(targets, rows):
        if row[1] < args.examples:
            print(
                f"{t}: {args.examples - row[1]} inputs not tried (chunks given up after "
                f"--max-crashes {args.max_crashes})"
            )
    if any(tallies.values()):
        print("\nfindings by kind, exception and place (the inputs of a child that crashed are not counted here):")
    for t in targets:
        for finding, count in tallies[t].most_common():
            print(f"\n{t}: {count} x {finding}")
            found = sorted(
                (e for e in events if e["target"] == t and e["finding"] == finding), key=lambda e: e["index"]
            )
            for e in found[: args.show]:
                print(
                    f"  {t}:{e['index']} {e['error']}\n    input: {e['input']}\n"
                    f"    replay: python bench/fuzz.py --seed {args.seed} --replay {t}:{e['index']}"
                )
    totals_line = rows[-1]
    print(
        f"\ninputs {totals_line[1]}, crashes {totals_line[4]}, hangs {totals_line[5]}, "
        f"non-package exceptions {totals_line[6]}, wrong values {totals_line[7]}"
    )


if __name__ == "__main__":
    main()
