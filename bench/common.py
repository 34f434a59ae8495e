"""What the experiments share, written once: loaders (TREC's questions, their splits and
KeLP's examples), metrics (precision / recall / F1 with named fields, the mean and spread
over seeds, the accuracy of KeLP-fair SVMs on a Gram, a kernel that counts its
evaluations, the resident memory), result files (rows kept as they come, JSON written
through a temporary file) and Markdown tables, filled into hand-written pages. Where they
read and write: ``locations``."""

import json
import pickle
import statistics
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np

# the package's modules are imported where they are used, so that the speed suite's table
# does not wait for them

EVALUATIONS = Counter()  # kernel values between two structures, by the counting kernels
# k-NN through the buckets of KLSH codes, as the TREC and GE experiments search
KLSH_KNN = {
    "method": "klsh",
    "n_references": 100,
    "n_bits": 12,
    "subset_size": 10,
    "hash_function": "kulis_grauman",
    "probes": 2,
}


def questions(path: Path) -> list[tuple[str, str]]:
    """(text, coarse label) of the questions of a KeLP file, in order."""
    from spacy_convkernels.corpora import read_klp

    return [(e.texts["quest"], e.labels[0].split(":")[0]) for e in read_klp(path)]


def kelp_qc(data: Path) -> tuple:
    """KeLP's TREC QC examples and coarse labels: (train, test, y_train, y_test)."""
    from spacy_convkernels.corpora import read_klp

    train = list(read_klp(data / "train_5500.coarse.klp.gz"))
    test = list(read_klp(data / "TREC_10.coarse.klp.gz"))
    return train, test, np.array([e.labels[0] for e in train]), np.array([e.labels[0] for e in test])


def split_questions(data: Path) -> dict[str, list[tuple[str, str]]]:
    """(text, coarse label) of each split of ``data`` (the trec-qc-kelp folder): train
    (4,907), dev (every 10th training question, 545: what `convert --dev` holds out) and
    test (TREC-10's 500)."""
    train = questions(data / "train_5500.coarse.klp.gz")
    return {
        "train": [q for i, q in enumerate(train, 1) if i % 10],
        "dev": [q for i, q in enumerate(train, 1) if not i % 10],
        "test": questions(data / "TREC_10.coarse.klp.gz"),
    }


class PRF(NamedTuple):
    precision: float
    recall: float
    f1: float


def prf(*, truth: np.ndarray, predicted: np.ndarray) -> PRF:
    """Precision, recall and F1 of the positives of two boolean arrays."""
    right = int(np.sum(predicted & truth))
    p, r = right / max(int(predicted.sum()), 1), right / max(int(truth.sum()), 1)
    return PRF(p, r, 2 * p * r / (p + r) if p + r else 0.0)


def mean_sd(values) -> tuple[float, float]:
    """The mean and sample standard deviation (0 for one value)."""
    values = list(values)
    return statistics.mean(values), statistics.stdev(values) if len(values) > 1 else 0.0


def pm(values, digits: int = 1) -> str:
    """The mean ± sample standard deviation of ``values``, as text."""
    mean, sd = mean_sd(values)
    return f"{mean:.{digits}f} ± {sd:.{digits}f}"


def svm_accuracy(train_gram, y_train, test_gram, y_test, C=10.0) -> float:
    """Accuracy % of one-vs-all C-SVMs with KeLP's fairness (``learn.fair_one_vs_all``)."""
    from spacy_convkernels.learn import fair_one_vs_all

    return 100.0 * np.mean(fair_one_vs_all(train_gram, y_train, test_gram, C=C) == y_test)


def kelp_kernels(wordspace: Path) -> dict:
    """{name: (representation, a function making the kernel)} of KeLP's TREC set-up
    (KeLP's reference parameters; ``wordspace`` the md300 word space), built only with
    arguments every version of the package takes (the speed suite's ``--against`` runs
    them on earlier commits)."""
    from spacy_convkernels import kernels as k

    smoothed = {"lam": 0.4, "mu": 0.4, "threshold": 0.01, "vectors": wordspace}
    return {
        "ST": ("grct", lambda: k.SubtreeKernel(lam=0.4, variant="kelp")),
        "ST-textbook": ("grct", lambda: k.SubtreeKernel(lam=0.4, variant="textbook")),
        "SST": ("grct", lambda: k.SubsetTreeKernel(lam=0.4)),
        "PTK": ("grct", lambda: k.PartialTreeKernel(lam=0.4, mu=0.4, terminal_factor=5)),
        "SPTK": ("lct", lambda: k.SmoothedPartialTreeKernel(terminal_factor=0.2, **smoothed)),
        "CSPTK": ("clct", lambda: k.CompositionalSmoothedPartialTreeKernel(terminal_factor=1.0, **smoothed)),
    }


def timed(function, *args, **kwargs):
    """(function(*args, **kwargs), its wall seconds, the process's CPU seconds in it)."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - wall, time.process_time() - cpu


def rss_mb(field: str = "VmRSS") -> float:
    """A resident memory figure of this process from /proc/self/status, in MB (Linux):
    VmRSS, the memory now; VmHWM, its peak, which "5" written to /proc/self/clear_refs
    resets. Not ``ru_maxrss`` for a peak: in a spawned process it never falls below the
    forked parent's RSS at exec (Linux keeps the old memory's peak there)."""
    with open("/proc/self/status") as status:
        return int(status.read().split(f"{field}:")[1].split()[0]) / 1024


def reset_peak() -> None:
    """Make this process's peak resident memory (VmHWM) start again from its RSS now
    (Linux 4.0: "5" written to /proc/self/clear_refs)."""
    Path("/proc/self/clear_refs").write_text("5")


def distinct_copies(structures: list, n: int) -> list:
    """n structures: ``structures`` repeated, every copy a distinct, uncompiled object (each
    compiled and normalized on its own, as distinct sentences would be)."""
    repeats = -(-n // len(structures))
    return [s for _ in range(repeats) for s in pickle.loads(pickle.dumps(structures))][:n]


def table(header: list[str], rows) -> list[str]:
    """The lines of a Markdown table: ``header``, then each row's cells (``str`` of each)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]


def counting(kernel_class: type) -> type:
    """``kernel_class`` counting in ``EVALUATIONS["kernel"]`` the kernel values between two
    structures of its Gram and pair calls (clones count too)."""

    class Counting(kernel_class):
        def gram(self, X, Y=None, **kwargs):
            EVALUATIONS["kernel"] += len(X) * (len(X) - 1) // 2 if Y is None else len(X) * len(Y)
            return super().gram(X, Y, **kwargs)

        def pairs(self, X, index_pairs, **kwargs):
            EVALUATIONS["kernel"] += len(index_pairs)
            return super().pairs(X, index_pairs, **kwargs)

    Counting.__name__ = Counting.__qualname__ = f"Counting{kernel_class.__name__}"
    return Counting


def write_json(path: Path, value) -> None:
    """``value`` as JSON in ``path``, through a temporary file renamed on success."""
    from spacy_convkernels.utils.outputs import replacing

    with replacing(path) as temporary:
        temporary.write_text(json.dumps(value, indent=1) + "\n", encoding="utf-8")


def write_jsonl(path: Path, values) -> None:
    """``values`` one JSON a line in ``path``, through a temporary file renamed on success."""
    from spacy_convkernels.utils.outputs import replacing

    with replacing(path) as temporary:
        temporary.write_text("".join(json.dumps(value) + "\n" for value in values), encoding="utf-8")


def add_gazetteer(config, patterns: Path, *, before: str = "ner") -> None:
    """Put an ``entity_ruler`` with the patterns of the JSONL file ``patterns`` (matched on
    ``LOWER``) before the component ``before`` of a training config (a thinc ``Config``):
    the entities it matches are kept, the ``ner`` after it predicts the rest."""
    pipeline = config["nlp"]["pipeline"]
    pipeline.insert(pipeline.index(before), "entity_ruler")
    config["components"]["entity_ruler"] = {"factory": "entity_ruler", "phrase_matcher_attr": "LOWER"}
    config["initialize"]["components"]["entity_ruler"] = {
        "patterns": {"@readers": "spacy_convkernels.RulerPatterns.v1", "path": str(patterns)}
    }


TRANSFORMER_NER = {
    "factory": "ner",
    "model": {
        "@architectures": "spacy.TransitionBasedParser.v2",
        "state_type": "ner",
        "extra_state_tokens": False,
        "hidden_width": 64,
        "maxout_pieces": 2,
        "use_upper": False,
        "nO": None,
        "tok2vec": {
            "@architectures": "spacy-transformers.TransformerListener.v1",
            "grad_factor": 1.0,
            "upstream": "transformer",
            "pooling": {"@layers": "reduce_mean.v1"},
        },
    },
}


def use_transformer_ner(config, transformer: Path) -> None:
    """Make the ``ner`` of a training config (a thinc ``Config``) a new one over a
    ``transformer`` component (the local Hugging Face model folder ``transformer``, the
    ``relations_transformer`` config's block), put before it and trained in the same run,
    with that config's optimizer (5e-5 after a warm-up, decaying to 0 at the config's last
    step: ``max_steps``, else the steps of ``max_epochs`` are unknown and it stays 2,000)."""
    from thinc.api import Config

    from spacy_convkernels.configs import config_path

    source = Config().from_disk(config_path("relations_transformer"), interpolate=False)
    pipeline = config["nlp"]["pipeline"]
    pipeline.insert(pipeline.index("ner"), "transformer")
    config["components"]["transformer"] = source["components"]["transformer"]
    config["components"]["ner"] = TRANSFORMER_NER
    config["paths"]["transformer"] = str(transformer)
    config["training"]["optimizer"] = source["training"]["optimizer"]
    if config["training"]["max_steps"]:
        config["training"]["optimizer"]["learn_rate"]["total_steps"] = config["training"]["max_steps"]


class ResultsFile(dict):
    """A benchmark's rows by key as they come, kept in the JSON file ``path`` (``--results``)
    that several runs of one script may share, and the page ``draw`` makes of them (none
    when the file does not exist yet); :meth:`record` adds one."""

    def __init__(self, path: Path, *, draw: Callable[[dict], None]):
        super().__init__(json.loads(path.read_text()) if path.exists() else {})
        self.path = path
        self.draw = draw

    def record(self, key: str, **values) -> None:
        """Keep the row, with any row another run has written meanwhile; write the file
        (a temporary file renamed) and draw the page."""
        if self.path.exists():
            written = json.loads(self.path.read_text())
            self.update({name: row for name, row in written.items() if name not in self})
        self[key] = values
        from spacy_convkernels.utils.outputs import replacing

        with replacing(self.path) as temporary:
            temporary.write_text(json.dumps(self, indent=1))
        self.draw(self)
        print(key, values, flush=True)


def fill_page(path: Path, parts: dict[str, list[str]], *, page: str | None = None) -> None:
    """Write each generated part of the page ``path`` (a table, a list) between its lines
    ``<!-- NAME -->`` and ``<!-- /NAME -->``: the page's hand-written text around them
    stays. A page not yet there (``--docs`` elsewhere) starts from docs/results/'s page
    (``page``, else ``path``'s name); a part whose lines the page lacks is an error that
    names it."""
    from locations import RESULTS

    from spacy_convkernels.utils.outputs import replacing

    text = (path if path.exists() else RESULTS / (page or path.name)).read_text(encoding="utf-8")
    for name, lines in parts.items():
        start, end = f"<!-- {name} -->\n", f"<!-- /{name} -->"
        if start not in text or end not in text.split(start, 1)[-1]:
            raise SystemExit(f"{path}: no lines '<!-- {name} -->' and '<!-- /{name} -->' for its part {name!r}")
        head, rest = text.split(start, 1)
        text = head + start + "".join(line + "\n" for line in lines) + end + rest.split(end, 1)[1]
    with replacing(path) as temporary:
        temporary.write_text(text, encoding="utf-8")
