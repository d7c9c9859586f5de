"""A reference check as SARIF 2.1.0, for GitHub code scanning (pure).

Rules:

- One run, tool ``citeseal``, one rule per tier (``citeseal/reference/<tier>``), all five
  listed so a result's ``ruleIndex`` is stable.
- One result per reference that is not ``verified``: level ``error`` for ``hallucinated``,
  ``warning`` for ``mismatch`` and ``unresolved``, ``note`` for ``needs_review``. A verified
  reference that is retracted or under an expression of concern is a ``warning`` of the
  ``verified`` rule, so a citation of a retracted paper is not silent.
- The location is the first identifier's span (else the reference's): the file as the report
  names it, 1-based line and column, end exclusive (SARIF's convention too). A PDF's page is
  not a SARIF region; its results point at the page's text line.
- The message is the reason, then each field that disagrees, seen vs expected.
"""

from __future__ import annotations

import json
from typing import Any

from audit.references.check import TIERS, CheckReport, ReferenceCheck

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
_LEVEL = {"hallucinated": "error", "mismatch": "warning", "unresolved": "warning"}
_DESCRIPTION = {
    "verified": "The reference resolves to the work it describes.",
    "mismatch": "A real work, but a field or an identifier disagrees with the record.",
    "hallucinated": "The identifier is invalid or belongs to a different work.",
    "needs_review": "A kind the snapshot does not index (a book, an entry without identifier).",
    "unresolved": "The snapshot cannot say: the identifier is not in it, or a lookup failed.",
}


def _rule_id(tier: str) -> str:
    return f"citeseal/reference/{tier}"


def _level(check: ReferenceCheck) -> str | None:
    if check.tier == "verified":
        flagged = check.flags.retracted or check.flags.expression_of_concern
        return "warning" if flagged else None
    return _LEVEL.get(check.tier, "note")


def _message(check: ReferenceCheck) -> str:
    parts = [f"{check.tier}: {check.reason}"]
    if check.flags.retracted:
        parts.append("the work is retracted")
    if check.flags.expression_of_concern:
        parts.append("the work has an expression of concern")
    parts.extend(f"{d.field}: seen {d.seen!r}, expected {d.expected!r}" for d in check.diffs)
    return "; ".join(parts)


def _result(check: ReferenceCheck, level: str) -> dict[str, Any]:
    span = check.location
    region = {
        "startLine": span.line,
        "startColumn": span.column,
        "endLine": span.end_line,
        "endColumn": span.end_column,
    }
    return {
        "ruleId": _rule_id(check.tier),
        "ruleIndex": TIERS.index(check.tier),
        "level": level,
        "message": {"text": _message(check)},
        "locations": [
            {"physicalLocation": {"artifactLocation": {"uri": span.file}, "region": region}}
        ],
    }


def to_sarif(report: CheckReport, version: str) -> dict[str, Any]:
    """The SARIF log of ``report`` (module docstring); ``version``: citeseal's."""
    results = []
    for document in report.documents:
        for check in document.references:
            level = _level(check)
            if level is not None:
                results.append(_result(check, level))
    rules = [
        {
            "id": _rule_id(tier),
            "name": tier,
            "shortDescription": {"text": _DESCRIPTION[tier]},
            "defaultConfiguration": {"level": _LEVEL.get(tier, "note")},
        }
        for tier in TIERS
    ]
    driver = {"name": "citeseal", "version": version}
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [{"tool": {"driver": {**driver, "rules": rules}}, "results": results}],
    }


def render_sarif(report: CheckReport, version: str) -> str:
    return json.dumps(to_sarif(report, version), indent=2, ensure_ascii=False) + "\n"
