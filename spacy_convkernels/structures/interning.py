"""Process-wide tables that map labels, label contents and productions to int32 ids.

The compiled engine compares integers, never strings: two nodes match when their ids
are equal. Ids are stable for the life of the process and are never pickled (a
structure sent to another process is recompiled there).
"""

import threading
from collections.abc import Hashable, Iterable


class Interner:
    """Assigns consecutive ids to hashable keys, in order of first appearance."""

    def __init__(self):
        self._ids = {}
        self._lock = threading.Lock()

    def ids(self, keys: Iterable[Hashable]) -> list[int]:
        """The ids of ``keys``, adding the new ones."""
        table = self._ids
        with self._lock:
            out = []
            for key in keys:
                i = table.get(key)
                if i is None:
                    i = table[key] = len(table)
                out.append(i)
            return out


LABELS = Interner()
CONTENTS = Interner()
PRODUCTIONS = Interner()
