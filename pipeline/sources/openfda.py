"""openFDA drug labels (``/drug/label.json``): parse into ``setid:`` records; search and fetch.

Record
    ``record_id`` ``setid:<set_id>`` (lower case); ``version`` = the label ``version`` (a
    string such as ``"4"``); ``version_date`` = ``effective_time`` as ``YYYY-MM-DD`` (the raw
    ``YYYYMMDD`` is in ``metadata.effective_time``); ``metadata.spl_id`` is the document id,
    which changes with every version. ``title`` is the brand name with the generic name in
    brackets when they differ; ``content_type`` is ``drug_label``. openFDA keeps only the
    current version of a set id; older versions come from DailyMed (see
    :mod:`pipeline.sources.history`).

Passage paths
    ``label.<section>.N``: every text section of the label (``boxed_warning``,
    ``indications_and_usage``, ``dosage_and_administration``, …, see :data:`SECTION_ORDER`;
    sections openFDA adds later are kept too, after the known ones, in name order). Each string
    of a section's list is chunked at sentence boundaries into chunks of at most 1,200
    characters; N counts the chunks of the section, 1-based. Skipped: ``*_table`` (HTML
    tables), ``spl_product_data_elements`` (an ingredient word list), identifiers and the
    ``openfda`` harmonisation block (kept in ``metadata``).

Licence
    ``public-domain`` for every label, ``licence_raw`` :data:`LICENSE_URL` — the URL every
    openFDA response names in ``meta.license``; it dedicates openFDA's data to the public
    domain (CC0 1.0) unless otherwise noted.

A search that matches nothing is answered with HTTP 404 and
``{"error": {"code": "NOT_FOUND", "message": "No matches found!"}}``: :func:`parse` turns that
body into an empty result, and the harvest functions accept the 404.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from pydantic import Field

from audit import licences
from audit.errors import InputError
from pipeline.errors import ParseError, TerminalHarvestError
from pipeline.records import Flags, ParseResult, Passage, Record, Refusal
from pipeline.segment import chunk_text
from pipeline.sources import citable
from pipeline.sources.base import (
    Asked,
    ById,
    Part,
    Plugin,
    Rate,
    ReplayKind,
    ReplayShape,
    Request,
    Search,
    Shapes,
    Split,
    Step,
    Unit,
    page_size,
    replay_ids,
)
from pipeline.sources.jsonshape import kind, snippet
from pipeline.sources.paging import send, walk
from pipeline.sources.spec_types import SET_ID as SPEC_SET_ID
from pipeline.sources.spec_types import Limit, Strict, id_list
from pipeline.xmlsafe import decode_json

if TYPE_CHECKING:
    import httpx

    from pipeline.http import HttpClient

SOURCE = "openfda"
LICENSE_URL = "https://open.fda.gov/license/"
"""openFDA's licence page, named by ``meta.license`` of every response (the ``licence_raw``)."""
API = "https://api.fda.gov/drug/label.json"
MAX_CHARS = 1200
MAX_LIMIT = 1000  # openFDA's largest page
MAX_SKIP = 25_000  # skip beyond this is refused; use search_after instead
ID_BATCH = 50  # set ids OR-ed into one search
SORT = "effective_time:desc"
SET_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")

SECTION_ORDER: tuple[str, ...] = (
    "boxed_warning",
    "recent_major_changes",
    "indications_and_usage",
    "dosage_and_administration",
    "dosage_forms_and_strengths",
    "contraindications",
    "warnings_and_cautions",
    "warnings",
    "precautions",
    "general_precautions",
    "adverse_reactions",
    "drug_interactions",
    "drug_and_or_laboratory_test_interactions",
    "use_in_specific_populations",
    "pregnancy",
    "teratogenic_effects",
    "nonteratogenic_effects",
    "labor_and_delivery",
    "lactation",
    "nursing_mothers",
    "females_and_males_of_reproductive_potential",
    "pediatric_use",
    "geriatric_use",
    "drug_abuse_and_dependence",
    "controlled_substance",
    "abuse",
    "dependence",
    "overdosage",
    "description",
    "clinical_pharmacology",
    "mechanism_of_action",
    "pharmacodynamics",
    "pharmacokinetics",
    "pharmacogenomics",
    "nonclinical_toxicology",
    "carcinogenesis_and_mutagenesis_and_impairment_of_fertility",
    "animal_pharmacology_and_or_toxicology",
    "clinical_studies",
    "references",
    "how_supplied",
    "storage_and_handling",
    "information_for_patients",
    "patient_medication_information",
    "spl_medguide",
    "spl_patient_package_insert",
    "instructions_for_use",
    "spl_unclassified_section",
    "package_label_principal_display_panel",
)
"""Known label sections in the order of a US prescribing information."""

_SKIPPED = frozenset({"spl_product_data_elements", "set_id", "id", "version", "effective_time"})
_SECTION_NAME = re.compile(r"^[a-z0-9_]+$")
_HARMONISED = (
    "brand_name",
    "generic_name",
    "substance_name",
    "manufacturer_name",
    "application_number",
    "product_type",
    "route",
    "rxcui",
    "unii",
    "product_ndc",
)


# -- parsing -------------------------------------------------------------------------------


def _load(body: str | bytes) -> dict[str, Any]:
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    try:
        data = decode_json(text, what="openFDA drug label JSON")
    except json.JSONDecodeError as exc:
        raise ParseError(
            f"expected openFDA drug label JSON, got text that is not JSON "
            f"(line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    if not isinstance(data, dict):
        raise ParseError(f"expected an openFDA JSON object, got a JSON {type(data).__name__}")
    return data


def is_no_match(data: Mapping[str, Any]) -> bool:
    """True for openFDA's "No matches found!" answer (sent with HTTP 404)."""
    error = data.get("error")
    return isinstance(error, dict) and error.get("code") == "NOT_FOUND"


def _candidate(n: int, label: object) -> Record | Refusal:
    """The record of ``results[n]``, or its refusal when its set_id breaks the setid grammar
    (the record is not built: :func:`label_record` needs a valid id)."""
    if not isinstance(label, dict):
        raise ParseError(f"openFDA: results[{n}] must be an object, got {kind(label)}")
    set_id = label.get("set_id")
    refusal = citable.refusal(f"setid:{set_id.lower() if isinstance(set_id, str) else ''}")
    return refusal or label_record(label)


def parse(body: str | bytes, *, url: str | None = None) -> ParseResult:
    """Records of a ``drug/label.json`` body (pure). The no-match body gives zero records."""
    del url  # the body says everything; kept for the common parser signature
    data = _load(body)
    if is_no_match(data):
        return ParseResult(source=SOURCE, count=0)
    error = data.get("error")
    if isinstance(error, dict):
        raise ParseError(
            f"openFDA answered with an error: {snippet(error.get('code', '?'), 80)}: "
            f"{snippet(error.get('message', ''))}"
        )
    results = data.get("results")
    if not isinstance(results, list):
        keys = snippet(", ".join(sorted(data)[:6])) or "none"
        raise ParseError(
            f"expected an openFDA drug label response with 'results', got keys: {keys}"
        )
    records, refused = citable.partition(
        (_candidate(n, label) for n, label in enumerate(results)), citable.of_record
    )
    meta = data.get("meta")
    paging = meta.get("results") if isinstance(meta, dict) else None
    total = paging.get("total") if isinstance(paging, dict) else None
    return ParseResult(
        source=SOURCE,
        records=records,
        ids=[r.record_id.split(":", 1)[1] for r in records],
        count=total if isinstance(total, int) else None,
        refused=refused,
    )


def _texts(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def _sections(label: Mapping[str, Any]) -> list[str]:
    present = {
        key
        for key, value in label.items()
        if key not in _SKIPPED
        and not key.endswith("_table")
        and _SECTION_NAME.match(key)
        and isinstance(value, list)
        and _texts(value)
    }
    known = [s for s in SECTION_ORDER if s in present]
    return known + sorted(present.difference(SECTION_ORDER))


def section_title(key: str) -> str:
    """``boxed_warning`` → ``Boxed warning``."""
    words = key.replace("_", " ")
    return words[:1].upper() + words[1:]


def _passages(label: Mapping[str, Any]) -> list[Passage]:
    passages: list[Passage] = []
    for key in _sections(label):
        n = 0
        for text in _texts(label[key]):
            for chunk in chunk_text(text, MAX_CHARS):
                n += 1
                passages.append(
                    Passage(path=f"label.{key}.{n}", section=section_title(key), text=chunk)
                )
    return passages


def _title(harmonised: Mapping[str, Any], set_id: str) -> str:
    brand = next(iter(_texts(harmonised.get("brand_name"))), "").strip()
    generic = next(iter(_texts(harmonised.get("generic_name"))), "").strip()
    if brand and generic and brand.casefold() != generic.casefold():
        return f"{brand} ({generic})"
    return brand or generic or f"Drug label {set_id}"


def _iso_date(value: object) -> str | None:
    if isinstance(value, str) and re.fullmatch(r"\d{8}", value):
        return f"{value[:4]}-{value[4:6]}-{value[6:]}"
    return None


def label_record(label: Mapping[str, Any]) -> Record:
    """One openFDA label result as a :class:`Record` (pure)."""
    set_id = label.get("set_id")
    if not isinstance(set_id, str) or not SET_ID.match(set_id.lower()):
        raise ParseError(f"openFDA label without a valid set_id (got {set_id!r}, expected a UUID)")
    set_id = set_id.lower()
    raw = label.get("openfda")
    harmonised: Mapping[str, Any] = raw if isinstance(raw, dict) else {}
    version = label.get("version")
    effective = label.get("effective_time")
    version_date = _iso_date(effective)
    metadata: dict[str, Any] = {
        "spl_id": label.get("id"),
        "effective_time": effective,
        **{k: _texts(harmonised.get(k)) for k in _HARMONISED if _texts(harmonised.get(k))},
    }
    return Record(
        record_id=f"setid:{set_id}",
        source=SOURCE,
        version=str(version) if isinstance(version, (str, int)) and str(version) else None,
        version_date=version_date,
        title=_title(harmonised, set_id),
        year=int(version_date[:4]) if version_date else None,
        content_type="drug_label",
        flags=Flags(retracted=False, expression_of_concern=False, preprint=False),
        passages=_passages(label),
        metadata={k: v for k, v in metadata.items() if v is not None},
        licence=licences.PUBLIC_DOMAIN,
        licence_raw=LICENSE_URL,
    )


# -- harvest -------------------------------------------------------------------------------


def _checked(response: httpx.Response) -> httpx.Response:
    """A 404 is an answer only as openFDA's no-match body."""
    if response.status_code == 404 and not is_no_match(_load(response.content)):
        raise TerminalHarvestError(f"GET {API} answered HTTP 404 without openFDA's no-match body")
    return response


def _request(params: Mapping[str, str | int], url: str = API) -> Request:
    return Request(url, params, expect=(200, 404))


def _get(client: HttpClient, params: Mapping[str, str | int], url: str = API) -> httpx.Response:
    return _checked(send(client, SOURCE, _request(params, url)))


def next_link(response: httpx.Response) -> str | None:
    """The ``Link: <…>; rel="Next"`` URL openFDA sends for ``search_after`` paging."""
    for link in response.headers.get_list("link"):
        match = re.search(r'<([^>]+)>\s*;\s*rel="?next"?', link, re.IGNORECASE)
        if match:
            return match.group(1)
    return None


def search_plan(limit: int) -> str:
    """``"skip"`` when ``limit`` is reachable with skip/limit paging, else ``"search_after"``."""
    return "skip" if limit <= MAX_SKIP + MAX_LIMIT else "search_after"


class LabelPages:
    """The pages of one label search (a :class:`~pipeline.sources.base.Pager`), newest first
    (``sort=effective_time:desc``): skip/limit paging up to skip 25,000; beyond that the
    whole walk uses ``search_after`` (sort, no skip, follow the ``Link`` header)."""

    def __init__(self, search: str, *, limit: int) -> None:
        self.search, self.limit = search, limit
        self.records: list[Record] = []
        self.skip = 0
        self.size = 0  # the limit of the skip page asked last
        self.after = search_plan(limit) == "search_after"

    def _skip_page(self) -> Request | None:
        if len(self.records) >= self.limit:
            return None
        self.size = min(MAX_LIMIT, self.limit - len(self.records))
        return _request(
            {"search": self.search, "limit": self.size, "skip": self.skip, "sort": SORT}
        )

    def first(self) -> Request | None:
        if self.limit <= 0:
            return None
        if self.after:
            return _request({"search": self.search, "limit": MAX_LIMIT, "sort": SORT})
        return self._skip_page()

    def step(self, response: httpx.Response) -> Step:
        result = parse(_checked(response).content)
        self.records.extend(result.records)
        if self.after:
            link = next_link(response)
            if len(self.records) >= self.limit or not result.records or link is None:
                return Step(None, result.refused)
            parts = urlsplit(link)  # httpx would drop a query left in the URL with params
            params = dict(parse_qsl(parts.query, keep_blank_values=True))
            return Step(_request(params, urlunsplit(parts._replace(query=""))), result.refused)
        self.skip += self.size
        if len(result.records) + len(result.refused) < self.size or (
            result.count is not None and self.skip >= result.count
        ):
            return Step(None, result.refused)
        return Step(self._skip_page(), result.refused)

    def result(self) -> list[Record]:
        return self.records[: self.limit]


def search_records(client: HttpClient, search: str, *, limit: int) -> list[Record]:
    """Up to ``limit`` labels for an openFDA ``search`` expression (:class:`LabelPages`)."""
    if not search.strip():
        raise InputError(
            "an openFDA search needs a search expression, e.g. openfda.brand_name:zentravir"
        )
    return walk(client, SOURCE, LabelPages(search, limit=limit))


def _quoted_or(ids: Sequence[str]) -> str:
    return " OR ".join(f'set_id:"{i}"' for i in ids)


def fetch_records(client: HttpClient, set_ids: Sequence[str]) -> list[Record]:
    """The current version of each set id (OR-ed batches); ids openFDA lacks are absent."""
    wanted: list[str] = []
    for raw in set_ids:
        set_id = raw.strip().lower().removeprefix("setid:")
        if not SET_ID.match(set_id):
            raise InputError(f"not an openFDA set id: {raw!r} (expected a lower-case UUID)")
        if set_id not in wanted:
            wanted.append(set_id)
    found: dict[str, Record] = {}
    ordered = sorted(wanted)  # one URL per id set, whatever order the caller used
    for start in range(0, len(ordered), ID_BATCH):
        batch = ordered[start : start + ID_BATCH]
        result = parse(_get(client, {"search": _quoted_or(batch), "limit": len(batch)}).content)
        client.report_refused(SOURCE, result.refused)
        for record in result.records:
            found.setdefault(record.record_id, record)
    return [found[f"setid:{s}"] for s in wanted if f"setid:{s}" in found]


# -- the plug-in -------------------------------------------------------------------------------
class OpenFdaQuery(Strict):
    search: str = Field(min_length=1)
    limit: Limit


class OpenFdaSpec(Strict):
    """The ``[openfda]`` table of a corpus spec."""

    queries: list[OpenFdaQuery] = Field(default_factory=list)
    set_ids: Annotated[list[str], id_list(SPEC_SET_ID, "a lower-case set id UUID")] = Field(
        default_factory=list
    )


def _sniff(data: object) -> bool:
    """openFDA's "No matches found!" body."""
    error = data.get("error") if isinstance(data, dict) else None
    return isinstance(error, dict) and error.get("code") == "NOT_FOUND"


# -- replay by meaning (pipeline.replay_match, docs/sources.md) ------------------------------
# A by-id request: api.fda.gov/drug/label.json with search=set_id:"a" OR set_id:"b", limit >=
# the ids asked (default 1), an optional skip=0 and sort, nothing else; answered with its
# no-match 404 when no id is held. Its parts: one per label of a results list (its set id).
_SET_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_SET_IDS = re.compile(r'set_id:"[^"]+"(?: OR set_id:"[^"]+")*')


def _normal_set_id(raw: str) -> str | None:
    value = raw.strip().lower()
    return value if _SET_ID.fullmatch(value) else None


def _labels_answer(asked: Asked, held: Sequence[Part]) -> tuple[int, str, str]:
    values = [json.loads(p.fragment) for p in held]
    if not values:
        body = {"error": {"code": "NOT_FOUND", "message": "No matches found!"}}
        return 404, "application/json; charset=utf-8", json.dumps(body, indent=2)
    meta = {"results": {"skip": 0, "limit": asked.size, "total": len(values)}}
    data = {"meta": meta, "results": values}
    return 200, "application/json", json.dumps(data, ensure_ascii=False)


LABELS = ReplayKind("openfda-setids", "set id", "setid", _normal_set_id, _labels_answer)


def _asked(path: str, params: dict[str, str]) -> Asked | None:
    if path != "/drug/label.json":
        return None
    params.pop("sort", None)
    if params.pop("skip", "0") != "0":
        return None
    size = page_size(params.pop("limit", "1"))
    if params.keys() != {"search"}:
        return None
    search = params["search"].strip()
    if not _SET_IDS.fullmatch(search):
        return None
    ids = replay_ids(LABELS, re.findall(r'set_id:"([^"]+)"', search))
    if not ids or size is None or size < len(ids):
        return None
    return Asked(LABELS.name, ids, size=size)


def _labels(value: Any) -> list[Any]:
    items = value.get("results") if isinstance(value, dict) else None
    return items if isinstance(items, list) else []


def _split(value: Any, url: str | None, asked: Asked | None) -> Split:
    del url, asked
    texts = [json.dumps(label, ensure_ascii=False) for label in _labels(value)]
    return Split(units=[Unit(LABELS.name, t, f'{{"results": [{t}]}}') for t in texts])


REPLAY = ReplayShape(
    kinds=(LABELS,),
    asked=_asked,
    split=_split,
    json_keys=("results", "meta", "error"),
    items=_labels,
    no_match=404,  # "No matches found!": a by-id answer that holds none of the ids
)


PLUGIN = Plugin(
    name=SOURCE,
    schemes=("setid",),
    base_url="https://api.fda.gov",
    parse_body=parse,
    rate=Rate("api.fda.gov", 4.0),  # 240 requests a minute
    options=OpenFdaSpec,
    rank=40,
    shapes=Shapes(hosts=(("api.fda.gov", ""),), json=(("meta", "results"),), sniff=_sniff),
    by_id={"setid": ById("fetch", ID_BATCH, lambda client, ids: fetch_records(client, ids))},
    replay=REPLAY,
    polite_params=lambda s: {"api_key": s.openfda_api_key} if s.openfda_api_key else {},
    has_key=lambda settings: bool(settings.openfda_api_key),
    table_searches=lambda options: [
        Search(
            f"search {q.search!r}",
            q.search,
            lambda client, q=q: search_records(client, q.search, limit=q.limit),
        )
        for q in options.queries
    ],
    table_ids=lambda options: {"setid": options.set_ids},
)
