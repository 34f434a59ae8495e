"""The spaCy extension attributes of the package, each installed by the components and
readers that write or read it (never by an import):

    install_extensions("doc._.kernel_amr", "doc._.kernel_interactions")

An attribute already registered the same way is left as it is; one registered with
another default, getter, setter or method raises :class:`ExtensionConflictError`
instead of being overwritten.
"""

from typing import Any

from spacy.tokens import Doc, Span

from .errors import ExtensionConflictError, InvalidParameterError
from .pair_scores import PairScores

INTERACTIONS_KEY = ("spacy_convkernels", "interactions")  # where Doc._.kernel_interactions is kept in Doc.user_data
REL_KEY = ("spacy_convkernels", "rel")  # where Doc._.kernel_rel is kept, a PairScores


def user_data(doc: Doc) -> dict:
    """``doc.user_data``, whose keys spaCy's stubs type as strings; the package's are tuples."""
    return doc.user_data


def _doc_kernel_trees(doc: Doc) -> list[dict]:
    """The sentences' trees, in order ([] for an empty Doc)."""
    return [sentence._.kernel_trees for sentence in doc.sents] if len(doc) else []


def _doc_interactions(doc: Doc) -> list | None:
    """The stored list itself (None when unset), so that changing it in place changes the Doc."""
    stored = user_data(doc).get(INTERACTIONS_KEY)
    if stored is None:
        return None
    listed = _as_lists(stored)
    if listed != stored:  # tuples, as msgpack gives them back: lists from now on
        user_data(doc)[INTERACTIONS_KEY] = stored = listed
    return stored


def _set_doc_interactions(doc: Doc, value: list) -> None:
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise InvalidParameterError(f"Doc._.kernel_interactions takes a list of dicts, got {value!r:.80}")
    user_data(doc)[INTERACTIONS_KEY] = value


def _doc_rel(doc: Doc) -> PairScores:
    """The stored :class:`PairScores` itself (an empty one stored when unset), so that
    changing it in place changes the Doc."""
    stored = user_data(doc).get(REL_KEY)
    if not isinstance(stored, PairScores):  # unset, or as msgpack gave it back: {"head,child": {label: score}}
        stored = user_data(doc)[REL_KEY] = PairScores(stored or {})
    return stored


def _set_doc_rel(doc: Doc, value: dict) -> None:
    """Keep ``value`` as a :class:`PairScores`, whose keys msgpack (``to_bytes``,
    ``DocBin``, ``n_process``) and JSON write as ``"head,child"`` strings."""
    user_data(doc)[REL_KEY] = PairScores(value)


def _as_lists(value):
    """Tuples (as msgpack may give them back) as lists, all the way down."""
    if isinstance(value, (list, tuple)):
        return [_as_lists(v) for v in value]
    if isinstance(value, dict):
        return {k: _as_lists(v) for k, v in value.items()}
    return value


EXTENSIONS: dict[str, tuple[type[Doc] | type[Span], dict[str, Any]]] = {
    "doc._.kernel_amr": (Doc, {"default": None}),
    "doc._.kernel_interactions": (Doc, {"getter": _doc_interactions, "setter": _set_doc_interactions}),
    "doc._.kernel_rel": (Doc, {"getter": _doc_rel, "setter": _set_doc_rel}),
    "span._.kernel_trees": (Span, {"default": None}),
    "doc._.kernel_trees": (Doc, {"getter": _doc_kernel_trees}),
    "span._.kernel_forest": (Span, {"default": None}),
    "span._.kernel_vector": (Span, {"default": None}),
    "doc._.kernel_vector": (Doc, {"default": None}),
    "span._.kernel_klsh_code": (Span, {"default": None}),
    "doc._.kernel_klsh_code": (Doc, {"default": None}),
}


def install_extensions(*names: str) -> None:
    """Register the named attributes (keys of ``EXTENSIONS``) unless already registered
    the same way; raise :class:`ExtensionConflictError` when registered otherwise."""
    for name in names:
        owner, spec = EXTENSIONS[name]
        attribute = name.split(".")[-1]
        wanted = (spec.get("default"), spec.get("method"), spec.get("getter"), spec.get("setter"))
        found = owner.get_extension(attribute)
        if found is None:
            owner.set_extension(attribute, **spec)
        elif any(f is not w for f, w in zip(found, wanted)):  # wanted: None or the functions above
            raise ExtensionConflictError(
                f"{name} is already registered as {_describe(found)}, but spacy-convkernels needs it as "
                f"{_describe(wanted)}; remove yours ({owner.__name__}.remove_extension({attribute!r})) "
                "or register it under another name"
            )


def _describe(extension: tuple) -> str:
    default, method, getter, setter = extension
    parts = [
        f"{label}={value!r}"
        for label, value in (("method", method), ("getter", getter), ("setter", setter))
        if value is not None
    ]
    return ", ".join(parts) if parts else f"default={default!r}"
