"""Why a relation component scored a candidate as it did: the training candidates that
weigh most in its exact-kernel SVM decisions, and what it shares with them.

The kernel features of ``spacy_convkernels.RelationModel.v1`` are SVM decisions
(:mod:`~..ml.candidate_svm`): for the candidate x, output k (a label's SVM, or the gate's,
whether x holds any relation) decides

    f_k(x) = sum_i alpha_ik (K(x, s_i) + w T(x, s_i)) + b_k,

over the support vectors s_i, training candidates, with K the structure kernel (plus
the tree kernel of their path-enclosed trees times its weight, when the SVMs chose
one), T the n-gram cosine of their texts and w the chosen text weight (0: none). Each
support vector's contribution alpha_ik (K + w T) is its part of the decision; its share is that
over f_k(x), so the shares and b_k / f_k(x) sum to 1. The training candidates of largest
absolute contribution are listed with their sentence and gold labels (saved with the
model since this module; a model saved before has none), and the fragments the
candidate shares with each: the path positions
(:func:`~..kernels.path_explain.explain_paths`) or tree fragments
(:func:`~..kernels.explain.explain`) of their kernel value. :func:`to_html` draws it all
on one self-contained page, every text escaped.
"""

import json
from dataclasses import dataclass

import numpy as np
from spacy.tokens import Doc

from ..errors import InvalidParameterError, ModelFileError
from ..kernels.path_explain import PathExplanation, path_html
from ..ml.candidate_features import candidate_structures
from ..ml.candidate_svm import candidate_text
from ..ml.kernel_encoders import StackedSVM
from ..ml.relation_candidates import lowered_scores
from ..structures.paths import PathTuples
from ..utils.display import markup

#: The name of the gate's output: whether a candidate holds any relation.
ANY_RELATION = "any relation"


@dataclass(frozen=True)
class SupportContribution:
    """A training candidate's part in one SVM decision.

    Attributes
    ----------
    index : int
        Its position among the SVMs' support vectors.
    text : str or None
        Its sentence (None: the model was saved without its support vectors' origins).
    spans : tuple of (str, int, int)
        (role, start, end) characters of its spans in ``text``.
    labels : tuple of str
        Its gold labels (none: a negative candidate).
    coefficient : float
        alpha_ik, its dual coefficient in this output's SVM (the sign of its class).
    kernel_value : float
        K(x, s_i), the structure kernel (normalized, as the SVM sees it).
    tree_value : float
        The tree kernel's weighted part (0 without a tree weight).
    text_value : float
        w T(x, s_i), the text kernel's weighted part (0 without a text weight).
    contribution : float
        ``coefficient * (kernel_value + tree_value + text_value)``.
    share : float
        ``contribution`` / the decision value.
    fragments : PathExplanation, Explanation or None
        What the candidate's structure shares with its: position pairs or tree fragments.
    tree_fragments : Explanation or None
        The tree fragments they share, with a tree weight.
    """

    index: int
    text: str | None
    spans: tuple[tuple[str, int, int], ...]
    labels: tuple[str, ...]
    coefficient: float
    kernel_value: float
    tree_value: float
    text_value: float
    contribution: float
    share: float
    fragments: object
    tree_fragments: object = None


@dataclass(frozen=True)
class DecisionExplanation:
    """One SVM decision of the candidate: ``output`` (a label, or :data:`ANY_RELATION`),
    its value, the intercept b_k, the ``top`` support vectors of largest absolute
    contribution (``support``), how many contribute (``n_support``) and the sum of the
    contributions not listed (``rest``): ``value = sum(support) + rest + intercept``."""

    output: str
    value: float
    intercept: float
    support: tuple[SupportContribution, ...]
    n_support: int
    rest: float


@dataclass(frozen=True)
class RelationExplanation:
    """A candidate of a Doc, its scores by label (the component's, after the layers over
    the SVMs, lowered by ``margin`` when a participant is a proposal), and the explanation
    of its SVM decisions: the gate's and the labels'."""

    text: str
    spans: tuple[tuple[str, int, int], ...]
    scores: dict[str, float]
    structure: object
    decisions: tuple[DecisionExplanation, ...]
    margin: float = 0.0


def explain_candidate(pipe, doc: Doc, key, *, labels=None, top: int = 5) -> RelationExplanation:
    """The explanation of the candidate of ``doc`` whose key is ``key`` by ``pipe``, a
    trained relation component (``doc`` as the components before it leave it): the
    gate's decision and those of ``labels`` (default: the candidate's best label), each
    with its ``top`` support vectors. The key is (head start, child start) token indices
    for a pair, as in ``Doc._.kernel_rel``, the spans for an interaction (the
    ``"spans"`` of ``Doc._.kernel_interactions``, as (role, start, end)); a
    :class:`~.relation_scores.Relation` is taken for its spans."""
    svm_node = _svm_node(pipe)
    encoder: StackedSVM = svm_node.attrs["encoder"]
    scored = pipe.predict([doc])
    (candidates,) = scored.candidates
    key = _key_of(key)
    found = [c for c in candidates if c.key == key]
    if not found:
        keys = ", ".join(str(c.key) for c in candidates[:20]) or "none"
        raise InvalidParameterError(f"{pipe.name}: no candidate of this Doc has the key {key}; its candidates: {keys}")
    (candidate,) = found
    row = scored.label_scores()[candidates.index(candidate)]
    (margin,) = pipe.model.attrs["candidates"].margins(doc, [candidate])
    scores = lowered_scores(pipe.labels, row, margin)
    (structure,) = candidate_structures([candidate], svm_node.attrs["structure"])
    if structure is None:
        raise InvalidParameterError(f"{pipe.name}: the candidate {key} has no structure, so no SVM decides it")
    outputs = [*pipe.labels, ANY_RELATION]
    asked = [max(scores, key=scores.__getitem__)] if labels is None else list(labels)
    unknown = [label for label in asked if label not in pipe.labels]
    if unknown:
        raise InvalidParameterError(f"{pipe.name}: no label {', '.join(unknown)}; its labels: {', '.join(pipe.labels)}")
    text = candidate_text(doc, candidate) if encoder.text_weight else None
    (tree,) = candidate_structures([candidate], "tree") if encoder.tree_weight else (None,)
    parts = {name: row for name, (row,) in encoder.kernel_rows([structure], [tree], [text]).items()}
    kernel_row = parts["kernel"]
    tree_part, text_part = (parts.get(name, np.zeros_like(kernel_row)) for name in ("tree", "text"))
    svm = encoder.estimator
    unsaved = {"text": None, "spans": (), "labels": ()}  # a model saved before origins were kept
    shown: dict[int, tuple] = {}  # a support vector's origin and fragments, made once for every decision

    def about(i: int) -> tuple:
        if i not in shown:
            origin = _origin(encoder.support_origins[i], pipe.labels) if encoder.support_origins else unsaved
            fragments = _fragments(encoder.kernel, structure, svm.support_vectors_[i])
            tree_fragments = _fragments(encoder.tree_kernel, tree, encoder.support_trees[i]) if tree else None
            shown[i] = (origin, fragments, tree_fragments)
        return shown[i]

    def contribution(i: int, coefficients: np.ndarray, contributions: np.ndarray, value: float):
        origin, fragments, tree_fragments = about(i)
        return SupportContribution(
            index=i,
            text=origin["text"],
            spans=origin["spans"],
            labels=origin["labels"],
            coefficient=float(coefficients[i]),
            kernel_value=float(kernel_row[i]),
            tree_value=float(tree_part[i]),
            text_value=float(text_part[i]),
            contribution=float(contributions[i]),
            share=float(contributions[i] / value) if value else 0.0,
            fragments=fragments,
            tree_fragments=tree_fragments,
        )

    decisions = []
    for output in [ANY_RELATION, *asked]:
        k = outputs.index(output)
        coefficients = svm.dual_coef_[k]
        contributions = coefficients * (kernel_row + tree_part + text_part)
        value = float(contributions.sum() + svm.intercept_[k])
        order = [int(i) for i in np.argsort(-np.abs(contributions), kind="stable") if contributions[i] != 0]
        support = tuple(contribution(i, coefficients, contributions, value) for i in order[:top])
        rest = float(contributions.sum() - sum(s.contribution for s in support))
        decisions.append(DecisionExplanation(output, value, float(svm.intercept_[k]), support, len(order), rest))
    spans = tuple((role, doc[start].idx, doc[end - 1].idx + len(doc[end - 1])) for role, start, end in candidate.spans)
    return RelationExplanation(doc.text, spans, scores, structure, tuple(decisions), margin)


def _svm_node(pipe):
    """The model's node of SVM decisions (``CandidateKernelSVM``), fitted."""
    for node in pipe.model.walk():
        if isinstance(node.attrs.get("encoder"), StackedSVM):
            if not node.attrs["encoder"].fitted:
                raise InvalidParameterError(f"{pipe.name}: not initialized; explain a trained pipeline's component")
            return node
    raise InvalidParameterError(f"{pipe.name}: its model has no exact-kernel SVM (CandidateKernelSVM) to explain")


def _key_of(key) -> tuple:
    """A candidate key from a key or a :class:`~.relation_scores.Relation`."""
    spans = getattr(key, "spans", None)
    if isinstance(spans, dict) and "head" in spans:
        return spans["head"].start, spans["child"].start
    if isinstance(spans, dict):
        return tuple((role, span.start, span.end) for role, span in spans.items())
    if isinstance(key, dict) and "spans" in key:  # an interaction record of Doc._.kernel_interactions
        return tuple((role, start, end) for role, (start, end) in key["spans"].items())
    return tuple(tuple(part) if isinstance(part, list) else part for part in key)


def _origin(origin: str, labels) -> dict:
    """A saved support vector's origin (:func:`~..ml.candidate_svm.candidate_origin`), checked."""
    try:
        value = json.loads(origin)
        text, spans, columns = value["text"], value["spans"], value["labels"]
        checked = {
            "text": str(text),
            "spans": tuple((str(role), int(start), int(end)) for role, start, end in spans),
            "labels": tuple(labels[int(column)] for column in columns),
        }
    except (ValueError, KeyError, TypeError, IndexError) as error:
        raise ModelFileError(f"a support vector's saved origin is damaged ({type(error).__name__}: {error})") from error
    return checked


def _fragments(kernel, a, b):
    """What ``a`` shares with ``b`` under ``kernel`` (its :meth:`explain`; None for a kernel without one)."""
    explain = getattr(kernel, "explain", None)
    return None if explain is None else explain(a, b, top=5)


def to_html(explanation: RelationExplanation, *, title: str = "Relation explanation") -> str:
    """One self-contained page: the candidate in its text, its scores, then per decision
    a table of the support vectors (their sentence with spans marked, gold labels,
    alpha, K, contribution, share) and the fragments shared with each."""
    parts = [
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{markup(title)}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>{markup(title)}</h1>",
        f"<p class=sentence>{_marked(explanation.text, explanation.spans)}</p>",
        "<p>Scores: "
        + (", ".join(f"{markup(label)} {score:.3f}" for label, score in explanation.scores.items()) or "none")
        + (f" (lowered by {explanation.margin:g}: a participant is a proposal)" if explanation.margin else "")
        + "</p>",
    ]
    for decision in explanation.decisions:
        parts.append(
            f"<h2>{markup(decision.output)}: decision {decision.value:.4g}</h2><p>intercept {decision.intercept:.4g}; "
            f"{decision.n_support:,} support vectors contribute, the {len(decision.support)} largest below, "
            f"the rest sum to {decision.rest:.4g}</p>"
        )
        parts.append(
            "<table><tr><th>#</th><th>training candidate</th><th>gold</th><th>alpha</th><th>K</th>"
            "<th>tree</th><th>text</th><th>contribution</th><th>share</th><th>shared</th></tr>"
        )
        for rank, s in enumerate(decision.support, start=1):
            sentence = _marked(s.text, s.spans) if s.text is not None else "<i>not saved with this model</i>"
            parts.append(
                f"<tr><td>{rank}</td><td>{sentence}</td><td>{markup(', '.join(s.labels) or 'none')}</td>"
                f"<td>{s.coefficient:.3g}</td><td>{s.kernel_value:.3g}</td><td>{s.tree_value:.3g}</td><td>{s.text_value:.3g}</td>"
                f"<td>{s.contribution:.3g}</td><td>{100 * s.share:.1f} %</td>"
                f"<td>{_shared(explanation.structure, s.fragments)}{_shared(None, s.tree_fragments)}</td></tr>"
            )
        parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts)


def _shared(structure, fragments) -> str:
    """The fragments of one support vector as HTML: the candidate's path with the matched
    positions shaded and the largest position pairs, or the largest tree fragments."""
    if isinstance(fragments, PathExplanation) and isinstance(structure, PathTuples):
        shares: dict[int, float] = {}
        for match in fragments.matches:
            shares[match.position_a] = shares.get(match.position_a, 0.0) + match.share
        pairs = "; ".join(
            f"{markup(m.label_a)} ~ {markup(m.label_b)} {100 * m.share:.0f} %" for m in fragments.matches[:3]
        )
        return f"{path_html(structure, shares)}<br><small>{pairs}</small>"
    if fragments is not None and hasattr(fragments, "matches"):
        return "<br>".join(f"{markup(str(m.fragment))} {100 * m.share:.0f} %" for m in fragments.matches[:3])
    return ""


def _marked(text: str, spans) -> str:
    """``text`` escaped, its spans wrapped in ``<mark>`` with their role."""
    out, at = [], 0
    for role, start, end in sorted(spans, key=lambda span: span[1]):
        if start < at:
            continue  # an overlapping span: its first is marked
        out.append(markup(text[at:start]))
        out.append(f"<mark title='{markup(role)}'>{markup(text[start:end])}<sub>{markup(role)}</sub></mark>")
        at = end
    out.append(markup(text[at:]))
    return "".join(out)


STYLE = (
    "body{font-family:Arial,sans-serif;margin:2em}table{border-collapse:collapse}"
    "td,th{border:1px solid #ccc;padding:4px;vertical-align:top;font-size:13px}"
    "mark{background:#ffe08a}sub{font-size:9px;color:#555}.path .pos{padding:1px 3px;margin:1px;"
    "border:1px solid #ddd;display:inline-block;font-family:monospace;font-size:11px}"
)
