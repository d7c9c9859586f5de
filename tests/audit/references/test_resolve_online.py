"""The online half of audit.references.resolve — the lookup snapshot's resolver and the chain
— and the check's rule for an identifier that resolves to nothing online."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from audit.references import extract_bytes
from audit.references.check import LookupRef, SnapshotRef, check_document, make_report, render_text
from audit.references.resolve import (
    Asked,
    ChainResolver,
    Key,
    Lookup,
    LookupResolver,
    SnapshotResolver,
    WorkRecord,
)
from tests.audit.references.works import write_works


class EmptyResolver:
    """A snapshot that holds nothing (offline: every key unmatched, not evidence)."""

    name = "snapshot"

    def by_identifiers(self, keys: Sequence[Key]) -> dict[Key, Lookup]:
        return {k: Lookup(self.name, f"{k[0]}:{k[1]}", "unmatched") for k in keys}

    def by_title(self, title: str) -> Lookup:
        return Lookup(self.name, f"title:{title}", "unmatched")


class Answers:
    """An online lookup that answers each key and title as told (absent by default)."""

    name = "lookup"

    def __init__(self, *, title: str = "absent", key: str = "absent") -> None:
        self.title, self.key = title, key

    def _lookup(self, name: str, how: str) -> Lookup:
        if how == "unreachable":
            return Lookup(self.name, name, "unreachable", detail="crossref: works: HTTP 500")
        return Lookup(self.name, name, "unmatched", detail="asked", absent=how == "absent")

    def by_identifiers(self, keys: Sequence[Key]) -> dict[Key, Lookup]:
        return {k: self._lookup(f"{k[0]}:{k[1]}", self.key) for k in keys}

    def by_title(self, title: str) -> Lookup:
        return self._lookup(f"title:{title}", self.title)


@pytest.fixture(scope="module")
def works(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_works(tmp_path_factory.mktemp("works") / "works.duckdb")


@pytest.fixture
def lookup(works: Path) -> Iterator[LookupResolver]:
    """The works snapshot read as a lookup snapshot that asked two DOIs and a title."""
    asked = Asked(
        keys={
            ("doi", "10.5555/ref.0001"): ("crossref",),
            ("doi", "10.5555/gone.0001"): ("crossref", "openalex"),
            ("doi", "10.5555/down.0001"): ("openalex", "pubmed"),
        },
        titles={"Nothing of the kind": ("crossref", "openalex"), "Down": ("pubmed",)},
        failed={"pubmed": "pubmed: efetch: HTTP 500"},
    )
    resolver = LookupResolver(SnapshotResolver.open(works), asked)
    yield resolver
    resolver.close()


def test_the_lookup_resolver_tells_found_absent_unreachable_and_not_asked(
    lookup: LookupResolver,
) -> None:
    keys = [
        ("doi", "10.5555/ref.0001"),
        ("doi", "10.5555/gone.0001"),
        ("doi", "10.5555/down.0001"),
        ("pmid", "99999999"),
    ]
    found, gone, down, other = (lookup.by_identifiers(keys)[k] for k in keys)
    assert (found.status, found.absent) == ("matched", False)
    assert (gone.status, gone.absent, gone.detail) == (
        "unmatched",
        True,
        "no such record at crossref, openalex (asked online)",
    )
    assert (down.status, down.absent, down.detail) == (
        "unreachable",
        False,
        "pubmed: efetch: HTTP 500",
    )
    assert (other.status, other.absent, other.detail) == ("unmatched", False, "not asked online")


def test_a_title_is_absent_only_when_searched_online_and_no_title_matches(
    lookup: LookupResolver,
) -> None:
    hit = lookup.by_title("A synthetic cohort of vitamin X in adults: ten-year outcomes.")
    assert hit.status == "matched" and hit.records[0].record_id == "pmid:99100001"
    nothing = lookup.by_title("Nothing of the kind")
    assert (nothing.status, nothing.absent) == ("unmatched", True)
    assert lookup.by_title("Down").status == "unreachable"
    unasked = lookup.by_title("Never searched")
    assert (unasked.status, unasked.absent, unasked.detail) == (
        "unmatched",
        False,
        "title not searched online",
    )


def test_the_chain_keeps_the_first_match_else_an_outage_else_the_last_answer(
    lookup: LookupResolver,
) -> None:
    chain = ChainResolver([EmptyResolver(), lookup])
    keys = [("doi", "10.5555/ref.0001"), ("doi", "10.5555/down.0001"), ("doi", "10.5555/gone.0001")]
    found, down, gone = (chain.by_identifiers(keys)[k] for k in keys)
    assert (found.resolver, found.status) == ("lookup", "matched")
    assert down.status == "unreachable"
    assert gone.absent
    assert chain.name == "snapshot"


REF = b"# References\n\n1. Roe R. A title nobody holds anywhere. 2098. doi:10.5555/fake.1\n"
BARE = b"See doi:10.5555/fake.1 for details.\n"
BOOK = b"# References\n\n1. Roe R. A handbook. 2098. doi:10.5555/fake.1 ISBN 978-3-16-148410-0\n"


@pytest.mark.parametrize(
    ("doc", "online", "tier"),
    [
        (REF, Answers(), "hallucinated"),
        (BARE, Answers(), "hallucinated"),  # no title to find it by
        (REF, Answers(title="unreachable"), "unresolved"),
        (REF, Answers(key="unreachable"), "unresolved"),
        (REF, Answers(title="unmatched"), "unresolved"),  # the title was not searched online
        (REF, EmptyResolver(), "unresolved"),  # offline: absence is no evidence
        (BOOK, Answers(), "unresolved"),  # with an ISBN: a book may be in no registry
    ],
    ids=["absent", "bare", "title-down", "key-down", "title-unasked", "offline", "book"],
)
def test_hallucinated_needs_every_identifier_absent_where_asked_and_no_title_anywhere(
    doc: bytes, online: object, tier: str
) -> None:
    document = extract_bytes(doc, "refs.md")
    chain = ChainResolver([EmptyResolver(), online])  # type: ignore[list-item]
    [check] = check_document(document, chain).references
    assert check.tier == tier, check.reason


class OtherWork(Answers):
    """An online lookup whose DOI is another work's, and whose title search failed."""

    def __init__(self, other: WorkRecord) -> None:
        super().__init__(title="unreachable")
        self.other = other

    def by_identifiers(self, keys: Sequence[Key]) -> dict[Key, Lookup]:
        return {k: Lookup(self.name, f"{k[0]}:{k[1]}", "matched", (self.other,)) for k in keys}


def test_an_identifier_of_another_work_is_unresolved_when_the_title_search_failed(
    lookup: LookupResolver,
) -> None:
    key = ("doi", "10.5555/ref.0001")
    other = lookup.by_identifiers([key])[key].records[0]  # a cohort of vitamin X: another work
    document = extract_bytes(REF, "refs.md")
    [failed] = check_document(
        document, ChainResolver([EmptyResolver(), OtherWork(other)])
    ).references
    assert (failed.tier, failed.reason) == ("unresolved", "the title search failed (see the trace)")
    answered = OtherWork(other)
    answered.title = "absent"
    [check] = check_document(document, ChainResolver([EmptyResolver(), answered])).references
    assert check.tier == "hallucinated"
    assert check.reason == "doi:10.5555/fake.1 is pmid:99100001, a different work"


def test_the_text_report_says_online_and_names_the_lookup_snapshot() -> None:
    ref = SnapshotRef(name="works", sha256="a" * 64, snapshot_id="works-1")
    lookup = LookupRef(name="works-lookup", sha256="b" * 64, snapshot_id="works-lookup-2", path="x")
    text = render_text(make_report([], ref, "citeseal 0", online=True, lookup=lookup))
    assert text.splitlines()[:2] == [
        "snapshot: works (sha256 aaaaaaaaaaaa), online",
        "lookup snapshot: works-lookup-2 (sha256 bbbbbbbbbbbb)",
    ]
