"""The ``evidence://`` resource templates: one record, one passage (JSON).

``evidence://record/{+record_id}``
    The record's current version as ``fetch_passages`` gives it (metadata, status, flags,
    relations, versions, withdrawal) with every passage (at most
    :data:`~pipeline.serve.service.MAX_PASSAGES`, ``truncated`` beyond) and a freshly minted
    handle for each.
``evidence://passage/{+handle}``
    The passage a handle names, judged as ``resolve_handles`` judges it: verdict, detail,
    flags, the text as issued and as it is now, the record.

**The value is the URI's text as written, never percent-decoded.** Every handle and record
id is URI-safe as it is (unreserved characters, ``: @ / ~``, and the ``%XX`` of a ``local:``
id), so the ``{+…}`` expansion of a value is the value itself, and it is read back exactly:
``evidence://passage/local:my%20report.pdf@3f9a0c1b2d4e/page.1~…`` names the file
``my report.pdf``, ``local:a%2Fb.md`` the file ``b.md`` in folder ``a``, ``local:100%25.md``
the file ``100%.md``. The SDK's match decodes ``%XX`` once, which would turn the id
``my%20report.pdf`` into ``my report.pdf`` (no id) and ``100%25.md`` into another id, so
:func:`exact_value` takes the value from the URI the client sent instead (and refuses it when
the two disagree on anything but that decoding). A client that percent-encodes a whole handle
(``pmid%3A1…``) sends no handle: it is refused by the grammar.

Values are checked by our grammar before anything is read: a record id must be a
``scheme:id`` a handle can carry, a handle must parse (``audit.handles``). Neither grammar
admits ``..``, ``/`` in an id, ``\\`` or NUL, nor ``%`` outside a ``local:`` id's ``%XX``
(which must decode to a relative path without ``..``, ``.``-led or empty parts:
``audit.local_ids``), so a path-traversal-like value is refused whatever its encoding. The
SDK's default :class:`ResourceSecurity` (``..`` segments, absolute
paths and drive forms like ``e:x``, NUL) stays on for both templates: it rejects only
single-letter ``x:`` prefixes, and no scheme is a single letter (``pmid:``, ``nct:``…), so
``:`` forms need no exemption. A scheme of one letter would need its parameter exempted there
(``exempt_params``) and this grammar check would remain the guard.

Errors: a value that breaks the grammar or names nothing in this snapshot raises
:class:`~audit.errors.InputError`; the MCP layer turns it into a resource-not-found error
(JSON-RPC -32602) carrying the message, and any other project error into -32603.
"""

from __future__ import annotations

import json
from typing import cast
from urllib.parse import unquote

from audit.errors import InputError
from audit.handles import parse_handle
from pipeline.serve import service
from pipeline.serve.service import MAX_HANDLE_CHARS, MAX_ID_CHARS, MAX_PASSAGES, HandleQuery, Served

RECORD_TEMPLATE = "evidence://record/{+record_id}"
PASSAGE_TEMPLATE = "evidence://passage/{+handle}"
MIME_TYPE = "application/json"


def exact_value(template: str, uri: object, decoded: str) -> str:
    """The value of ``template``'s one ``{+…}`` variable as ``uri`` writes it (module
    docstring); ``decoded`` is what the SDK's match made of it. Raises
    :class:`~audit.errors.InputError` when ``uri`` is not a URI of ``template`` whose value
    decodes to ``decoded`` (the SDK and this reading would name different things)."""
    prefix = template.partition("{")[0]
    if not isinstance(uri, str) or not uri.startswith(prefix):
        raise InputError(f"the resource URI is not one of {template}")
    value = uri[len(prefix) :]
    if unquote(value) != decoded:
        raise InputError(f"the resource URI is not one of {template}: {value!r} is no value")
    return value


def record(served: Served, record_id: str) -> str:
    """The record (current version, every passage with a fresh handle) as JSON."""
    if len(record_id) > MAX_ID_CHARS:
        raise InputError(f"a record id is at most {MAX_ID_CHARS} characters")
    outcome = service.fetch(served, [record_id], max_passages=MAX_PASSAGES)
    fetched = cast(service.FetchResult, outcome.value)
    payload = {"demo_key": fetched.demo_key, **fetched.records[0].model_dump(mode="json")}
    return json.dumps(payload, ensure_ascii=False, indent=2)


def passage(served: Served, handle: str) -> str:
    """The passage ``handle`` names, with its verdict (the audit engine's), as JSON."""
    if len(handle) > MAX_HANDLE_CHARS:
        raise InputError(f"a handle is at most {MAX_HANDLE_CHARS} characters")
    parse_handle(handle)  # a CitationSyntaxError (an InputError) says what is wrong
    judged = cast(
        service.ResolveResult, service.resolve(served, [HandleQuery(handle=handle)]).value
    )
    return judged.results[0].model_dump_json(indent=2)
