"""Re-audit: every published report re-checked against the newest snapshot of its lineage.

How a report is re-checked: a report carries every citation as written (``raw``, ``handle``,
``quote``) and the sentence it belongs to, so the answer is rebuilt from the report itself as a
:class:`~audit.citations.ParsedAnswer` (no input text needs to be stored beside the report) and
run through the audit engine again on the newest snapshot. The two reports are then compared
citation by citation: :func:`compare_reports` is pure.

Check codes. With the key the report was made with (the demo key, or the installation key when
its fingerprint matches) the check codes are verified again. Without it (a CI job that builds the
public site holds no key), a check code is taken as the published report judged it: the
citations it found malformed or forged stay so, the others count as verified. Only the corpus
side is re-checked then: record and passage still there, retraction, new versions.
"""

from __future__ import annotations

from dataclasses import dataclass

from audit.report import CitationResult, Report
from audit.terminal import one_line

VERDICT_KINDS = {"withdrawn": "withdrawn", "unavailable": "unavailable"}
FLAG_ADDED = {
    "retracted": "newly retracted",
    "expression_of_concern": "new expression of concern",
    "version_changed": "new version",
    "preprint": "now flagged preprint",
}
FLAG_REMOVED = {
    "retracted": "no longer retracted",
    "expression_of_concern": "expression of concern lifted",
    "version_changed": "back to the issued version",
    "preprint": "no longer a preprint",
}


@dataclass(frozen=True)
class CitationChange:
    """One citation whose status differs between publication and now."""

    sentence: int
    number: int  # 1-based position in its sentence
    handle: str
    kinds: tuple[str, ...]
    was: str
    now: str
    details: tuple[str, ...]

    @property
    def anchor(self) -> str:
        return f"s{self.sentence}c{self.number}"

    def line(self) -> str:
        """``[2.1] HANDLE: ok → ok [retracted] (DETAILS)`` — one line, for people and models."""
        details = f" ({'; '.join(self.details)})" if self.details else ""
        return (
            f"[{self.sentence}.{self.number}] {one_line(self.handle)}: {self.was} → {self.now}"
            + one_line(details)
        )


def describe(citation: CitationResult) -> str:
    """``ok [retracted, version_changed]`` — a verdict and its flags in one short string."""
    flags = ", ".join(f.name for f in citation.flags)
    return f"{citation.verdict} [{flags}]" if flags else citation.verdict


def compare_citation(was: CitationResult, now: CitationResult) -> tuple[list[str], list[str]]:
    """What changed for one citation: (kinds, details); both empty when nothing did."""
    kinds: list[str] = []
    details: list[str] = []
    if was.verdict != now.verdict:
        kinds.append(VERDICT_KINDS.get(now.verdict, f"now {now.verdict}"))
        if now.detail:
            details.append(now.detail)
    before = {f.name: f.detail for f in was.flags}
    after = {f.name: f.detail for f in now.flags}
    for name, detail in after.items():
        if name not in before:
            kinds.append(FLAG_ADDED.get(name, f"new flag {name}"))
            if detail:
                details.append(detail)
        elif before[name] != detail and name == "version_changed":
            kinds.append(FLAG_ADDED[name])
            if detail:
                details.append(detail)
    for name in before:
        if name not in after and was.verdict == now.verdict:
            kinds.append(FLAG_REMOVED.get(name, f"flag {name} removed"))
    old_record, new_record = was.record, now.record
    if old_record is not None and new_record is not None:
        if old_record.current_version != new_record.current_version and "new version" not in kinds:
            kinds.append("new version")
            details.append(
                f"current version {old_record.current_version} → {new_record.current_version}"
            )
        if new_record.withdrawn and not old_record.withdrawn and "withdrawn" not in kinds:
            kinds.append("withdrawn")
            details.append("the record is gone upstream (its earlier versions are kept)")
    return kinds, details


def compare_reports(published: Report, rechecked: Report) -> tuple[CitationChange, ...]:
    """Every citation whose verdict, flags or record version differ, in answer order.

    ``rechecked`` must have been rebuilt from ``published`` (same sentences, same citations).
    """
    changes: list[CitationChange] = []
    for old_s, new_s in zip(published.sentences, rechecked.sentences, strict=True):
        for number, (was, now) in enumerate(zip(old_s.citations, new_s.citations, strict=True), 1):
            kinds, details = compare_citation(was, now)
            if kinds:
                changes.append(
                    CitationChange(
                        sentence=old_s.index,
                        number=number,
                        handle=was.handle,
                        kinds=tuple(kinds),
                        was=describe(was),
                        now=describe(now),
                        details=tuple(details),
                    )
                )
    return tuple(changes)
