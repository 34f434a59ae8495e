"""The spaCy extension attributes of the package, each installed by the components and
readers that write or read it (never by an import):

    install_extensions("doc._.kernel_amr", "doc._.kernel_interactions")

An attribute already registered the same way is left as it is; one registered with
another default, getter, setter or method raises :class:`ExtensionConflictError`
instead of being overwritten.
"""

from spacy.tokens import Doc, Span

from .errors import ExtensionConflictError, InvalidParameterError

INTERACTIONS_KEY = ("spacy_convkernels", "interactions")  # where Doc._.kernel_interactions is kept in Doc.user_data
REL_KEY = ("spacy_convkernels", "rel")  # where Doc._.kernel_rel is kept, as {"head,child": {label: score}}


def _doc_kernel_trees(doc: Doc) -> list[dict]:
    """The sentences' trees, in order ([] for an empty Doc)."""
    return [sentence._.kernel_trees for sentence in doc.sents] if len(doc) else []


def _doc_interactions(doc: Doc) -> list | None:
    stored = doc.user_data.get(INTERACTIONS_KEY)
    return None if stored is None else _as_lists(stored)


def _doc_rel(doc: Doc) -> dict:
    """{(head.start, child.start): {label: score}}, a copy of what ``user_data`` keeps ({} when unset)."""
    stored = doc.user_data.get(REL_KEY, {})
    return {tuple(int(i) for i in key.split(",")): dict(scores) for key, scores in stored.items()}


def _set_doc_rel(doc: Doc, value: dict) -> None:
    """Keep ``value`` under string keys, which msgpack (``to_bytes``, ``DocBin``, ``n_process``) keeps."""
    form = "{(head.start, child.start): {label: score}}"
    if not isinstance(value, dict):
        raise InvalidParameterError(f"Doc._.kernel_rel takes a dict {form}, got {value!r:.80}")
    stored = {}
    for key, scores in value.items():
        if not (isinstance(key, tuple) and len(key) == 2 and all(isinstance(i, int) for i in key)):
            raise InvalidParameterError(f"Doc._.kernel_rel takes a dict {form}; got the key {key!r:.80}")
        if not isinstance(scores, dict):
            raise InvalidParameterError(f"Doc._.kernel_rel[{key!r}] is not a dict {{label: score}}: {scores!r:.80}")
        stored[f"{key[0]},{key[1]}"] = dict(scores)
    doc.user_data[REL_KEY] = stored


def _as_lists(value):
    """Tuples (as msgpack may give them back) as lists, all the way down."""
    if isinstance(value, (list, tuple)):
        return [_as_lists(v) for v in value]
    if isinstance(value, dict):
        return {k: _as_lists(v) for k, v in value.items()}
    return value


EXTENSIONS = {
    "doc._.kernel_amr": (Doc, {"default": None}),
    "doc._.kernel_interactions": (Doc, {"getter": _doc_interactions}),
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
