"""Harvest orchestration: queries and ids per source, enrichment, failures, re-checks."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from pathlib import Path

import httpx
import pytest

from pipeline.errors import HarvestError, ParseError, TerminalHarvestError
from pipeline.harvest import Harvester, NoLineage
from pipeline.http import HttpClient
from pipeline.records import Annotation, Flags, Passage, Record, Relation
from pipeline.settings import Settings
from pipeline.snapshot.progress import NullProgress
from pipeline.snapshot.spec import parse_spec
from pipeline.sources import clinicaltrials, crossref, europepmc, pubmed, pubtator3


class Sink:
    def __init__(self) -> None:
        self.delivered: list[tuple[str, Record]] = []
        self.incomplete: set[str] = set()
        self.failures: list[tuple[str, str, str]] = []
        self.steps: list[tuple[str, str, int]] = []

    def records(
        self, source: str, records: Sequence[Record], *, incomplete: Collection[str] = ()
    ) -> None:
        self.delivered.extend((source, r) for r in records)
        self.incomplete.update(incomplete)

    def failure(self, source: str, step: str, error: HarvestError | ParseError) -> None:
        self.failures.append((source, step, error.message))

    def step(self, source: str, step: str, count: int, detail: str | None = None) -> None:
        del detail
        self.steps.append((source, step, count))


def article(pmid: str, *, doi: str | None = None, pmcid: str | None = None) -> Record:
    return Record(
        record_id=f"pmid:{pmid}",
        source="pubmed",
        pmid=pmid,
        doi=doi,
        pmcid=pmcid,
        flags=Flags(retracted=False, expression_of_concern=False, preprint=False),
        passages=[Passage(path="title", section="Title", text=f"Article {pmid}")],
    )


SPEC = """\
name = "h"
[pubmed]
queries = [{ term = "zentravir", limit = 5, mindate = "2020-01-15" }]
ids = ["99000003"]
annotations = true
[europepmc]
full_text = true
[crossref]
updates = true
"""


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[object]]:
    log: dict[str, list[object]] = {"search": [], "fetch": [], "pubtator": [], "doi": [], "ft": []}

    def search_ids(client: HttpClient, term: str, **kw: object) -> list[str]:
        log["search"].append((term, kw))
        return ["99000001", "99000002", "99000003"]

    def fetch_records(client: HttpClient, pmids: Sequence[str]) -> list[Record]:
        log["fetch"].append(list(pmids))
        known = {
            "99000001": article("99000001", doi="10.5555/demo.0001", pmcid="PMC99000001"),
            "99000002": article("99000002", doi="10.5555/demo.0002"),
        }
        return [known[p] for p in pmids if p in known]

    def fetch_annotations(
        client: HttpClient, pmids: Sequence[str], *, records: object = None
    ) -> dict[str, list[Annotation]]:
        log["pubtator"].append(sorted(pmids))
        span = Annotation(path="title", start=0, end=7, text="Article", type="Chemical")
        return {"pmid:99000001": [span]}

    def fetch_update_notices(client: HttpClient, dois: Sequence[str]) -> dict[str, list[Relation]]:
        log["doi"].extend(dois)
        retraction = Relation(
            kind="retraction_in", target="doi:10.5555/demo.0003", source="crossref"
        )
        return {d: [retraction] if d == "10.5555/demo.0002" else [] for d in dois}

    def fetch_full_text(client: HttpClient, pmcid: str) -> Record | None:
        log["ft"].append(pmcid)
        return Record(
            record_id=f"pmcid:{pmcid}", source="europepmc", pmcid=pmcid, doi="10.5555/demo.0001"
        )

    monkeypatch.setattr(pubmed, "search_ids", search_ids)
    monkeypatch.setattr(pubmed, "fetch_records", fetch_records)
    monkeypatch.setattr(pubtator3, "fetch_annotations", fetch_annotations)
    monkeypatch.setattr(crossref, "fetch_update_notices", fetch_update_notices)
    monkeypatch.setattr(europepmc, "fetch_full_text", fetch_full_text)
    return log


class Held(NoLineage):
    """A lineage that holds these record ids (not withdrawn), each with passages."""

    def __init__(self, ids: set[str]) -> None:
        self.ids = ids

    def live(self, record_ids: Collection[str]) -> set[str]:
        return {i for i in record_ids if i in self.ids}


def harvest(
    spec_text: str,
    sink: Sink,
    *,
    strict: bool = False,
    lineage: set[str] | None = None,
    refused: list[str] | None = None,
    settings: Settings | None = None,
) -> Harvester:
    """Run a harvest whose source functions are faked (the transport is never reached);
    ``lineage`` is the record ids the lineage holds, ``refused`` the refusal log (the ids the
    parsers refused, in order; a fake appends to it as a parser would)."""
    spec = parse_spec(spec_text, Path("h.toml"))
    transport = httpx.MockTransport(lambda r: httpx.Response(500))
    with HttpClient(settings or Settings(), transport=transport) as client:
        harvester = Harvester(
            spec,
            client,
            sink,
            NullProgress(),
            strict=strict,
            lineage=Held(lineage or set()),
            refused=refused if refused is not None else [],
        )
        harvester.run()
    return harvester


def test_pubmed_records_are_enriched_before_delivery(calls: dict[str, list[object]]) -> None:
    sink = Sink()
    harvester = harvest(SPEC, sink)
    assert calls["search"] == [
        ("zentravir", {"limit": 5, "mindate": "2020/01/15", "maxdate": None})
    ]
    assert calls["fetch"] == [["99000001", "99000002", "99000003"]]
    assert harvester.outcome.missing == {"pmid:99000003"}
    by_id = {r.record_id: (s, r) for s, r in sink.delivered}
    assert sorted(by_id) == ["pmcid:PMC99000001", "pmid:99000001", "pmid:99000002"]
    assert [a.type for a in by_id["pmid:99000001"][1].annotations] == ["Chemical"]
    retracted = by_id["pmid:99000002"][1]
    assert retracted.flags.retracted is True
    assert [r.target for r in retracted.relations] == ["doi:10.5555/demo.0003"]
    assert by_id["pmcid:PMC99000001"][0] == "europepmc"
    assert calls["ft"] == ["PMC99000001"]
    assert calls["doi"] == ["10.5555/demo.0001", "10.5555/demo.0002"]  # the pmcid shares one
    assert ("pubtator3", "annotations", 1) in sink.steps


def test_a_failed_enrichment_is_reported_and_the_records_still_arrive(
    calls: dict[str, list[object]], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(client: HttpClient, pmids: Sequence[str], *, records: object = None) -> None:
        raise TerminalHarvestError("GET www.ncbi.nlm.nih.gov/research/pubtator3-api answered 400")

    monkeypatch.setattr(pubtator3, "fetch_annotations", broken)
    sink = Sink()
    harvest(SPEC, sink)
    assert sink.failures == [
        (
            "pubtator3",
            "annotations",
            "GET www.ncbi.nlm.nih.gov/research/pubtator3-api answered 400",
        )
    ]
    assert {r.record_id for _, r in sink.delivered} >= {"pmid:99000001", "pmid:99000002"}
    with pytest.raises(TerminalHarvestError):
        harvest(SPEC, Sink(), strict=True)


def test_refresh_fetches_lineage_records_by_id(calls: dict[str, list[object]]) -> None:
    sink = Sink()
    harvester = harvest('name = "h"\n[pubmed]\n', sink)
    assert calls["fetch"] == []
    harvester.refresh({"pubmed": ["pmid:99000002", "pmid:99000009"]})
    assert ["99000002", "99000009"] in calls["fetch"]
    assert "pmid:99000009" in harvester.outcome.missing
    assert [r.record_id for _, r in sink.delivered] == ["pmid:99000002"]


def test_a_failed_crossref_batch_is_one_failure_naming_its_dois_and_its_records_are_incomplete(
    calls: dict[str, list[object]], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(client: HttpClient, dois: Sequence[str]) -> dict[str, list[Relation]]:
        raise TerminalHarvestError(f"GET api.crossref.org/works answered 400 ({len(dois)})")

    monkeypatch.setattr(crossref, "fetch_update_notices", broken)
    sink = Sink()
    harvest(SPEC, sink)
    by_id = {r.record_id: r for _, r in sink.delivered}
    # every record with a DOI: whether it was retracted is not known without the notices
    assert sink.incomplete == {"pmid:99000001", "pmid:99000002", "pmcid:PMC99000001"}
    assert by_id["pmid:99000002"].flags == Flags(
        retracted=None, expression_of_concern=None, preprint=False
    )
    assert [f[1] for f in sink.failures] == ["updates 10.5555/demo.0001, 10.5555/demo.0002"]


def test_a_failed_pubtator3_request_delivers_the_pubmed_records_incomplete(
    calls: dict[str, list[object]], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(client: HttpClient, pmids: Sequence[str], *, records: object = None) -> None:
        raise TerminalHarvestError("GET www.ncbi.nlm.nih.gov/research/pubtator3-api answered 400")

    monkeypatch.setattr(pubtator3, "fetch_annotations", broken)
    sink = Sink()
    harvest(SPEC, sink)
    assert sink.incomplete == {"pmid:99000001", "pmid:99000002"}  # not the full text record


def test_an_empty_by_id_answer_is_a_failure_only_for_ids_the_lineage_holds(
    calls: dict[str, list[object]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pubmed, "fetch_records", lambda client, pmids: [])
    sink = Sink()
    spec = 'name = "h"\n[pubmed]\nids = ["99000001", "99000009"]\n'
    fresh = harvest(spec, sink)  # a first harvest: ids nobody holds, nothing to withdraw
    assert (fresh.outcome.missing, sink.failures) == (set(), [])
    known = harvest(spec, sink, lineage={"pmid:99000001"})
    assert known.outcome.missing == set()
    assert sink.failures == [
        (
            "pubmed",
            "efetch",
            "answered none of the 2 records asked for by id, 1 of which the lineage holds "
            "(pmid:99000001); not taken as withdrawal: no other pmid record answered in this "
            "harvest or is held by the lineage to check the answer against",
        )
    ]


IDS_SPEC = 'name = "h"\n[pubmed]\nids = ["99000001", "99000002", "99000003"]\n'
LINEAGE = {"pmid:99000001", "pmid:99000002", "pmid:99000003"}


def test_a_refusal_from_an_earlier_answer_is_no_evidence_for_a_later_empty_one(
    calls: dict[str, list[object]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pubmed, "fetch_records", lambda client, pmids: [])
    refused = ["pmid:99000001"]  # refused by an earlier answer (a search) of this build
    sink = Sink()
    harvester = harvest(IDS_SPEC, sink, lineage=LINEAGE, refused=refused)
    assert harvester.outcome.missing == set()  # nothing withdrawn on an empty answer
    assert sink.failures == [
        (
            "pubmed",
            "efetch",
            "answered none of the 3 records asked for by id, 3 of which the lineage holds "
            "(pmid:99000001, pmid:99000002, pmid:99000003); not taken as withdrawal: no other "
            "pmid record answered in this harvest or is held by the lineage to check the answer "
            "against",
        )
    ]
    assert harvester.outcome.unanswered == LINEAGE


def test_a_record_refused_in_the_same_answer_came_back_so_the_others_are_missing(
    calls: dict[str, list[object]], monkeypatch: pytest.MonkeyPatch
) -> None:
    refused: list[str] = []

    def refusing(client: HttpClient, pmids: Sequence[str]) -> list[Record]:
        refused.append("pmid:99000001")  # as the client reports a parser's refusal
        return []

    monkeypatch.setattr(pubmed, "fetch_records", refusing)
    sink = Sink()
    harvester = harvest(IDS_SPEC, sink, lineage=LINEAGE, refused=refused)
    assert harvester.outcome.missing == {"pmid:99000002", "pmid:99000003"}
    assert sink.failures == []


def test_the_refresh_does_not_ask_again_for_ids_whose_fetch_just_failed(
    calls: dict[str, list[object]], monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[list[str]] = []

    def outage(client: HttpClient, pmids: Sequence[str]) -> list[Record]:
        asked.append(list(pmids))
        raise TerminalHarvestError(
            "GET eutils.ncbi.nlm.nih.gov/entrez/eutils/efetch.fcgi answered 400"
        )

    monkeypatch.setattr(pubmed, "fetch_records", outage)
    sink = Sink()
    harvester = harvest(IDS_SPEC, sink, lineage=LINEAGE)
    harvester.refresh({"pubmed": sorted(LINEAGE | {"pmid:99000004"})})
    assert asked == [["99000001", "99000002", "99000003"], ["99000004"]]  # each id once
    assert [f[1] for f in sink.failures] == ["efetch", "efetch"]


def test_a_failure_is_reported_and_raised_with_the_email_and_api_keys_redacted(
    calls: dict[str, list[object]], monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = Settings(email="alice@example.org", ncbi_api_key="k3yS3cr3tValue")

    def echoing(client: HttpClient, dois: Sequence[str]) -> dict[str, list[Relation]]:
        raise ParseError(
            "Crossref answered with an error: [{'value': 'alice@example.org', 'message': "
            "'api_key k3yS3cr3tValue is not valid'}]"
        )

    monkeypatch.setattr(crossref, "fetch_update_notices", echoing)
    sink = Sink()
    harvest(SPEC, sink, settings=secret)
    said = (
        "Crossref answered with an error: [{'value': '[REDACTED]', 'message': 'api_key "
        "[REDACTED] is not valid'}]"
    )
    assert sink.failures == [("crossref", "updates 10.5555/demo.0001, 10.5555/demo.0002", said)]
    with pytest.raises(ParseError) as caught:
        harvest(SPEC, Sink(), strict=True, settings=secret)
    assert (caught.value.message, str(caught.value)) == (said, said)


def _study(nct: str) -> dict[str, object]:
    return {
        "protocolSection": {
            "identificationModule": {"nctId": nct, "briefTitle": f"Trial {nct}"},
            "statusModule": {"lastUpdatePostDateStruct": {"date": "2025-01-15"}},
            "descriptionModule": {"briefSummary": "Zentravir against placebo."},
        }
    }


def test_an_empty_request_beside_answered_ones_withdraws_none_of_its_ids() -> None:
    """A chunk of 200 trials takes several filter.ids requests; one answering [] is judged on
    its own (asked again with a control), not by the records the other requests returned."""
    trials = [f"NCT99{n:06d}" for n in range(1, 201)]
    asked: list[list[str]] = []

    def studies(request: httpx.Request) -> httpx.Response:
        ids = request.url.params["filter.ids"].split(",")
        asked.append(ids)
        if "NCT99000150" in ids:
            return httpx.Response(200, json={"studies": []})
        return httpx.Response(200, json={"studies": [_study(n) for n in ids]})

    spec = parse_spec(f'name = "h"\n[clinicaltrials]\nids = {trials!r}\n', Path("h.toml"))
    sink = Sink()
    transport = httpx.MockTransport(studies)
    transport.offline = True  # type: ignore[attr-defined]  # answers at once: no pacing
    with HttpClient(Settings(), transport=transport) as client:
        lineage = Held({f"nct:{n}" for n in trials})
        harvester = Harvester(spec, client, sink, NullProgress(), lineage=lineage)
        outcome = harvester.run()
    assert outcome.missing == set()
    assert all(len(ids) <= clinicaltrials.ID_BATCH for ids in asked)
    assert [len(ids) for ids in asked] == [97, 97, 98, 6]  # the third: asked again, a control
    assert sink.failures == [
        (
            "clinicaltrials",
            "fetch",
            "answered none of the 97 records asked for by id, 97 of which the lineage holds "
            "(nct:NCT99000098, nct:NCT99000099, nct:NCT99000100, …), nor nct:NCT99000001, "
            "which it returned earlier in this harvest; not taken as withdrawal",
        )
    ]
    assert len({r.record_id for _, r in sink.delivered}) == 200 - 97


# -- works by DOI (Crossref) and by PMCID (Europe PMC) -------------------------------------------
def _work(doi: str) -> dict[str, object]:
    return {"DOI": doi, "type": "journal-article", "title": [f"Work {doi}"]}


def _europepmc_result(pmcid: str, pmid: str | None = None) -> dict[str, object]:
    head = {"source": "MED", "id": pmid, "pmid": pmid} if pmid else {"source": "PMC", "id": pmcid}
    return {**head, "pmcid": pmcid, "title": f"Article {pmcid}", "pubTypeList": {"pubType": []}}


class Carrying(Held):
    """A lineage holding ``ids``; ``pmcids`` maps a PMCID to the records carrying it;
    ``spare`` are its control candidates."""

    def __init__(
        self, ids: set[str], pmcids: dict[str, str] | None = None, spare: list[str] | None = None
    ) -> None:
        super().__init__(ids)
        self.pmcids = pmcids or {}
        self.spare = spare or []

    def carrying_pmcids(self, source: str, pmcids: Collection[str]) -> set[str]:
        return {rid for p, rid in self.pmcids.items() if p in pmcids and source == "europepmc"}

    def controls(self, source: str, scheme: str, exclude: Collection[str], limit: int) -> list[str]:
        return [c for c in self.spare if c.startswith(f"{scheme}:") and c not in exclude][:limit]


def harvest_through(
    spec_text: str,
    answer: Callable[[httpx.Request], httpx.Response],
    lineage: NoLineage,
    *,
    refresh: dict[str, list[str]] | None = None,
) -> tuple[Harvester, Sink, list[httpx.Request]]:
    """A harvest (then the ``refresh`` of these lineage ids) through the real request
    builders and parsers, over ``answer``."""
    asked: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        asked.append(request)
        return answer(request)

    transport = httpx.MockTransport(handler)
    transport.offline = True  # type: ignore[attr-defined]  # answers at once: no pacing
    sink = Sink()
    with HttpClient(Settings(), transport=transport) as client:
        spec = parse_spec(spec_text, Path("h.toml"))
        harvester = Harvester(spec, client, sink, NullProgress(), lineage=lineage)
        harvester.run()
        if refresh is not None:
            harvester.refresh(refresh)
    return harvester, sink, asked


def crossref_works(request: httpx.Request, known: Collection[str]) -> httpx.Response:
    dois = [f.removeprefix("doi:") for f in request.url.params["filter"].split(",")]
    items = [_work(d) for d in dois if d in known]
    message = {"total-results": len(items), "items": items}
    return httpx.Response(
        200, json={"status": "ok", "message-type": "work-list", "message": message}
    )


DOIS = ["10.5555/work.1", "10.5555/WORK.2", "10.5555/work.3"]


def test_spec_dois_are_asked_in_one_ored_crossref_filter_and_an_unknown_one_is_missing() -> None:
    spec = f'name = "h"\n[crossref]\ndois = {DOIS!r}\n'
    lineage = Carrying({"doi:10.5555/work.1", "doi:10.5555/work.2", "doi:10.5555/work.3"})
    known = {"10.5555/work.1", "10.5555/work.2"}
    harvester, sink, asked = harvest_through(spec, lambda r: crossref_works(r, known), lineage)
    assert [(r.url.path, dict(r.url.params)) for r in asked] == [
        (
            "/works",
            {"filter": "doi:10.5555/work.1,doi:10.5555/work.2,doi:10.5555/work.3", "rows": "3"},
        )
    ]
    assert [(s, r.record_id) for s, r in sink.delivered] == [
        ("crossref", "doi:10.5555/work.1"),
        ("crossref", "doi:10.5555/work.2"),
    ]
    assert harvester.outcome.missing == {"doi:10.5555/work.3"}  # like a vanished PMID
    assert sink.failures == []


def test_dois_are_batched_below_the_crossref_filter_limit_leaving_room_for_controls() -> None:
    """The lineage holds some of the DOIs: each request leaves room for the controls."""
    dois = [f"10.5555/batch.{n}" for n in range(1, 121)]
    spec = f'name = "h"\n[crossref]\ndois = {dois!r}\n'
    lineage = Carrying({"doi:10.5555/batch.7"})
    harvester, sink, asked = harvest_through(spec, lambda r: crossref_works(r, dois), lineage)
    sizes = [len(r.url.params["filter"].split(",")) for r in asked]
    assert sizes == [47, 47, 26]  # crossref.DOI_BATCH (50) less the lineage controls (3)
    assert len(sink.delivered) == 120 and harvester.outcome.missing == set()


def test_a_first_build_asks_whole_by_id_requests_keeping_no_room_for_controls() -> None:
    """No lineage (or one holding none of the ids asked): no answer is ever asked again, so
    every request carries the source's whole batch."""
    dois = [f"10.5555/batch.{n}" for n in range(1, 121)]
    spec = f'name = "h"\n[crossref]\ndois = {dois!r}\n'
    for lineage in (NoLineage(), Carrying({"doi:10.5555/elsewhere.1"})):
        harvester, sink, asked = harvest_through(spec, lambda r: crossref_works(r, dois), lineage)
        sizes = [len(r.url.params["filter"].split(",")) for r in asked]
        assert sizes == [50, 50, 20]  # crossref.DOI_BATCH
        assert len(sink.delivered) == 120 and harvester.outcome.missing == set()


def test_an_empty_crossref_answer_withdraws_a_doi_only_when_a_control_comes_back() -> None:
    spec = 'name = "h"\n[crossref]\ndois = ["10.5555/gone.1"]\n'
    lineage = Carrying({"doi:10.5555/gone.1", "doi:10.5555/kept.9"}, spare=["doi:10.5555/kept.9"])
    known = {"10.5555/kept.9"}
    harvester, sink, asked = harvest_through(spec, lambda r: crossref_works(r, known), lineage)
    assert [r.url.params["filter"] for r in asked] == [
        "doi:10.5555/gone.1",
        "doi:10.5555/kept.9,doi:10.5555/gone.1",
    ]
    assert harvester.outcome.missing == {"doi:10.5555/gone.1"}
    assert sink.delivered == []  # the control is not delivered as a record of this spec
    silent = Carrying({"doi:10.5555/gone.1"}, spare=["doi:10.5555/kept.9"])
    harvester, sink, _ = harvest_through(spec, lambda r: crossref_works(r, set()), silent)
    assert harvester.outcome.missing == set()
    assert harvester.outcome.unanswered == {"doi:10.5555/gone.1"}
    assert sink.failures == [
        (
            "crossref",
            "works",
            "answered none of the 1 records asked for by id, 1 of which the lineage holds "
            "(doi:10.5555/gone.1), nor doi:10.5555/kept.9, which the lineage holds; not taken "
            "as withdrawal",
        )
    ]


def test_the_refresh_asks_crossref_again_for_the_lineage_dois_it_did_not_meet() -> None:
    spec = 'name = "h"\n[crossref]\ndois = ["10.5555/work.1"]\n'
    lineage = Carrying({"doi:10.5555/work.1", "doi:10.5555/work.7", "doi:10.5555/work.8"})
    known = {"10.5555/work.1", "10.5555/work.7"}
    unseen = {"crossref": ["doi:10.5555/work.7", "doi:10.5555/work.8"]}
    harvester, sink, asked = harvest_through(
        spec, lambda r: crossref_works(r, known), lineage, refresh=unseen
    )
    assert asked[-1].url.params["filter"] == "doi:10.5555/work.7,doi:10.5555/work.8"
    assert harvester.outcome.missing == {"doi:10.5555/work.8"}
    assert [r.record_id for _, r in sink.delivered][-1] == "doi:10.5555/work.7"


PMCIDS = ["PMC99000011", "PMC99000012", "PMC99000013"]


def europepmc_search(request: httpx.Request, results: list[dict[str, object]]) -> httpx.Response:
    query = request.url.params["query"]
    found = [r for r in results if f"PMCID:{r['pmcid']}" in query]
    body = {"hitCount": len(found), "resultList": {"result": found}}
    return httpx.Response(200, json=body)


def test_spec_pmcids_are_answered_by_the_records_carrying_them_and_a_vanished_one_withdraws() -> (
    None
):
    spec = f'name = "h"\n[europepmc]\npmcids = {PMCIDS!r}\n'
    results = [_europepmc_result("PMC99000011", "99000011"), _europepmc_result("PMC99000012")]
    lineage = Carrying({"pmid:99000013"}, pmcids={"PMC99000013": "pmid:99000013"})
    harvester, sink, asked = harvest_through(spec, lambda r: europepmc_search(r, results), lineage)
    assert [r.url.params["query"] for r in asked] == [
        "PMCID:PMC99000011 OR PMCID:PMC99000012 OR PMCID:PMC99000013"
    ]
    assert [r.record_id for _, r in sink.delivered] == ["pmid:99000011", "pmcid:PMC99000012"]
    # the PMCID that no longer resolves withdraws the lineage's record carrying it
    assert harvester.outcome.missing == {"pmcid:PMC99000013", "pmid:99000013"}


def test_an_empty_pmcid_answer_withdraws_nothing_without_a_control() -> None:
    spec = 'name = "h"\n[europepmc]\npmcids = ["PMC99000013"]\n'
    lineage = Carrying({"pmid:99000013"}, pmcids={"PMC99000013": "pmid:99000013"})
    harvester, sink, _ = harvest_through(spec, lambda r: europepmc_search(r, []), lineage)
    assert harvester.outcome.missing == set()
    assert harvester.outcome.unanswered == {"pmcid:PMC99000013", "pmid:99000013"}
    assert sink.failures == [
        (
            "europepmc",
            "pmcids",
            "answered none of the 1 records asked for by id, 1 of which the lineage holds "
            "(pmid:99000013); not taken as withdrawal: no other pmcid record answered in this "
            "harvest or is held by the lineage to check the answer against",
        )
    ]


def test_crossref_notices_are_asked_in_batches_and_a_failed_batch_fails_only_its_records(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pmids = [str(99100000 + i) for i in range(120)]
    batches: list[list[str]] = []

    def fetch_records(client: HttpClient, asked: Sequence[str]) -> list[Record]:
        return [article(p, doi=f"10.5555/B.{p}") for p in asked]

    def fetch_update_notices(client: HttpClient, dois: Sequence[str]) -> dict[str, list[Relation]]:
        batches.append(list(dois))
        if "10.5555/b.99100060" in dois:
            raise TerminalHarvestError("GET api.crossref.org/works answered 400")
        return {d: [] for d in dois}

    monkeypatch.setattr(pubmed, "fetch_records", fetch_records)
    monkeypatch.setattr(crossref, "fetch_update_notices", fetch_update_notices)
    sink = Sink()
    harvest(f"name = 'h'\n[pubmed]\nids = {pmids!r}\n[crossref]\nupdates = true\n", sink)
    assert [len(b) for b in batches] == [50, 50, 20]
    assert batches[0][0] == "10.5555/b.99100000"  # lower case, in the records' order
    second = {f"pmid:{p}" for p in pmids[50:100]}
    assert sink.incomplete == second
    assert [f[1] for f in sink.failures] == ["updates " + ", ".join(batches[1])]
    by_id = {r.record_id: r for _, r in sink.delivered}
    assert len(by_id) == 120
    for rid, record in by_id.items():
        known = rid not in second  # a complete answer without notices: no notices (False)
        expected = False if known else None
        assert (record.flags.retracted, record.flags.expression_of_concern) == (expected, expected)
    assert [s for s in sink.steps if s[0] == "crossref"] == [
        ("crossref", "updates", 50),
        ("crossref", "updates", 20),
    ]
