"""Text made safe as a tree label.

A label in bracket notation cannot hold parentheses, whitespace (exactly the characters
for which ``str.isspace()`` is true: no-break space, ``\\r``, U+3000, ``\\x85``, ...) or
control characters: such a label would re-parse into another tree. Parentheses are
written ``-LRB-``/``-RRB-`` (the treebank convention KeLP's trees follow), the others
``_``; empty text is ``_``.
"""

import re

_ESCAPES = {"(": "-LRB-", ")": "-RRB-"}
_UNSAFE = re.compile(r"[()\s\x00-\x1f\x7f-\x9f\ud800-\udfff]")  # \s: exactly the str.isspace characters


def clean_label(text: str) -> str:
    """``text`` as a tree label: parentheses escaped, whitespace and control characters ``_``."""
    return _UNSAFE.sub(lambda found: _ESCAPES.get(found.group(), "_"), text) or "_"
