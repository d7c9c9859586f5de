"""ClinicalTrials.gov API v2: parse study JSON into ``nct:`` records; search and fetch.

Record
    ``record_id`` ``nct:NCT99000001``; ``version`` = the last-update-posted date
    (``statusModule.lastUpdatePostDateStruct.date``, ``YYYY-MM-DD``). When a body lacks it
    (a field projection without ``LastUpdatePostDate``), the fallbacks are, in order,
    ``lastUpdateSubmitDate`` then ``studyFirstPostDateStruct.date``; ``metadata.version_basis``
    says which one was used, and no date at all gives ``version`` None. ``status`` =
    ``overallStatus`` (``WITHDRAWN``, ``TERMINATED``, ``COMPLETED`` …), ``metadata.why_stopped``
    the reason given upstream. ``content_type`` is ``trial``. A registry has no retraction
    concept, so ``flags`` are all False; withdrawal is the ``status``. ``licence`` is
    ``public-domain`` for every study, ``licence_raw`` :data:`TERMS_URL`: the registry is a US
    government (NLM) service whose records the API gives with no licence field; its terms of
    use name no restriction on reusing the study records (``docs/sources.md``, licences).

Passage paths (N counts chunks of ≤ 1,200 characters cut at sentence boundaries, 1-based)
    ``trial.brief_title.1``, ``trial.official_title.1``, ``trial.brief_summary.N``,
    ``trial.detailed_description.N`` (paragraph by paragraph), ``trial.conditions.1``,
    ``trial.interventions.N`` (one per intervention), ``trial.arms.N`` (one per arm group),
    ``trial.eligibility_inclusion.N`` / ``trial.eligibility_exclusion.N`` (one per top-level
    criterion), ``trial.eligibility.N`` (criteria outside an inclusion/exclusion heading),
    ``trial.primary_outcome.N``, ``trial.secondary_outcome.N``, ``trial.other_outcome.N``
    (measure, time frame, description), ``trial.results.N`` (one per posted outcome measure:
    values per group and analyses written as sentences, see
    :func:`pipeline.sources.ctgov_text.render_outcome_measure`).

Formats
    ``{"studies": [...], "nextPageToken": ...}`` (search or ``filter.ids``) and a single study
    (``/studies/{nct}``). A field-projected body (``fields=NCTId,BriefTitle,...``) gives records
    with whatever passages it contains; ``metadata.projection`` holds the ``fields`` parameter
    when the URL is known. The retired classic API (v1 JSON, ``<clinical_study>`` XML) is
    refused with a :class:`~pipeline.errors.ParseError` that says what to use instead.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import parse_qs, urlsplit

from pydantic import Field, model_validator

from audit import licences
from audit.errors import InputError
from pipeline.errors import ParseError
from pipeline.records import Flags, ParseResult, Passage, Record, Refusal
from pipeline.segment import chunk_text, split_paragraphs
from pipeline.sources import citable
from pipeline.sources.base import ById, Plugin, Rate, Request, Search, Shapes, Step
from pipeline.sources.clinicaltrials_replay import REPLAY
from pipeline.sources.ctgov_text import (
    JsonDict,
    as_dict,
    as_list,
    clean,
    render_arm,
    render_intervention,
    render_outcome,
    render_outcome_measure,
    split_eligibility,
    strings,
    unescape,
)
from pipeline.sources.jsonshape import snippet
from pipeline.sources.paging import walk
from pipeline.sources.spec_types import NCT, Limit, Strict, id_list
from pipeline.xmlsafe import decode_json

if TYPE_CHECKING:
    import httpx

    from pipeline.http import HttpClient

SOURCE = "clinicaltrials"
TERMS_URL = "https://clinicaltrials.gov/about-site/terms-conditions"
"""Where ClinicalTrials.gov states the terms of reuse of its records (the ``licence_raw``)."""
API = "https://clinicaltrials.gov/api/v2"
MAX_CHARS = 1200
MAX_PAGE_SIZE = 1000
ID_BATCH = 100  # NCT ids per filter.ids request (~1.2 kB of URL)
NCT_ID = re.compile(r"^NCT\d{8}$")

FIELDS = ",".join(
    [
        "protocolSection.identificationModule",
        "protocolSection.statusModule",
        "protocolSection.sponsorCollaboratorsModule",
        "protocolSection.descriptionModule",
        "protocolSection.conditionsModule",
        "protocolSection.designModule",
        "protocolSection.armsInterventionsModule",
        "protocolSection.outcomesModule",
        "protocolSection.eligibilityModule",
        "protocolSection.referencesModule",
        "resultsSection.outcomeMeasuresModule",
        "hasResults",
    ]
)
"""The modules every harvest asks for: exactly what the parser reads, so a searched record and
a fetched record of the same version are identical."""

_LEGACY_JSON_KEYS = ("FullStudiesResponse", "StudyFieldsResponse", "FullStudy", "Study")
_V2_HINT = "fetch the study from API v2: https://clinicaltrials.gov/api/v2/studies/NCT…"


# -- parsing -------------------------------------------------------------------------------


def _load(body: str | bytes) -> object:
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    text = text.lstrip("\ufeff \t\r\n")
    if text.startswith("<"):
        root = re.search(r"<([A-Za-z_][\w.\-]*)[\s>/]", re.sub(r"<[?!][^>]*>", "", text))
        name = root.group(1) if root else "?"
        if name in {"clinical_study", "search_results", "FullStudiesResponse"}:
            raise ParseError(
                f"this is a classic ClinicalTrials.gov XML record (<{name}>), retired in 2024; "
                "citeseal reads API v2 JSON",
                advice=_V2_HINT,
            )
        raise ParseError(f"expected ClinicalTrials.gov API v2 JSON, got XML (<{name}>)")
    try:
        return decode_json(text, what="ClinicalTrials.gov API v2 JSON")
    except json.JSONDecodeError as exc:
        raise ParseError(
            f"expected ClinicalTrials.gov API v2 JSON, got text that is not JSON "
            f"(line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None


def _studies(data: object) -> tuple[list[JsonDict], str | None, int | None]:
    """(studies, nextPageToken, totalCount) of a list body or a single study."""
    if not isinstance(data, dict):
        raise ParseError(
            f"expected a ClinicalTrials.gov API v2 JSON object, got a JSON {type(data).__name__}"
        )
    for key in _LEGACY_JSON_KEYS:
        if key in data and (key != "Study" or "ProtocolSection" in as_dict(data[key])):
            raise ParseError(
                f"this is a legacy ClinicalTrials.gov classic API (v1) JSON response ({key}), "
                "retired in 2024; citeseal reads API v2 JSON",
                advice=_V2_HINT,
            )
    if "studies" in data:
        studies = data["studies"]
        if not isinstance(studies, list):
            raise ParseError("ClinicalTrials.gov response: 'studies' is not a list")
        token = data.get("nextPageToken")
        total = data.get("totalCount")
        return (
            [as_dict(s) for s in studies],
            token if isinstance(token, str) and token else None,
            total if isinstance(total, int) else None,
        )
    if "protocolSection" in data:
        return [data], None, None
    keys = snippet(", ".join(sorted(data)[:6])) or "none"
    raise ParseError(
        "expected a ClinicalTrials.gov API v2 study list ('studies') or study "
        f"('protocolSection'), got an object with keys: {keys}"
    )


def _projection(url: str | None) -> str | None:
    if not url:
        return None
    fields = parse_qs(urlsplit(url).query).get("fields")
    return fields[0] if fields else None


def _candidate(study: JsonDict, projection: str | None) -> Record | Refusal:
    """The study's record, or its refusal when its nctId breaks the nct grammar (the record
    is not built: :func:`study_record` needs a valid id)."""
    ident = as_dict(as_dict(study.get("protocolSection")).get("identificationModule"))
    nct = ident.get("nctId")
    refusal = citable.refusal(f"nct:{nct if isinstance(nct, str) else ''}")
    return refusal or study_record(study, projection=projection)


def parse(body: str | bytes, *, url: str | None = None) -> ParseResult:
    """Records of a v2 study list or single study (pure; raises :class:`ParseError`)."""
    studies, token, total = _studies(_load(body))
    projection = _projection(url)
    records, refused = citable.partition(
        (_candidate(study, projection) for study in studies), citable.of_record
    )
    return ParseResult(
        source=SOURCE,
        records=records,
        ids=[r.record_id.split(":", 1)[1] for r in records],
        count=total,
        next=token,
        refused=refused,
    )


class _Passages:
    """Collects passages, numbering chunks per field (``trial.<field>.N``)."""

    def __init__(self) -> None:
        self.items: list[Passage] = []
        self._count: dict[str, int] = {}

    def add(self, field: str, section: str, text: str) -> None:
        for chunk in chunk_text(text, MAX_CHARS):
            n = self._count.get(field, 0) + 1
            self._count[field] = n
            self.items.append(Passage(path=f"trial.{field}.{n}", section=section, text=chunk))


def _date(struct: object) -> str | None:
    value = as_dict(struct).get("date")
    return value if isinstance(value, str) and value else None


def _version(status: JsonDict) -> tuple[str | None, str | None]:
    candidates: list[tuple[str, object]] = [
        ("last_update_post_date", _date(status.get("lastUpdatePostDateStruct"))),
        ("last_update_submit_date", status.get("lastUpdateSubmitDate")),
        ("first_post_date", _date(status.get("studyFirstPostDateStruct"))),
    ]
    for basis, value in candidates:
        if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}(-\d{2})?", value):
            return value, basis
    return None, None


def _metadata(ps: JsonDict, study: JsonDict, basis: str | None) -> dict[str, Any]:
    ident = as_dict(ps.get("identificationModule"))
    status = as_dict(ps.get("statusModule"))
    design = as_dict(ps.get("designModule"))
    sponsors = as_dict(ps.get("sponsorCollaboratorsModule"))
    elig = as_dict(ps.get("eligibilityModule"))
    enrollment = as_dict(design.get("enrollmentInfo"))
    refs = [
        {"pmid": str(r.get("pmid")), "type": r.get("type")}
        for r in (
            as_dict(x) for x in as_list(as_dict(ps.get("referencesModule")).get("references"))
        )
        if r.get("pmid")
    ]
    meta: dict[str, Any] = {
        "overall_status": status.get("overallStatus"),
        "why_stopped": clean(status.get("whyStopped")) or None,
        "has_results": study.get("hasResults")
        if isinstance(study.get("hasResults"), bool)
        else None,
        "version_basis": basis,
        "acronym": ident.get("acronym"),
        "org_study_id": as_dict(ident.get("orgStudyIdInfo")).get("id"),
        "study_type": design.get("studyType"),
        "phases": design.get("phases") or None,
        "enrollment": enrollment.get("count"),
        "enrollment_type": enrollment.get("type"),
        "lead_sponsor": as_dict(sponsors.get("leadSponsor")).get("name"),
        "collaborators": [
            c for c in (as_dict(x).get("name") for x in as_list(sponsors.get("collaborators"))) if c
        ]
        or None,
        "first_posted": _date(status.get("studyFirstPostDateStruct")),
        "last_update_posted": _date(status.get("lastUpdatePostDateStruct")),
        "last_update_submitted": status.get("lastUpdateSubmitDate"),
        "results_first_posted": _date(status.get("resultsFirstPostDateStruct")),
        "start_date": _date(status.get("startDateStruct")),
        "primary_completion_date": _date(status.get("primaryCompletionDateStruct")),
        "completion_date": _date(status.get("completionDateStruct")),
        "sex": elig.get("sex"),
        "minimum_age": elig.get("minimumAge"),
        "maximum_age": elig.get("maximumAge"),
        "healthy_volunteers": elig.get("healthyVolunteers"),
        "references": refs or None,
    }
    return {k: v for k, v in meta.items() if v is not None}


def _passages(ps: JsonDict, results: JsonDict) -> list[Passage]:
    ident = as_dict(ps.get("identificationModule"))
    desc = as_dict(ps.get("descriptionModule"))
    arms = as_dict(ps.get("armsInterventionsModule"))
    outcomes = as_dict(ps.get("outcomesModule"))
    out = _Passages()
    out.add("brief_title", "Brief title", clean(ident.get("briefTitle")))
    out.add("official_title", "Official title", clean(ident.get("officialTitle")))
    for field, section, key in (
        ("brief_summary", "Brief summary", "briefSummary"),
        ("detailed_description", "Detailed description", "detailedDescription"),
    ):
        text = desc.get(key)
        for paragraph in split_paragraphs(unescape(text) if isinstance(text, str) else ""):
            out.add(field, section, paragraph)
    conditions = strings(as_dict(ps.get("conditionsModule")).get("conditions"))
    out.add("conditions", "Conditions", "; ".join(conditions))
    for item in as_list(arms.get("interventions")):
        out.add("interventions", "Interventions", render_intervention(as_dict(item)))
    for arm in as_list(arms.get("armGroups")):
        out.add("arms", "Arms", render_arm(as_dict(arm)))
    criteria = as_dict(ps.get("eligibilityModule")).get("eligibilityCriteria")
    if isinstance(criteria, str):
        split = split_eligibility(criteria)
        for part, field, section in (
            ("inclusion", "eligibility_inclusion", "Inclusion criteria"),
            ("exclusion", "eligibility_exclusion", "Exclusion criteria"),
            ("general", "eligibility", "Eligibility criteria"),
        ):
            for item in split[part]:
                out.add(field, section, item)
    for field, section, key in (
        ("primary_outcome", "Primary outcome", "primaryOutcomes"),
        ("secondary_outcome", "Secondary outcome", "secondaryOutcomes"),
        ("other_outcome", "Other outcome", "otherOutcomes"),
    ):
        for outcome in as_list(outcomes.get(key)):
            out.add(field, section, render_outcome(as_dict(outcome)))
    measures = as_dict(results.get("outcomeMeasuresModule")).get("outcomeMeasures")
    for measure in as_list(measures):
        out.add("results", "Results", render_outcome_measure(as_dict(measure)))
    return out.items


def study_record(study: JsonDict, *, projection: str | None = None) -> Record:
    """One v2 study object as a :class:`Record` (pure)."""
    ps = as_dict(study.get("protocolSection"))
    ident = as_dict(ps.get("identificationModule"))
    nct = ident.get("nctId")
    if not isinstance(nct, str) or not NCT_ID.match(nct):
        raise ParseError(
            f"ClinicalTrials.gov study without a valid nctId (got {nct!r}, expected NCT + 8 digits)"
        )
    status = as_dict(ps.get("statusModule"))
    version, basis = _version(status)
    metadata = _metadata(ps, study, basis)
    if projection:
        metadata["projection"] = projection
    first_posted = metadata.get("first_posted", "")
    overall = status.get("overallStatus")
    return Record(
        record_id=f"nct:{nct}",
        source=SOURCE,
        version=version,
        version_date=version,
        title=clean(ident.get("briefTitle")) or clean(ident.get("officialTitle")) or nct,
        year=int(first_posted[:4]) if first_posted[:4].isdigit() else None,
        content_type="trial",
        status=overall if isinstance(overall, str) else None,
        flags=Flags(retracted=False, expression_of_concern=False, preprint=False),
        passages=_passages(ps, as_dict(study.get("resultsSection"))),
        metadata=metadata,
        licence=licences.PUBLIC_DOMAIN,
        licence_raw=TERMS_URL,
    )


# -- harvest -------------------------------------------------------------------------------


def _query_params(
    term: str | None,
    cond: str | None,
    intr: str | None,
    filters: Mapping[str, str] | None,
) -> dict[str, str]:
    params: dict[str, str] = {}
    for key, value in (("query.term", term), ("query.cond", cond), ("query.intr", intr)):
        if value:
            params[key] = value
    for key, value in (filters or {}).items():
        name = key if key.startswith(("filter.", "query.", "aggFilters")) else f"filter.{key}"
        params[name] = value
    if not params:
        raise InputError(
            "a ClinicalTrials.gov search needs at least one of term, cond, intr or filters"
        )
    return params


def next_page(
    params: Mapping[str, str | int], result: ParseResult, *, have: int, limit: int
) -> dict[str, str | int] | None:
    """The parameters of the next page, or None when done (pure paging step)."""
    if result.next is None or have >= limit or not (result.records or result.refused):
        return None
    nxt = dict(params)
    nxt["pageToken"] = result.next
    return nxt


class StudyPages:
    """The pages of one ``/studies`` list (a :class:`~pipeline.sources.base.Pager`),
    following ``nextPageToken`` (:func:`next_page`) up to ``limit``, or until ``done``."""

    def __init__(
        self,
        params: dict[str, str | int],
        *,
        limit: int,
        done: Callable[[list[Record]], bool] = lambda _: False,
    ) -> None:
        self.params, self.limit, self.done = params, limit, done
        self.records: list[Record] = []

    def first(self) -> Request:
        return Request(f"{API}/studies", self.params)

    def step(self, response: httpx.Response) -> Step:
        result = parse(response.content, url=str(response.request.url))
        self.records.extend(result.records)
        if self.done(self.records):
            return Step(None, result.refused)
        page = next_page(self.params, result, have=len(self.records), limit=self.limit)
        if page is None:
            return Step(None, result.refused)
        self.params = page
        return Step(Request(f"{API}/studies", page), result.refused)

    def result(self) -> list[Record]:
        return self.records[: self.limit]


def _paged(
    client: HttpClient,
    params: dict[str, str | int],
    *,
    limit: int,
    done: Callable[[list[Record]], bool] = lambda _: False,
) -> list[Record]:
    return walk(client, SOURCE, StudyPages(params, limit=limit, done=done))


def search_records(
    client: HttpClient,
    *,
    term: str | None = None,
    cond: str | None = None,
    intr: str | None = None,
    filters: Mapping[str, str] | None = None,
    limit: int,
) -> list[Record]:
    """Up to ``limit`` studies matching the query (``query.term``/``cond``/``intr``, filters),
    following ``nextPageToken``; every page asks for :data:`FIELDS`."""
    if limit <= 0:
        return []
    params: dict[str, str | int] = {
        **_query_params(term, cond, intr, filters),
        "fields": FIELDS,
        "pageSize": min(limit, MAX_PAGE_SIZE),
        "format": "json",
    }
    return _paged(client, params, limit=limit)


def _batches(ids: Sequence[str], size: int) -> Iterable[list[str]]:
    for start in range(0, len(ids), size):
        yield list(ids[start : start + size])


def fetch_records(client: HttpClient, nct_ids: Sequence[str]) -> list[Record]:
    """The current version of each NCT id (``filter.ids`` batches); unknown ids are absent."""
    wanted: list[str] = []
    for raw in nct_ids:
        nct = raw.strip().upper().removeprefix("NCT:")
        if not NCT_ID.match(nct):
            raise InputError(f"not an NCT id: {raw!r} (expected NCT followed by 8 digits)")
        if nct not in wanted:
            wanted.append(nct)
    found: dict[str, Record] = {}
    for batch in _batches(sorted(wanted), ID_BATCH):  # sorted: one URL per id set
        params: dict[str, str | int] = {
            "filter.ids": ",".join(batch),
            "fields": FIELDS,
            "pageSize": len(batch),
            "format": "json",
        }
        want = {f"nct:{n}" for n in batch}
        for record in _paged(
            client,
            params,
            limit=len(batch),
            done=lambda got, want=want: want <= {r.record_id for r in got},
        ):
            if record.record_id in want:
                found.setdefault(record.record_id, record)
    return [found[f"nct:{n}"] for n in wanted if f"nct:{n}" in found]


# -- the plug-in -------------------------------------------------------------------------------
class ClinicalTrialsQuery(Strict):
    term: str | None = None
    cond: str | None = None
    intr: str | None = None
    filters: dict[str, str] = Field(default_factory=dict)
    limit: Limit

    @model_validator(mode="after")
    def _something(self) -> ClinicalTrialsQuery:
        if not (self.term or self.cond or self.intr or self.filters):
            raise ValueError("a query needs at least one of term, cond, intr or filters")
        return self


class ClinicalTrialsSpec(Strict):
    """The ``[clinicaltrials]`` table of a corpus spec."""

    queries: list[ClinicalTrialsQuery] = Field(default_factory=list)
    ids: Annotated[list[str], id_list(NCT, "an NCT id (NCT + 8 digits)")] = Field(
        default_factory=list
    )


def _searches(options: ClinicalTrialsSpec) -> list[Search]:
    return [
        Search(
            "search",
            q.term or q.cond or "",
            lambda client, q=q: search_records(
                client,
                term=q.term,
                cond=q.cond,
                intr=q.intr,
                filters=q.filters or None,
                limit=q.limit,
            ),
        )
        for q in options.queries
    ]


PLUGIN = Plugin(
    name=SOURCE,
    schemes=("nct",),
    base_url=API,
    parse_body=parse,
    rate=Rate("clinicaltrials.gov", 0.8),  # about 50 requests a minute
    options=ClinicalTrialsSpec,
    rank=30,
    shapes=Shapes(
        hosts=(("clinicaltrials.gov", ""), ("www.clinicaltrials.gov", "")),
        json=(("studies",), ("protocolSection",)),
    ),
    by_id={"nct": ById("fetch", ID_BATCH, lambda client, ids: fetch_records(client, ids))},
    replay=REPLAY,
    table_searches=_searches,
    table_ids=lambda options: {"nct": options.ids},
)
