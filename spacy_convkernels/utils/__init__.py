"""The package's basic helpers, below every other layer but :mod:`~spacy_convkernels.errors`:
parameter constraints (:mod:`.validation`), checked structure lists (:mod:`.inputs`), rows cut
into blocks (:mod:`.row_blocks`), numbered lines of a text file (:mod:`.text_lines`), outputs
written whole (:mod:`.outputs`), saved states sealed with content hashes (:mod:`.saved_arrays`)
and the package's logger (:mod:`.log`)."""
