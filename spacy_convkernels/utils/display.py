"""Text shown to people, whatever it holds: a label, a path or a message from the input
may carry control characters (a terminal acts on ``ESC [ 2 J`` or an OSC title sequence;
XML 1.0 forbids most C0 controls even as character references) or characters a stream's
encoding cannot represent.

:func:`visible` writes such characters as Python escapes (``\\x1b``); the command line
prints its listings, errors and warnings through it, and :mod:`~spacy_convkernels.kernels.explain`
draws its labels with it."""

import re

#: What :func:`visible` escapes: C0 and C1 controls and DEL (a terminal acts on them; XML
#: 1.0 forbids C0 but tab, line feed and carriage return), lone surrogates (no encoding
#: writes them; undecodable bytes of a file name are read as such), U+FFFE and U+FFFF (not
#: XML characters), the line and paragraph separators, and the bidirectional formatting
#: characters (they reorder the text around them on screen).
HIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]")


def visible(text: str) -> str:
    """``text`` with every :data:`HIDDEN` character written as its Python escape
    (``\\x1b``, ``\\u202e``): safe to print to a terminal and to put in XML. Other text,
    backslashes included, is kept as it is."""
    return HIDDEN.sub(_escape, text)


def _escape(found: re.Match) -> str:
    code = ord(found.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
