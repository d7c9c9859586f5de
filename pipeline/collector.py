"""The garbage collector's pace for batch work (a snapshot build, a batched audit).

At the default threshold of 700 allocations, Python's collector runs every few records of a
harvest and every few citations of an audit, and each full collection scans every object
alive, the modules imported before the work included. :func:`fewer_collections` runs it less
often for the duration of one batch and never scans what was alive when it began.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

GC_THRESHOLD = 10_000  # allocations between young collections in a batch (default 700)


@contextlib.contextmanager
def fewer_collections(threshold: int = GC_THRESHOLD) -> Iterator[None]:
    """Run the garbage collector less often while open (restored afterwards).

    A harvest allocates millions of short-lived objects (XML elements, records, rows); at
    the default threshold the collector cost about a tenth of the harvest, and about a sixth
    of a batched audit of 50,000 citations (``make bench``). The objects alive at the start
    are frozen (never scanned) for the duration.
    """
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(threshold, before[1], before[2])
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()
