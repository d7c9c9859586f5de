"""Opaque, signed paging cursors for the MCP search tools.

A cursor is what a search page hands back as ``next_cursor``, and what the next call passes
as ``cursor`` (with the same query and filters) to get the following page::

    cursor  = base64url( payload tag )            no padding, at most MAX_CURSOR_CHARS
    payload = canonical JSON (sorted keys, no spaces): {"v": 2, "tool": ..., "query": ...,
              "filters": {...}, "snapshot": <sha256 of the snapshot file>, "offset": N}
    tag     = 32 bytes: Keyring.derived_tag(PURPOSE, payload), HMAC-SHA256 under a key
              derived from the served key for this purpose only (audit.keys)

What it binds: the tool (literature, trials, drug labels), the query as given, the filters
as parsed (:meth:`~pipeline.snapshot.filters.SearchFilters.canonical`), the snapshot file's
sha256 and the offset of the next page, counted in *works* (format 2: search returns one
result per work, :mod:`pipeline.snapshot.works`; a format-1 cursor counted passages and is
refused, never misread as a work offset). :func:`read_cursor` checks, in this order, that the
text is a cursor at all (length, alphabet, base64url), that its tag verifies (so no byte of
it was changed, cut or made up), that it is of this format, then that it was issued for this
snapshot, this tool, and this query and these filters. Each failure is an
:class:`~audit.errors.InputError` with its own message — never a silent restart at page 1.

A cursor carries no secret (the query is in it, readable) and does not expire: it stays good
for as long as the server serves the same snapshot file with the same key. Paging is by
offset into a total order (:func:`pipeline.snapshot.search.search_page`) over a frozen
snapshot, so pages never repeat or skip a work: a work's records are grouped by the snapshot
alone, and the works are ranked by their best passage in a total order, so the work at each
offset is the same on every call and no work can appear on two pages.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from audit.errors import InputError
from audit.keys import TAG_BYTES, Keyring
from audit.terminal import one_line

PURPOSE = b"citeseal serve search cursor"
FORMAT = 2
MAX_CURSOR_CHARS = 4_096
"""A query of 1,000 characters (up to 4 UTF-8 bytes each, escaped in JSON) fits with room."""
_ALPHABET = re.compile(r"[A-Za-z0-9_-]+")
ADVICE = "search again without a cursor to start from the first page"


@dataclass(frozen=True)
class SearchKey:
    """What a cursor must match: the search it pages through."""

    tool: str
    query: str
    filters: Mapping[str, Any]
    snapshot: str  # the snapshot file's sha256


def _canonical(value: Mapping[str, Any]) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _differences(issued: object, given: Mapping[str, Any]) -> str:
    """The filters where the cursor's differ from this call's: ``name=issued, not given``."""
    if not isinstance(issued, dict):
        return "none recorded"

    def show(value: object) -> str:
        return json.dumps(value, ensure_ascii=False)

    shown = [
        f"{name}={show(issued.get(name))}, not {show(given.get(name))}"
        for name in sorted(set(issued) | set(given))
        if issued.get(name) != given.get(name)
    ]
    return "; ".join(shown)


def issue_cursor(keyring: Keyring, key: SearchKey, offset: int) -> str:
    """The cursor of the page at ``offset`` of the search ``key``."""
    payload = _canonical(
        {
            "v": FORMAT,
            "tool": key.tool,
            "query": key.query,
            "filters": dict(key.filters),
            "snapshot": key.snapshot,
            "offset": offset,
        }
    )
    raw = payload + keyring.derived_tag(PURPOSE, payload)
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _damaged(why: str) -> InputError:
    return InputError(f"the cursor is not one this server issued: {why}", advice=ADVICE)


def _payload(keyring: Keyring, text: str) -> dict[str, Any]:
    """The verified payload of ``text`` (raises unless it is an intact cursor of this key)."""
    if not text:  # "" is no cursor: omitting it, not sending it empty, asks for page one
        raise _damaged("it is empty (leave cursor out for the first page)")
    if len(text) > MAX_CURSOR_CHARS:
        raise _damaged(f"it is {len(text):,} characters long (at most {MAX_CURSOR_CHARS:,})")
    if not _ALPHABET.fullmatch(text):
        raise _damaged("it holds characters outside base64url (A-Z a-z 0-9 - _)")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise _damaged("it is not valid base64url (truncated?)") from None
    payload, tag = raw[:-TAG_BYTES], raw[-TAG_BYTES:]
    if len(raw) <= TAG_BYTES or not keyring.derived_tag_verifies(PURPOSE, payload, tag):
        raise _damaged("its signature does not verify (altered, truncated or made up)")
    try:
        value = json.loads(payload)
    except ValueError:  # signed by this key, so only a format change can land here
        raise _damaged("its content is not of this server's format") from None
    if not isinstance(value, dict) or value.get("v") != FORMAT:
        raise _damaged(f"it is not of cursor format {FORMAT}")
    return value


def read_cursor(keyring: Keyring, text: str, key: SearchKey) -> int:
    """The offset a cursor points at, once it is shown to be this server's cursor for the
    search ``key`` (module docstring); raises :class:`InputError` otherwise."""
    value = _payload(keyring, text.strip())
    snapshot = str(value.get("snapshot"))
    if snapshot != key.snapshot:
        raise InputError(
            f"the cursor was issued for another snapshot (sha256 {snapshot[:16]}…); "
            f"this server serves {key.snapshot[:16]}…",
            advice=ADVICE,
        )
    tool = str(value.get("tool"))
    if tool != key.tool:
        raise InputError(
            f"the cursor pages through search_{tool}, not search_{key.tool}", advice=ADVICE
        )
    if value.get("query") != key.query:
        raise InputError(
            "the cursor belongs to another query "
            f"({one_line(str(value.get('query')))!r}); pass the query it was issued for",
            advice=ADVICE,
        )
    issued = value.get("filters")
    if issued != dict(key.filters):
        raise InputError(
            "the cursor belongs to the same query with other filters "
            f"({_differences(issued, key.filters)}); pass the filters it was issued for",
            advice=ADVICE,
        )
    offset = value.get("offset")
    if type(offset) is not int or offset < 0:
        raise _damaged("it holds no page offset")
    return offset
