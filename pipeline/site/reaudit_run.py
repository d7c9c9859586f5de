"""Run the re-audit of every published report (the I/O half of :mod:`pipeline.site.reaudit`).

One report against one corpus (:func:`reaudit_one`) is what ``citeseal reaudit`` and the MCP
tool ``reaudit_report`` both run. For the site, each report: find the newest snapshot of its
lineage (its own snapshot's newest descendant; when its snapshot is not present, the newest
snapshot of the same name), rebuild the answer from the report, audit it again with
:func:`audit.engine.audit_answer` and compare.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime

from audit.corpus import Corpus
from audit.duckdb_corpus import DuckDBCorpus
from audit.engine import (
    AuditInput,
    answer_of_report,
    audit_many,
    reaudit,
    with_references_rechecked,
)
from audit.errors import CitationSyntaxError
from audit.handles import parse_handle
from audit.keys import Keyring
from audit.report import Report
from pipeline.site.lineage import Lineage
from pipeline.site.loaders import BuildWarning, LoadedReport
from pipeline.site.reaudit import CitationChange, compare_reports
from pipeline.site.snapshots import LoadedSnapshot

FIXED_NOW = datetime(1970, 1, 1, tzinfo=UTC)  # re-audit reports are compared, never shown
METHOD_KEY = "check codes verified again with the key {fingerprint}"
METHOD_DEMO = "check codes verified again with the public demo key"
METHOD_PUBLISHED = (
    "check codes taken as published (the key {fingerprint} is not available to this build)"
)


@dataclass(frozen=True)
class ReauditOutcome:
    against: LoadedSnapshot | None
    method: str
    rechecked: Report | None
    changes: tuple[CitationChange, ...]
    reason: str | None  # why it was not re-checked


class PublishedChecks(Keyring):
    """A keyring that accepts exactly the handles the published reports found genuine.

    Used when the build does not hold the key the reports were made with: the engine then
    re-checks only the corpus side. Its fingerprint is the reports' so the re-audit report
    names the same key. It cannot mint: its own key is random and never used.
    """

    def __init__(self, reports: Sequence[Report]) -> None:
        super().__init__((secrets.token_bytes(32),), demo=bool(reports and reports[0].key.demo))
        if reports:
            self.fingerprint = reports[0].key.fingerprint
        accepted: set[tuple[str, str]] = set()
        for report in reports:
            for citation in report.citations():
                if citation.verdict in ("malformed", "forged"):
                    continue
                try:
                    handle = parse_handle(citation.handle)
                except CitationSyntaxError:
                    continue
                accepted.add((handle.locator.text, handle.check))
        self._accepted = frozenset(accepted)

    def verifies(self, message: str, check: str) -> bool:
        return (message, check) in self._accepted


def keyring_for(reports: Sequence[Report], keyring: Keyring | None) -> tuple[Keyring, str]:
    """The keyring to re-check ``reports`` (one key fingerprint) with, and how it was chosen."""
    first = reports[0].key
    if first.demo:
        demo = Keyring.demo_keyring()
        if demo.fingerprint == first.fingerprint:
            return demo, METHOD_DEMO
    if keyring is not None and first.fingerprint in (
        keyring.fingerprint,
        *keyring.retired_fingerprints,
    ):
        return keyring, METHOD_KEY.format(fingerprint=first.fingerprint)
    return PublishedChecks(reports), METHOD_PUBLISHED.format(fingerprint=first.fingerprint)


@dataclass(frozen=True)
class Reaudited:
    """One published report audited again: the new report, what changed, how keys were used."""

    published: Report
    rechecked: Report
    changes: tuple[CitationChange, ...]
    method: str


def reaudit_one(
    report: Report, corpus: Corpus, keyring: Keyring | None, *, now: datetime | None = None
) -> Reaudited:
    """Audit ``report`` again against ``corpus``: check codes with the key that made them
    when ``keyring`` (or the demo key) is it, else as published (:func:`keyring_for`)."""
    chosen, method = keyring_for([report], keyring)
    resolver = corpus.reference_resolver() if isinstance(corpus, DuckDBCorpus) else None
    try:
        again = reaudit(report, corpus, chosen, now=now, references=resolver)
    finally:
        if resolver is not None:
            resolver.close()
    return Reaudited(report, again, compare_reports(report, again), method)


def reaudit_all(
    reports: Sequence[LoadedReport],
    lineage: Lineage,
    report_snapshots: Mapping[str, LoadedSnapshot | None],
    *,
    keyring: Keyring | None = None,
) -> tuple[dict[str, ReauditOutcome], list[BuildWarning]]:
    """Re-audit every report; problems become warnings and "not re-checked" outcomes.

    Reports are grouped by (target snapshot, key, fail-on policy) and each group is audited
    in one streaming run of the engine over one connection to the snapshot.
    """
    outcomes: dict[str, ReauditOutcome] = {}
    warnings: list[BuildWarning] = []
    groups: dict[tuple[str, str, bool, tuple[str, ...]], list[LoadedReport]] = {}
    targets: dict[str, LoadedSnapshot] = {}
    for loaded in reports:
        own = report_snapshots.get(loaded.slug)
        info = loaded.report.snapshot
        target = lineage.newest_from(own) if own is not None else lineage.newest_named(info.name)
        if target is None:
            reason = f"no snapshot of {info.name!r} to re-check it against"
            outcomes[loaded.slug] = ReauditOutcome(None, "", None, (), reason)
            warnings.append(BuildWarning(loaded.name, f"not re-audited: {reason}"))
            continue
        targets[target.slug] = target
        key = loaded.report.key
        group = (target.slug, key.fingerprint, key.demo, tuple(loaded.report.fail_on))
        groups.setdefault(group, []).append(loaded)
    for (slug, *_rest, fail_on), members in sorted(groups.items()):
        target = targets[slug]
        published = [m.report for m in members]
        chosen, method = keyring_for(published, keyring)
        with (
            DuckDBCorpus(target.path, sha256=target.sha256) as corpus,  # trusted at load
            closing(corpus.reference_resolver()) as resolver,
        ):
            rechecked = audit_many(
                (AuditInput(r.source, answer_of_report(r)) for r in published),
                corpus,
                chosen,
                fail_on=fail_on,  # type: ignore[arg-type]  # the reports' own policy
                now=FIXED_NOW,
            )
            for loaded, fresh in zip(members, rechecked, strict=True):
                report = with_references_rechecked(loaded.report, fresh, resolver)
                changes = compare_reports(loaded.report, report)
                outcomes[loaded.slug] = ReauditOutcome(target, method, report, changes, None)
    return outcomes, warnings
