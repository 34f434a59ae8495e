"""``spacy train`` and ``evaluate relations`` as the relation benchmarks run them:
subprocesses (with ``PYTHONHASHSEED=0``), the training timed, with the seconds until the
pipeline is initialized (spaCy's "Initialized pipeline" line) apart."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path


def train(config: Path, output: Path, overrides: list[str], *, log: Path) -> dict:
    """Train ``config`` into ``output`` with the ``overrides`` (``--section.key value``
    pairs), spaCy's output in ``log``; the seconds to initialize and in all."""
    command = [sys.executable, "-m", "spacy", "train", str(config), "--output", str(output), *overrides]
    start = time.perf_counter()
    initialized = None
    with open(log, "w", encoding="utf-8") as written:
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            # a fixed hash seed: spaCy adds a sourced ner's new labels in the order of a set
            env={**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1", "PYTHONHASHSEED": "0"},
        )
        for line in process.stdout:
            written.write(line)
            written.flush()
            if initialized is None and "Initialized pipeline" in line:
                initialized = time.perf_counter() - start
        if process.wait():
            raise RuntimeError(f"spacy train failed (exit {process.returncode}): see {log}")
    return {
        "initialize_seconds": round(initialized or float("nan"), 1),
        "train_seconds": round(time.perf_counter() - start, 1),
    }


def evaluate_relations(model: Path, corpus: Path, scores: Path, *options: str) -> dict:
    """The scores of ``python -m spacy_convkernels evaluate relations model corpus``
    (with ``options``), kept in ``scores``."""
    command = [sys.executable, "-m", "spacy_convkernels", "evaluate", "relations", str(model), str(corpus)]
    subprocess.run([*command, *options, "--output", str(scores), "--quiet"], check=True, stdout=subprocess.DEVNULL)
    return json.loads(scores.read_text())
