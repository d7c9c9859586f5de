"""``check_references``: every reference of a text checked against the served snapshot.

The same code path as ``citeseal check`` (:func:`audit.references.extract_bytes`, then
:func:`audit.references.check.check_document` against a
:class:`~audit.references.resolve.SnapshotResolver` of the served snapshot, read through the
call's own cursor): the structured result is exactly the JSON ``citeseal check --format json``
prints for the same text (the document is named ``mcp``), the text block is its text report.

Limits and formats: the text is at most :data:`MAX_CHECK_CHARS` characters (an answer's limit:
what a model pastes); ``format`` is one of :data:`TEXT_FORMATS` (``markdown`` when omitted;
PDF is not text). A text the reader refuses (a broken BibTeX block, CSL-JSON that does not
parse) is the reader's one-line error, as the CLI prints it.

The title index (every titled record of the snapshot, read on the first title search) is built
once per served snapshot and reused by later calls (keyed by the snapshot's sha256, so a
``--online`` child gets its own).
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, get_args

from audit import __version__
from audit.citations import MAX_ANSWER_CHARS
from audit.errors import InputError, LimitExceeded
from audit.references.model import InputFormat
from pipeline.serve.served import SERVED_CHANGE, Served
from pipeline.serve.service import Outcome

MAX_CHECK_CHARS = MAX_ANSWER_CHARS
"""At most this many characters of text to check."""
TEXT_FORMATS: tuple[str, ...] = tuple(f for f in get_args(InputFormat) if f != "pdf")
"""The input formats a text can be in (every reader but PDF's)."""
DOCUMENT_NAME = "mcp"
"""How the report names the checked text (``file``, and each span's file)."""

if TYPE_CHECKING:
    from audit.references.resolve import TitleIndex

_TITLES: weakref.WeakKeyDictionary[Served, tuple[str, TitleIndex]] = weakref.WeakKeyDictionary()
_TITLES_LOCK = threading.Lock()


def _cached_titles(served: Served) -> TitleIndex | None:
    with _TITLES_LOCK:
        held = _TITLES.get(served)
    return held[1] if held is not None and held[0] == served.trusted.sha256 else None


def _keep_titles(served: Served, sha256: str, titles: TitleIndex | None) -> None:
    if titles is not None:
        with _TITLES_LOCK:
            _TITLES[served] = (sha256, titles)


def check_references(served: Served, text: str, fmt: str | None = None) -> Outcome:
    """Check every reference of ``text`` (read as ``fmt``, default Markdown)."""
    from audit.references import extract_bytes
    from audit.references.check import SnapshotRef, check_document, make_report, render_text
    from audit.references.resolve import SnapshotResolver

    if fmt is not None and fmt not in TEXT_FORMATS:
        raise InputError(f"format must be one of {', '.join(TEXT_FORMATS)}, got {fmt!r}")
    if len(text) > MAX_CHECK_CHARS:
        raise LimitExceeded(f"the text is {len(text):,} characters (limit {MAX_CHECK_CHARS:,})")
    document = extract_bytes(text.encode("utf-8"), DOCUMENT_NAME, fmt or "markdown")
    trusted = served.trusted
    with served.cursor() as cursor:
        resolver = SnapshotResolver(cursor, trusted.manifest.name, titles=_cached_titles(served))
        checked = check_document(document, resolver)
        trusted.still_unchanged(**SERVED_CHANGE)  # what was read is what was trusted
    _keep_titles(served, trusted.sha256, resolver.title_index)
    ref = SnapshotRef(
        name=trusted.manifest.name, sha256=trusted.sha256, snapshot_id=trusted.manifest.snapshot_id
    )
    report = make_report([checked], ref, f"citeseal {__version__}")
    return Outcome(report, render_text(report))
