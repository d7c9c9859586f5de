"""Structured claims JSON (:func:`parse_claims`), validated strictly.

The schema::

    document = {"claims": [claim, ...]}  |  [claim, ...]
    claim    = {"sentence": string, "kind"?: "sentence" | "heading" | "list_item" | "lead_in",
                "citations"?: [citation, ...]}
    citation = handle string  |  {"handle": string, "quote"?: string | null}

Strict, because a claim that loses its citations to a misspelt key or a wrong type reads as
uncited, and a document that loses its claims reads as a clean answer:

- no key outside the schema (``"citatoins"``), no key given twice, no ``NaN``/``Infinity``;
- nesting at most :data:`MAX_CLAIMS_DEPTH` levels, measured by a linear scan before parsing
  (:func:`audit.json_depth.nesting_depth`),
  so 100,000 nested brackets are a one-line error rather than a ``RecursionError``;
- bytes must be valid UTF-8 (or the UTF-16/32 that JSON detects), and every string valid
  Unicode: a lone surrogate escape (``"\\ud800"``) is refused;
- a handle written in a sentence is audited as one of its citations, read as in prose
  (:func:`audit.citation_scan.find_units`): with the quote written with it, or malformed
  when that quote cannot be read whole (one the citations list already is not cited again
  unless the sentence gives it a quote);
- no claim, or only headings and empty sentences without citations, is
  :class:`~audit.errors.NothingToAudit`.

Every error is one line naming the claim (1-based), the citation and the key:
``claims JSON: claim 2: unknown key 'citatoins' (expected 'sentence', 'kind', 'citations')``.
Claims have no spans (``start = end = 0``).
"""

from __future__ import annotations

import json
from typing import Any, NoReturn

from audit.citation_scan import find_units
from audit.citations import (
    MAX_ANSWER_CHARS,
    SENTENCE_KINDS,
    Citation,
    ParsedAnswer,
    assemble,
    check_quote,
    lone_surrogate,
    make_citation,
    something_to_audit,
)
from audit.errors import InputError, LimitExceeded, NothingToAudit, undecodable_offset
from audit.json_depth import nesting_depth

MAX_CLAIMS_BYTES = 1_000_000
MAX_CLAIMS_DEPTH = 32
"""Arrays and objects nested deeper than this are refused (a valid document needs 5)."""

_DOCUMENT_KEYS = ("claims",)
_CLAIM_KEYS = ("sentence", "kind", "citations")
_CITATION_KEYS = ("handle", "quote")


class _Object(dict[str, Any]):
    """A JSON object that remembers which keys were given more than once."""

    twice: tuple[str, ...] = ()


def _object(pairs: list[tuple[str, Any]]) -> _Object:
    found = _Object(pairs)
    if len(found) < len(pairs):
        seen: set[str] = set()
        found.twice = tuple(k for k, _ in pairs if k in seen or seen.add(k))
    return found


def _constant(name: str) -> NoReturn:
    raise InputError(f"claims JSON is not valid JSON: {name} is not a number")


def _decode(data: str | bytes) -> str:
    if isinstance(data, str):
        return data
    encoding = json.detect_encoding(data)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as error:
        name = encoding.removesuffix("-sig").upper()
        at = undecodable_offset(error, data)
        raise InputError(f"claims JSON is not valid {name} text (byte {at})") from None


def _keys(value: dict[str, Any], allowed: tuple[str, ...], where: str) -> None:
    """No key given twice, none outside ``allowed``."""
    if twice := getattr(value, "twice", ()):
        raise InputError(f"{where}: key {twice[0]!r} is given twice")
    if unknown := [key for key in value if key not in allowed]:
        expected = ", ".join(repr(key) for key in allowed)
        raise InputError(f"{where}: unknown key {unknown[0]!r} (expected {expected})")


def _text(value: str, where: str, what: str) -> str:
    """``value``, refused when it holds a lone surrogate."""
    if (found := lone_surrogate(value)) is not None:
        raise InputError(f"{where}: {what} holds a lone surrogate ({found[1]}), not valid Unicode")
    return value


def _claim_citation(raw: object, where: str) -> Citation:
    """citation = handle string | {"handle": string, "quote"?: string | null}."""
    if isinstance(raw, str):
        handle_text, quote = _text(raw, where, "the handle").strip(), None
    elif isinstance(raw, dict):
        _keys(raw, _CITATION_KEYS, where)
        handle_text, quote = raw.get("handle"), raw.get("quote")
        if not isinstance(handle_text, str):
            raise InputError(f"{where}: 'handle' must be a string")
        if quote is not None and not isinstance(quote, str):
            raise InputError(f"{where}: 'quote' must be a string or null")
        handle_text = _text(handle_text, where, "'handle'").strip()
        if quote is not None:
            _text(quote, where, "'quote'")
    else:
        raise InputError(f"{where} must be a handle string or an object")
    check_quote(quote, 0)
    raw_text = handle_text if quote is None else f'{handle_text} "{quote}"'
    return make_citation(raw_text, handle_text, quote, 0, 0)


def _claim(raw: object, number: int) -> tuple[str, str, list[Citation]]:
    """claim = {"sentence": string, "kind"?: kind, "citations"?: [citation, ...]}."""
    where = f"claims JSON: claim {number}"
    if not isinstance(raw, dict):
        raise InputError(f"{where} must be an object")
    _keys(raw, _CLAIM_KEYS, where)
    sentence = raw.get("sentence")
    if not isinstance(sentence, str):
        raise InputError(f"{where}: 'sentence' must be a string")
    _text(sentence, where, "'sentence'")
    kind = raw.get("kind", "sentence")
    if not isinstance(kind, str) or kind not in SENTENCE_KINDS:
        raise InputError(
            f"{where}: 'kind' must be one of {', '.join(SENTENCE_KINDS)}, got {kind!r}"
        )
    listed = raw.get("citations", [])
    if not isinstance(listed, list):
        raise InputError(f"{where}: 'citations' must be a list")
    citations = [_claim_citation(c, f"{where}, citation {i}") for i, c in enumerate(listed, 1)]
    known = {c.handle_text for c in citations}
    for unit in find_units(sentence):  # a handle in the sentence is never silently uncited
        for element in unit.elements:
            written = sentence[element.handle_start : element.handle_end]
            plain = element.quote is None and element.error is None
            if plain and written in known:
                continue  # listed (or already cited), and the sentence adds no quote to it
            known.add(written)
            raw = sentence[element.raw_start : element.raw_end]
            check_quote(element.quote, 0)
            citations.append(make_citation(raw, written, element.quote, 0, 0, None, element.error))
    return sentence.strip(), kind, citations


def parse_claims(data: str | bytes) -> ParsedAnswer:
    """Structured claims (see the module docstring); raises :class:`InputError` subclasses
    only, each naming the claim, the citation and the key."""
    if len(data) > MAX_CLAIMS_BYTES:
        raise LimitExceeded(
            f"claims JSON is {len(data):,} characters long (limit {MAX_CLAIMS_BYTES:,})"
        )
    text = _decode(data)
    if (depth := nesting_depth(text)) > MAX_CLAIMS_DEPTH:
        raise LimitExceeded(f"claims JSON nests {depth:,} levels deep (limit {MAX_CLAIMS_DEPTH})")
    try:
        document = json.loads(text, object_pairs_hook=_object, parse_constant=_constant)
    except ValueError as error:
        raise InputError(f"claims JSON is not valid JSON: {error}") from None
    except RecursionError:  # defence in depth: the scan above should have refused it
        raise LimitExceeded(
            f"claims JSON nests too deep to parse (limit {MAX_CLAIMS_DEPTH})"
        ) from None
    if isinstance(document, dict):
        _keys(document, _DOCUMENT_KEYS, "claims JSON")
    claims = document.get("claims") if isinstance(document, dict) else document
    if not isinstance(claims, list):
        raise InputError("claims JSON must be a list of claims or an object with 'claims'")
    if not claims:
        raise NothingToAudit("nothing to audit: claims JSON holds no claims")
    sentences = [_claim(raw, number) for number, raw in enumerate(claims, 1)]
    total = sum(len(text) for text, _, _ in sentences)
    if total > MAX_ANSWER_CHARS:
        raise LimitExceeded(
            f"claims hold {total:,} characters of sentences (limit {MAX_ANSWER_CHARS:,})"
        )
    if not something_to_audit(sentences):
        raise NothingToAudit("nothing to audit: the claims hold no sentence and no citation")
    return assemble(sentences)
