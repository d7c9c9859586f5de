"""Version backfill: fetch an earlier version of a trial or a label from a history service.

Registries change records in place. When a handle pins a version the snapshot does not hold,
these functions ask the registry's history — only when ``Settings.history_backfill`` is on
(``CITESEAL_HISTORY_BACKFILL=1``), because both services are unofficial or separate:

ClinicalTrials.gov (internal, undocumented endpoints; shapes from public client code, [U])
    ``GET https://clinicaltrials.gov/api/int/studies/{NCT}/history`` lists the versions:
    ``{"changes": [{"version": 0, "date": "YYYY-MM-DD", "status": "...", ...}]}`` (the shape
    ``{"history": {"changes": [...]}}`` is accepted too). Versions are numbered from 0.
    ``GET .../history/{n}`` returns ``{"study": {<v2 study>}}`` (a bare study is accepted).
    Our version label is the last-update-posted date, the history's is a number, so we try
    the entries dated on the requested day (newest first), then the newest entry dated before
    it (a version is submitted before it is posted), and accept a fetched study only when its
    own ``lastUpdatePostDateStruct.date`` equals the requested version — or, when the old study
    has no such date, when the history entry's date does. Anything else is "not retained".

DailyMed (official, separate service)
    ``GET https://dailymed.nlm.nih.gov/dailymed/services/v2/spls/{SETID}/history.json`` lists
    ``{"data": {"history": [{"spl_version": 4, "published_date": "May 20, 2025"}, ...]}}``.
    DailyMed serves the text of an earlier version only as a zipped SPL XML document
    (``getFile.cfm?type=zip&setid=…&version=N``), which this release does not fetch or convert;
    a version DailyMed lists is reported as ``unfetchable`` with that reason.

Whatever happens, the current version is never substituted for the one asked for: the lookup
returns a record only when it is that version.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from pipeline.errors import ParseError
from pipeline.records import Record
from pipeline.sources import clinicaltrials as ctgov
from pipeline.sources.ctgov_text import as_dict, as_list
from pipeline.xmlsafe import decode_json

if TYPE_CHECKING:
    from pipeline.http import HttpClient

CTGOV_HISTORY = "https://clinicaltrials.gov/api/int/studies/{nct}/history"
DAILYMED_HISTORY = "https://dailymed.nlm.nih.gov/dailymed/services/v2/spls/{setid}/history.json"
DAILYMED_SOURCE = "dailymed"
MAX_CANDIDATES = 3  # history versions fetched at most per lookup

Outcome = Literal["fetched", "disabled", "not_found", "not_retained", "unfetchable"]


@dataclass(frozen=True)
class HistoryEntry:
    """One upstream version: its history id, date (``YYYY-MM-DD``) and status if given."""

    version: str
    date: str | None
    status: str | None = None


@dataclass(frozen=True)
class VersionLookup:
    """The result of a backfill attempt: a record only when ``outcome == "fetched"``."""

    outcome: Outcome
    detail: str
    record: Record | None = None


DISABLED = VersionLookup(
    "disabled", "version history backfill is off (set CITESEAL_HISTORY_BACKFILL=1 to enable it)"
)


def _json(body: str | bytes, what: str) -> Any:
    try:
        return decode_json(body, what=f"{what} JSON")
    except ValueError:  # json.JSONDecodeError, UnicodeDecodeError
        raise ParseError(f"expected {what} JSON, got text that is not JSON") from None


# -- ClinicalTrials.gov ------------------------------------------------------------------------


def parse_trial_history(body: str | bytes) -> list[HistoryEntry]:
    """The version list of a ClinicalTrials.gov history body, oldest first."""
    data = _json(body, "ClinicalTrials.gov record history")
    changes = as_dict(data).get("changes")
    if changes is None:
        changes = as_dict(as_dict(data).get("history")).get("changes")
    if not isinstance(changes, list):
        raise ParseError(
            "expected a ClinicalTrials.gov record history with a 'changes' list, got none"
        )
    entries: list[HistoryEntry] = []
    for change in (as_dict(c) for c in changes):
        number = change.get("version")
        if isinstance(number, bool) or not isinstance(number, (int, str)):
            continue
        date = change.get("date")
        status = change.get("status")
        entries.append(
            HistoryEntry(
                version=str(number),
                date=date if isinstance(date, str) and date else None,
                status=status if isinstance(status, str) else None,
            )
        )
    # numeric order without int(): a version of thousands of digits is data, not a crash
    return sorted(
        entries,
        key=lambda e: (
            (len(e.version.lstrip("0")), e.version.lstrip("0"))
            if e.version.isascii() and e.version.isdigit()
            else (-1, "")
        ),
    )


def trial_candidates(entries: list[HistoryEntry], version: str) -> list[HistoryEntry]:
    """History entries that may be the version posted on ``version`` (a date), best first."""
    same_day = [e for e in reversed(entries) if e.date == version]
    before = [e for e in reversed(entries) if e.date is not None and e.date < version]
    return (same_day + before[:1])[:MAX_CANDIDATES]


def parse_trial_version(body: str | bytes, entry: HistoryEntry) -> Record:
    """One history version as a record; without a last-update-posted date of its own, the
    version is the history entry's date (``metadata.version_basis = "history_date"``)."""
    data = as_dict(_json(body, "ClinicalTrials.gov history version"))
    study = as_dict(data.get("study")) if "study" in data else data
    if "protocolSection" not in study:
        raise ParseError("expected a ClinicalTrials.gov history version with a 'study', got none")
    record = ctgov.study_record(study)
    metadata = {**record.metadata, "history_version": entry.version}
    update: dict[str, Any] = {"metadata": metadata}
    if metadata.get("version_basis") != "last_update_post_date" and entry.date:
        metadata["version_basis"] = "history_date"
        update.update(version=entry.date, version_date=entry.date)
    return record.model_copy(update=update)


def lookup_trial_version(client: HttpClient, nct_id: str, version: str) -> VersionLookup:
    """Backfill ``nct:<nct_id>@<version>`` from the record history (see module docstring)."""
    if not client.settings.history_backfill:
        return DISABLED
    nct = nct_id.strip().upper().removeprefix("NCT:")
    if not ctgov.NCT_ID.match(nct):
        return VersionLookup("not_found", f"not an NCT id: {nct_id!r}")
    url = CTGOV_HISTORY.format(nct=nct)
    response = client.get(url, source=ctgov.SOURCE, expect=(200, 404))
    if response.status_code == 404:
        return VersionLookup("not_found", f"ClinicalTrials.gov has no record history for {nct}")
    entries = parse_trial_history(response.content)
    for entry in trial_candidates(entries, version):
        answer = client.get(f"{url}/{entry.version}", source=ctgov.SOURCE, expect=(200, 404))
        if answer.status_code == 404:
            continue
        record = parse_trial_version(answer.content, entry)
        if record.version == version and record.record_id == f"nct:{nct}":
            return VersionLookup(
                "fetched", f"version {version} of {nct} is history version {entry.version}", record
            )
    return VersionLookup(
        "not_retained",
        f"the ClinicalTrials.gov history of {nct} has no version last updated on {version}",
    )


# -- DailyMed --------------------------------------------------------------------------------


def _iso(published: object) -> str | None:
    if not isinstance(published, str):
        return None
    text = published.strip()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return text
    for fmt in ("%b %d, %Y", "%B %d, %Y", "%m/%d/%Y", "%Y%m%d"):
        try:
            return datetime.strptime(text, fmt).date().isoformat()
        except ValueError:
            continue
    return None


def parse_label_history(body: str | bytes) -> list[HistoryEntry]:
    """The SPL version list of a DailyMed ``history.json`` body, oldest first."""
    data = as_dict(_json(body, "DailyMed SPL history"))
    inner = data.get("data")
    items = as_dict(inner).get("history") if isinstance(inner, dict) else inner
    if not isinstance(items, list):
        raise ParseError("expected a DailyMed SPL history with data.history, got none")
    entries = [
        HistoryEntry(version=str(item.get("spl_version")), date=_iso(item.get("published_date")))
        for item in (as_dict(i) for i in as_list(items))
        if isinstance(item.get("spl_version"), (int, str)) and str(item.get("spl_version"))
    ]
    # numeric order without int(): a version of thousands of digits is data, not a crash
    return sorted(
        entries,
        key=lambda e: (
            (len(e.version.lstrip("0")), e.version.lstrip("0"))
            if e.version.isascii() and e.version.isdigit()
            else (-1, "")
        ),
    )


def lookup_label_version(client: HttpClient, set_id: str, version: str) -> VersionLookup:
    """Look ``setid:<set_id>@<version>`` up in DailyMed's SPL history (see module docstring)."""
    if not client.settings.history_backfill:
        return DISABLED
    setid = set_id.strip().lower().removeprefix("setid:")
    response = client.get(
        DAILYMED_HISTORY.format(setid=setid), source=DAILYMED_SOURCE, expect=(200, 404)
    )
    if response.status_code == 404:
        return VersionLookup("not_found", f"DailyMed has no SPL history for set id {setid}")
    listed = {e.version: e for e in parse_label_history(response.content)}
    entry = listed.get(version)
    if entry is None:
        return VersionLookup(
            "not_retained", f"DailyMed's history of set id {setid} has no version {version}"
        )
    published = f" (published {entry.date})" if entry.date else ""
    return VersionLookup(
        "unfetchable",
        f"DailyMed lists version {version} of set id {setid}{published}, but citeseal cannot "
        "fetch the text of an earlier SPL version",
    )
