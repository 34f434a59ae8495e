"""Seconds and peak memory of the readers and candidates on the adversarial inputs of
issue 36, each bounded per document or per line (goal: under 5 s and 200 MB each):

- ``standoff_document``: 1,000 Binding events over a 2,000-protein ``Equiv`` group (a
  122 KB document; uncapped per document: 1 million interactions, 1.58 GB, 21 s);
- ``standoff_nesting``: a chain of 2,000 nested events, inner events first, read with
  ``skip_errors`` (refused beyond 100 levels whatever the order of the lines);
- ``entity_pairs``: ``EntityPairCandidates`` on 20 sentences of 1,000 entities each
  (uncapped per document: 20,000 pairs, 16 s);
- ``klp_long_line``: a 291 KB ``.klp.gz`` whose first line is 300 MB (899 MB before);
- ``vectors_dev_zero``: ``WordVectors.load("/dev/zero")`` (a ``MemoryError`` before);
- ``penman_deep``: a PENMAN graph nested 600 deep then a good one, with ``skip_errors``;
- ``jsonl_max_length``: a relations JSONL record of 1.2 million characters then a good
  one, with ``skip_errors``.

Each case runs in a child process; memory is its peak RSS over the RSS after imports.

    python bench/reader_bounds.py [--cases standoff_document ...] [--results FILE]
"""

import argparse
import gzip
import json
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

from locations import add_outputs

from spacy_convkernels.utils.outputs import replacing


def _blank():
    """A blank English pipeline, made (and its tokenizer used) before the timing starts."""
    import spacy

    nlp = spacy.blank("en")
    nlp.make_doc("RAS binds RAF.")
    return nlp


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _proteins(directory: Path, n: int, events: list[str]) -> Path:
    """A standoff document of ``n`` proteins, a Binding trigger T{n+1} and ``events``."""
    names = [f"P{i:04d}" for i in range(n)]
    a1 = [f"T{i + 1}\tProtein {6 * i} {6 * i + 5}\t{name}" for i, name in enumerate(names)]
    a2 = [f"T{n + 1}\tBinding {6 * n} {6 * n + 5}\tbinds"] + events
    (directory / "doc.txt").write_text(" ".join(names) + " binds\n", encoding="utf-8")
    (directory / "doc.a1").write_text("\n".join(a1) + "\n", encoding="utf-8")
    (directory / "doc.a2").write_text("\n".join(a2) + "\n", encoding="utf-8")
    return directory / "doc.txt"


def standoff_document(directory: Path):
    from spacy_convkernels.corpora import read_standoff

    events = [f"E{k}\tBinding:T2001 Theme:T{2 * k - 1} Theme2:T{2 * k}" for k in range(1, 1001)]
    path = _proteins(directory, 2000, events + ["*\tEquiv " + " ".join(f"T{i}" for i in range(1, 2001))])
    nlp = _blank()
    return lambda: f"{len(next(read_standoff(path, nlp))._.kernel_interactions):,d} interactions"


def standoff_nesting(directory: Path):
    from spacy_convkernels.corpora import read_standoff

    chain = [f"E{k}\tBinding:T101 Theme:E{k + 1}" for k in range(1, 2000)] + ["E2000\tBinding:T101 Theme:T1"]
    path = _proteins(directory, 100, chain[::-1])
    errors: list = []
    nlp = _blank()
    return lambda: (
        f"{len(next(read_standoff(path, nlp, skip_errors=True, errors=errors))._.kernel_interactions)} interactions, "
        f"{len(errors):,d} events refused"
    )


def entity_pairs(directory: Path):
    from spacy.tokens import Doc, Span
    from spacy.vocab import Vocab

    from spacy_convkernels.components.relation_candidates import entity_pair_candidates

    words = [w for i in range(1000) for w in ([","] if i else []) + [f"P{i}"]]
    heads = [0 if w != "," else i + 1 for i, w in enumerate(words)]
    deps = ["ROOT"] + ["punct" if w == "," else "conj" for w in words[1:]]
    one = Doc(Vocab(), words=words, heads=heads, deps=deps)
    one.ents = [Span(one, i, i + 1, "GENE") for i in range(0, len(words), 2)]
    doc = Doc.from_docs([one] * 20)
    return lambda: f"{len(entity_pair_candidates()(doc)):,d} pairs"


def klp_long_line(directory: Path):
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
    from spacy_convkernels.kernels import VectorsError, WordVectors

    def run():
        try:
            WordVectors.load("/dev/zero")
        except VectorsError as error:
            return f"VectorsError: {str(error)[:60]}..."
        return "read?"

    return run


def penman_deep(directory: Path):
    from spacy_convkernels.corpora import read_penman

    deep = "".join(f"(n{i} / c :ARG0 " for i in range(599)) + "(x / y)" + ")" * 599
    good = '(b / bind-01 :ARG0 (p / protein :name (n / name :op1 "Sos")))'
    path = directory / "deep.txt"
    path.write_text(f"# ::id deep\n# ::snt deep\n{deep}\n\n# ::id good\n# ::snt Sos binds\n{good}\n", encoding="utf-8")
    nlp = _blank()
    return lambda: f"{len(list(read_penman(path, nlp, skip_errors=True)))} graph kept"


def jsonl_max_length(directory: Path):
    from spacy_convkernels.corpora import read_relations_jsonl

    path = directory / "long.jsonl"
    records = [{"text": "RAS binds RAF. " * 80_000}, {"text": "RAS binds RAF."}]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    nlp = _blank()
    return lambda: f"{len(list(read_relations_jsonl(path, nlp, skip_errors=True)))} record kept"


CASES = {
    f.__name__: f
    for f in (
        standoff_document,
        standoff_nesting,
        entity_pairs,
        klp_long_line,
        vectors_dev_zero,
        penman_deep,
        jsonl_max_length,
    )
}


def run_case(name: str) -> dict:
    """Build the case, then time it in this process: seconds, MB over the baseline."""
    with tempfile.TemporaryDirectory() as directory:
        run = CASES[name](Path(directory))
        base = _peak_mb()
        start = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            outcome = run()
        seconds = time.perf_counter() - start
    return {"case": name, "seconds": seconds, "mb": _peak_mb() - base, "warnings": len(caught), "outcome": outcome}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES))
    parser.add_argument("--case", choices=list(CASES), help=argparse.SUPPRESS)  # the child process
    add_outputs(parser, "reader_bounds", docs=False)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(run_case(args.case)))
        return
    rows = []
    for name in args.cases:
        out = subprocess.run([sys.executable, __file__, "--case", name], capture_output=True, text=True)
        if out.returncode:
            print(f"{name:18s}: failed ({out.stderr.strip().splitlines()[-1:]})", flush=True)
            rows.append({"case": name, "failed": out.stderr.strip().splitlines()[-1:]})
            continue
        row = json.loads(out.stdout)
        rows.append(row)
        print(
            f"{name:18s}: {row['seconds']:6.2f} s, peak {row['mb']:6.1f} MB over the baseline, "
            f"{row['warnings']} warnings; {row['outcome']}",
            flush=True,
        )
    with replacing(args.results) as temporary:
        temporary.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
