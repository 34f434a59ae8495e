"""Why the kernel features help the transformer on TREC QC (issue 29, point 5).

    HF_HUB_OFFLINE=1 python bench/qc_transformer_explain.py --keep DIR [--scores DIR] [--docs docs/results]
        [--seed 0] [--examples 5] [--frozen]

Reads the test labels that bench/qc_transformer.py kept (``--scores``) for the transformer
alone and for the transformer + kernels (all training questions, ``--seed``), and the
combined pipeline it saved with ``--keep DIR``. For the first ``--examples`` test questions the
combined model gets right and the transformer alone gets wrong, it parses the question
(md and kernel_trees, as the benchmark does) and, in each SVM block of the combined
textcat, finds the support question whose term alpha K(question, support) adds most to
the decision of the right class; ``explain`` draws the fragments the two trees share
(docs/results/qc_transformer_explain/*.svg) and a section of docs/results/qc_transformer_explain.md
lists them (seeds other than 0: qc_transformer_explain_seedN.md).
"""

import argparse
import json
from pathlib import Path

import numpy as np
import spacy
from common import questions
from locations import DATA, MD_MODEL, ROOT, add_outputs
from qc_transformer import kept_name, settings_of

from spacy_convkernels.kernels.explain import explain, to_svg
from spacy_convkernels.ml.fitted_doc_features import doc_tree
from spacy_convkernels.ml.kernel_blocks import blocks_of
from spacy_convkernels.utils.outputs import replacing


def recorded_labels(scores: Path, method: str, questions: int, seed: int, settings: str) -> np.ndarray:
    """The test labels of the run of ``method`` at all training questions, ``seed`` and ``settings``."""
    path = scores / f"{kept_name(method, questions, seed)} {settings}.npz"
    if not path.exists():
        raise SystemExit(f"no scores of {method!r}, seed {seed}, {settings}, at all training questions in {scores}")
    return np.load(path)["test_predicted"]


def strongest_support(block, doc, label: str):
    """(the question's tree, the support tree of ``block``'s SVM for ``label`` whose term
    alpha K adds most to ``doc``'s decision, that term, the block's kernel)."""
    svm = block.attrs["encoder"].estimator
    tree = doc_tree(doc, block.attrs["representation"])
    row = list(svm.classes_).index(label)
    terms = svm.dual_coef_[row] * svm.kernel.gram([tree], svm.support_vectors_)[0]
    best = int(np.argmax(terms))
    return tree, svm.support_vectors_[best], float(terms[best]), svm.kernel


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, required=True, help="the folder of bench/qc_transformer.py --keep")
    add_outputs(parser, "qc_transformer")
    parser.add_argument("--scores", type=Path, default=ROOT / "build" / "work" / "qc_transformer_scores")
    parser.add_argument("--settings", default="max 800 steps, eval every 160, head learn rate 0.001", help="the run's")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--examples", type=int, default=5)
    parser.add_argument("--frozen", action="store_true", help="the frozen transformer, alone and with the kernels")
    args = parser.parse_args()
    without = "frozen transformer" if args.frozen else "transformer"
    combined_method = f"{without} + kernels"
    results = json.loads(args.results.read_text(encoding="utf-8"))
    test = questions(DATA / "trec-qc-kelp" / "TREC_10.coarse.klp.gz")
    gold = np.array([label for _, label in test])
    n = results["setup"]["questions"]
    alone = recorded_labels(args.scores, without, n, args.seed, args.settings)
    combined = recorded_labels(args.scores, combined_method, n, args.seed, args.settings)
    helped = np.flatnonzero((combined == gold) & (alone != gold))
    hurt = np.flatnonzero((combined != gold) & (alone == gold))
    nlp = spacy.load(args.keep / kept_name(combined_method, n, args.seed))
    md = spacy.load(MD_MODEL, exclude=["ner", "senter"])
    md.add_pipe("kernel_trees", config=settings_of("kernel_trees"))
    blocks = blocks_of(nlp.get_pipe("textcat").model.get_ref("kernel_features"))
    training = [text for text, _ in questions(DATA / "trec-qc-kelp" / "train_5500.coarse.klp.gz")]
    text_of = {  # a support question's text, by its tree in each block's representation
        (block.attrs["representation"], doc_tree(doc, block.attrs["representation"])): doc.text
        for doc in md.pipe(training, batch_size=256)
        for block in blocks
    }
    page = ("qc_transformer_explain_frozen" if args.frozen else "qc_transformer_explain") + (
        f"_seed{args.seed}" if args.seed else ""
    )
    figures = args.docs / page
    lines = [
        f"# What the kernel features add to the {without} on TREC QC",
        "",
        f"Made by `python bench/qc_transformer_explain.py{' --frozen' if args.frozen else ''}` from"
        f" the test labels bench/qc_transformer.py kept (seed {args.seed}, all training questions, {args.settings})."
        f" Of TREC-10's 500 test questions, the {combined_method} get {len(helped)} right that the {without}"
        f" alone gets wrong, and {len(hurt)} wrong that it gets right."
        + (
            " For the first of the former, each SVM block's support question that adds most to the decision of"
            " the right class (its term alpha K(question, support)), and the fragments the two trees share"
            " (`explain`, largest contribution first; the drawings colour them in both trees)."
            if len(helped)
            else " There is no question the kernels fix here, so none is drawn."
        ),
        "",
    ]
    for i in helped[: args.examples]:
        text, label = test[i]
        doc = md(text)
        lines += [f"## {text}", "", f"Right: {label}; the {without} alone: {alone[i]}.", ""]
        for b, block in enumerate(blocks):
            tree, support, term, kernel = strongest_support(block, doc, label)
            support_text = text_of.get((block.attrs["representation"], support), "?")
            explanation = explain(kernel, tree, support, top=3)
            name = f"q{i}-block{b}.svg"
            with replacing(figures / name) as temporary:
                temporary.write_text(to_svg(explanation, tree, support), encoding="utf-8")
            fragments = "; ".join(f"`{m.fragment}` ({100 * m.share:.0f} %)" for m in explanation.matches)
            lines += [
                f'- block {b} ({type(kernel).__name__}): support question "{support_text}", term {term:+.3f};'
                f" shared fragments: {fragments}. ![{name}]({page}/{name})",
            ]
        lines.append("")
    with replacing(args.docs / f"{page}.md") as temporary:
        temporary.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
