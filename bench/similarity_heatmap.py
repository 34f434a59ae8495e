"""Kernel-similarity heatmap of the bundled TREC sample.

    python bench/similarity_heatmap.py [--docs docs]

The normalized PTK (lambda = mu = 0.4, terminal factor 5, KeLP's configuration) of the GRCT
trees of the 60 questions of spacy_convkernels/data/trec-qc-kelp-sample, grouped by their
coarse class. Needs matplotlib (the plot extra); needs no ../shared.
"""

import argparse
from importlib.resources import files

from locations import add_outputs

from spacy_convkernels.corpora import read_klp
from spacy_convkernels.kernels import PartialTreeKernel
from spacy_convkernels.plots import similarity_heatmap
from spacy_convkernels.utils.outputs import replacing


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_outputs(parser, "similarity_heatmap", results=False)
    args = parser.parse_args()
    from matplotlib.figure import Figure

    examples = list(read_klp(files("spacy_convkernels.data") / "trec-qc-kelp-sample" / "TREC_10.coarse.first60.klp.gz"))
    figure = Figure(figsize=(7.5, 6.2))
    ax = similarity_heatmap(
        PartialTreeKernel(0.4, mu=0.4, terminal_factor=5.0),
        [e.trees["grct"] for e in examples],
        [e.labels[0] for e in examples],
        ax=figure.add_subplot(),
    )
    ax.set_title(f"PTK on GRCT trees of {len(examples)} TREC questions, by coarse class")
    figure.tight_layout()
    out = args.docs / "similarity_heatmap.png"
    with replacing(out) as temporary:
        figure.savefig(temporary, dpi=110, format="png")
    print(out)


if __name__ == "__main__":
    main()
