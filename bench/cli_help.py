"""Wall time of the command line's help: the median of ``spacy-convkernels --help`` over runs.

Each run is a fresh process (the installed script when there is one, else
``python -m spacy_convkernels``), so every import is paid as a user pays it. Extra
arguments replace ``--help``:

    python bench/cli_help.py
    python bench/cli_help.py --runs 20 -- nystroem fit --help
"""

import argparse
import shutil
import statistics
import subprocess
import sys
import time


def command() -> list[str]:
    """The program: the installed script, else the module it calls."""
    script = shutil.which("spacy-convkernels")
    return [script] if script else [sys.executable, "-m", "spacy_convkernels"]


def median_seconds(arguments: list[str], *, runs: int) -> float:
    """The median wall time of ``runs`` processes running the command line with ``arguments``."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([*command(), *arguments], check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="processes to time (default 10)")
    parser.add_argument("arguments", nargs="*", default=["--help"], help="the command line's arguments (--help)")
    options = parser.parse_args()
    seconds = median_seconds(options.arguments, runs=options.runs)
    print(f"spacy-convkernels {' '.join(options.arguments)}: median {seconds:.3f} s over {options.runs} runs")


if __name__ == "__main__":
    main()
