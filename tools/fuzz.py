"""Long fuzzing run: random inputs through the bracket parser, the corpus readers, the
kernels, the command line and saved models, counting crashes, hangs and exceptions that
are not the package's own.

    python tools/fuzz.py                                    # default counts: 20,000 per target
    python tools/fuzz.py --examples 2000 --targets tree,kernels
    python tools/fuzz.py --replay kernels:1234              # one input again, in this process
    FUZZ_TMPFS=1 unshare -rm python tools/fuzz.py --replay disk:12   # a disk input on a tmpfs

Targets: tree, klp, conllu, penman, kernels (in-process calls); cli (random command lines,
in process); outputs (command lines whose outputs are special files, a character device,
a FIFO, a link to /dev/stdout, a 0600 file, or inside an input folder), disk (command
lines on a full disk: a small tmpfs in ``unshare -rm`` where user namespaces are allowed,
else RLIMIT_FSIZE), sigterm (command lines sent SIGTERM mid-run), each command line of
these three in a forked child; models (damaged saved pipelines and Nystroem .npz files,
loaded and used). sigterm and models default to fewer inputs (DEFAULT_EXAMPLES). Their
properties are in each target's docstring.

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
import functools
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
TARGETS = (
    "tree",
    "klp",
    "conllu",
    "penman",
    "kernels",
    "cli",
    "outputs",
    "disk",
    "sigterm",
    "models",
    "links",
    "sidecars",
    "bombs",
)
COUNTERS = ("accepted", "refused", "other", "wrong")  # kept by the child in the shared page, after the index
NOTE_AT, PAGE = 64, 4096  # where in the page the child writes the input it is on (its description)
TREE_IN_KLP = re.compile(r"\|BT(?::[^|]*)?\|(.*?)\|ET\|")
# the slow targets (else 20,000 inputs); links, sidecars and bombs: 20,000 together
DEFAULT_EXAMPLES = {"sigterm": 2000, "models": 5000, "links": 8000, "sidecars": 8000, "bombs": 4000}
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


def _wrong(where: str, message: str) -> Wrong:
    """A ``Wrong`` counted under ``where`` (which property) rather than its line."""
    error = Wrong(message)
    error.where = where
    return error


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
    sys.path.insert(0, str(ROOT / "tests"))
    from random_trees import ODD_BUT_VALID_PAIRS, ODD_PARAMETERS, bad_index_pairs

    weird = ODD_PARAMETERS
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
            return rng.choice(bad_index_pairs(n) + ODD_BUT_VALID_PAIRS)
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


def _cli_workspace(*, pipeline=False):
    """The command-line targets' workspace in FUZZ_WORKDIR (inputs built once per child) and
    their argument tables; with ``pipeline``, also a tiny spaCy pipeline with a parser in
    ``models/parser`` that ``--model`` and ``evaluate relations`` name."""
    folder = Path(os.environ["FUZZ_WORKDIR"])
    data = ROOT / "spacy_convkernels" / "data"
    inputs, parser = folder / "inputs", folder / "models" / "parser"
    if not inputs.exists():
        inputs.mkdir()
        shutil.copy(KLP_SAMPLE, inputs / "small.klp.gz")
        shutil.copytree(data / "bionlp-st-2013-ge-sample", inputs / "standoff")
        shutil.copy(data / "relations-sample" / "relations.jsonl", inputs / "relations.jsonl")
        shutil.copy(data / "sample-parses" / "parses.spacy", inputs / "parses.spacy")
        trees = [tree.strip() for line in _klp_lines()[:12] for tree in TREE_IN_KLP.findall(line.decode())[:1]]
        (inputs / "trees.txt").write_text("\n".join(trees) + "\n", encoding="utf-8")
        (inputs / "trees.jsonl").write_text("".join(json.dumps({"grct": t}) + "\n" for t in trees), encoding="utf-8")
        fit = ["nystroem", "fit", str(inputs / "trees.txt"), str(inputs / "model.npz"), "--n-components", "4"]
        if _forked(fit).code != 0:  # in a child process: this one stays free of OpenMP threads, for fork
            raise RuntimeError(f"the workspace's {' '.join(fit)} failed")
        (inputs / "labels.txt").write_text("a\nb\n" * 6, encoding="utf-8")
        (inputs / "bad.txt").write_text("(S (NP x)\n", encoding="utf-8")
    if pipeline and not parser.exists():
        _tiny_parser(inputs / "parses.spacy", parser)
    ws = argparse.Namespace(folder=folder, inputs=inputs, outputs=folder / "outputs", parser=parser)
    watched = [inputs, parser] if pipeline else [inputs]
    ws.originals = {path: path.read_bytes() for top in watched for path in top.rglob("*") if path.is_file()}
    ws.files = [str(path) for path in ws.originals if inputs in path.parents] + [
        str(inputs),
        str(inputs / "standoff"),
        str(folder / "absent.txt"),
    ]
    klp, txt, jsonl = inputs / "small.klp.gz", inputs / "trees.txt", inputs / "trees.jsonl"
    corpora = [klp, txt, jsonl]
    ws.commands = {  # positional arguments ("in": fitting inputs; "out": output suffixes), options
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
    ws.option_files = {
        "--dev": ("out", [".spacy"]),
        "-o": ("out", [".txt", ".jsonl", ".html", ".svg"]),
        "--against": ("in", corpora),
        "--corpus": ("in", corpora),
        "--labels": ("in", [inputs / "labels.txt"]),
    }
    ws.flags = {"--float32", "--quiet", "--skip-errors", "--no-shapes", "--no-normalize"}
    ws.values = {
        "--format": ["klp", "standoff", "relations-jsonl", "jsonl", "lines", "xml"],
        "--kernel": ["ptk", "sst", "st", "sptk", "csptk", "zz"],
        "--representation": ["grct", "lct", "loct", "cgrct", "clct", "xyz"],
        "--representations": ["grct", "lct xyz"],
        "--landmark-init": ["uniform", "kmeans++", "pivoted_cholesky", "ridge_leverage", "random"],
        "--lang": ["en", "de", "zz", ""],
        "--model": ["en_core_web_zz", str(inputs)],
    }
    ws.numbers = ["1", "2", "3", "4", "0.4", "0", "-1", "1e308", "nan", "x"]
    if pipeline:  # commands that read a pipeline folder: outputs may be put inside it
        ws.commands["trees"] = ([("in", [inputs / "parses.spacy", txt])], [*ws.commands["trees"][1], "--model"])
        ws.commands["evaluate relations"] = (
            [("in", [parser]), ("in", [inputs / "relations.jsonl", inputs / "standoff"])],
            ["--output", "--quiet"],
        )
        ws.option_files["--output"] = ("out", [".json"])
        ws.values["--model"] = [str(parser), str(parser), "en_core_web_zz"]
    return ws


def _tiny_parser(docbin, folder):
    """A blank English pipeline with an initialized (untrained) tagger and parser and a
    lemmatizer that keeps each word, saved to ``folder``: enough for ``trees --model``."""
    import spacy
    from spacy.lookups import Lookups
    from spacy.tokens import DocBin
    from spacy.training import Example

    nlp = spacy.blank("en")
    docs = list(DocBin().from_disk(docbin).get_docs(nlp.vocab))
    nlp.add_pipe("tagger")
    nlp.add_pipe("parser")
    nlp.initialize(lambda: [Example(doc.copy(), doc) for doc in docs[:10]])
    lookups = Lookups()
    lookups.add_table("lemma_lookup", {})  # empty: each lemma is its word
    nlp.add_pipe("lemmatizer", config={"mode": "lookup"}).initialize(lookups=lookups)
    folder.parent.mkdir(parents=True, exist_ok=True)
    nlp.to_disk(folder)


def _cli_arguments(rng, ws, output=None):
    """A random argument list over the workspace and the roles of its paths ("in", "out");
    ``output(rng, suffixes, roles)``, if given, chooses the output paths."""
    earlier = str(ws.outputs / "earlier.npy")

    def path(kind, choices, roles):
        """A file for a positional or an option: mostly one that fits, sometimes any file of
        the workspace or an earlier output; its role ("in" or "out") is remembered."""
        if rng.random() < 0.1:
            chosen = rng.choice(ws.files + [earlier])
        elif kind == "in":
            chosen = str(rng.choice(choices))
        elif output is not None:
            chosen = output(rng, choices, roles)
        else:
            chosen = str(ws.outputs / (rng.choice(["out", "earlier", "sub/out", "dev"]) + rng.choice(choices)))
        roles.setdefault(chosen, set()).add(kind)
        return chosen

    command = rng.choice(list(ws.commands))
    positionals, options = ws.commands[command]
    argv, roles = command.split(), {}
    if command == "explain":
        argv += [rng.choice(["0", "1", "(S (A b))", "99"]), rng.choice(["2", "(S (A c))", "-1"])]
    if output is None:
        argv += [path(kind, choices, roles) for kind, choices in positionals]
    chosen = rng.sample(options, rng.randint(0, min(3, len(options))))
    if output is not None:  # --model (often) and the options first: outputs may then go in the folders read
        if "--model" in options and "--model" not in chosen and rng.random() < 0.5:
            chosen.append("--model")
        chosen.sort(key=lambda option: option != "--model")
        roles_first = [(kind, choices) for kind, choices in positionals if kind == "in"]
        argv += [path(kind, choices, roles) for kind, choices in roles_first]
    for option in chosen:
        argv.append(option)
        if option in ws.option_files:
            argv.append(path(*ws.option_files[option], roles))
        elif option not in ws.flags:
            argv += rng.choice(ws.values.get(option, ws.numbers)).split()
            if option == "--model" and Path(argv[-1]).is_dir():
                roles.setdefault(argv[-1], set()).add("in")
    if output is not None:  # then the positional outputs, after the inputs and options
        positional_inputs = len([1 for kind, _ in positionals if kind == "in"])
        outs = [path(kind, choices, roles) for kind, choices in positionals if kind == "out"]
        options_part = argv[len(command.split()) + positional_inputs :]
        argv = argv[: len(command.split()) + positional_inputs] + outs + options_part
    if rng.random() < 0.03:
        del argv[rng.randrange(len(argv))]
    return argv, roles


EARLIER = b"an earlier output"


def _fresh_outputs(ws):
    ws.outputs.mkdir(exist_ok=True)
    for path in ws.outputs.iterdir():
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
    for suffix in (".npy", ".spacy", ".npz", ".txt", ".png", ".bin", ""):  # earlier outputs to keep or replace
        (ws.outputs / f"earlier{suffix}").write_bytes(EARLIER)


def _regular_files(top):
    return {path: path.read_bytes() for path in top.rglob("*") if path.is_file() and not path.is_symlink()}


def _verify(ws, status, roles, before):
    """The properties of every command-line run: an input changed only as an output of a
    successful run, no temporary file left, a failed run leaves the outputs as they were."""
    changed = [path for path, content in ws.originals.items() if not path.exists() or path.read_bytes() != content]
    for path in changed:  # for the next input
        if path.is_dir():
            shutil.rmtree(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(ws.originals[path])
    leftovers = [path for path in ws.folder.rglob(".*") if path.is_file()]
    lost = [path for path in changed if status != 0 or "out" not in roles.get(str(path), ())]
    if lost:  # a file changed that the run was not asked to write, or a failed run changed one
        raise _wrong("an input changed", f"status {status} and the files {[str(p) for p in lost]} changed")
    if leftovers:
        for path in leftovers:
            path.unlink()
        raise _wrong("temporary files left", f"status {status} left temporary files {[str(p) for p in leftovers]}")
    if status != 0:
        after = _regular_files(ws.outputs)
        if after != before:
            changed = sorted(str(p) for p in set(after) | set(before) if after.get(p) != before.get(p))
            raise _wrong("a failed run changed outputs", f"status {status} changed the outputs {changed}")


def cli_target():
    """Random argument lists of the command line over real sample files, in this process:
    an exception out of ``main`` is a traceback ("other"); an exit status 0 that changed an
    input, or a failed run that changed an earlier output or left a new or temporary file,
    is "wrong"; argparse's refusals (status 2) and the package's (1) are "refused"."""
    import contextlib
    import io

    from spacy_convkernels.cli import main

    ws = _cli_workspace()

    def run(rng, index, current):
        _fresh_outputs(ws)
        argv, roles = _cli_arguments(rng, ws)
        current["input"] = " ".join(argv)
        before = _regular_files(ws.outputs)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            try:
                status = main(argv)
            except SystemExit as leaving:
                status = leaving.code
        _verify(ws, status, roles, before)
        return "accepted" if status == 0 else "refused"

    return run


# --- command-line runs in a forked child: special outputs, full disks, SIGTERM ---------------


class Escaped(Exception):
    """A traceback that a command-line run printed (an exception out of ``main``)."""


def _escaped(stderr: str) -> Escaped:
    """An ``Escaped`` named after the exception in ``stderr``'s traceback, at its last frame."""
    lines = stderr[stderr.rindex("Traceback") :].splitlines()
    last = lines[-1] if lines else "?"
    name = re.match(r"[\w.]+", last)
    frames = re.findall(r'File "([^"]+)", line (\d+)', "\n".join(lines))
    error = type((name.group(0) if name else "Traceback").rsplit(".", 1)[-1], (Escaped,), {})(last)
    error.where = f"{Path(frames[-1][0]).name}:{frames[-1][1]}" if frames else "?"
    return error


class _Drain(threading.Thread):
    """Reads a file descriptor to its end (every writer closed), keeping the bytes."""

    def __init__(self, fd):
        super().__init__(daemon=True)
        self.fd, self.data = fd, bytearray()
        self.start()

    def run(self):
        try:
            while chunk := os.read(self.fd, 1 << 16):
                self.data += chunk
        finally:
            os.close(self.fd)


# code: exit status, or -signal; peak: the child's peak resident memory in MiB (None in process)
Ran = collections.namedtuple("Ran", "code stdout stderr seconds peak", defaults=(None,))


def _forked(argv, *, fsize=None, term_after=None, close=(), deadline=120.0) -> Ran:
    """``main(argv)`` in a forked child with standard output and error read through pipes:
    with ``fsize``, under that RLIMIT_FSIZE (SIGXFSZ ignored, so writes fail with EFBIG);
    with ``term_after``, sent SIGTERM after that many seconds. The child closes ``close``
    (descriptors of this process) first; an exception out of ``main`` prints its traceback
    and exits with status 99. This process must not have run OpenMP code (a forked child
    of a process with OpenMP threads can hang in its first parallel region)."""
    import resource

    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 99
        try:
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            for fd in (out_r, out_w, err_r, err_w, *close):
                os.close(fd)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            if fsize is not None:
                signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
                resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
            code = _cli_status(argv)
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
    os.close(out_w)
    os.close(err_w)
    drains = [_Drain(out_r), _Drain(err_r)]
    if term_after is not None:
        time.sleep(term_after)
        os.kill(pid, signal.SIGTERM)
    while True:
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() - started > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise Wrong(f"no exit after {deadline:.0f} s")
        time.sleep(0.002)
    seconds = time.monotonic() - started
    for drain in drains:
        drain.join(timeout=10)
    code = os.waitstatus_to_exitcode(status)
    stderr = bytes(drains[1].data).decode("utf-8", "replace")
    return Ran(code, bytes(drains[0].data), stderr, seconds, usage.ru_maxrss / 1024)


def _cli_status(argv) -> int:
    from spacy_convkernels.cli import main

    try:
        return main(argv)
    except SystemExit as leaving:
        return leaving.code if isinstance(leaving.code, int) else int(leaving.code is not None)


def _guarded_run(argv: list[str], guarded: dict, **exits) -> tuple:
    """Run ``argv`` forked: (the run, the problems found: its exit judged by
    :func:`_judge_exit` with ``exits``, the ``guarded`` files' changes)."""
    ran = _forked(argv)
    problems = []
    try:
        _judge_exit(ran, **exits)
    except Wrong as wrong:
        problems.append(str(wrong))
    changed = _changed(guarded)
    if changed:
        problems.append(f"changed {changed}")
    return ran, problems


def _judge_exit(ran, *, allowed=(0, 1, 2)):
    """A traceback is "other"; death by a signal or an unexpected status is "wrong"; a
    failure must end with one error line."""
    if "Traceback (most recent call last)" in ran.stderr:
        raise _escaped(ran.stderr)
    if ran.code < 0 and ran.code not in allowed:
        name = signal.Signals(-ran.code).name
        raise _wrong(f"killed by {name}", f"killed by {name}; stderr {ran.stderr[-300:]!r}")
    if ran.code not in allowed:
        raise _wrong(f"exit status {ran.code}", f"exit status {ran.code}; stderr {ran.stderr[-300:]!r}")
    if ran.code == 1:
        lines = ran.stderr.strip().splitlines()
        if not lines or ": error: " not in lines[-1] or sum(": error: " in line for line in lines) != 1:
            raise _wrong("status 1 without one error line", f"stderr {ran.stderr[-300:]!r}")


def _all_of(*checks):
    """Run every check; raise one ``Wrong`` naming all that failed (a traceback still wins)."""
    failed = []
    for check in checks:
        try:
            check()
        except Wrong as wrong:
            failed.append(wrong)
    if failed:
        raise _wrong(" + ".join(getattr(w, "where", "?") for w in failed), "; ".join(map(str, failed)))


def _preload():
    """The modules the commands import on first use, imported here once so that each forked
    child starts at once (no kernel code runs: see ``_forked``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot  # noqa: F401
    import sklearn.svm  # noqa: F401
    import spacy  # noqa: F401
    import tqdm  # noqa: F401

    import spacy_convkernels.approx  # noqa: F401
    import spacy_convkernels.corpora  # noqa: F401
    import spacy_convkernels.kernels  # noqa: F401


SPECIAL_OUTPUTS = ("null", "fifo", "stdout", "private", "in-input", "in-input")


def _under_inputs(ws):
    return [p for top in (ws.inputs, ws.parser) for p in top.rglob("*")]


def _inside(path, folder) -> bool:
    path, folder = Path(os.path.abspath(path)), Path(os.path.abspath(folder))
    return path == folder or folder in path.parents


def outputs_target():
    """Command-line runs (as the cli target's, in a forked child) whose outputs are special
    files or inside input folders: a character device like /dev/null (made with mknod in
    the workspace: the real /dev/null is never given, a run that replaced it would break
    the machine), a FIFO read by a thread, a symbolic link to /dev/stdout, a regular
    earlier output of mode 0600, a file inside an input folder of the run (the standoff
    corpus, the ``--model`` pipeline). "wrong": an input changed or a file created inside
    an input folder, a run that writes inside an input folder and succeeds, a special file
    no longer special (or the 0600 output of another mode), a successful run that gave its
    FIFO or standard output no bytes, a failed run that changed an earlier output, a
    leftover temporary file."""
    import stat

    ws = _cli_workspace(pipeline=True)
    _preload()
    can_mknod = True

    def special(rng, suffixes, roles, made):
        suffix = rng.choice(suffixes)
        kind = rng.choice(SPECIAL_OUTPUTS)
        if kind == "in-input":
            folders = [Path(p) for p, r in roles.items() if "in" in r and Path(p).is_dir()]
            folder = rng.choice(folders or [ws.inputs / "standoff", ws.parser])
            existing = sorted(p for p in folder.rglob("*") if p.is_file())
            return str(rng.choice([*existing[:4], folder / f"new{suffix}", folder / "sub" / f"new{suffix}"]))
        path = ws.outputs / f"{kind}{suffix}"
        if kind in made:
            return str(path)
        if kind == "null" and can_mknod:
            os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "stdout":
            path.symlink_to("/dev/stdout")
        else:  # private, or null without mknod
            kind, path = "private", ws.outputs / f"private{suffix}"
            path.write_bytes(EARLIER)
            path.chmod(0o600)
        made[kind] = path
        return str(path)

    def run(rng, index, current):
        _fresh_outputs(ws)
        made = {}
        argv, roles = _cli_arguments(rng, ws, output=lambda *a: special(*a, made))
        current["input"] = " ".join(argv)
        before = _regular_files(ws.outputs)
        watched = set(_under_inputs(ws))
        fifo, close = made.get("fifo"), []
        if fifo is not None:  # a reader draining it during the run, and a writer of ours so that it sees no end before
            reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
            ours = os.open(fifo, os.O_WRONLY)
            os.set_blocking(reader, True)
            close = [reader, ours]
            received = _Drain(reader)
        try:
            ran = _forked(argv, close=close)
        finally:
            if fifo is not None:
                os.close(ours)
        if fifo is not None:
            received.join(timeout=10)
            if received.is_alive():
                raise Wrong("the FIFO's reader saw no end of writing after the run")
        problems = []
        try:
            _judge_exit(ran)
        except Wrong as wrong:
            problems.append((wrong.where, str(wrong)))
        outs = [Path(p) for p, r in roles.items() if "out" in r]
        folders = [p for p, r in roles.items() if "in" in r and Path(p).is_dir()]  # the run's input folders
        created = sorted(set(_under_inputs(ws)) - watched, reverse=True)
        for path in created:  # for the next input
            shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
        inside = [str(o) for o in outs if any(_inside(o, folder) for folder in folders)]
        created = [str(p) for p in created if any(_inside(p, folder) for folder in folders)]
        if created:
            problems.append(("created inside an input folder", f"created {created}"))
        if ran.code == 0 and inside:
            problems.append(("accepted an output inside an input folder", f"accepted {inside}"))
        checks = {
            "null": lambda p: stat.S_ISCHR(p.lstat().st_mode),
            "fifo": lambda p: stat.S_ISFIFO(p.lstat().st_mode),
            "stdout": lambda p: p.is_symlink() and os.readlink(p) == "/dev/stdout",
            "private": lambda p: stat.S_IMODE(p.stat().st_mode) == 0o600,
        }
        for kind, path in made.items():
            if not (path.exists() or path.is_symlink()) or not checks[kind](path):
                problems.append((f"{kind} output changed kind or mode", f"{path.name} changed kind or mode"))
        if ran.code == 0 and fifo is not None and str(fifo) in map(str, outs) and not received.data:
            problems.append(("FIFO got 0 bytes", "the FIFO's reader received 0 bytes"))
        if ran.code == 0 and "stdout" in made and str(made["stdout"]) in map(str, outs) and not ran.stdout:
            problems.append(("stdout got 0 bytes", "standard output received 0 bytes"))
        try:
            _verify(ws, ran.code, {p: r - {"out"} if p in inside else r for p, r in roles.items()}, before)
        except Wrong as wrong:
            problems.insert(0, (wrong.where, str(wrong)))
        if problems:
            raise _wrong(
                " + ".join(sorted({key for key, _ in problems})),
                f"status {ran.code}: " + "; ".join(text for _, text in problems),
            )
        return "accepted" if ran.code == 0 else "refused"

    try:
        os.mknod(ws.folder / ".probe", stat.S_IFCHR | 0o666, os.makedev(1, 3))
        os.unlink(ws.folder / ".probe")
    except OSError:
        can_mknod = False  # not root: the null kind becomes a private one
    return run


def _mount_tmpfs(path, size):
    """A tmpfs of ``size`` bytes on ``path`` (needs a mount namespace: see ``Chunk._spawn``)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mount(b"none", os.fsencode(path), b"tmpfs", 0, f"size={size}".encode()) != 0:
        raise OSError(ctypes.get_errno(), f"mount tmpfs on {path}")


def _umount(path):
    import ctypes

    ctypes.CDLL(None, use_errno=True).umount2(os.fsencode(path), 2)  # MNT_DETACH


def disk_target():
    """The cli target's runs on a full disk, in a forked child: its outputs folder a small
    tmpfs (when the child runs in ``unshare -rm``, see ``Chunk._spawn``) or its file size
    limited by RLIMIT_FSIZE, either of a random size (log-uniform, most outputs hit it
    mid-write). A run must fail with status 1 and one error line (no traceback, no death by
    SIGBUS), leave earlier outputs byte-identical and no temporary file; a run that
    succeeds must write the same sizes as a run with room."""
    ws = _cli_workspace()
    _preload()
    tmpfs = os.environ.get("FUZZ_TMPFS") == "1"
    state = {"mounted": False}

    def reset(size=None):
        if state["mounted"]:
            _umount(ws.outputs)
            state["mounted"] = False
        ws.outputs.mkdir(exist_ok=True)
        if size is not None:
            _mount_tmpfs(ws.outputs, size)
            state["mounted"] = True
        _fresh_outputs(ws)

    def run(rng, index, current):
        argv, roles = _cli_arguments(rng, ws)
        mode = rng.choice(["tmpfs", "fsize"])
        mode = mode if tmpfs else "fsize"  # the same arguments either way, for --replay
        size = int(math.exp(rng.uniform(math.log(64), math.log(2 << 20))))
        if mode == "tmpfs":
            size += 8 * 4096  # the 7 earlier outputs take a page each
        current["input"] = f"{mode} {size}: {' '.join(argv)}"
        reset(size if mode == "tmpfs" else None)
        before = _regular_files(ws.outputs)
        ran = _forked(argv, fsize=size if mode == "fsize" else None)
        _all_of(lambda: _judge_exit(ran), lambda: _verify(ws, ran.code, roles, before))
        if ran.code != 0:
            return "refused"
        written = {p.relative_to(ws.outputs): len(b) for p, b in _regular_files(ws.outputs).items()}
        reset()
        again = _forked(argv)
        room = {p.relative_to(ws.outputs): len(b) for p, b in _regular_files(ws.outputs).items()}
        _verify(ws, again.code, roles, before)  # puts back an input that the run was given as output
        if again.code == 0 and written != room:
            raise _wrong("a short output with status 0", f"sizes {written}, with room {room}")
        return "accepted"

    return run


def sigterm_target():
    """Runs of a few commands over a corpus large enough to take a while, in a forked
    child sent SIGTERM after a random delay (up to 1.2 times an undisturbed run's time).
    The exit must be 0, 143 or death by SIGTERM, with no traceback; each output must be the
    earlier one or the undisturbed run's whole (all outputs of the run the one or the
    other together), and no temporary file left. "accepted": the run finished first;
    "refused": the signal ended it with the files intact. Each input costs a run (about 0.1 to
    1 s): the default is DEFAULT_EXAMPLES["sigterm"] inputs."""
    ws = _cli_workspace()
    _preload()
    big = ws.inputs / "big.txt"
    if not big.exists():
        trees = [t for line in _klp_lines() for t in TREE_IN_KLP.findall(line.decode())[:1]]
        big.write_text("\n".join(trees * 4) + "\n", encoding="utf-8")
        ws.originals[big] = big.read_bytes()
    i, o = ws.inputs, ws.outputs
    commands = [
        ["gram", str(big), str(o / "earlier.npy"), "--quiet"],
        ["nystroem", "fit", str(big), str(o / "earlier.npz"), "--n-components", "30", "--random-state", "0", "--quiet"],
        ["nystroem", "transform", str(i / "model.npz"), str(big), str(o / "earlier.npy"), "--quiet"],
        ["convert", str(i / "small.klp.gz"), str(o / "earlier.spacy"), "--dev", str(o / "dev.spacy")],
        ["trees", str(i / "parses.spacy"), "-o", str(o / "earlier.txt"), "--quiet"],
        ["lexicon", str(i / "standoff"), str(o / "lexicon")],
    ]

    def earlier():
        _fresh_outputs(ws)
        (o / "dev.spacy").write_bytes(EARLIER)
        (o / "lexicon").mkdir()
        for name in ("proteins.jsonl", "triggers.jsonl"):
            (o / "lexicon" / name).write_bytes(EARLIER)

    references = []
    for argv in commands:
        earlier()
        ran = _forked(argv)
        if ran.code != 0:
            raise RuntimeError(f"{' '.join(argv)}: {ran.stderr}")
        references.append((ran.seconds, _regular_files(o)))

    def run(rng, index, current):
        which = rng.randrange(len(commands))
        argv, (seconds, whole) = commands[which], references[which]
        delay = rng.uniform(0, 1.2 * seconds)
        current["input"] = f"SIGTERM after {delay:.3f} s: {' '.join(argv)}"
        earlier()
        before = _regular_files(o)
        ran = _forked(argv, term_after=delay)
        _judge_exit(ran, allowed=(0, 143, -signal.SIGTERM))  # killed by the signal: the files decide
        leftovers = [p for p in ws.folder.rglob(".*") if p.is_file()]
        for p in leftovers:
            p.unlink()
        after = _regular_files(o)
        problems = []
        if leftovers:
            problems.append(("temporary files left", f"left {[str(p) for p in leftovers]}"))
        states = {}
        for path in set(before) | set(whole) | set(after):
            content = after.get(path)
            if whole.get(path) == before.get(path):  # not an output of the command
                if content != before.get(path):
                    states[path] = "partial"
            elif path in whole and content == whole[path]:
                states[path] = "new"
            elif content == before.get(path):
                states[path] = "earlier"
            else:
                states[path] = "partial"
        if "partial" in states.values():
            bad = [str(p) for p, state in states.items() if state == "partial"]
            problems.append(("a partial output", f"partial or missing outputs {bad}"))
        elif len(set(states.values())) > 1:
            problems.append(("outputs not replaced together", f"outputs {states}"))
        if ran.code == 0 and set(states.values()) != {"new"}:
            problems.append(("status 0 without its outputs", f"outputs {states}"))
        if problems:
            raise _wrong(" + ".join(k for k, _ in problems), f"exit {ran.code}: " + "; ".join(t for _, t in problems))
        return "accepted" if ran.code == 0 else "refused"

    return run


MODEL_VALUES = [math.nan, math.inf, -math.inf, 1e300, -1e300, 0.0, -1.0]


def _damage_value(value, rng, landmarks):
    """``value`` (an array, a number or a tree string out of a saved model) made wrong."""
    import numpy as np

    if isinstance(value, np.ndarray):
        op = rng.choice(["value", "value", "int", "complex", "shape", "empty"])
        if op == "value" and value.size and value.dtype.kind in "fc":
            value = value.copy()
            value.flat[rng.randrange(value.size)] = rng.choice(MODEL_VALUES)
            return value
        if op == "int":
            return value.astype(np.int64) if value.dtype.kind != "U" else np.zeros(value.shape, dtype=np.int64)
        if op == "complex" and value.dtype.kind in "fc":
            return value.astype(np.complex128) * (1 + 1j)
        if op == "shape" and value.size:
            return value.ravel()[:-1]
        return value[:0]
    if isinstance(value, float):
        return rng.choice(MODEL_VALUES)
    if isinstance(value, str) and value.startswith("("):
        return rng.choice([rng.choice(landmarks), mutate(value, rng, AWKWARD_TEXT, landmarks), ""])
    if isinstance(value, (int, bool)) and not isinstance(value, bool):
        return rng.choice([-1, 0, 2**62, value + 1])
    return rng.choice([None, "x", -1, 1e300])


def _leaves(value, path=()):
    """(path, value) of every array, number and string in a decoded msgpack structure."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*path, key))
    elif isinstance(value, (list, tuple)):
        for position, item in enumerate(value):
            yield from _leaves(item, (*path, position))
    else:
        yield path, value


def _replace(value, path, new):
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, tuple):
        value = list(value)
    value[head] = _replace(value[head], rest, new)
    return value


def models_target():
    """Damaged saved models, loaded and used in this process: a small kernel_vectors and a
    kernel_relations pipeline (built in the workspace, as the tests build theirs) and a
    Nystroem .npz of ``nystroem fit``, each with files truncated, flipped, deleted, saved
    arrays and numbers replaced (NaN, inf, 1e300, int, complex, other shapes, landmarks
    swapped or mutated) or saved paths crafted to name a file of the workspace whose
    first line is a secret. Outcomes: "refused" for a package error (for a damaged file of
    spaCy's own, the command line's one error line loading the pipeline); "accepted" for
    predictions equal to the undamaged model's; "wrong" for other predictions, or a
    secret file opened or shown; "other" for a traceback. The default is
    DEFAULT_EXAMPLES["models"] inputs (about 0.1 s each)."""
    import contextlib
    import io

    import numpy as np
    import spacy
    import srsly
    from spacy.tokens import Doc, DocBin

    from spacy_convkernels import ConvKernelsError
    from spacy_convkernels.cli import main

    ws = _cli_workspace()
    folder = ws.folder / "models"
    pristine = {"vectors": folder / "vectors", "relations": folder / "relations", "npz": ws.inputs / "model.npz"}
    sys.path.insert(0, str(ROOT / "tests"))  # the tests' relation samples and model configs
    from relation_samples import PATH_SVM, model_config, pair_examples, parsed

    if not pristine["vectors"].exists():
        from spacy.training import Example
        from spacy.util import fix_random_seed

        nlp = spacy.blank("en")
        docs = list(DocBin().from_disk(ws.inputs / "parses.spacy").get_docs(nlp.vocab))
        kernel = {"@misc": "spacy_convkernels.PartialTreeKernel.v1", "lam": 0.4, "mu": 0.4}
        nlp.add_pipe("kernel_vectors", config={"representation": "lct", "n_components": 10, "kernel": kernel})
        nlp.initialize(lambda: [Example(doc.copy(), doc) for doc in docs])
        folder.mkdir(exist_ok=True)
        nlp.to_disk(pristine["vectors"])
        fix_random_seed(0)
        nlp = spacy.blank("en")
        nlp.add_pipe(
            "kernel_relations", config={"model": model_config("EntityPairCandidates", kernel_features=PATH_SVM)}
        )
        examples = pair_examples(nlp)
        optimizer = nlp.initialize(lambda: examples)
        for _ in range(3):
            nlp.update(examples, sgd=optimizer)
        nlp.to_disk(pristine["relations"])
    doc_bytes = {
        "vectors": [
            d.to_bytes() for d in DocBin().from_disk(ws.inputs / "parses.spacy").get_docs(spacy.blank("en").vocab)
        ][:8],
        "relations": [parsed().to_bytes()],
    }
    secret = ws.folder / "secret.txt"
    nonce = f"fuzzsecret{random.Random().randrange(10**12)}"
    secret.write_text(f"{nonce} 0.5 0.25\n", encoding="utf-8")
    opened = []

    def audit(event, args):
        if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
            name = os.fsdecode(args[0])
            if name.endswith("secret.txt") or name == "/dev/zero":
                opened.append(name)

    sys.addaudithook(audit)

    def predict(kind, path):
        """The predictions of the pipeline or .npz at ``path``, as bytes or a repr."""
        if kind == "npz":
            out = ws.folder / "transformed.npy"
            out.unlink(missing_ok=True)
            stderr = io.StringIO()
            argv = ["nystroem", "transform", str(path), str(ws.inputs / "trees.txt"), str(out), "--quiet"]
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(stderr):
                status = main(argv)
            return status, stderr.getvalue(), out.read_bytes() if status == 0 else None
        nlp = spacy.load(path)
        docs = [nlp(Doc(nlp.vocab).from_bytes(b)) for b in doc_bytes[kind]]
        if kind == "vectors":
            return 0, "", b"".join(np.asarray(d._.kernel_vector, dtype=np.float32).tobytes() for d in docs)
        return 0, "", repr([sorted(d._.kernel_rel.items()) for d in docs]).encode()

    references = {kind: predict(kind, path)[2] for kind, path in pristine.items()}
    if references["npz"] is None:
        raise RuntimeError("nystroem transform of the workspace's model failed")
    landmarks = [str(t) for t in np.load(pristine["npz"])["landmarks"]]

    def damage_npz(path, rng, notes):
        with np.load(path) as stored:
            arrays = {name: stored[name] for name in stored.files}
        name = rng.choice(["settings", "landmarks", "normalization", "normalization", "delete", "object", "extra"])
        if name == "delete":
            del arrays[rng.choice(list(arrays))]
        elif name == "object":
            arrays["normalization"] = arrays["normalization"].astype(object)
        elif name == "extra":
            arrays["extra"] = np.arange(3)
        elif name == "settings":
            settings = json.loads(str(arrays["settings"]))
            target = rng.choice([str(secret), "/dev/zero", str(secret)])
            op = rng.choice(["path", "path", "value"])
            if op == "path":
                settings["kernel"] = rng.choice(["sptk", "csptk", settings["kernel"]])
                settings["parameters"] = {**settings.get("parameters", {}), "vectors": target}
            else:
                key = rng.choice(list(settings))
                settings[key] = _damage_value(
                    settings[key] if isinstance(settings[key], float) else 0.5, rng, landmarks
                )
            arrays["settings"] = np.array(json.dumps(settings))
        elif name == "landmarks":
            trees = list(map(str, arrays["landmarks"]))
            at = rng.randrange(len(trees))
            trees[at] = _damage_value(
                trees[at],
                rng,
                landmarks + [tree.strip() for tree in ws.originals[ws.inputs / "trees.txt"].decode().splitlines()],
            )
            arrays["landmarks"] = np.array(trees)
        else:
            arrays[name] = _damage_value(arrays[name], rng, landmarks)
        notes.append(f"npz {name}")
        with open(path, "wb") as out:
            np.savez(out, **arrays)

    def damage_msgpack(path, rng, notes):
        data = srsly.msgpack_loads(path.read_bytes())
        leaves = [(p, v) for p, v in _leaves(data) if not isinstance(v, bytes) or len(v) < 64]
        where, value = rng.choice(leaves)
        data = _replace(data, where, _damage_value(value, rng, [v for _, v in leaves if isinstance(v, str)] or ["(A)"]))
        notes.append(f"values {path.relative_to(path.parent.parent.parent)} at {'/'.join(map(str, where))}")
        path.write_bytes(srsly.msgpack_dumps(data))

    def damage_config(path, rng, notes):
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        block = [n for n, line in enumerate(lines) if line.startswith("[components.") and line.endswith(".kernel]")]
        if block and rng.random() < 0.6:  # a kernel with word vectors read from a crafted path
            n = block[0]
            end = next((k for k in range(n + 1, len(lines)) if lines[k].startswith("[")), len(lines))
            kept = [line for line in lines[n + 1 : end] if not line.startswith(("@misc", "vectors"))]
            crafted = ['@misc = "spacy_convkernels.SmoothedPartialTreeKernel.v1"', f'vectors = "{secret}"']
            lines[n + 1 : end] = crafted + kept
            notes.append("config.cfg: a vectors path")
        else:
            numbers = [n for n, line in enumerate(lines) if re.search(r"= -?[\d.]+$", line)]
            n = rng.choice(numbers)
            lines[n] = re.sub(r"= .*$", f"= {rng.choice(['nan', 'inf', '1e300', '-1', '0', 'true'])}", lines[n])
            notes.append(f"config.cfg line {n + 1}")
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    def damage(kind, path, rng, notes):
        if kind == "npz" and rng.random() < 0.6:
            try:
                return damage_npz(path, rng, notes)
            except Exception:  # damaged before (a second damage) so that it does not read: flip bytes instead
                pass
        files = [path] if kind == "npz" else sorted(p for p in path.rglob("*") if p.is_file())
        chosen = rng.choice(files)
        component = kind != "npz" and chosen.parent.name.startswith("kernel_")
        op = rng.choice(["flip", "flip", "truncate", "delete", "values", "values"])
        if op == "values" and chosen.name == "config.cfg":
            try:
                return damage_config(chosen, rng, notes)
            except UnicodeDecodeError:  # its bytes flipped before (a second damage): flip more
                op = "flip"
        if op == "values" and component:
            try:
                return damage_msgpack(chosen, rng, notes)
            except Exception:  # not msgpack (the cfg): flip a byte instead
                op = "flip"
        raw = chosen.read_bytes()
        if op == "delete" or op == "values":
            chosen.unlink()
            op = "delete"
        elif op == "truncate":
            chosen.write_bytes(raw[: rng.randrange(max(1, len(raw)))])
        else:
            data = bytearray(raw)
            for _ in range(rng.randint(1, 3)):
                if data:
                    data[rng.randrange(len(data))] ^= rng.randrange(1, 256)
            chosen.write_bytes(bytes(data))
        notes.append(f"{op} {chosen.relative_to(path.parent)}")

    def run(rng, index, current):
        kind = rng.choice(["vectors", "relations", "npz", "npz"])
        damaged = ws.folder / "damaged" / pristine[kind].name
        shutil.rmtree(damaged.parent, ignore_errors=True)
        damaged.parent.mkdir()
        (shutil.copytree if kind != "npz" else shutil.copy)(pristine[kind], damaged)
        notes = []
        for _ in range(1 if rng.random() < 0.8 else 2):
            if damaged.exists():
                damage(kind, damaged, rng, notes)
        current["input"] = f"{kind}: {'; '.join(notes)}"
        opened.clear()
        try:
            status, message, prediction = predict(kind, damaged)
        except ConvKernelsError as error:
            status, message, prediction = 1, str(error), None
        except Exception:
            ours = [note.split(" ", 1)[-1].startswith(f"{pristine[kind].name}/kernel_") for note in notes]
            if kind == "npz" or all(ours):  # a damaged file of spaCy's own is named by the commands' loader
                raise
            argv = ["trees", str(ws.inputs / "trees.txt"), "--model", str(damaged), "--quiet"]
            ran = _cli_in_process(main, argv)
            if ran.code != 1 or "Traceback" in ran.stderr:
                raise
            status, message, prediction = 1, ran.stderr, None
        if opened or nonce in message:
            raise _wrong("a crafted path opened", f"opened {opened}; message {message[:200]!r}")
        if status != 0:
            return "refused"
        if prediction != references[kind]:
            raise _wrong(
                f"{kind}: damaged, loaded, predictions changed", "predictions differ from the undamaged model's"
            )
        return "accepted"

    return run


# --- links, sidecar files and compressed bombs (issue 62) ------------------------------------


def _snapshot(top):
    """Every regular file under ``top`` (not through links) and its bytes."""
    return {path: path.read_bytes() for path in top.rglob("*") if path.is_file() and not path.is_symlink()}


def _changed(before):
    return sorted(str(path) for path, data in before.items() if not path.exists() or path.read_bytes() != data)


def _linked_folder(rng, ws, base):
    """An input folder made of symbolic links into ``base/outside`` (which holds the real
    files): the standoff sample, each document file a link (or a copy), or the tiny parser
    pipeline, each top-level entry a link (folders too); sometimes a link cycle. Returns
    (kind, folder, outside, the files and folders its links reach)."""
    outside, folder = base / "outside", base / "in"
    outside.mkdir(parents=True)
    folder.mkdir()
    kind = rng.choice(["standoff", "pipeline"])
    source = ws.inputs / "standoff" if kind == "standoff" else ws.parser
    reached = []
    for entry in sorted(source.iterdir()):
        real = outside / entry.name
        shutil.copytree(entry, real) if entry.is_dir() else shutil.copy(entry, real)
        if rng.random() < 0.8:
            (folder / entry.name).symlink_to(Path("..") / "outside" / entry.name, target_is_directory=entry.is_dir())
            reached.append(real)
        else:
            shutil.copytree(entry, folder / entry.name) if entry.is_dir() else shutil.copy(entry, folder / entry.name)
    if rng.random() < 0.2:
        (folder / "loop").symlink_to(folder, target_is_directory=True)
    return kind, folder, outside, reached


def links_target():
    """Command-line runs (forked) over input folders made of symbolic links, with outputs
    that links lead to or that are links. Each input builds a folder whose standoff
    documents or pipeline components are links into an "outside" folder (sometimes with a
    link cycle), and a run that reads it (convert, lexicon, evaluate relations, trees
    --model) with its output one of: a file the links reach or a new file in a folder they
    reach; a dangling link (to a missing folder), the output itself or a folder on its
    way; another user's link in a sticky folder (as root), to a victim file; the user's own
    link to an earlier output; a plain new file. "wrong": a file under "outside", the
    victim or an input changed, a folder made at a dangling link's target, an accepted run
    whose output is not to be written, a failure without one error line, a traceback, a
    failed run that changed an earlier output, a temporary file left."""
    ws = _cli_workspace(pipeline=True)
    _preload()
    root = os.geteuid() == 0

    def run(rng, index, current):
        _fresh_outputs(ws)
        base = ws.outputs / "links"
        kind, folder, outside, reached = _linked_folder(rng, ws, base)
        if kind == "standoff":
            command, suffix = rng.choice(
                [
                    (["convert", "--format", "standoff", str(folder)], ".spacy"),
                    (["lexicon", str(folder), "-o"], ""),
                    (["evaluate", "relations", str(ws.parser), str(folder), "--quiet", "--output"], ".json"),
                ]
            )
        else:
            command, suffix = rng.choice(
                [
                    (["trees", str(ws.inputs / "trees.txt"), "--model", str(folder), "--quiet", "-o"], ".txt"),
                    (
                        [
                            "evaluate",
                            "relations",
                            str(folder),
                            str(ws.inputs / "relations.jsonl"),
                            "--quiet",
                            "--output",
                        ],
                        ".json",
                    ),
                ]
            )
        choices = ["reached", "dangling", "dangling-parent", "own", "plain"] + (["foreign"] if root else [])
        linked_folders = [p for p in reached if p.is_dir()]
        if linked_folders:
            choices.append("reached-new")
        chosen = rng.choice(choices)
        victim = base / "victim.bin"
        victim.write_bytes(EARLIER)
        if chosen == "reached":
            files = [p for p in reached if p.is_file()] + [
                p for d in linked_folders for p in d.rglob("*") if p.is_file()
            ]
            output = rng.choice(files) if files else base / f"plain{suffix}"
            chosen = chosen if files else "plain"
        elif chosen == "reached-new":
            output = rng.choice(linked_folders) / f"new{suffix}"
        elif chosen in ("dangling", "dangling-parent"):
            link = base / f"dangle{suffix}"
            link.symlink_to(base / "nowhere" / "deep" / f"out{suffix}")
            output = link if chosen == "dangling" else link / f"out{suffix}"
        elif chosen == "foreign":
            sticky = base / "sticky"
            sticky.mkdir()
            sticky.chmod(0o1777)
            output = sticky / f"out{suffix}"
            output.symlink_to(victim)
            os.lchown(output, 65534, 65534)
        elif chosen == "own":
            output = base / f"mine{suffix}"
            output.symlink_to(ws.outputs / f"earlier{suffix}")
        else:
            output = base / f"plain{suffix}"
        argv = [*command, str(output)]
        current["input"] = f"{chosen}: {' '.join(argv)}"
        guarded = {**_snapshot(outside), victim: EARLIER, **{p: d for p, d in ws.originals.items()}}
        before = _regular_files(ws.outputs)
        ran, problems = _guarded_run(argv, guarded)
        if (base / "nowhere").exists():
            problems.append("made the folders of a dangling link's target")
        refused = {"reached", "reached-new", "dangling", "dangling-parent", "foreign"}
        if ran.code == 0 and chosen in refused:
            problems.append(f"accepted an output that is {chosen}")
        leftovers = [p for p in base.rglob(".*") if p.is_file()]
        if leftovers:
            problems.append(f"temporary files left {[str(p) for p in leftovers]}")
        if ran.code != 0:
            after = {p: d for p, d in _regular_files(ws.outputs).items() if base not in p.parents}
            if after != {p: d for p, d in before.items() if base not in p.parents}:
                problems.append("a failed run changed earlier outputs")
        for path, data in ws.originals.items():  # for the next input
            if not path.exists() or path.read_bytes() != data:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
        if problems:
            raise _wrong(f"{chosen}: {problems[0][:60]}", "; ".join(problems))
        return "accepted" if ran.code == 0 else "refused"

    return run


def _vector_files(folder):
    """A ``.npy`` matrix and its ``.keys`` of the sample word space, in ``folder``."""
    import numpy as np

    from spacy_convkernels.kernels.vectors import WordVectors

    table = WordVectors.load(
        ROOT / "spacy_convkernels" / "data" / "trec-qc-kelp-sample" / "wordspace_md300.first60.txt.gz"
    )
    keys = sorted(table.rows, key=table.rows.__getitem__)
    np.save(folder / "v.npy", table.matrix[[table.rows[key] for key in keys]])
    (folder / "v.keys").write_text("\n".join(keys) + "\n", encoding="utf-8")


def sidecars_target():
    """Command-line runs (forked) whose inputs bring files the commands read beside them:
    a standoff document named by its ``.txt``, ``.a1`` or ``.a2`` (convert, lexicon,
    evaluate relations), whose output is one of its siblings, another document's file or
    a new file; ``--vectors v.npy`` (gram, nystroem fit, plot heatmap), whose output is its
    ``.keys``, the matrix or a new file. "wrong": a file of the corpus folder or a matrix
    or its keys changed, other than an output that no input reads; an accepted run whose
    output is a file it reads; a traceback, a failure without one error line, a
    temporary file left."""
    ws = _cli_workspace(pipeline=True)
    _preload()
    vectors = ws.folder / "vectors"
    if not vectors.exists():
        vectors.mkdir()
        _vector_files(vectors)
    klp = ws.inputs / "small.klp.gz"

    def run(rng, index, current):
        _fresh_outputs(ws)
        base = ws.outputs / "sidecars"
        base.mkdir()
        if rng.random() < 0.5:
            shutil.copytree(ws.inputs / "standoff", base / "c3")
            stems = sorted({p.name.split(".")[0] for p in (base / "c3").iterdir()})
            stem = base / "c3" / rng.choice(stems)
            named = Path(f"{stem}{rng.choice(['.txt', '.a1', '.a2'])}")
            sibling = Path(f"{stem}{rng.choice(['.txt', '.a1', '.a2'])}")
            other = base / "c3" / f"{rng.choice(stems)}.a2"
            output = rng.choice([sibling, sibling, other, base / "out.spacy"])
            argv = rng.choice(
                [
                    ["convert", "--format", "standoff", str(named), str(output)],
                    ["lexicon", str(named), "-o", str(output)],
                    ["evaluate", "relations", str(ws.parser), str(named), "--quiet", "--output", str(output)],
                ]
            )
            must_refuse = output.parent == named.parent and output.name.split(".")[0] == stem.name
            # the document's own files are guarded; another document's file, read by nobody, is the output asked for
            guarded = {p: d for p, d in _snapshot(base / "c3").items() if must_refuse or p != output}
        else:
            shutil.copy(vectors / "v.npy", base / "v.npy")
            shutil.copy(vectors / "v.keys", base / "v.keys")
            output = rng.choice([base / "v.keys", base / "v.keys", base / "v.npy", base / "out.npy"])
            options = ["--kernel", rng.choice(["sptk", "csptk"]), "--vectors", str(base / "v.npy"), "--quiet"]
            argv = rng.choice(
                [
                    ["gram", str(klp), "-o", str(output), *options],
                    ["nystroem", "fit", str(klp), str(output), "--n-components", "4", *options],
                    ["plot", "heatmap", str(klp), "-o", str(output), "--sample", "8", *options],
                ]
            )
            guarded = _snapshot(base)
            guarded = {p: d for p, d in guarded.items() if p.name in ("v.npy", "v.keys")}
            must_refuse = output.name in ("v.npy", "v.keys")
        current["input"] = " ".join(argv)
        ran, problems = _guarded_run(argv, guarded)
        if ran.code == 0 and must_refuse:
            problems.append(f"accepted the output {output}, a file it reads")
        leftovers = [p for p in base.rglob(".*") if p.is_file()]
        if leftovers:
            problems.append(f"temporary files left {[str(p) for p in leftovers]}")
        if problems:
            raise _wrong(problems[0][:60], "; ".join(problems))
        return "accepted" if ran.code == 0 else "refused"

    return run


BOMB_SIZES = (1 << 20, 64 << 20, 512 << 20, 2 << 30)  # what a bomb inflates to
MEMORY_BOUND_MIB = 500  # issue 62: no crafted input under 10 MB makes a command exceed it


@functools.cache
def _zeros(size, level=1):
    """The deflate stream (raw) of ``size`` zero bytes, made by chunks (once per size)."""
    import zlib

    deflate = zlib.compressobj(level, zlib.DEFLATED, -15)
    chunk, parts, left = bytes(1 << 24), [], size
    while left:
        parts.append(deflate.compress(chunk[: min(left, len(chunk))]))
        left -= min(left, len(chunk))
    return b"".join(parts) + deflate.flush()


def _npz_bomb(rng, model, path):
    """``model`` (an .npz) with one member replaced by a crafted one: a ``.npy`` header of
    some shape, then zeros that inflate to one of BOMB_SIZES, its zip header honest or
    lying (a small size, or a huge one)."""
    import struct
    import zipfile
    import zlib

    with zipfile.ZipFile(model) as original:
        members = {info.filename: original.read(info) for info in original.infolist()}
    name = rng.choice(sorted(members))
    size = rng.choice(BOMB_SIZES)
    side = rng.choice([int((size / 8) ** 0.5), 40000, 20000, 3])
    header = f"{{'descr': '<f8', 'fortran_order': False, 'shape': ({side}, {side}), }}".encode("latin1")
    header += b" " * (63 - (10 + len(header)) % 64) + b"\n"
    npy = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header
    deflate = zlib.compressobj(1, zlib.DEFLATED, -15)
    data = deflate.compress(npy) + deflate.flush(zlib.Z_SYNC_FLUSH) + _zeros(size)
    declared = rng.choice([len(npy) + size, 1024, 1 << 40])
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as bomb:
        for other, content in members.items():
            if other != name:
                bomb.writestr(other, content)
    _append_raw_member(path, name, data, declared, zlib.crc32(npy))
    return f"{name}: {side}x{side} header, inflates to {size}, declares {declared}"


def _append_raw_member(path, name, deflated, declared, crc):
    """Append to the zip ``path`` a member ``name`` whose deflated bytes and declared size
    are given as they are (its directory rewritten after it)."""
    import struct

    blob = Path(path).read_bytes()
    end = blob.rindex(b"PK\x05\x06")
    directory_size, directory_start = struct.unpack("<II", blob[end + 12 : end + 20])
    entries = blob[directory_start : directory_start + directory_size]
    count = struct.unpack("<H", blob[end + 10 : end + 12])[0]
    encoded = name.encode()
    small = min(declared, 0xFFFFFFFF)
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0, crc, len(deflated), small, len(encoded), 0)
    offset = directory_start
    central = struct.pack(
        "<IHHHHHHIIIHHHHHII",
        0x02014B50,
        20,
        20,
        0,
        8,
        0,
        0,
        crc,
        len(deflated),
        small,
        len(encoded),
        0,
        0,
        0,
        0,
        0,
        offset,
    )
    body = blob[:directory_start] + local + encoded + deflated
    new_directory = entries + central + encoded
    tail = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, count + 1, count + 1, len(new_directory), len(body), 0)
    Path(path).write_bytes(body + new_directory + tail)


def _docbin_bomb(rng, path):
    """A ``.spacy`` file: zlib of a msgpack map whose strings or token arrays inflate to one of BOMB_SIZES."""
    import zlib

    import srsly

    size = rng.choice(BOMB_SIZES)
    shape = rng.choice(["strings", "tokens", "garbage"])
    if shape == "garbage":  # zeros: not msgpack at all
        raw = None
    else:
        raw = srsly.msgpack_dumps(
            {
                "version": 2,
                "attrs": [65],
                "tokens": b"",
                "spaces": b"",
                "lengths": b"",
                "strings": [],
                "cats": [],
                "flags": [],
                "span_groups": [],
            }
        )
    deflate = zlib.compressobj(1)
    data = deflate.compress(raw or b"") + deflate.flush(zlib.Z_SYNC_FLUSH)
    stream = _zeros(size)  # raw deflate of zeros: appended as more of the zlib stream's body
    Path(path).write_bytes(data + stream + b"\x03\x00")  # a final empty block; no checksum: the cap must come first
    return f"DocBin {shape}, inflates to {size}"


def _gzip_bomb(rng, path):
    """A ``.gz`` corpus of one line of zeros (or spaces) inflating to one of BOMB_SIZES."""
    import gzip
    import zlib

    size = rng.choice(BOMB_SIZES)
    header = gzip.compress(b"")[:10]
    Path(path).write_bytes(
        header + _zeros(size) + zlib.crc32(b"").to_bytes(4, "little") + (size & 0xFFFFFFFF).to_bytes(4, "little")
    )
    return f"gzip inflating to {size}"


def bombs_target():
    """Command-line runs (forked) on compressed inputs under 10 MB that inflate far more:
    a Nystroem ``.npz`` model with a crafted member (``nystroem transform``), a ``.spacy``
    DocBin (``trees``, ``evaluate relations``), a gzip corpus (``gram``, ``convert``). Their
    declared sizes honest, small or huge, their contents up to 2 GiB of zeros. "wrong": the
    child's peak memory above this process's by more than MEMORY_BOUND_MIB, an accepted
    run (a bomb is no valid input), a traceback, a failure without one error line."""
    import resource

    ws = _cli_workspace(pipeline=True)
    _preload()
    floor = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    def run(rng, index, current):
        _fresh_outputs(ws)
        base = ws.outputs / "bombs"
        base.mkdir()
        kind = rng.choice(["npz", "docbin", "docbin", "gzip"])
        if kind == "npz":
            bomb = base / "model.npz"
            about = _npz_bomb(rng, ws.inputs / "model.npz", bomb)
            argv = [
                "nystroem",
                "transform",
                str(bomb),
                str(ws.inputs / "trees.txt"),
                "-o",
                str(base / "Z.npy"),
                "--quiet",
            ]
        elif kind == "docbin":
            bomb = base / "docs.spacy"
            about = _docbin_bomb(rng, bomb)
            argv = rng.choice(
                [
                    ["trees", str(bomb), "-o", str(base / "t.txt"), "--quiet"],
                    ["evaluate", "relations", str(ws.parser), str(bomb), "--quiet"],
                ]
            )
        else:
            bomb = base / rng.choice(["q.klp.gz", "r.jsonl.gz"])
            about = _gzip_bomb(rng, bomb)
            argv = (
                ["gram", str(bomb), "-o", str(base / "G.npy"), "--quiet"]
                if bomb.name.startswith("q")
                else ["convert", str(bomb), "-o", str(base / "r.spacy")]
            )
        current["input"] = f"{about} ({bomb.stat().st_size} bytes): {' '.join(argv)}"
        ran, problems = _guarded_run(argv, {}, allowed=(1,))
        if ran.peak is not None and ran.peak - floor > MEMORY_BOUND_MIB:
            problems.append(f"peak {ran.peak - floor:.0f} MiB above the parent's")
        if problems:
            raise _wrong(problems[0][:60], "; ".join(problems))
        return "refused"

    return run


def _cli_in_process(main, argv) -> Ran:
    """``main(argv)`` here, its output captured; an exception out of it propagates."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    started = time.monotonic()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as leaving:
            code = leaving.code if isinstance(leaving.code, int) else 1
    return Ran(code, out.getvalue().encode(), err.getvalue(), time.monotonic() - started)


SETUPS = {
    "cli": cli_target,
    "outputs": outputs_target,
    "disk": disk_target,
    "sigterm": sigterm_target,
    "models": models_target,
    "links": links_target,
    "sidecars": sidecars_target,
    "bombs": bombs_target,
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
    if hasattr(error, "where"):  # a traceback of a forked child, or a place the target names
        return error.where
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
            if os.path.ismount(Path(folder) / "outputs"):  # the disk target's tmpfs
                _umount(Path(folder) / "outputs")
    print(outcome)


# --- the parent: children per chunk of inputs, restarted past crashes and hangs -----------------


def _namespaces() -> bool:
    """Whether ``unshare -rm`` works here (user namespaces allowed), for the disk target's tmpfs."""
    try:
        return subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode == 0
    except OSError:
        return False


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
        if self.target == "disk" and _namespaces():  # root in a user and mount namespace: it mounts a tmpfs
            command, env["FUZZ_TMPFS"] = ["unshare", "-rm", *command], "1"
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
    parser.add_argument(
        "--examples",
        type=int,
        default=None,
        help="inputs per target (default 20000; DEFAULT_EXAMPLES for sigterm, models, links, sidecars, bombs)",
    )
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
    examples = {t: args.examples or DEFAULT_EXAMPLES.get(t, 20000) for t in targets}
    chunks = [
        Chunk(t, examples[t] * k // pieces, examples[t] * (k + 1) // pieces, args, totals, events, tallies)
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
    report(targets, totals, seconds, events, tallies, args, time.monotonic() - started, examples)


def report(targets, totals, seconds, events, tallies, args, wall, examples) -> None:
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
        f"fuzz run: seed {args.seed}, inputs per target {examples}, {args.workers} workers, "
        f"timeout {args.timeout} s, {wall:.0f} s wall"
    )
    for row in (header, *rows):
        print("  ".join(str(x).rjust(w) for x, w in zip(row, widths)))
    for t, row in zip(targets, rows):
        if row[1] < examples[t]:
            print(
                f"{t}: {examples[t] - row[1]} inputs not tried (chunks given up after --max-crashes {args.max_crashes})"
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
                    f"    replay: {'FUZZ_TMPFS=1 unshare -rm ' if t == 'disk' and _namespaces() else ''}"
                    f"python tools/fuzz.py --seed {args.seed} --replay {t}:{e['index']}"
                )
    totals_line = rows[-1]
    print(
        f"\ninputs {totals_line[1]}, crashes {totals_line[4]}, hangs {totals_line[5]}, "
        f"non-package exceptions {totals_line[6]}, wrong values {totals_line[7]}"
    )


if __name__ == "__main__":
    main()
