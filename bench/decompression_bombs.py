"""Peak memory and seconds of the commands given the decompression bombs of issue 62: a
Nystroem model whose normalization is 20,000 x 20,000 or 40,000 x 40,000 deflated zeros
(3.1 and 12.5 MB) to ``nystroem transform``, a DocBin of 3 GiB or 9.5 GiB of zlib'd zeros
(3.1 and 9.9 MB) to ``trees``. Each command runs under ``/usr/bin/time -v``, with an
address-space limit when ``--limit MB`` is given.

    python bench/decompression_bombs.py --folder /tmp/bombs [--limit 2048] [--cases npz20k spacy3g]

The commands run in the folder, so the package is the one on PYTHONPATH (else the
installed one): PYTHONPATH=/another/checkout measures that code on the same files.
"""

import argparse
import re
import resource
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from bombs import deflated_zero_array, stored, zip64, zlib_zeros  # noqa: E402

SAMPLE = ROOT / "spacy_convkernels" / "data" / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"
COMMAND = [sys.executable, "-m", "spacy_convkernels"]


def make(folder: Path) -> dict[str, list[str]]:
    """Write the model, its two bombs and the two DocBin bombs; the command of each case."""
    model = folder / "model.npz"
    if not model.exists():
        fit = ["nystroem", "fit", str(SAMPLE), "-o", str(model), "--n-components", "4", "--quiet"]
        subprocess.run([*COMMAND, *fit], cwd=folder, check=True)
    with zipfile.ZipFile(model) as archive:
        kept = [stored(name, archive.read(name)) for name in ("settings.npy", "landmarks.npy")]
    cases = {}
    for name, n in (("npz20k", 20_000), ("npz40k", 40_000)):
        path = folder / f"{name}.npz"
        if not path.exists():
            path.write_bytes(zip64([*kept, deflated_zero_array("normalization.npy", (n, n))]))
        cases[name] = ["nystroem", "transform", str(path), str(SAMPLE), "-o", str(folder / "v.npy"), "--quiet"]
    for name, size in (("spacy3g", 3 << 30), ("spacy9g", 19 << 29)):
        path = folder / f"{name}.spacy"
        if not path.exists():
            path.write_bytes(zlib_zeros(b"", size))
        cases[name] = ["trees", str(path), "-o", str(folder / "trees.txt"), "--quiet"]
    return cases


def measure(command: list[str], folder: Path, limit: int | None) -> tuple[float, float, int, str]:
    """(peak resident MB, seconds, exit status, last line of stderr) of a command run in
    ``folder`` (not in a checkout, whose package ``python -m`` would take before PYTHONPATH's)."""

    def limited():
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limit << 20, resource.RLIM_INFINITY))

    done = subprocess.run(
        ["/usr/bin/time", "-v", *COMMAND, *command], capture_output=True, text=True, cwd=folder, preexec_fn=limited
    )
    peak = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr).group(1)) / 1024
    clock = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", done.stderr)
    seconds = int(clock.group(1) or 0) * 3600 + int(clock.group(2)) * 60 + float(clock.group(3))
    lines = [line for line in done.stderr.splitlines() if line and not line.startswith("\t")]
    last = next((line for line in reversed(lines) if not line.startswith(("Command exited", "Command terminated"))), "")
    return peak, seconds, done.returncode, last


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, required=True, help="where the files are written (about 30 MB)")
    parser.add_argument("--limit", type=int, default=None, help="address-space limit of each command, MB")
    parser.add_argument("--cases", nargs="+", default=None, help="npz20k npz40k spacy3g spacy9g (default: all)")
    arguments = parser.parse_args()
    arguments.folder.mkdir(parents=True, exist_ok=True)
    cases = make(arguments.folder)
    print("| case | file | peak MB | seconds | status | last line |\n|---|---|---|---|---|---|")
    for name in arguments.cases or cases:
        path = Path(cases[name][2] if name.startswith("npz") else cases[name][1])
        peak, seconds, status, last = measure(cases[name], arguments.folder, arguments.limit)
        size = path.stat().st_size / 1e6
        print(f"| {name} | {size:.1f} MB | {peak:,.0f} | {seconds:.1f} | {status} | {last[:160]} |")


if __name__ == "__main__":
    main()
