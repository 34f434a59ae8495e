"""The readers and candidates: adversarial inputs (issues 26 and 36: each bounded per
document or per line, goal under 5 s and 200 MB), long CoNLL-U sentences, crowded
sentences of entities, UD English EWT into trees, BioNLP-ST 2013 GE through the standoff
reader."""

import gzip
import json
import tempfile
import warnings
from pathlib import Path

from bench.speed import rate, setting


def blank():
    """A blank English pipeline whose tokenizer has run once."""
    import spacy

    nlp = spacy.blank("en")
    nlp.make_doc("RAS binds RAF.")
    return nlp


def proteins(directory: Path, n: int, events: list[str], extra: str = "") -> Path:
    """A standoff document of ``n`` proteins, a Binding trigger T{n+1} (and a Regulation
    T{n+2} when ``extra``) and ``events``."""
    names = [f"P{i:04d}" for i in range(n)]
    a1 = [f"T{i + 1}\tProtein {6 * i} {6 * i + 5}\t{name}" for i, name in enumerate(names)]
    a2 = [f"T{n + 1}\tBinding {6 * n} {6 * n + 5}\tbinds"]
    a2 += [f"T{n + 2}\tRegulation {6 * n + 6} {6 * n + 15}\tregulates"] if extra else []
    (directory / "doc.txt").write_text(" ".join(names) + " binds" + extra + "\n", encoding="utf-8")
    (directory / "doc.a1").write_text("\n".join(a1) + "\n", encoding="utf-8")
    (directory / "doc.a2").write_text("\n".join(a2 + events) + "\n", encoding="utf-8")
    return directory / "doc.txt"


def standoff_document(directory: Path):
    """1,000 Binding events over a 2,000-protein Equiv group (122 KB; uncapped per
    document: 1 million interactions, 1.58 GB, 21 s)."""
    from spacy_convkernels.corpora import read_standoff

    events = [f"E{k}\tBinding:T2001 Theme:T{2 * k - 1} Theme2:T{2 * k}" for k in range(1, 1001)]
    path = proteins(directory, 2000, events + ["*\tEquiv " + " ".join(f"T{i}" for i in range(1, 2001))])
    nlp = blank()
    return lambda: f"{len(next(read_standoff(path, nlp))._.kernel_interactions):,d} interactions"


def standoff_equiv(directory: Path):
    """2,000 proteins in one Equiv group with one Binding event (68 KB; issue 26)."""
    from spacy_convkernels.corpora import read_standoff

    events = ["E1\tBinding:T2001 Theme:T1 Theme2:T2", "*\tEquiv " + " ".join(f"T{i + 1}" for i in range(2000))]
    path, nlp = proteins(directory, 2000, events, " regulates"), blank()
    return lambda: f"{len(next(read_standoff(path, nlp))._.kernel_interactions):,d} interactions"


def standoff_nested(directory: Path):
    """100 proteins, one Binding of 100 themes and 3 events nesting it (3.7 KB; issue 26)."""
    from spacy_convkernels.corpora import read_standoff

    events = ["E1\tBinding:T101 " + " ".join(f"Theme{i + 1 if i else ''}:T{i + 1}" for i in range(100))]
    events += [f"E{k}\tRegulation:T102 Theme:E1 Cause:E1" for k in (2, 3, 4)]
    path, nlp = proteins(directory, 100, events, " regulates"), blank()
    return lambda: f"{len(next(read_standoff(path, nlp))._.kernel_interactions):,d} interactions"


def standoff_nesting(directory: Path):
    """A chain of 2,000 nested events, inner events first, with ``skip_errors``."""
    from spacy_convkernels.corpora import read_standoff

    chain = [f"E{k}\tBinding:T101 Theme:E{k + 1}" for k in range(1, 2000)] + ["E2000\tBinding:T101 Theme:T1"]
    path, nlp, errors = proteins(directory, 100, chain[::-1]), blank(), []
    return lambda: (
        f"{len(next(read_standoff(path, nlp, skip_errors=True, errors=errors))._.kernel_interactions)} interactions, "
        f"{len(errors):,d} events refused"
    )


def entity_pairs(directory: Path):
    """``EntityPairCandidates`` on 20 sentences of 1,000 entities (uncapped per document:
    20,000 pairs, 16 s)."""
    from spacy.tokens import Doc, Span
    from spacy.vocab import Vocab

    from spacy_convkernels.ml.relation_candidates import entity_pair_candidates

    words = [w for i in range(1000) for w in ([","] if i else []) + [f"P{i}"]]
    heads = [0 if w != "," else i + 1 for i, w in enumerate(words)]
    deps = ["ROOT"] + ["punct" if w == "," else "conj" for w in words[1:]]
    one = Doc(Vocab(), words=words, heads=heads, deps=deps)
    one.ents = [Span(one, i, i + 1, "GENE") for i in range(0, len(words), 2)]
    doc = Doc.from_docs([one] * 20)
    return lambda: f"{len(entity_pair_candidates()(doc)):,d} pairs"


def klp_long_line(directory: Path):
    """A 291 KB ``.klp.gz`` whose first line is 300 MB (899 MB before), ``skip_errors``."""
    from spacy_convkernels.corpora import read_klp

    path = directory / "long.klp.gz"
    with gzip.open(path, "wb") as out:
        out.write(b"A |BS:s| ")
        for _ in range(300):
            out.write(b"x" * (1 << 20))
        out.write(b" |ES|\nB |BS:s| ok |ES|\n")
    size = path.stat().st_size
    return lambda: f"{size / 1024:.0f} KB file, {len(list(read_klp(path, skip_errors=True)))} example kept"


def vectors_dev_zero(directory: Path):
    """``WordVectors.load("/dev/zero")`` (a ``MemoryError`` before)."""
    from spacy_convkernels.kernels import VectorsError, WordVectors

    def run():
        try:
            WordVectors.load("/dev/zero")
        except VectorsError as error:
            return f"VectorsError: {str(error)[:60]}..."
        return "read?"

    return run


def penman_deep(directory: Path):
    """A PENMAN graph nested 600 deep, then a good one, with ``skip_errors``."""
    from spacy_convkernels.corpora import read_penman

    deep = "".join(f"(n{i} / c :ARG0 " for i in range(599)) + "(x / y)" + ")" * 599
    good = '(b / bind-01 :ARG0 (p / protein :name (n / name :op1 "Sos")))'
    path = directory / "deep.txt"
    path.write_text(f"# ::id deep\n# ::snt deep\n{deep}\n\n# ::id good\n# ::snt Sos binds\n{good}\n", encoding="utf-8")
    nlp = blank()
    return lambda: f"{len(list(read_penman(path, nlp, skip_errors=True)))} graph kept"


def jsonl_max_length(directory: Path):
    """A relations JSONL record of 1.2 million characters, then a good one, ``skip_errors``."""
    from spacy_convkernels.corpora import read_relations_jsonl

    path = directory / "long.jsonl"
    records = [{"text": "RAS binds RAF. " * 80_000}, {"text": "RAS binds RAF."}]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    nlp = blank()
    return lambda: f"{len(list(read_relations_jsonl(path, nlp, skip_errors=True)))} record kept"


CASES = [standoff_document, standoff_nesting, entity_pairs, klp_long_line, vectors_dev_zero, penman_deep]
CASES += [jsonl_max_length, standoff_equiv, standoff_nested]


class ReaderBounds:
    """Seconds and peak MB (over the process's after the case is built) of each
    adversarial reader and candidate case (formerly bench/reader_bounds.py and
    bench/standoff_expansion.py; each case's docstring says what it reads)."""

    params = [[case.__name__ for case in CASES]]
    param_names = ["case"]

    def setup(self, case):
        self.directory = tempfile.TemporaryDirectory()
        self.run = {f.__name__: f for f in CASES}[case](Path(self.directory.name))

    def peakmem_read(self, case):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            outcome = self.run()
        return f"{outcome}; {len(caught)} warnings"


class LongConllu:
    """One long CoNLL-U sentence, ``flat`` (every token under the root) or a ``chain`` (each
    under the one before), words over 1,000 forms (formerly bench/conllu_reader.py)."""

    params = [["flat", "chain"], [10_000, 20_000, 40_000, 100_000]]
    param_names = ["shape", "tokens"]

    def setup(self, shape, n):
        import spacy

        self.vocab, self.directory = spacy.blank("en").vocab, tempfile.TemporaryDirectory()
        self.path = Path(self.directory.name) / "long.conllu"
        rows = []
        for i in range(1, n + 1):
            head = 0 if i == 1 else (i - 1 if shape == "chain" else 1)
            rows.append(f"{i}\tw{i % 1000}\tw{i % 1000}\tNOUN\tNN\t_\t{head}\t{'root' if head == 0 else 'dep'}\t_\t_")
        self.path.write_text("\n".join(rows) + "\n\n", encoding="utf-8")

    def time_read(self, *params):
        from spacy_convkernels.corpora.conllu import read_conllu

        return f"{len(list(read_conllu(self.path, self.vocab))[0]):,d} tokens read"


class CrowdedSentence:
    """``entity_pairs`` on one sentence of n entities, a ``list`` (each a ``conj`` of the
    first) or a ``chain`` (each under the one before), at most 1,000 pairs a sentence
    (formerly bench/entity_pairs.py)."""

    params = [["list", "chain"], [300, 1000]]
    param_names = ["shape", "entities"]

    def setup(self, shape, n):
        from spacy.tokens import Doc
        from spacy.vocab import Vocab

        words, heads, deps = [], [], []
        for i in range(n):
            if i:
                words, heads, deps = words + [","], heads + [len(words) + 1], deps + ["punct"]
            words.append(f"P{i}")
            heads.append(0 if shape == "list" or i == 0 else len(words) - 3)
            deps.append("ROOT" if i == 0 else "conj")
        self.doc = Doc(Vocab(), words=words, heads=heads, deps=deps, lemmas=[w.lower() for w in words])
        self.doc.ents = [self.doc.char_span(t.idx, t.idx + len(t), label="GENE") for t in self.doc if t.text != ","]

    def time_pairs(self, *params):
        from spacy_convkernels.structures.relations import entity_pairs

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return f"{len(entity_pairs(self.doc, max_pairs_per_sentence=1000)):,d} candidates"


class DependencyTrees:
    """UD English EWT's training sentences into GRCT, LCT, LOCT, CGRCT and CLCT, one core:
    as Tree objects (``span_to_trees``), as the bracket strings ``kernel_trees`` writes,
    compiled as the kernels that match labels (SPTK, CSPTK) read them, and as strings read
    back and compiled, what a textcat after ``kernel_trees`` does (formerly
    bench/dependency_trees.py)."""

    params = [["trees", "strings", "compiled", "read back"]]
    param_names = ["as"]

    def setup(self, what):
        from spacy_convkernels.corpora import read_conllu

        path = setting("data") / "ud-english-ewt" / "en_ewt-ud-train.conllu"
        if not path.exists():
            raise NotImplementedError(f"{path} is absent")
        self.sentences = [sentence for doc in read_conllu(path) for sentence in doc.sents]
        self.n = len(self.sentences)

    @rate("sentences")
    def time_convert(self, what):
        from spacy_convkernels import Tree
        from spacy_convkernels.structures import span_to_trees

        for sentence in self.sentences:
            trees = span_to_trees(sentence)
            if what == "strings":
                {name: str(tree) for name, tree in trees.items()}
            elif what == "compiled":
                [tree.compiled.by_label for tree in trees.values() if tree is not None]
            elif what == "read back":
                [Tree.from_string(str(tree)).compiled.by_label for tree in trees.values() if tree is not None]


class BionlpCorpus:
    """BioNLP-ST 2013 GE train and devel through the standoff reader, tokenization
    included, with their counts (formerly bench/bionlp_corpus.py)."""

    params = [["train", "devel"]]
    param_names = ["split"]

    def setup(self, split):
        import spacy

        self.folder = setting("data") / "bionlp-st-2013-ge" / "original-data" / split
        if not self.folder.exists():
            raise NotImplementedError(f"{self.folder} is absent")
        self.nlp, self.n = spacy.blank("en"), len(list(self.folder.glob("*.txt")))

    @rate("documents")
    def time_read(self, split):
        from collections import Counter

        from spacy_convkernels.corpora import read_standoff

        counts = Counter()
        docs = list(read_standoff(self.folder, self.nlp, counts=counts))
        keys = ("documents", "proteins", "triggers", "events", "interactions", "misaligned", "equiv")
        return ", ".join(f"{key} {counts[key]:,}" for key in keys) + f", tokens {sum(map(len, docs)):,}"
