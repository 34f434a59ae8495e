"""Small samples of real data installed with the package (source and licence in README.md
here): ``importlib.resources.files("spacy_convkernels.data") / "trec-qc-kelp-sample"``."""
