"""The demo's steps, run by ``spacy-convkernels demo`` (see :mod:`spacy_convkernels.cli.demo`):
imported only when the demo runs, so that the command line's help stays fast."""

import random
import time
from contextlib import contextmanager

import numpy as np
import spacy
from sklearn.svm import SVC
from spacy.language import Language
from spacy.tokens import Doc, DocBin
from spacy.training import Example
from spacy.util import fix_random_seed, load_config, registry
from tqdm import tqdm

from ..approx import KLSH, Nystroem
from ..components.relation_evaluation import relation_component
from ..components.relation_extractor import RelationExtractor
from ..components.relation_scores import Relation
from ..configs import config_path
from ..corpora import read_klp, read_standoff
from ..corpora.examples import training_example
from ..data.samples import DOCUMENTS, PARSES, QUESTIONS, TRAINING_DOCUMENTS
from ..errors import ConvKernelsError, InvalidParameterError
from ..kernels import PartialTreeKernel
from ..kernels.base import max_threads, n_threads, set_max_threads
from ..structures.dependency import REPRESENTATIONS, span_to_trees
from ..structures.relations import GoldRelations, role_key
from ..utils.log import quiet
from .pipelines import load_pipeline

PARSE_ATTRS: list[int | str] = ["TAG", "POS", "MORPH", "LEMMA", "DEP", "HEAD", "SENT_START"]
STORED = "en_core_web_md 3.8.0 (parses stored with the package; --model parses live)"
REFIT_EPOCHS = 8  # the bionlp_relations config's refit: model-best's epochs on GE, the median of three seeds
PREDICTIONS_SHOWN = 8


def run_demo(*, model: str | None, n_process: int, n_jobs) -> None:
    """Every step, in order, printed as it ends (see :mod:`spacy_convkernels.cli.demo`)."""
    started = time.perf_counter()
    questions = [(example.texts["quest"], example.labels[0].split(":")[0]) for example in read_klp(QUESTIONS)]
    nlp, parse, parser_name = _parser(model, n_process)
    _say(f"spacy-convkernels demo: {len(questions)} TREC questions and 21 BioNLP GE documents, parsed by {parser_name}")
    docs = parse(nlp.make_doc(text) for text, _ in questions)
    trees = _trees(docs, questions)
    G = _kernel_values(trees, questions, n_jobs)
    _nystroem(trees, G, n_jobs)
    _klsh(trees, questions, n_jobs)
    _classifier(G, questions)
    _relations(nlp, parse, n_jobs)
    _say(f"\nDone in {time.perf_counter() - started:.1f} s.")


def _parser(model: str | None, n_process: int):
    """(the pipeline whose tokenizer makes the Docs, a function parsing Docs and returning
    them as a list, the parser's name)."""
    if model is None:
        nlp = spacy.blank("en")
        stored = {doc.text: doc for doc in DocBin().from_disk(PARSES).get_docs(nlp.vocab)}
        return nlp, (lambda docs: [_copy_parse(doc, stored) for doc in docs]), STORED
    nlp = load_pipeline(model, exclude=["ner"])
    if "parser" not in nlp.pipe_names:
        raise InvalidParameterError(f"--model {model} has no parser (its components: {', '.join(nlp.pipe_names)})")

    def parse(docs):
        docs = list(docs)
        return list(tqdm(nlp.pipe(docs, n_process=n_process), total=len(docs), desc="parsing", unit="text"))

    meta = nlp.meta
    return nlp, parse, f"{model} ({meta.get('lang')}_{meta.get('name')} {meta.get('version')})"


def _copy_parse(doc: Doc, stored: dict) -> Doc:
    parsed = stored.get(doc.text)
    if parsed is None or [t.text for t in parsed] != [t.text for t in doc]:
        raise ConvKernelsError(f"no stored parse of {doc.text[:40]!r}: give --model")
    doc.from_array(PARSE_ATTRS, parsed.to_array(PARSE_ATTRS))
    return doc


def _say(text: str = "") -> None:
    print(text, flush=True)


def _section(number: int, title: str, seconds: float) -> None:
    _say(f"\n{number}. {title} ({seconds:.2f} s)")


def _trees(docs: list, questions: list) -> list:
    start = time.perf_counter()
    converted = [span_to_trees(doc[:], REPRESENTATIONS) for doc in docs]
    names = ", ".join(r.upper() for r in REPRESENTATIONS)
    _section(1, f"Trees: {len(docs)} questions to {names}", time.perf_counter() - start)
    _say(f"   {questions[0][0]!r}")
    for name in ("grct", "lct"):
        _say(f"   {name.upper()}: {converted[0][name]}")
    return [trees["grct"] for trees in converted]


def _kernel_values(trees: list, questions: list, n_jobs) -> np.ndarray:
    start = time.perf_counter()
    G = PartialTreeKernel(lam=0.4, mu=0.4).gram(trees, n_jobs=n_jobs)
    title = f"Kernel values: normalized PTK (lam = mu = 0.4) on the GRCTs, a {G.shape[0]} x {G.shape[1]} Gram"
    _section(2, title, time.perf_counter() - start)
    off = G - np.eye(len(G))
    i, j = np.unravel_index(np.argmax(off), off.shape)
    k, m = np.unravel_index(np.argmin(off + np.eye(len(G)) * 2), off.shape)
    _say(f"   mean off-diagonal value {off.sum() / (len(G) ** 2 - len(G)):.3f}")
    _say(f"   most similar:  {G[i, j]:.3f}  {questions[i][0]!r} ~ {questions[j][0]!r}")
    _say(f"   least similar: {G[k, m]:.3f}  {questions[k][0]!r} ~ {questions[m][0]!r}")
    return G


def _nystroem(trees: list, G: np.ndarray, n_jobs) -> None:
    start = time.perf_counter()
    model = Nystroem(PartialTreeKernel(lam=0.4, mu=0.4), n_components=20, random_state=0, n_jobs=n_jobs)
    Z = model.fit_transform(trees)
    error = np.linalg.norm(G - Z @ Z.T) / np.linalg.norm(G)
    _section(3, f"Nystroem vectors: {Z.shape[0]} x {Z.shape[1]} from 20 landmarks", time.perf_counter() - start)
    first = np.array2string(Z[0, :5], precision=3)
    _say(f"   ||G - Z Z^T|| / ||G|| = {error:.3f} (Frobenius); first vector: {first} ...")


def _klsh(trees: list, questions: list, n_jobs) -> None:
    start = time.perf_counter()
    kernel = PartialTreeKernel(lam=0.4, mu=0.4)
    codes = KLSH(kernel, n_references=20, n_bits=16, subset_size=5, random_state=0, n_jobs=n_jobs).fit_transform(trees)
    _section(4, f"KLSH codes: {len(codes)} codes of 16 bits from 20 references", time.perf_counter() - start)
    distances = (codes != codes[0]).sum(axis=1)  # one 0/1 column per bit
    distances[0] = distances.max() + 1
    nearest = int(np.argmin(distances))
    bits = "".join(str(bit) for bit in codes[0])
    _say(f"   {questions[0][0]!r}: {bits}")
    _say(f"   nearest by Hamming distance ({distances[nearest]} bits): {questions[nearest][0]!r}")


def _classifier(G: np.ndarray, questions: list) -> None:
    start = time.perf_counter()
    labels = np.array([label for _, label in questions])
    test = np.arange(len(labels)) % 4 == 3
    svm = SVC(kernel="precomputed", C=10).fit(G[~test][:, ~test], labels[~test])
    predicted = svm.predict(G[test][:, ~test])
    values, counts = np.unique(labels[~test], return_counts=True)
    majority = values[np.argmax(counts)]
    _section(
        5,
        f"Text classifier: SVM on the PTK Gram, {int((~test).sum())} training questions, {int(test.sum())} held out",
        time.perf_counter() - start,
    )
    _say(
        f"   held-out accuracy {np.sum(predicted == labels[test])}/{test.sum()} "
        f"(always {majority}, the majority class: {np.sum(labels[test] == majority)}/{test.sum()})"
    )
    for (text, gold), guess in list(zip([q for q, t in zip(questions, test) if t], predicted))[:3]:
        _say(f"   {text!r}: {guess} (gold {gold})")


def _relations(nlp: Language, parse, n_jobs) -> Language:
    """Train kernel_relations, as the shipped GE config sets it up, on the training
    documents and score it on the held-out ones; return the trained pipeline."""
    start = time.perf_counter()
    config = load_config(config_path("bionlp_relations"), interpolate=True)
    relations = spacy.blank("en", vocab=nlp.vocab)
    block = {key: value for key, value in config["components"]["kernel_relations"].items() if key != "factory"}
    relations.add_pipe("kernel_relations", config=block)
    pipe = relation_component(relations)
    options = pipe.model.attrs["candidates"].options
    groups = (options["participants_key"], options["triggers_key"])  # the gold proteins and triggers
    train = _relation_examples(nlp, parse(read_standoff(TRAINING_DOCUMENTS, nlp)), groups=groups)
    held_out = _relation_examples(nlp, parse(read_standoff(DOCUMENTS, nlp)), groups=groups)
    with _threads(n_jobs):
        losses = _train(relations, train, training=config["training"])
        for example, doc in zip(held_out, pipe.pipe(example.predicted for example in held_out)):
            example.predicted = doc
    scores = pipe.score(held_out)
    _section(
        6,
        f"Relation extraction: kernel_relations (config bionlp_relations) trained on {len(train)} GE documents, "
        f"scored on {len(held_out)} held-out ones of the same article",
        time.perf_counter() - start,
    )
    by_epoch = " ".join(f"{loss:.0f}" for loss in losses)
    _say(f"   {REFIT_EPOCHS} epochs of nlp.update (the config's refit), loss by epoch: {by_epoch}")
    shown, right, missed, gold = _judged(pipe, held_out)
    _say(
        f"   held out, given the gold proteins and triggers: precision {scores['rel_micro_p']:.2f}, "
        f"recall {scores['rel_micro_r']:.2f}, F1 {scores['rel_micro_f']:.2f} ({gold} gold interactions)"
    )
    low, high = min(pipe.thresholds.values()), max(pipe.thresholds.values())
    cut = f"score >= {low:.2f}" if low == high else f"each label at or above its threshold, {low:.2f} to {high:.2f}"
    _say(
        f"   {len(shown)} predicted ({cut}, chosen at initialize on the training documents), {right} right; "
        f"{missed} of the {gold} gold interactions missed"
    )
    sample = [shown[i * len(shown) // PREDICTIONS_SHOWN] for i in range(min(PREDICTIONS_SHOWN, len(shown)))]
    _say(f"   {len(sample)} of the {len(shown)}, evenly spaced in text order ([trigger] in context):")
    for score, correct, text in sample:
        _say(f"   {score:.2f} {'right' if correct else 'wrong'}  {text}")
    return relations


def _relation_examples(nlp: Language, references: list, *, groups: tuple[str, ...]) -> list[Example]:
    """An Example of each parsed reference whose predicted Doc has its text, parse, gold
    proteins and gold triggers (the input of ``evaluate relations --triggers gold``)."""
    examples = []
    for reference in references:
        example = training_example(nlp, reference, give_entities="doc.ents", span_groups=groups)
        _copy_parse(example.predicted, {reference.text: reference})
        examples.append(example)
    return examples


def _train(nlp: Language, examples: list[Example], *, training: dict) -> list[float]:
    """Initialize on the examples, then :data:`REFIT_EPOCHS` epochs of ``nlp.update`` with
    the config's seed, optimizer, batches and dropout, shuffled as ``spacy train`` does;
    the loss of each epoch."""
    fix_random_seed(training["seed"])
    resolved = registry.resolve({"optimizer": training["optimizer"], "batcher": training["batcher"]})
    with quiet():  # the demo prints its own summary of what initialize chose
        optimizer = nlp.initialize(lambda: examples, sgd=resolved["optimizer"])
    losses = []
    for _ in range(REFIT_EPOCHS):
        random.shuffle(examples)
        epoch: dict[str, float] = {}
        for batch in resolved["batcher"](examples):
            nlp.update(batch, drop=training["dropout"], sgd=optimizer, losses=epoch)
        losses.append(sum(epoch.values()))
    return losses


def _judged(pipe: RelationExtractor, examples: list[Example]) -> tuple[list[tuple[float, bool, str]], int, int, int]:
    """(score, right, text) of each relation ``pipe`` predicts (:meth:`RelationExtractor.relations`),
    in text order; how many are right; how many gold interactions none finds; how many
    there are. Right: a gold interaction of that label has its participants and an
    overlapping trigger (the scorer's rule)."""
    shown, found, units = [], set(), set()
    for number, example in enumerate(examples):
        doc, gold = example.predicted, GoldRelations(example.reference)
        units |= {(number, unit) for unit in gold.units()}
        for relation in sorted(pipe.relations(doc), key=_text_order):
            chars = {role: (span.start_char, span.end_char) for role, span in relation.spans.items()}
            matches = {
                unit for unit in gold.matches(chars.pop("trigger"), role_key(chars)) if unit[1] == relation.label
            }
            found |= {(number, unit) for unit in matches}
            trigger = relation.spans["trigger"]
            roles = ", ".join(f"{role} {span.text!r}" for role, span in relation.spans.items() if role != "trigger")
            text = f"{relation.label}, {roles}: {_in_context(doc, trigger.start, trigger.end)}"
            shown.append((relation.score, bool(matches), text))
    return shown, sum(right for _, right, _ in shown), len(units - found), len(units)


def _text_order(relation: Relation) -> tuple:
    return sorted((span.start, span.end, role) for role, span in relation.spans.items()), relation.label


def _in_context(doc: Doc, start: int, end: int, *, width: int = 5) -> str:
    """The tokens start:end in brackets, with ``width`` tokens of their sentence each side."""
    sentence = doc[start].sent
    before = doc[max(start - width, sentence.start) : start].text
    after = doc[end : min(end + width, sentence.end)].text
    return f"'... {before} [{doc[start:end].text}] {after} ...'"


@contextmanager
def _threads(n_jobs):
    """The kernels' threads limited to ``n_jobs`` (None: as they are), then as they were."""
    before = max_threads()
    if n_jobs is not None:
        set_max_threads(n_threads(n_jobs))
    try:
        yield
    finally:
        set_max_threads(before)
