"""``reaudit_report``: a published report JSON audited again against the served snapshot.

The same code path as ``citeseal reaudit`` (:func:`pipeline.site.reaudit_run.reaudit_one`):
the report is parsed and checked by :func:`pipeline.site.loaders.parse_report` (a body that is
not a report is an :class:`~audit.errors.InputError` naming the first problem), its local paths
are reduced to public names (:func:`audit.paths.public_report`), its citations are judged afresh
and compared with the published verdicts (:func:`pipeline.site.reaudit.compare_reports`).

Check codes are verified again only with the key that made them: the public demo key, or the
served key when the report's fingerprint is it (or one of its retired keys); otherwise they are
taken as published and ``method`` says so. The corpus side (records, passages, quotes,
retractions, versions) is always checked again.

Limit: the report, as JSON text, is at most :data:`MAX_REPORT_CHARS` characters (the
Streamable HTTP transport's default request cap); a longer one is refused unread.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from audit.errors import InputError, LimitExceeded
from audit.paths import public_report
from audit.report import Report
from pipeline.serve.describe import SnapshotIdentity, identity
from pipeline.serve.served import Served
from pipeline.serve.service import Outcome
from pipeline.site.loaders import parse_report
from pipeline.site.reaudit_run import reaudit_one

MAX_REPORT_CHARS = 4 * 1024 * 1024
"""At most this many characters of report JSON."""
REPORT_NAME = "(the report argument)"


class ReauditChange(BaseModel):
    """One citation whose status differs between publication and now."""

    sentence: int
    number: int = Field(description="1-based position of the citation in its sentence.")
    handle: str
    kinds: list[str] = Field(description="What changed: now forged, withdrawn, new version…")
    was: str = Field(description="Verdict and flags when published.")
    now: str = Field(description="Verdict and flags against this snapshot.")
    details: list[str]


class ReauditResult(BaseModel):
    published_verdict: str
    verdict: str = Field(description="The re-audited report's overall verdict.")
    against: SnapshotIdentity
    method: str = Field(description="How check codes were verified (with which key, or not).")
    changes: list[ReauditChange]
    report: Report = Field(description="The re-audited report.")


def _report_bytes(report: str | Mapping[str, Any]) -> bytes:
    text = report if isinstance(report, str) else json.dumps(report, ensure_ascii=False)
    if len(text) > MAX_REPORT_CHARS:
        raise LimitExceeded(
            f"the report is {len(text):,} characters of JSON (limit {MAX_REPORT_CHARS:,})"
        )
    if not text.strip():
        raise InputError(
            "the report is empty",
            advice="a report is the JSON that `citeseal audit --format json` writes",
        )
    return text.encode("utf-8")


def reaudit_report(
    served: Served, report: str | Mapping[str, Any], *, now: datetime | None = None
) -> Outcome:
    """Audit a published report (JSON text, or the object a client sent) again here."""
    published = public_report(
        parse_report(Path("report.json"), _report_bytes(report), name=REPORT_NAME)
    )
    with served.corpus() as corpus:
        done = reaudit_one(published, corpus, served.keyring, now=now)
    ident = identity(served)
    changes = [
        ReauditChange(
            sentence=c.sentence,
            number=c.number,
            handle=c.handle,
            kinds=list(c.kinds),
            was=c.was,
            now=c.now,
            details=list(c.details),
        )
        for c in done.changes
    ]
    value = ReauditResult(
        published_verdict=published.verdict,
        verdict=done.rechecked.verdict,
        against=ident,
        method=done.method,
        changes=changes,
        report=done.rechecked,
    )
    lines = [
        f"{published.verdict} → {done.rechecked.verdict} against {ident.name} "
        f"{ident.snapshot_id}; {done.method}"
    ]
    lines += [f"  {change.line()}" for change in done.changes]
    if not done.changes:
        lines.append("  no citation changed status since publication")
    return Outcome(value, "\n".join(lines))
