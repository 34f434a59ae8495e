"""The demo's steps, run by ``spacy-convkernels demo`` (see :mod:`spacy_convkernels.cli.demo`):
imported only when the demo runs, so that the command line's help stays fast."""

import time

import numpy as np
import spacy
from sklearn.svm import SVC
from spacy.tokens import Doc, DocBin
from tqdm import tqdm

from ..approx import KLSH, Nystroem
from ..corpora import read_klp, read_standoff
from ..data.samples import DOCUMENTS, PARSES, QUESTIONS
from ..errors import ConvKernelsError, InvalidParameterError
from ..kernels import PartialTreeKernel, SubsequencePathKernel
from ..learn import KernelKNeighborsClassifier
from ..structures.dependency import REPRESENTATIONS, span_to_trees
from ..structures.relations import GoldRelations, dependency_interactions
from .pipelines import load_pipeline

PARSE_ATTRS: list[int | str] = ["TAG", "POS", "MORPH", "LEMMA", "DEP", "HEAD", "SENT_START"]
STORED = "en_core_web_md 3.8.0 (parses stored with the package; --model parses live)"


def run_demo(*, model: str | None, n_process: int, n_jobs) -> None:
    """Every step, in order, printed as it ends (see :mod:`spacy_convkernels.cli.demo`)."""
    started = time.perf_counter()
    questions = [(example.texts["quest"], example.labels[0].split(":")[0]) for example in read_klp(QUESTIONS)]
    nlp, parse, parser_name = _parser(model, n_process)
    _say(f"spacy-convkernels demo: {len(questions)} TREC questions and 3 BioNLP GE documents, parsed by {parser_name}")
    docs = parse(nlp.make_doc(text) for text, _ in questions)
    trees = _trees(docs, questions)
    G = _kernel_values(trees, questions, n_jobs)
    _nystroem(trees, G, n_jobs)
    _klsh(trees, questions, n_jobs)
    _classifier(G, questions)
    _relations(parse(read_standoff(DOCUMENTS, nlp)), n_jobs)
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


def _relations(docs: list, n_jobs) -> None:
    start = time.perf_counter()
    found = []
    for doc in docs:
        gold = GoldRelations(doc)
        candidates = dependency_interactions(doc)  # theme; catalyst, theme; theme, theme2; 4 edges
        found.append((doc, candidates, np.array([bool(gold.labels(c, doc)) for c in candidates])))
    kernel = SubsequencePathKernel(lam=0.5)
    scored = []
    for held, (doc, candidates, positive) in enumerate(found):
        X = [c.path for k, (_, cs, _) in enumerate(found) if k != held for c in cs]
        y = np.concatenate([p for k, (_, _, p) in enumerate(found) if k != held])
        knn = KernelKNeighborsClassifier(kernel, n_neighbors=5, n_jobs=n_jobs).fit(X, y)
        scores = knn.predict_proba([c.path for c in candidates])[:, list(knn.classes_).index(True)]
        scored += [(s, doc, c, p) for s, c, p in zip(scores, candidates, positive)]
    scores = np.array([s for s, *_ in scored])
    positive = np.array([p for *_, p in scored])
    _section(
        6,
        f"Relation scores: {len(scored)} candidate interactions ({positive.sum()} gold) of {len(docs)} GE documents, "
        "path-kernel 5-NN trained on the other documents",
        time.perf_counter() - start,
    )
    predicted = scores >= 0.5
    tp = np.sum(predicted & positive)
    _say(
        f"   score >= 0.5: {predicted.sum()} candidates, {tp} of them gold "
        f"(precision {tp / max(predicted.sum(), 1):.2f}, recall {tp / max(positive.sum(), 1):.2f})"
    )
    for score, doc, candidate, gold in sorted(scored, key=lambda item: -item[0])[:5]:
        parts = ", ".join(f"{role} {doc[s:e].text!r}" for role, s, e in candidate.spans)
        _say(f"   {score:.2f} {'gold' if gold else 'not gold'}: {parts}")
