"""Seconds and peak memory of reading the two standoff documents of issue 26 that multiply:
2,000 proteins in one ``Equiv`` group with one Binding event (a 68 KB ``.a1``/``.a2``
pair), and 100 proteins with one Binding of 100 themes and 3 events nesting it (3.7 KB).
Each case runs in a child process; memory is its peak RSS over the RSS after imports.

    python bench/standoff_expansion.py [--cap 1000]

``--cap 0`` reads without a bound (``max_interactions_per_event=None``: gigabytes).
"""

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

CASES = ("equiv", "nested")


def write_case(directory: Path, case: str) -> Path:
    """The document of ``case`` in ``directory``: its ``.txt`` path."""
    n = 2000 if case == "equiv" else 100
    names = [f"P{i:04d}" for i in range(n)]
    text = " ".join(names) + " binds regulates"
    a1 = [f"T{i + 1}\tProtein {6 * i} {6 * i + 5}\t{name}" for i, name in enumerate(names)]
    binding, regulates = 6 * n, 6 * n + 6
    a2 = [
        f"T{n + 1}\tBinding {binding} {binding + 5}\tbinds",
        f"T{n + 2}\tRegulation {regulates} {regulates + 9}\tregulates",
    ]
    if case == "equiv":
        a2 += [f"E1\tBinding:T{n + 1} Theme:T1 Theme2:T2", "*\tEquiv " + " ".join(f"T{i + 1}" for i in range(n))]
    else:
        a2.append(f"E1\tBinding:T{n + 1} " + " ".join(f"Theme{i + 1 if i else ''}:T{i + 1}" for i in range(n)))
        a2 += [f"E{k}\tRegulation:T{n + 2} Theme:E1 Cause:E1" for k in (2, 3, 4)]
    (directory / "doc.txt").write_text(text + "\n", encoding="utf-8")
    (directory / "doc.a1").write_text("\n".join(a1) + "\n", encoding="utf-8")
    (directory / "doc.a2").write_text("\n".join(a2) + "\n", encoding="utf-8")
    return directory / "doc.txt"


def run_case(case: str, cap: int | None) -> dict:
    """Read the case's document in this process: seconds, MB over the baseline, sizes."""
    import spacy

    from spacy_convkernels.corpora import read_standoff

    nlp = spacy.blank("en")
    with tempfile.TemporaryDirectory() as directory:
        path = write_case(Path(directory), case)
        size = sum(p.stat().st_size for p in Path(directory).glob("doc.a*"))
        list(read_standoff(write_case(Path(tempfile.mkdtemp()), "nested"), nlp, max_interactions_per_event=1))
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        start = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            (doc,) = read_standoff(path, nlp, max_interactions_per_event=cap)
        seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "case": case,
        "kb": size / 1024,
        "seconds": seconds,
        "mb": peak - base,
        "interactions": len(doc._.kernel_interactions),
        "warnings": len(caught),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cap", type=int, default=1000, help="max_interactions_per_event, 0 for None")
    parser.add_argument("--case", choices=CASES, help=argparse.SUPPRESS)  # the child process
    args = parser.parse_args()
    cap = args.cap or None
    if args.case:
        print(json.dumps(run_case(args.case, cap)))
        return
    print(f"max_interactions_per_event = {cap}")
    for case in CASES:
        out = subprocess.run(
            [sys.executable, __file__, "--case", case, "--cap", str(args.cap)], capture_output=True, text=True
        )
        if out.returncode:
            print(f"{case:7s}: failed ({out.stderr.strip().splitlines()[-1:]})")
            continue
        r = json.loads(out.stdout)
        print(
            f"{case:7s}: {r['kb']:5.1f} KB .a1/.a2, {r['seconds']:6.2f} s, peak {r['mb']:7.1f} MB over the baseline, "
            f"{r['interactions']:,d} interactions, {r['warnings']} warnings",
            flush=True,
        )


if __name__ == "__main__":
    main()
