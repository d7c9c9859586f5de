"""Lineage: unchanged records keep their version, changed ones get a new one (the old stays),
records gone upstream are marked withdrawn, and an outage never rewrites history (a record
whose refresh failed keeps its parent state) — on records built in the tests."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import duckdb
import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.errors import InputError
from audit.handles import MAX_VERSION_CHARS, parse_locator
from pipeline import harvest
from pipeline.errors import PartialHarvestError, SnapshotError, TransientHarvestError
from pipeline.http import HttpClient
from pipeline.records import Annotation, Flags, Passage, Record, Refusal, Relation
from pipeline.settings import Settings
from pipeline.snapshot.build import BuildResult, ParentArg, build_snapshot
from pipeline.snapshot.lineage import Decision, KnownVersion, decide, revised
from pipeline.snapshot.locate import snapshots_in
from pipeline.snapshot.manifest import sha256_file
from pipeline.snapshot.verify import verify_snapshot
from pipeline.sources import clinicaltrials, crossref, europepmc, openfda, pubmed, pubtator3
from tests.conftest import TEST_KEYRING, TRUST

# -- decide() ----------------------------------------------------------------------------------


def test_same_content_hash_is_the_same_version() -> None:
    known = [KnownVersion("1", 1, "aaa"), KnownVersion("2", 2, "bbb")]
    assert decide("pmid:99000001", None, "aaa", known) == Decision("pmid:99000001", "1", 1, False)


def test_changed_unversioned_record_gets_the_next_integer() -> None:
    known = [KnownVersion("1", 1, "aaa"), KnownVersion("2", 2, "bbb")]
    assert decide("pmid:99000001", None, "ccc", known) == Decision("pmid:99000001", "3", 3, True)
    assert decide("pmid:99000001", None, "ccc", []) == Decision("pmid:99000001", "1", 1, True)


def test_changed_versioned_record_takes_the_upstream_label() -> None:
    known = [KnownVersion("2025-01-15", 1, "aaa")]
    decision = decide("nct:NCT99000001", "2025-06-02", "bbb", known)
    assert decision == Decision("nct:NCT99000001", "2025-06-02", 2, True)


def test_an_upstream_label_never_names_two_contents() -> None:
    known = [KnownVersion("3", 1, "aaa"), KnownVersion("3-r2", 2, "bbb")]
    assert decide("setid:x", "3", "ccc", known) == Decision("setid:x", "3-r3", 3, True)


def test_a_revision_of_a_40_character_label_is_cut_to_stay_citable() -> None:
    label = "2025-06-02." + "x" * 29  # 40 characters: citable as it is
    decision = decide("nct:NCT99000001", label, "bbb", [KnownVersion(label, 1, "aaa")])
    assert decision.version == label[:37] + "-r2"
    assert len(decision.version) == MAX_VERSION_CHARS


LABEL_START = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


@pytest.mark.parametrize("length", range(1, MAX_VERSION_CHARS + 1))
@settings(max_examples=25, deadline=None)
@given(data=st.data(), taken=st.integers(min_value=0, max_value=12))
def test_a_new_version_is_always_citable_and_never_names_a_held_one(
    length: int, data: st.DataObject, taken: int
) -> None:
    """For a citable label of every length, however many revisions of it the lineage holds."""
    rest = st.text(alphabet=LABEL_START + ".-", min_size=length - 1, max_size=length - 1)
    label = data.draw(st.sampled_from(LABEL_START)) + data.draw(rest)
    known = [KnownVersion(label, 1, "h1")] + [
        KnownVersion(revised(label, r), r, f"h{r}") for r in range(2, taken + 2)
    ]
    decision = decide("nct:NCT99000001", label, "new", known)
    assert decision.new and decision.version not in {k.version for k in known}
    locator = parse_locator(f"nct:NCT99000001@{decision.version}/title")  # raises if uncitable
    assert locator.version == decision.version


# -- builds from records made here ---------------------------------------------------------------


def article(
    pmid: str, abstract: str, *, doi: str | None = None, pmcid: str | None = None
) -> Record:
    return Record(
        record_id=f"pmid:{pmid}",
        source="pubmed",
        pmid=pmid,
        doi=doi,
        pmcid=pmcid,
        title=f"Synthetic article {pmid} on zentravir",
        flags=Flags(retracted=False, expression_of_concern=False, preprint=False),
        passages=[
            Passage(path="title", section="Title", text=f"Synthetic article {pmid} on zentravir"),
            Passage(path="abstract.1", section="Abstract", text=abstract),
        ],
    )


def trial(nct: str, version: str, summary: str) -> Record:
    return Record(
        record_id=f"nct:{nct}",
        source="clinicaltrials",
        version=version,
        title=f"Trial {nct}",
        content_type="trial",
        passages=[Passage(path="trial.brief_summary.1", section="Brief summary", text=summary)],
    )


def full_text(pmcid: str, text: str) -> Record:
    return Record(
        record_id=f"pmcid:{pmcid}",
        source="europepmc",
        pmcid=pmcid,
        title=f"Full text {pmcid}",
        passages=[Passage(path="body.1", section="Body", text=text)],
    )


OUTAGE = "GET clinicaltrials.gov/api/v2/studies failed: HTTP 503"
VERSION_RULE = (
    "version must start with a letter or digit and contain only letters, digits, '.' and '-' "
    "(at most 40 characters)"
)


class Upstream:
    """What the fake APIs answer; tests change it between builds."""

    def __init__(self) -> None:
        self.articles: dict[str, Record] = {}
        self.trials: dict[str, Record] = {}
        self.search: list[str] = []
        self.fail_trials = False
        self.fail_everything = False
        self.empty_trials: set[str] = set()  # a request holding one of these answers nothing
        self.fetched: list[list[str]] = []
        self.notices: dict[str, list[Relation]] = {}  # DOI → Crossref notices
        self.fail_notices: set[str] = set()  # DOIs whose notices cannot be fetched
        self.annotations: dict[str, list[Annotation]] = {}
        self.fail_annotations = False
        self.full_texts: dict[str, Record] = {}
        self.trial_requests = 0  # by-id trial requests made, failed ones included
        self.trial_search: list[Record] = []
        self.refuse_in_search: list[str] = []  # NCT ids the trial search refuses (bad version)
        self.labels: dict[str, Record] = {}
        self.label_search: list[Record] = []
        self.fetched_labels: list[list[str]] = []
        self.epmc: dict[str, list[Record]] = {}  # Europe PMC query → results
        self.fail_notices_once: set[str] = set()  # DOIs whose first notices request fails

    def _outage(self) -> None:
        if self.fail_everything:
            raise TransientHarvestError(OUTAGE)

    def search_ids(self, client: HttpClient, term: str, **kwargs: object) -> list[str]:
        del client, term, kwargs
        self._outage()
        return list(self.search)

    def fetch_articles(self, client: HttpClient, pmids: Sequence[str]) -> list[Record]:
        del client
        self._outage()
        self.fetched.append(list(pmids))
        return [self.articles[p] for p in pmids if p in self.articles]

    def fetch_trials(self, client: HttpClient, ids: Sequence[str]) -> list[Record]:
        del client
        self._outage()
        self.trial_requests += 1
        if self.fail_trials:
            raise TransientHarvestError(OUTAGE)
        self.fetched.append(list(ids))
        if self.empty_trials & set(ids):
            return []  # {"studies": []}
        return [self.trials[i] for i in ids if i in self.trials]

    def search_trials(self, client: HttpClient, **kwargs: object) -> list[Record]:
        del kwargs
        refusals = [
            Refusal(reason=VERSION_RULE, value="4 rev", record_id=f"nct:{n}")
            for n in self.refuse_in_search
        ]
        client.report_refused("clinicaltrials", refusals)  # as the parser's caller does
        return list(self.trial_search)

    def fetch_labels(self, client: HttpClient, set_ids: Sequence[str]) -> list[Record]:
        del client
        self.fetched_labels.append(list(set_ids))
        return [self.labels[i] for i in set_ids if i in self.labels]

    def search_labels(self, client: HttpClient, search: str, *, limit: int) -> list[Record]:
        del client, search, limit
        return list(self.label_search)

    def search_epmc(self, client: HttpClient, query: str, *, limit: int) -> list[Record]:
        del client, limit
        return list(self.epmc.get(query, []))

    def fetch_notices(self, client: HttpClient, dois: Sequence[str]) -> dict[str, list[Relation]]:
        """One batched request: it fails as a whole when any DOI of it is set to fail."""
        del client
        once = self.fail_notices_once & set(dois)
        if once:
            self.fail_notices_once -= once
            raise TransientHarvestError(f"GET api.crossref.org/works failed: HTTP 503 ({dois})")
        if self.fail_notices & set(dois):
            raise TransientHarvestError(f"GET api.crossref.org/works failed: HTTP 503 ({dois})")
        return {d: list(self.notices.get(d, [])) for d in dois}

    def fetch_annotations(
        self, client: HttpClient, pmids: Sequence[str], *, records: object = None
    ) -> dict[str, list[Annotation]]:
        del client, records
        if self.fail_annotations:
            raise TransientHarvestError("GET pubtator3-api failed: HTTP 502")
        return {f"pmid:{p}": self.annotations[p] for p in pmids if p in self.annotations}

    def fetch_full_text(self, client: HttpClient, pmcid: str) -> Record | None:
        del client
        return self.full_texts.get(pmcid)


@pytest.fixture
def upstream(monkeypatch: pytest.MonkeyPatch) -> Upstream:
    fake = Upstream()
    monkeypatch.setattr(pubmed, "search_ids", fake.search_ids)
    monkeypatch.setattr(pubmed, "fetch_records", fake.fetch_articles)
    monkeypatch.setattr(clinicaltrials, "fetch_records", fake.fetch_trials)
    monkeypatch.setattr(crossref, "fetch_update_notices", fake.fetch_notices)
    monkeypatch.setattr(pubtator3, "fetch_annotations", fake.fetch_annotations)
    monkeypatch.setattr(europepmc, "fetch_full_text", fake.fetch_full_text)
    monkeypatch.setattr(europepmc, "search_records", fake.search_epmc)
    monkeypatch.setattr(clinicaltrials, "search_records", fake.search_trials)
    monkeypatch.setattr(openfda, "fetch_records", fake.fetch_labels)
    monkeypatch.setattr(openfda, "search_records", fake.search_labels)
    return fake


def _no_network(request: httpx.Request) -> httpx.Response:
    raise AssertionError(f"unexpected request {request.url}")


SPEC = """\
name = "lin"
[pubmed]
queries = [{ term = "zentravir", limit = 10 }]
ids = ["99000011", "99000012"]
[clinicaltrials]
ids = ["NCT99000011"]
"""


ENRICHED = (
    SPEC.replace(
        'ids = ["99000011", "99000012"]', 'ids = ["99000011", "99000012"]\nannotations = true'
    )
    + "[crossref]\nupdates = true\n[europepmc]\nfull_text = true\n"
)


def build(
    tmp_path: Path,
    *,
    parent: ParentArg = None,
    new_lineage: bool = False,
    strict: bool = False,
    allow_partial: bool = False,
    spec_text: str = SPEC,
) -> BuildResult:
    spec = tmp_path / "lin.toml"
    if not spec.exists():
        spec.write_text(spec_text, encoding="utf-8")
    return build_snapshot(
        spec,
        keyring=TEST_KEYRING,
        parent=parent,
        new_lineage=new_lineage,
        strict=strict,
        allow_partial=allow_partial,
        settings=Settings(),
        resume=False,
        transport=httpx.MockTransport(_no_network),
    )


def rows(path: Path, sql: str, params: list[object] | None = None) -> list[tuple[object, ...]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def versions(path: Path) -> list[tuple[object, ...]]:
    return rows(
        path,
        "SELECT record_id, version, seq, first_seen, last_seen, origin FROM record_versions "
        "ORDER BY record_id, seq",
    )


def test_unchanged_keeps_its_version_changed_gets_a_new_one_and_the_old_stays(
    tmp_path: Path, upstream: Upstream
) -> None:
    upstream.articles = {
        "99000011": article("99000011", "Zentravir was given once daily."),
        "99000012": article("99000012", "Farrow syndrome was rare."),
    }
    upstream.trials = {"NCT99000011": trial("NCT99000011", "2025-01-15", "Zentravir vs placebo.")}
    first = build(tmp_path)
    a = first.manifest.snapshot_id

    upstream.articles["99000011"] = article("99000011", "Zentravir was given twice daily.")
    upstream.trials["NCT99000011"] = trial("NCT99000011", "2025-06-02", "Zentravir vs placebo!")
    second = build(tmp_path)
    b = second.manifest.snapshot_id

    assert second.manifest.parent is not None
    assert second.manifest.parent.sha256 == first.manifest.sha256
    assert versions(second.path) == [
        ("nct:NCT99000011", "2025-01-15", 1, a, a, "carried"),
        ("nct:NCT99000011", "2025-06-02", 2, b, b, "harvest"),
        ("pmid:99000011", "1", 1, a, a, "carried"),
        ("pmid:99000011", "2", 2, b, b, "harvest"),
        ("pmid:99000012", "1", 1, a, b, "harvest"),
    ]
    texts = rows(
        second.path,
        "SELECT version, text, coalesce(folded, text) FROM passages "
        "WHERE record_id = 'pmid:99000011' "
        "AND path = 'abstract.1' ORDER BY version",
    )
    assert texts == [
        ("1", "Zentravir was given once daily.", "Zentravir was given once daily."),
        ("2", "Zentravir was given twice daily.", "Zentravir was given twice daily."),
    ]
    state = rows(second.path, "SELECT record_id, current_version, withdrawn FROM record_state")
    assert sorted(state) == [
        ("nct:NCT99000011", "2025-06-02", False),
        ("pmid:99000011", "2", False),
        ("pmid:99000012", "1", False),
    ]
    # the parent is untouched and still verifies
    assert versions(first.path) == [
        ("nct:NCT99000011", "2025-01-15", 1, a, a, "harvest"),
        ("pmid:99000011", "1", 1, a, a, "harvest"),
        ("pmid:99000012", "1", 1, a, a, "harvest"),
    ]
    verify_snapshot(first.path, TRUST)


def test_a_record_gone_upstream_is_marked_withdrawn_and_its_versions_remain(
    tmp_path: Path, upstream: Upstream
) -> None:
    upstream.articles = {
        "99000011": article("99000011", "Kept."),
        "99000012": article("99000012", "Will disappear."),
    }
    first = build(tmp_path)
    del upstream.articles["99000012"]
    second = build(tmp_path)
    b = second.manifest.snapshot_id

    assert second.manifest.withdrawn == 1
    state = rows(
        second.path,
        "SELECT current_version, withdrawn, withdrawn_since FROM record_state "
        "WHERE record_id = 'pmid:99000012'",
    )
    assert state == [("1", True, b)]
    kept = rows(second.path, "SELECT count(*) FROM passages WHERE record_id = 'pmid:99000012'")
    assert kept == [(2,)]
    del first

    # a third build without it keeps it withdrawn since the second; its return reinstates it
    third = build(tmp_path)
    assert rows(
        third.path,
        "SELECT withdrawn, withdrawn_since FROM record_state WHERE record_id = 'pmid:99000012'",
    ) == [(True, b)]
    assert third.manifest.withdrawn == 0
    upstream.articles["99000012"] = article("99000012", "Will disappear.")
    fourth = build(tmp_path)
    assert rows(
        fourth.path,
        "SELECT current_version, withdrawn FROM record_state WHERE record_id = 'pmid:99000012'",
    ) == [("1", False)]


def test_a_record_that_only_fell_out_of_a_query_is_rechecked_not_withdrawn(
    tmp_path: Path, upstream: Upstream
) -> None:
    upstream.articles = {
        p: article(p, f"Abstract {p}.") for p in ("99000011", "99000012", "99000021")
    }
    upstream.search = ["99000021"]
    build(tmp_path)
    upstream.search = []  # no longer in the top results, still in PubMed
    upstream.fetched.clear()
    second = build(tmp_path)
    assert ["99000021"] in upstream.fetched  # re-checked by id
    assert rows(
        second.path,
        "SELECT withdrawn, current_version FROM record_state WHERE record_id = 'pmid:99000021'",
    ) == [(False, "1")]
    assert second.manifest.withdrawn == 0


def test_a_failed_source_is_recorded_and_withdraws_nothing(
    tmp_path: Path, upstream: Upstream
) -> None:
    upstream.articles = {"99000011": article("99000011", "A.")}
    upstream.trials = {"NCT99000011": trial("NCT99000011", "2025-01-15", "S.")}
    build(tmp_path)
    upstream.fail_trials = True
    second = build(tmp_path, allow_partial=True)
    m = second.manifest
    assert m.partial is True
    assert m.carried == 1  # the trial: its parent state is what the child holds
    assert m.sources["clinicaltrials"].status == "failed"
    assert m.sources["clinicaltrials"].failed_requests == 1  # the refresh does not ask again
    assert m.sources["pubmed"].status == "ok"
    assert [f.step for f in m.failed_requests] == ["fetch"]
    assert m.failed_requests[0].error == "GET clinicaltrials.gov/api/v2/studies failed: HTTP 503"
    assert m.withdrawn == 0
    assert rows(
        second.path,
        "SELECT status, failed_requests FROM sources WHERE source = 'clinicaltrials'",
    ) == [("failed", 1)]
    assert rows(
        second.path,
        "SELECT withdrawn, current_version FROM record_state WHERE record_id = 'nct:NCT99000011'",
    ) == [(False, "2025-01-15")]
    assert rows(second.path, "SELECT status FROM sources WHERE source = 'openfda'") == [
        ("not_harvested",)
    ]


def test_strict_aborts_on_the_first_failure_and_leaves_nothing_visible(
    tmp_path: Path, upstream: Upstream
) -> None:
    upstream.articles = {"99000011": article("99000011", "A.")}
    upstream.fail_trials = True
    with pytest.raises(TransientHarvestError):
        build(tmp_path, strict=True)
    assert snapshots_in(tmp_path / "lin") == []
    assert sorted(p.name for p in (tmp_path / "lin").iterdir()) == [".build-lock"]


def test_a_tampered_parent_is_refused(tmp_path: Path, upstream: Upstream) -> None:
    upstream.articles = {"99000011": article("99000011", "A.")}
    first = build(tmp_path)
    with first.path.open("r+b") as handle:
        handle.seek(first.path.stat().st_size // 2)
        byte = handle.read(1)
        handle.seek(-1, 1)
        handle.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(SnapshotError) as caught:
        build(tmp_path)
    assert str(caught.value) == (
        f"parent snapshot {first.path} failed its digest check: the file's sha256 is "
        f"{sha256_file(first.path)}, its manifest says {first.manifest.sha256}"
    )


# -- an outage never rewrites history -----------------------------------------------------------

DOI = "10.5555/lin.0011"
RETRACTION = Relation(
    kind="retraction_in", target="doi:10.5555/lin.notice", source="crossref", detail="Retraction"
)


def state_of(path: Path, record_id: str) -> list[tuple[object, ...]]:
    return rows(
        path,
        "SELECT s.current_version, s.withdrawn, r.retracted, r.expression_of_concern "
        "FROM record_state s JOIN records r "
        "ON r.record_id = s.record_id AND r.version = s.current_version "
        "WHERE s.record_id = ?",
        [record_id],
    )


def versions_of(path: Path, record_id: str) -> list[tuple[object, ...]]:
    return [v for v in versions(path) if v[0] == record_id]


def retracted_by_crossref_only(upstream: Upstream) -> None:
    """pmid:99000011: PubMed says nothing of a retraction (False), Crossref has the notice."""
    upstream.articles = {
        "99000011": article("99000011", "Zentravir was given once daily.", doi=DOI),
        "99000012": article("99000012", "Farrow syndrome was rare."),
    }
    upstream.notices = {DOI: [RETRACTION]}


def test_a_failed_crossref_request_keeps_the_parent_version_and_its_retraction(
    tmp_path: Path, upstream: Upstream
) -> None:
    retracted_by_crossref_only(upstream)
    first = build(tmp_path, spec_text=ENRICHED)
    a = first.manifest.snapshot_id
    assert state_of(first.path, "pmid:99000011") == [("1", False, True, False)]

    upstream.fail_notices = {DOI}
    with pytest.raises(PartialHarvestError):
        build(tmp_path)  # without --allow-partial nothing is sealed
    assert [s.path for s in snapshots_in(tmp_path / "lin")] == [first.path]

    second = build(tmp_path, allow_partial=True)
    assert second.manifest.partial is True
    assert [(f.source, f.step) for f in second.manifest.failed_requests] == [
        ("crossref", f"updates {DOI}")
    ]
    # no new version without the retraction: the parent's version, flags and notice stay
    assert versions_of(second.path, "pmid:99000011") == [("pmid:99000011", "1", 1, a, a, "carried")]
    assert state_of(second.path, "pmid:99000011") == [("1", False, True, False)]
    assert rows(
        second.path, "SELECT kind, target FROM relations WHERE record_id = 'pmid:99000011'"
    ) == [("retraction_in", "doi:10.5555/lin.notice")]
    assert second.manifest.withdrawn == 0


def test_a_version_does_not_flap_when_an_enrichment_fails_and_recovers(
    tmp_path: Path, upstream: Upstream
) -> None:
    retracted_by_crossref_only(upstream)
    first = build(tmp_path, spec_text=ENRICHED)
    upstream.fail_notices = {DOI}
    build(tmp_path, allow_partial=True)
    upstream.fail_notices = set()
    third = build(tmp_path)
    a, c = first.manifest.snapshot_id, third.manifest.snapshot_id
    assert third.manifest.partial is False
    assert versions_of(third.path, "pmid:99000011") == [("pmid:99000011", "1", 1, a, c, "harvest")]
    assert sum(s.new_versions for s in third.manifest.sources.values()) == 0


def test_a_failed_pubtator3_request_keeps_known_records_and_annotates_nothing_new(
    tmp_path: Path, upstream: Upstream
) -> None:
    span = Annotation(path="title", start=0, end=9, text="Synthetic", type="Chemical")
    upstream.articles = {"99000011": article("99000011", "Zentravir was given once daily.")}
    upstream.annotations = {"99000011": [span]}
    first = build(tmp_path, spec_text=ENRICHED)
    a = first.manifest.snapshot_id

    upstream.fail_annotations = True
    upstream.articles["99000011"] = article("99000011", "Zentravir was given twice daily.")
    upstream.articles["99000012"] = article("99000012", "A new article.")
    second = build(tmp_path, allow_partial=True)
    assert [(f.source, f.step) for f in second.manifest.failed_requests] == [
        ("pubtator3", "annotations")
    ]
    # the changed abstract waits for a complete harvest; the new record is written
    assert versions_of(second.path, "pmid:99000011") == [("pmid:99000011", "1", 1, a, a, "carried")]
    assert [v[1] for v in versions_of(second.path, "pmid:99000012")] == ["1"]
    assert rows(second.path, "SELECT record_id FROM annotations") == [("pmid:99000011",)]
    assert second.manifest.carried == 1


def test_a_new_record_whose_crossref_notices_failed_has_unknown_flags_not_false(
    tmp_path: Path, upstream: Upstream
) -> None:
    retracted_by_crossref_only(upstream)
    upstream.fail_notices = {DOI}
    first = build(tmp_path, spec_text=ENRICHED, allow_partial=True)
    assert first.manifest.partial is True
    assert state_of(first.path, "pmid:99000011") == [("1", False, None, None)]
    assert rows(first.path, "SELECT preprint FROM records WHERE record_id = 'pmid:99000011'") == [
        (False,)
    ]
    assert state_of(first.path, "pmid:99000012") == [("1", False, False, False)]  # no DOI


def test_an_empty_answer_for_trials_the_lineage_holds_is_a_failure_not_a_withdrawal(
    tmp_path: Path, upstream: Upstream
) -> None:
    upstream.trials = {"NCT99000011": trial("NCT99000011", "2025-01-15", "Zentravir vs placebo.")}
    first = build(tmp_path)
    upstream.empty_trials = {"NCT99000011"}
    second = build(tmp_path, allow_partial=True)
    m = second.manifest
    assert m.withdrawn == 0
    assert m.sources["clinicaltrials"].status == "failed"  # the fakes make no HTTP exchange
    assert [(f.step, f.error) for f in m.failed_requests] == [
        (
            "fetch",
            "answered none of the 1 records asked for by id, 1 of which the lineage holds "
            "(nct:NCT99000011); not taken as withdrawal: no other nct record answered in this "
            "harvest or is held by the lineage to check the answer against",
        )
    ]  # once: the refresh does not ask again for what just failed
    a = first.manifest.snapshot_id
    assert state_of(second.path, "nct:NCT99000011") == [("2025-01-15", False, None, None)]
    assert versions_of(second.path, "nct:NCT99000011") == [
        ("nct:NCT99000011", "2025-01-15", 1, a, a, "carried")
    ]


def test_a_record_gone_upstream_is_withdrawn_once_a_control_id_comes_back_beside_it(
    tmp_path: Path, upstream: Upstream
) -> None:
    upstream.articles = {p: article(p, f"Abstract {p}.") for p in ("99000011", "99000021")}
    upstream.search = ["99000021"]
    build(tmp_path)
    upstream.search = []  # out of the query's results, and gone from PubMed
    del upstream.articles["99000021"]
    upstream.fetched.clear()
    second = build(tmp_path)
    # the re-check of 99000021 alone came back empty: asked again beside 99000011, which did
    asked = [ids for ids in upstream.fetched if not ids[0].startswith("NCT")]
    assert asked == [["99000011", "99000012"], ["99000021"], ["99000011", "99000021"]]
    assert second.manifest.partial is False
    assert second.manifest.withdrawn == 1
    assert state_of(second.path, "pmid:99000021") == [("1", True, False, False)]


def test_an_empty_answer_is_a_failure_when_the_control_id_does_not_come_back_either(
    tmp_path: Path, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(harvest, "CHUNK", 1)  # one trial per request
    spec = SPEC.replace('ids = ["NCT99000011"]', 'ids = ["NCT99000011", "NCT99000012"]')
    upstream.trials = {
        n: trial(n, "2025-01-15", f"Trial {n}.") for n in ("NCT99000011", "NCT99000012")
    }
    build(tmp_path, spec_text=spec)
    upstream.empty_trials = {"NCT99000012"}  # any request that holds it answers nothing
    second = build(tmp_path, allow_partial=True)
    assert upstream.fetched[-2:] == [["NCT99000012"], ["NCT99000011", "NCT99000012"]]
    assert [f.error for f in second.manifest.failed_requests] == [
        "answered none of the 1 records asked for by id, 1 of which the lineage holds "
        "(nct:NCT99000012), nor nct:NCT99000011, which it returned earlier in this harvest; "
        "not taken as withdrawal"
    ]  # once: the refresh does not ask again for what just failed
    assert second.manifest.withdrawn == 0
    assert state_of(second.path, "nct:NCT99000012") == [("2025-01-15", False, None, None)]


def test_an_empty_full_text_for_a_pmcid_the_lineage_holds_is_a_failure_not_a_withdrawal(
    tmp_path: Path, upstream: Upstream
) -> None:
    upstream.articles = {"99000011": article("99000011", "Abstract.", pmcid="PMC99000011")}
    upstream.full_texts = {"PMC99000011": full_text("PMC99000011", "The whole article.")}
    build(tmp_path, spec_text=ENRICHED)
    upstream.full_texts = {}  # Europe PMC answers 404 or an empty body
    second = build(tmp_path, allow_partial=True)
    assert [(f.source, f.step, f.error) for f in second.manifest.failed_requests] == [
        (
            "europepmc",
            "full text PMC99000011",
            "no full text for PMC99000011, which the lineage holds; not taken as withdrawal",
        )
    ]
    assert second.manifest.withdrawn == 0
    assert state_of(second.path, "pmcid:PMC99000011") == [("1", False, None, None)]


def test_a_record_that_comes_back_without_its_passages_keeps_its_parent_version(
    tmp_path: Path, upstream: Upstream
) -> None:
    upstream.trials = {"NCT99000011": trial("NCT99000011", "2025-01-15", "Zentravir vs placebo.")}
    build(tmp_path)
    hollow = trial("NCT99000011", "2025-06-02", "").model_copy(update={"passages": []})
    upstream.trials = {"NCT99000011": hollow}
    second = build(tmp_path, allow_partial=True)
    assert [(f.step, f.error) for f in second.manifest.failed_requests] == [
        (
            "record nct:NCT99000011",
            "nct:NCT99000011 came back without a passage where the lineage's version "
            "2025-01-15 holds 1 passage; not taken as a new version",
        )
    ]
    assert [v[1] for v in versions_of(second.path, "nct:NCT99000011")] == ["2025-01-15"]
    assert state_of(second.path, "nct:NCT99000011") == [("2025-01-15", False, None, None)]


def test_a_build_with_failed_requests_seals_nothing_without_allow_partial(
    tmp_path: Path, upstream: Upstream
) -> None:
    upstream.articles = {"99000011": article("99000011", "A.")}
    upstream.trials = {"NCT99000011": trial("NCT99000011", "2025-01-15", "S.")}
    first = build(tmp_path)
    upstream.fail_trials = True
    with pytest.raises(PartialHarvestError) as caught:
        build(tmp_path)
    corpus = tmp_path / "lin"
    assert caught.value.exit_code == 3
    assert caught.value.message == (
        f"1 request failed (clinicaltrials 1): no snapshot of {corpus} was sealed"
    )
    assert caught.value.advice == (
        "build again to retry them, or pass --allow-partial to seal a snapshot marked partial "
        "in which the records they concern keep their parent state"
    )
    assert [s.path for s in snapshots_in(corpus)] == [first.path]
    assert sorted(p.name for p in corpus.iterdir() if p.name.startswith(".build-2")) == []


def test_the_first_build_with_every_request_failed_writes_nothing_even_with_allow_partial(
    tmp_path: Path, upstream: Upstream
) -> None:
    upstream.fail_everything = True
    with pytest.raises(PartialHarvestError) as caught:
        build(tmp_path, allow_partial=True)
    corpus = tmp_path / "lin"
    assert caught.value.message == (
        f"the first build of {corpus} harvested no record and 3 requests failed: "
        "nothing was written"
    )
    assert snapshots_in(corpus) == []
    assert sorted(p.name for p in corpus.iterdir()) == [".build-lock"]


def test_a_build_without_a_parent_option_continues_the_lineage(
    tmp_path: Path, upstream: Upstream
) -> None:
    upstream.trials = {"NCT99000011": trial("NCT99000011", "2025-01-15", "Zentravir vs placebo.")}
    first = build(tmp_path)
    upstream.trials = {"NCT99000011": trial("NCT99000011", "2025-06-02", "Zentravir vs placebo!")}
    second = build(tmp_path)  # no parent named: the newest snapshot of the corpus
    assert second.manifest.parent is not None
    assert second.manifest.parent.snapshot_id == first.manifest.snapshot_id
    assert [v[1] for v in versions_of(second.path, "nct:NCT99000011")] == [
        "2025-01-15",
        "2025-06-02",
    ]


def test_a_new_lineage_is_asked_for_explicitly_and_cannot_name_a_parent(
    tmp_path: Path, upstream: Upstream
) -> None:
    upstream.trials = {"NCT99000011": trial("NCT99000011", "2025-01-15", "Zentravir vs placebo.")}
    first = build(tmp_path)
    upstream.trials = {"NCT99000011": trial("NCT99000011", "2025-06-02", "Zentravir vs placebo!")}
    fresh = build(tmp_path, new_lineage=True)
    assert fresh.manifest.parent is None
    assert [v[1] for v in versions_of(fresh.path, "nct:NCT99000011")] == ["2025-06-02"]
    with pytest.raises(InputError) as caught:
        build(tmp_path, parent=first.path, new_lineage=True)
    assert caught.value.message == (
        "--parent and --new-lineage cannot be combined: a new lineage has no parent"
    )


# -- evidence for withdrawal: refusals, controls, failed fetches -------------------------------

TRIALS = ("NCT99000001", "NCT99000002", "NCT99000003")
TRIAL_SPEC = SPEC.replace(
    'ids = ["NCT99000011"]',
    'queries = [{ term = "zentravir", limit = 10 }]\nids = ["NCT99000001", "NCT99000002", '
    '"NCT99000003"]',
)


def test_a_refusal_in_a_search_turns_no_later_empty_by_id_answer_into_withdrawals(
    tmp_path: Path, upstream: Upstream
) -> None:
    upstream.trials = {n: trial(n, "2025-01-15", f"Trial {n}.") for n in TRIALS}
    build(tmp_path, spec_text=TRIAL_SPEC)
    upstream.refuse_in_search = ["NCT99000001"]  # the search answers it with a bad version
    upstream.empty_trials = set(TRIALS)  # the by-id fetch of all three answers []
    second = build(tmp_path, allow_partial=True)
    m = second.manifest
    assert m.withdrawn == 0
    assert [(f.source, f.step, f.error) for f in m.failed_requests] == [
        (
            "clinicaltrials",
            "fetch",
            "answered none of the 3 records asked for by id, 3 of which the lineage holds "
            "(nct:NCT99000001, nct:NCT99000002, nct:NCT99000003); not taken as withdrawal: no "
            "other nct record answered in this harvest or is held by the lineage to check the "
            "answer against",
        )
    ]
    assert m.sources["clinicaltrials"].refused == {VERSION_RULE: 1}
    for n in TRIALS:
        assert state_of(second.path, f"nct:{n}") == [("2025-01-15", False, None, None)]


def test_one_outage_of_a_by_id_fetch_is_one_request_and_one_failure(
    tmp_path: Path, upstream: Upstream
) -> None:
    upstream.trials = {"NCT99000011": trial("NCT99000011", "2025-01-15", "S.")}
    build(tmp_path)
    upstream.fail_trials = True
    upstream.trial_requests = 0
    second = build(tmp_path, allow_partial=True)
    assert upstream.trial_requests == 1  # the refresh does not ask again for the trial
    assert [(f.step, f.error) for f in second.manifest.failed_requests] == [("fetch", OUTAGE)]
    assert state_of(second.path, "nct:NCT99000011") == [("2025-01-15", False, None, None)]


LABEL_A = "5eed0001-0000-4000-8000-000000000011"
LABEL_B = "5eed0001-0000-4000-8000-000000000012"
LABEL_SPEC = f"""\
name = "lin"
[openfda]
queries = [{{ search = "openfda.generic_name:zentravir", limit = 5 }}]
set_ids = ["{LABEL_A}"]
"""


def label(set_id: str, version: str) -> Record:
    return Record(
        record_id=f"setid:{set_id}",
        source="openfda",
        version=version,
        title=f"Label {set_id}",
        content_type="label",
        passages=[Passage(path="label.indications_and_usage.1", section="Indications", text="Z.")],
    )


def test_a_label_gone_upstream_is_withdrawn_with_a_control_the_lineage_holds(
    tmp_path: Path, upstream: Upstream
) -> None:
    upstream.labels = {LABEL_A: label(LABEL_A, "3"), LABEL_B: label(LABEL_B, "1")}
    upstream.label_search = [upstream.labels[LABEL_B]]
    build(tmp_path, spec_text=LABEL_SPEC)
    upstream.label_search = []  # B fell out of the query's results
    del upstream.labels[LABEL_A]  # A is gone: the only by-id chunk of the harvest answers []
    upstream.fetched_labels.clear()
    second = build(tmp_path)  # no exit 3: a lineage id checks the empty answer
    assert upstream.fetched_labels == [[LABEL_A], [LABEL_B, LABEL_A], [LABEL_B]]
    assert (second.manifest.partial, second.manifest.withdrawn) == (False, 1)
    assert state_of(second.path, f"setid:{LABEL_A}") == [("3", True, None, None)]
    assert state_of(second.path, f"setid:{LABEL_B}") == [("1", False, None, None)]


def test_an_empty_answer_is_a_failure_when_the_lineage_control_does_not_come_back_either(
    tmp_path: Path, upstream: Upstream
) -> None:
    upstream.labels = {LABEL_A: label(LABEL_A, "3"), LABEL_B: label(LABEL_B, "1")}
    upstream.label_search = [upstream.labels[LABEL_B]]
    build(tmp_path, spec_text=LABEL_SPEC)
    upstream.labels, upstream.label_search = {}, []  # openFDA answers nothing at all
    second = build(tmp_path, allow_partial=True)
    assert [f.error for f in second.manifest.failed_requests] == [
        f"answered none of the 1 records asked for by id, 1 of which the lineage holds "
        f"(setid:{LABEL_A}), nor setid:{LABEL_B}, which the lineage holds; not taken as "
        "withdrawal",
        f"answered none of the 1 records asked for by id, 1 of which the lineage holds "
        f"(setid:{LABEL_B}); not taken as withdrawal: no other setid record answered in this "
        "harvest or is held by the lineage to check the answer against",
    ]
    assert second.manifest.withdrawn == 0


# -- one record delivered twice in one build --------------------------------------------------

PREPRINT_DOI = "10.5555/demo.0101"


def preprint(ppr: str) -> Record:
    return Record(
        record_id=f"ppr:{ppr}",
        source="europepmc",
        version="1",
        doi=PREPRINT_DOI,
        title=f"Preprint {ppr}",
        content_type="preprint",
        flags=Flags(retracted=False, expression_of_concern=False, preprint=True),
        passages=[Passage(path="title", section="Title", text=f"Preprint {ppr} on zentravir")],
    )


def test_a_complete_delivery_replaces_an_incomplete_new_one_of_the_same_source(
    tmp_path: Path, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(crossref, "DOI_CACHE", 0)  # each batch asks Crossref again
    spec = (
        'name = "lin"\n[europepmc]\nqueries = [{ query = "q1", limit = 5 }, '
        '{ query = "q2", limit = 5 }]\n[crossref]\nupdates = true\n'
    )
    upstream.epmc = {"q1": [preprint("PPR99000001")], "q2": [preprint("PPR99000001")]}
    upstream.fail_notices_once = {PREPRINT_DOI}  # q1's copy is incomplete, q2's complete
    first = build(tmp_path, spec_text=spec, allow_partial=True)
    assert state_of(first.path, "ppr:PPR99000001") == [("1", False, False, False)]  # known
    assert [v[:3] for v in versions_of(first.path, "ppr:PPR99000001")] == [
        ("ppr:PPR99000001", "1", 1)
    ]
    counts = first.manifest.sources["europepmc"]
    assert (counts.records, counts.new_versions, counts.passages) == (1, 1, 1)
    assert rows(
        first.path,
        "SELECT (SELECT count(*) FROM passages), (SELECT count(*) FROM search_docs), "
        "(SELECT count(*) FROM search_terms WHERE docid NOT IN (SELECT docid FROM search_docs))",
    ) == [(1, 1, 0)]
    assert verify_snapshot(first.path, TRUST).ok


def _pubmed_and_epmc_copies(upstream: Upstream) -> None:
    upstream.articles = {"99000011": article("99000011", "Zentravir was given once daily.")}
    epmc_copy = article("99000011", "Zentravir was given once daily (Europe PMC).")
    upstream.epmc = {"zentravir": [epmc_copy.model_copy(update={"source": "europepmc"})]}


EPMC_SPEC = ENRICHED.replace(
    "[europepmc]\nfull_text = true\n",
    '[europepmc]\nqueries = [{ query = "zentravir", limit = 5 }]\n',
)


def test_another_sources_copy_never_replaces_a_record_whose_enrichment_failed(
    tmp_path: Path, upstream: Upstream
) -> None:
    _pubmed_and_epmc_copies(upstream)
    upstream.fail_annotations = True
    first = build(tmp_path, spec_text=EPMC_SPEC, allow_partial=True)  # a new record
    assert rows(first.path, "SELECT source FROM records WHERE record_id = 'pmid:99000011'") == [
        ("pubmed",)
    ]
    upstream.fail_annotations = False
    second = build(tmp_path, spec_text=EPMC_SPEC)
    upstream.fail_annotations = True
    third = build(tmp_path, spec_text=EPMC_SPEC, allow_partial=True)  # held: the parent's state
    upstream.fail_annotations = False
    fourth = build(tmp_path, spec_text=EPMC_SPEC)
    for snapshot in (second, third, fourth):  # one version throughout: no flap with the outage
        assert [v[1] for v in versions_of(snapshot.path, "pmid:99000011")] == ["1"]
        assert state_of(snapshot.path, "pmid:99000011") == [("1", False, False, False)]
    assert [v[5] for v in versions_of(third.path, "pmid:99000011")] == ["carried"]


PMCID_SPEC = 'name = "lin"\n[europepmc]\npmcids = ["PMC99000021", "PMC99000022"]\n'
PMCID_QUERY = "PMCID:PMC99000021 OR PMCID:PMC99000022"


def test_a_pmcid_that_no_longer_resolves_withdraws_the_record_that_carried_it(
    tmp_path: Path, upstream: Upstream
) -> None:
    def epmc(pmid: str, pmcid: str) -> Record:
        found = article(pmid, "Europe PMC abstract.", pmcid=pmcid)
        return found.model_copy(update={"source": "europepmc"})

    kept, going = epmc("99000021", "PMC99000021"), epmc("99000022", "PMC99000022")
    upstream.epmc[PMCID_QUERY] = [kept, going]
    build(tmp_path, spec_text=PMCID_SPEC)
    upstream.epmc[PMCID_QUERY] = [kept]  # PMC99000022 resolves to nothing any more
    second = build(tmp_path)
    assert second.manifest.withdrawn == 1
    assert rows(
        second.path, "SELECT record_id, withdrawn FROM record_state ORDER BY record_id"
    ) == [("pmid:99000021", False), ("pmid:99000022", True)]
