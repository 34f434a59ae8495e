"""Where the benchmarks read and write: one rule for every script.

The project's data are read from ``$SPACY_CONVKERNELS_SHARED`` or else ``../shared``
beside the clone (the rule of the tests, ``tests/data_paths.py``). A benchmark writes the
figures it measured as JSON to ``--results`` (default ``docs/results/NAME.json``) and the
pages and plots drawn from them into the folder ``--docs`` (default ``docs/results/``):
results in docs/results/, guides in docs/. Those that can redraw without computing take
``--report-only``.
"""

import argparse
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("SPACY_CONVKERNELS_SHARED", ROOT.parent / "shared"))
DATA = SHARED / "data"
MD_MODEL = SHARED / "models" / "en_core_web_md-3.8.0"
RESULTS = ROOT / "docs" / "results"


def add_outputs(
    parser: argparse.ArgumentParser, name: str, *, results: bool = True, docs: bool = True, report_only: bool = False
) -> None:
    """``--results`` (docs/results/NAME.json) and ``--docs`` (docs/results/), as the benchmark
    writes them, and ``--report-only`` for one that can redraw its page from ``--results``."""
    if results:
        parser.add_argument(
            "--results", type=Path, default=RESULTS / f"{name}.json", help="the JSON of the figures measured"
        )
    if docs:
        parser.add_argument("--docs", type=Path, default=RESULTS, help="the folder of the pages and plots")
    if report_only:
        parser.add_argument(
            "--report-only", action="store_true", help="redraw the page (and plot) from --results, computing nothing"
        )
