"""Fuzzing the parsers: mutated real-format bodies only ever give records or a ParseError.

The seed corpus is ours: the synthetic fixtures in ``tests/fixtures/<source>/``, the demo's
recorded exchanges (``snapshots/demo/replay*``, synthetic too) and the few bodies in
:data:`EXTRA_SEEDS`. Each example takes one seed and applies one to three mutations:

* JSON (parsed, changed, written again): a value swapped for one of another type
  (``"message": []``), a key deleted, a value duplicated or wrapped, a value replaced by
  arrays nested 100 or 100,000 deep, a huge string or number, an id that breaks its grammar
  ("Health Literacy", "4 rev");
* XML: an element removed, a text or attribute replaced, an element nested 10,000 deep;
* bytes: truncation, flipped bytes, a UTF-16 BOM, invalid UTF-8, a gzip stream cut short,
  a lone surrogate escape.

:func:`check_fails_closed` runs the parser: a :class:`~pipeline.errors.ParseError` is a
pass; so is a result, when every record in it can be stored and cited (its content hash
computes, its id and version parse as a handle locator, its text encodes as UTF-8).
Anything else raised is a crash. ``CITESEAL_FUZZ_EXAMPLES`` sets the number of examples per
test (default :data:`DEFAULT_EXAMPLES`, enough for the suite; set it to 20000 for a long
local run); the conformance tests over ``../shared/reference-responses`` (skipped when it is
absent) mutate those bodies in memory with a quarter of that count.
"""

from __future__ import annotations

import copy
import gzip
import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from audit.handles import PINNED_SCHEMES, SCHEMES, parse_locator
from pipeline.errors import ParseError
from pipeline.records import ParseResult

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures"
DEMO_REPLAYS = (
    ROOT / "snapshots" / "demo" / "replay",
    ROOT / "snapshots" / "demo" / "replay-update",
)
DEFAULT_EXAMPLES = 150
EXAMPLES = int(os.environ.get("CITESEAL_FUZZ_EXAMPLES", DEFAULT_EXAMPLES))

REFERENCE_MAX_BYTES = 150_000  # larger reference bodies make slow examples, not new cases

FUZZ_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,  # a long local run must not leave thousands of entries behind
    print_blob=True,  # so a failure found once can be replayed (@reproduce_failure)
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
REFERENCE_SETTINGS = settings(FUZZ_SETTINGS, max_examples=max(20, EXAMPLES // 4))
"""The conformance pass over ../shared/reference-responses (mutated in memory, never
copied): a quarter of the examples, since its seeds are large."""

EXTRA_SEEDS: dict[str, list[bytes]] = {
    "pubmed": [
        b'{"header": {"type": "esearch"}, "esearchresult": {"count": "2", "retmax": "2", '
        b'"retstart": "0", "idlist": ["99000001", "99000002"]}}',
    ],
    "crossref": [
        b'{"status": "ok", "message-type": "work", "message": {"DOI": "10.5555/fuzz.1", '
        b'"title": ["A synthetic work"], "type": "journal-article", "issued": '
        b'{"date-parts": [[2024, 5, 1]]}, "updated-by": [{"DOI": "10.5555/fuzz.2", '
        b'"type": "retraction", "source": "retraction-watch", "record-id": 1, '
        b'"updated": {"date-parts": [[2025, 1, 2]]}}], "relation": {"has-preprint": '
        b'[{"id": "10.5555/fuzz.3", "id-type": "doi"}]}}}',
    ],
}

ODD_VALUES: list[Any] = [
    [],
    {},
    "",
    0,
    -1,
    None,
    True,
    1.5,
    1e308,
    10**30,
    [None],
    [[]],
    {"": {}},
    "Health Literacy",
    "4 rev",
    "PMC0",
    "NCT123",
    "x" * 10_000,
    "\u202e\u0000\x1b[31m",
]
DEEP = "\u0000DEEP{}\u0000"  # placeholder replaced by nested arrays after json.dumps


def seeds(source: str, *, extra: list[Path] | None = None) -> list[bytes]:
    """The seed bodies of one source (fixture files, demo replay bodies, extra seeds)."""
    files = [p for p in sorted((FIXTURES / source).rglob("*")) if p.is_file()]
    files += [p for folder in DEMO_REPLAYS for p in sorted((folder / source).glob("*.json"))]
    bodies = [_unwrap(path.read_bytes()) for path in files]
    bodies += [
        b for b in (_unwrap(p.read_bytes()) for p in extra or []) if len(b) <= REFERENCE_MAX_BYTES
    ]
    return [*bodies, *EXTRA_SEEDS.get(source, [])]


def _unwrap(data: bytes) -> bytes:
    """The body of a wrapper file (``{"url", "status", "body"}``), or the file itself."""
    try:
        wrapper = json.loads(data)
    except ValueError:
        return data
    if not isinstance(wrapper, dict) or not isinstance(wrapper.get("url"), str):
        return data
    body = wrapper.get("body", "")
    return body.encode("utf-8") if isinstance(body, str) else json.dumps(body).encode()


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for n, value in enumerate(node[:6]):
            yield from _paths(value, (*prefix, n))


def _at(root: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        root = root[step]
    return root


def _replace(root: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    _at(root, path[:-1])[path[-1]] = value
    return root


def _delete(root: Any, path: tuple[Any, ...]) -> Any:
    if path:
        del _at(root, path[:-1])[path[-1]]
    return root


def _nest(match: re.Match[str]) -> str:
    """Nested arrays for a DEEP placeholder: opened to its depth, closed as far as it says
    (an unbalanced body must be measured and refused like a balanced one)."""
    return "[" * int(match[1]) + "]" * int(match[2])


@st.composite
def _json_mutation(draw: st.DrawFn, body: bytes) -> bytes:
    data = json.loads(body)
    for _ in range(draw(st.integers(1, 3))):
        paths = list(_paths(data))
        path = paths[draw(st.integers(0, len(paths) - 1))]
        how = draw(st.sampled_from(["swap", "swap", "delete", "twice", "wrap", "deep"]))
        if how == "swap":
            data = _replace(data, path, copy.deepcopy(draw(st.sampled_from(ODD_VALUES))))
        elif how == "delete":
            data = _delete(data, path)
        elif how == "twice":
            node = _at(data, path)
            data = _replace(data, path, [copy.deepcopy(node), copy.deepcopy(node)])
        elif how == "wrap":
            data = _replace(data, path, {"value": copy.deepcopy(_at(data, path))})
        else:
            depth = draw(st.sampled_from([65, 100, 100_000]))
            closed = draw(st.sampled_from([depth, depth, 0, depth // 2]))  # unbalanced too
            data = _replace(data, path, DEEP.format(f"{depth}:{closed}"))
    text = json.dumps(data, ensure_ascii=False)
    text = re.sub(r'"\\u0000DEEP(\d+):(\d+)\\u0000"', _nest, text)
    return text.encode("utf-8", "surrogatepass")


_TEXT = re.compile(rb">([^<>]+)<")
_OPEN = re.compile(rb"<([A-Za-z][\w.:-]*)(?:\s[^<>]*)?>")
_ATTRIBUTE = re.compile(rb'="([^"]*)"')
_XML_VALUES = [b"", b"abc", b"Health Literacy", b"0", b"-1", b"9" * 30, b"\xe2\x80\x8b", b"&amp;"]


@st.composite
def _xml_mutation(draw: st.DrawFn, body: bytes) -> bytes:
    for _ in range(draw(st.integers(1, 3))):
        how = draw(st.sampled_from(["text", "element", "attribute", "deep"]))
        found = list({"text": _TEXT, "attribute": _ATTRIBUTE}.get(how, _OPEN).finditer(body))
        if not found:
            continue
        match = found[draw(st.integers(0, len(found) - 1))]
        if how in {"text", "attribute"}:
            value = draw(st.sampled_from(_XML_VALUES))
            body = body[: match.start(1)] + value + body[match.end(1) :]
        elif how == "element":
            close = body.find(b"</" + match.group(1) + b">", match.end())
            if close > 0:
                body = body[: match.start()] + body[close + len(match.group(1)) + 3 :]
        else:
            depth = draw(st.sampled_from([300, 10_000]))
            body = body[: match.end()] + b"<d>" * depth + b"</d>" * depth + body[match.end() :]
    return body


@st.composite
def _byte_mutation(draw: st.DrawFn, body: bytes) -> bytes:
    how = draw(st.sampled_from(["cut", "flip", "bom", "utf8", "gzip", "surrogate", "open"]))
    if how == "cut":
        return body[: draw(st.integers(0, max(0, len(body) - 1)))]
    if how == "flip":
        data = bytearray(body)
        for _ in range(draw(st.integers(1, 8))):
            if data:
                data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
        return bytes(data)
    if how == "bom":
        return b"\xff\xfe" + body
    if how == "utf8":
        where = draw(st.integers(0, len(body)))
        return body[:where] + b"\xc3\x28\xff" + body[where:]
    if how == "gzip":
        return gzip.compress(body)[: draw(st.integers(1, 40))]
    if how == "open":  # nesting opened and never closed, anywhere in the body
        where = draw(st.integers(0, len(body)))
        opener = draw(st.sampled_from([b"[", b'{"a":', b"<d>"]))
        return body[:where] + opener * draw(st.sampled_from([65, 300, 100_000])) + body[where:]
    return body.replace(b'"', b'"\\ud800', 1)


class Body(bytes):
    """A fuzzed body whose repr stays short (a falsifying example of 200 kB would otherwise
    be printed whole, and Hypothesis warns about that instead of showing the error)."""

    def __repr__(self) -> str:
        return f"Body({len(self)} bytes: {bytes(self[:300])!r}…)"


@st.composite
def mutated(draw: st.DrawFn, bodies: list[bytes]) -> bytes:
    """One seed with one to three mutations (structure-aware when the seed parses)."""
    return Body(draw(_mutated(bodies)))


@st.composite
def _mutated(draw: st.DrawFn, bodies: list[bytes]) -> bytes:
    body = draw(st.sampled_from(bodies))
    structured = draw(st.booleans()) or draw(st.booleans())  # three in four
    if structured and body.lstrip()[:1] in (b"{", b"["):
        try:
            return draw(_json_mutation(body))
        except ValueError:  # the seed is not JSON (an error fixture)
            pass
    elif structured and body.lstrip()[:1] == b"<":
        return draw(_xml_mutation(body))
    return draw(_byte_mutation(body))


def check_fails_closed(parse: Callable[..., Any], body: bytes, **kwargs: Any) -> None:
    """``parse(body)`` raises ParseError or returns only storable, citable records."""
    try:
        result = parse(body, **kwargs)
    except ParseError as error:
        assert error.message and "\n" not in error.message.strip()
        return
    results = [result] if isinstance(result, ParseResult) else []
    for parsed in results:
        parsed.model_dump_json()  # storable: encodes as JSON/UTF-8
        for record in parsed.records:
            record.content_hash()
            scheme = record.record_id.partition(":")[0]
            # a record of a handle scheme is citable (doi:, openalex:, arxiv: are stored and
            # searched, not cited); one without an upstream version gets one from the build
            if scheme in SCHEMES:
                version = record.version or ("1" if scheme in PINNED_SCHEMES else None)
                pin = f"@{version}" if version else ""
                parse_locator(f"{record.record_id}{pin}/title")
