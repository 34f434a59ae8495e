"""Explain a relation decision: the training candidates that weigh most in its SVM decisions, drawn to HTML.

    RELATIONS=$(python -m spacy_convkernels demo --sample relations)
    python -m spacy_convkernels explain-relation training/relations/model-best "$RELATIONS" --document 1
    python -m spacy_convkernels explain-relation MODEL "$RELATIONS" --head RAS --child RAF -o why.html

MODEL is a pipeline with a kernel_relations component whose model has exact-kernel SVM
decisions (``CandidateKernelSVM``, as in every shipped relations config); CORPUS a
relations JSONL file, a standoff directory or a .spacy file, read as ``evaluate
relations`` reads it, the document ``--document`` (0-based) run through the pipeline
with its gold entities (``--entities predicted``: the pipeline's own). The candidate is
the entity pair ``--head`` / ``--child`` (their texts), or without them the candidate
of highest score. For the gate's decision (whether it holds any relation) and the
``--label``'s (default: its best), the ``--top`` support vectors of largest absolute
contribution are listed: their sentence, gold labels, contribution and share of the
decision, and the path positions or tree fragments the candidate shares with them
(:func:`spacy_convkernels.components.relation_explain.explain_candidate`). The page
(``-o``, default ``relation.html`` where no file of that name exists) is one
self-contained HTML file, every text escaped.
"""

import argparse
import sys
from pathlib import Path

from ..errors import CorpusFileError, InvalidParameterError
from ..utils.display import visible
from ..utils.outputs import default_output, pipeline_path, replacing
from .options import add_checked_argument, positive, standoff_inputs

DEFAULT = "relation.html"  # the output without -o, written only where no file of that name is


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("model", help="a pipeline with a kernel_relations component (name or path)")
    parser.add_argument("corpus", type=Path, help="a relations .jsonl, a standoff directory or a .spacy file")
    parser.add_argument("--document", type=int, default=0, help="the document's position (0-based, default 0)")
    parser.add_argument("--head", default=None, help="the head entity's text (with --child)")
    parser.add_argument("--child", default=None, help="the child entity's text (with --head)")
    parser.add_argument("--label", action="append", default=None, help="a label to explain (repeatable)")
    parser.add_argument("--entities", choices=("gold", "predicted"), default="gold", help="given entities")
    add_checked_argument(
        parser, "--top", check=positive, type=int, default=5, help="support vectors per decision (default 5)"
    )
    parser.add_argument("-o", "--output", type=Path, default=None, help=f".html (default {DEFAULT}, never over one)")


def files(arguments: argparse.Namespace) -> tuple[dict, dict]:
    inputs = {"model": pipeline_path(arguments.model), "corpus": standoff_inputs(arguments.corpus)}
    return inputs, {"--output": _output(arguments)}


def _output(arguments: argparse.Namespace) -> Path:
    return arguments.output if arguments.output is not None else default_output(DEFAULT)


def run(arguments: argparse.Namespace) -> None:
    from ..components.relation_evaluation import evaluated_examples, relation_component
    from ..components.relation_explain import to_html
    from .evaluate import references
    from .pipelines import load_pipeline

    output = _output(arguments)
    if output.suffix != ".html":
        raise InvalidParameterError(f"--output must end in .html, got {output}")
    if (arguments.head is None) != (arguments.child is None):
        raise InvalidParameterError("--head and --child name a pair together: give both or neither")
    if not arguments.corpus.exists():
        raise CorpusFileError("no such file or directory", arguments.corpus)
    nlp = load_pipeline(arguments.model)
    component = relation_component(nlp)
    documents = references(arguments.corpus, nlp)
    if not 0 <= arguments.document < len(documents):
        raise InvalidParameterError(f"--document {arguments.document}: the corpus has {len(documents)} documents")
    (example,) = evaluated_examples(nlp, [documents[arguments.document]], entities=arguments.entities)
    doc = example.predicted
    key = _candidate(doc, arguments.head, arguments.child)
    explanation = component.explain(doc, key, labels=arguments.label, top=arguments.top)
    title = " / ".join(explanation.text[start:end] for _, start, end in explanation.spans)
    with replacing(output, name="--output") as temporary:
        temporary.write_text(to_html(explanation, title=f"Why: {title}"), encoding="utf-8")
    scores = ", ".join(f"{label} {score:.3f}" for label, score in explanation.scores.items())
    print(visible(f"{title}: {scores}"))
    for decision in explanation.decisions:
        print(visible(f"  {decision.output}: decision {decision.value:.4g} (intercept {decision.intercept:.4g})"))
        for s in decision.support:
            gold = "?" if s.text is None else ", ".join(s.labels) or "none"
            sentence = " ".join((s.text or "(sentence not saved with this model)").split())[:90]
            print(visible(f"    {s.contribution:+.4f} ({100 * s.share:5.1f} %) [{gold}] {sentence}"))
    print(f"drawn to {visible(str(output))}", file=sys.stderr)


def _candidate(doc, head: str | None, child: str | None) -> tuple:
    """The key of the pair ``head`` / ``child`` (entity texts), or of the best-scored candidate."""
    pairs = doc._.kernel_rel
    if head is None:
        scored = [(max(scores.values(), default=0.0), key) for key, scores in pairs.items()]
        scored += [
            (record["score"], tuple((role, start, end) for role, (start, end) in record["spans"].items()))
            for record in doc._.kernel_interactions
        ]
        if not scored:
            raise InvalidParameterError("the document has no candidate: no entity pair, no interaction")
        return max(scored, key=lambda item: item[0])[1]
    entities = {entity.start: entity.text for entity in doc.ents}
    found = [key for key in pairs if entities.get(key[0]) == head and entities.get(key[1]) == child]
    if not found:
        names = ", ".join(sorted(set(entities.values()))) or "none"
        raise InvalidParameterError(f"no candidate pair {head!r} / {child!r} in the document; its entities: {names}")
    return found[0]
