"""The pipeline a corpus reader tokenizes with when it is given none."""

from functools import cache

import spacy


@cache
def blank_english():
    """One blank English pipeline per process, the readers' default ``nlp``: building its
    tokenizer (spaCy's 6,700 English special cases) takes about 0.17 s, more than reading
    a small corpus. Its vocab keeps the strings of every text read through it, as a
    long-lived spaCy pipeline's does; pass an ``nlp`` of your own to keep them apart."""
    return spacy.blank("en")
