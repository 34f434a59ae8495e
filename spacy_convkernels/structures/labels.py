"""Tree labels: text made safe as a label, and KeLP's label grammar, written and read here alone.

A label in bracket notation cannot hold parentheses, whitespace (exactly the characters
for which ``str.isspace()`` is true: no-break space, ``\\r``, U+3000, ``\\x85``, ...) or
control characters: such a label would re-parse into another tree. Parentheses are
written ``-LRB-``/``-RRB-`` (the treebank convention KeLP's trees follow), the others
``_``; empty text is ``_``.

KeLP's grammar: a node label is ``KIND##content`` (``SYNT##nsubj``, ``POS##NN``,
``LEX##dog::n``); a lexical key is ``lemma::p``, ``p`` the POS tag's lower-cased initial;
a compositional label is ``COMP##relation<head key,dependent key>``, the root's head key
``*::*``.
"""

import re

_ESCAPES = {"(": "-LRB-", ")": "-RRB-"}
_UNSAFE = re.compile(r"[()\s\x00-\x1f\x7f-\x9f\ud800-\udfff]")  # \s: exactly the str.isspace characters

KIND_SEPARATOR = "##"
KEY_SEPARATOR = "::"
LEX, POS, SYNT, COMP = "LEX", "POS", "SYNT", "COMP"
ROOT_KEY = "*::*"


def clean_label(text: str) -> str:
    """``text`` as a tree label: parentheses escaped, whitespace and control characters ``_``."""
    return _UNSAFE.sub(lambda found: _ESCAPES.get(found.group(), "_"), text) or "_"


def node_label(kind: str, content: str) -> str:
    """``KIND##content``."""
    return f"{kind}{KIND_SEPARATOR}{content}"


def label_content(label: str) -> str:
    """KeLP's node content: the text after the first ``##`` (``SYNT##nsubj`` -> ``nsubj``)."""
    head, sep, tail = label.partition(KIND_SEPARATOR)
    return tail if sep else label


def join_key(lemma: str, pos: str) -> str:
    """``lemma::pos``."""
    return f"{lemma}{KEY_SEPARATOR}{pos}"


def lexical_key(lemma: str, tag: str) -> str:
    """``lemma::p``, ``p`` the lower-cased initial of the POS tag."""
    return join_key(lemma, tag[:1].lower())


def split_key(key: str) -> tuple[str, str]:
    """(lemma, pos) of ``lemma::pos``, split at the first ``::`` as KeLP does."""
    lemma, _, pos = key.partition(KEY_SEPARATOR)
    return lemma, pos


def compositional_label(relation: str, head_key: str, key: str) -> str:
    """``COMP##relation<head key,key>``."""
    return node_label(COMP, f"{relation}<{head_key},{key}>")


def lexical_parts(label: str) -> tuple[str, str] | None:
    """(lemma, pos) of a ``LEX##lemma::pos`` label, or None for another label."""
    prefix = node_label(LEX, "")
    return split_key(label[len(prefix) :]) if label.startswith(prefix) else None


def compositional_parts(label: str) -> tuple[str, tuple[str, str], tuple[str, str]] | None:
    """``COMP##rel<h::hp,m::mp>`` as (rel, (h, hp), (m, mp)), split as KeLP does (first
    ``<``, first ``,``, first ``>``), or None."""
    prefix = node_label(COMP, "")
    if not label.startswith(prefix):
        return None
    body = label[len(prefix) :]
    opening, comma, closing = body.find("<"), body.find(","), body.find(">")
    if not 0 <= opening < comma < closing:
        return None
    return body[:opening], split_key(body[opening + 1 : comma]), split_key(body[comma + 1 : closing])
