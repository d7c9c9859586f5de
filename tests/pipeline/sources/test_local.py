"""The ``local`` source: the id grammar of file names, segmentation of Markdown, text and PDF
pages into passages, and the listed failures of a folder, through the harvest's one loop."""

from __future__ import annotations

import hashlib
import os
import unicodedata
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.errors import CitationSyntaxError
from audit.handles import parse_locator
from audit.local_ids import (
    MAX_LOCAL_ID_CHARS,
    decode_local_id,
    encode_local_id,
    local_id_problem,
)
from pipeline.errors import HarvestError, ParseError, SpecError
from pipeline.harvest import Harvester
from pipeline.harvest_spec import parse_spec
from pipeline.http import HttpClient
from pipeline.records import Record
from pipeline.settings import Settings
from pipeline.snapshot.progress import NullProgress
from pipeline.sources import local
from pipeline.sources.base import Listing
from pipeline.sources.local import document_record, parse
from pipeline.sources.local_text import markdown_passages, pdf_passages, text_passages
from tests.audit.references.pdfs import blank_pdf, text_pdf

# -- ids ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("relative", "ident"),
    [
        ("report-2024.pdf", "report-2024.pdf"),
        ("reports/Q1 summary.md", "reports%2FQ1%20summary.md"),
        ("café.txt", "caf%C3%A9.txt"),
        ("cafe\u0301.txt", "caf%C3%A9.txt"),  # NFD and NFC spell one id
        ("a@b~c.md", "a%40b%7Ec.md"),
    ],
)
def test_a_file_path_has_one_id_that_decodes_back(relative: str, ident: str) -> None:
    assert encode_local_id(relative) == ident
    assert decode_local_id(ident) == unicodedata.normalize("NFC", relative)


_PART = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"), min_size=1
).filter(lambda p: not p.startswith("."))


@settings(max_examples=100)
@given(st.lists(_PART, min_size=1, max_size=3))
def test_every_file_path_round_trips_through_the_handle_grammar(parts: list[str]) -> None:
    relative = unicodedata.normalize("NFC", "/".join(parts))
    ident = encode_local_id(relative)
    if len(ident) > MAX_LOCAL_ID_CHARS or any(
        not p or p.startswith(".") for p in relative.split("/")
    ):
        return  # too long to cite, or a part NFC turned hidden: the source lists it as failed
    locator = parse_locator(f"local:{ident}@0a1b2c3d4e5f/page.1")
    assert decode_local_id(locator.id) == relative


@pytest.mark.parametrize(
    ("ident", "problem"),
    [
        ("a%41.md", "%41 encodes 'A', which is written as is"),
        (
            "a%2fb.md",
            "local id must be the file's path relative to the folder, with every byte "
            "outside A-Z a-z 0-9 . _ - written %XX (upper-case hex)",
        ),
        ("a%FF.md", "local id does not decode to UTF-8 text"),
        (
            "cafe%CC%81.txt",
            "local id does not decode to NFC text (the same name has another spelling)",
        ),
        (
            "a%2F%2Fb.md",
            "local id names an empty, '.'-led or hidden path part (got '' in 'a//b.md')",
        ),
        (
            "docs%2F.env",
            "local id names an empty, '.'-led or hidden path part (got '.env' in 'docs/.env')",
        ),
    ],
)
def test_other_spellings_of_an_id_are_refused(ident: str, problem: str) -> None:
    assert local_id_problem(ident) == problem


def test_a_local_handle_without_its_version_is_malformed_at_the_path() -> None:
    with pytest.raises(CitationSyntaxError) as caught:
        parse_locator("local:notes.md/body.main.p1")
    assert caught.value.message == (
        "local handles pin the record version: expected '@' and a version after the id, got '/'"
    )
    assert (caught.value.start, caught.value.end) == (14, 15)


def test_an_id_with_another_spelling_is_malformed_with_its_span() -> None:
    with pytest.raises(CitationSyntaxError) as caught:
        parse_locator("local:a%41.md@1/page.1")
    assert caught.value.message == "%41 encodes 'A', which is written as is, got 'a%41.md'"
    assert (caught.value.start, caught.value.end) == (6, 13)


# -- segmentation ------------------------------------------------------------------------------

MARKDOWN = """\
# Zentravir field notes

Written   for the
team.

## Results

Zentravir did not increase the risk.

```
code block

with a blank line
```

### Adverse events
Nausea in 3 of 40.

---

Headache in 1 of 40.

Results
-------

A second results section.
"""


def test_markdown_paths_follow_the_headings() -> None:
    title, passages = markdown_passages(MARKDOWN)
    assert title == "Zentravir field notes"
    assert [(p.path, p.section, p.text) for p in passages] == [
        ("title", "Title", "Zentravir field notes"),
        ("body.main.p1", "Main", "Written for the team."),
        ("body.results.p1", "Results", "Zentravir did not increase the risk."),
        ("body.results.p2", "Results", "``` code block with a blank line ```"),
        ("body.results_adverse_events.p1", "Results / Adverse events", "Nausea in 3 of 40."),
        ("body.results_adverse_events.p2", "Results / Adverse events", "Headache in 1 of 40."),
        ("body.results_2.p1", "Results", "A second results section."),
    ]


def test_markdown_without_a_leading_title_keeps_its_first_heading_a_section() -> None:
    title, passages = markdown_passages("Intro.\n\n# Methods\n\nWe counted.\n")
    assert title is None
    assert [p.path for p in passages] == ["body.main.p1", "body.methods.p1"]


def test_deeply_nested_headings_keep_paths_within_the_handle_grammar() -> None:
    text = "".join(
        f"{'#' * n} {'Long heading words ' * 4}{n}\n\nText {n}.\n\n" for n in range(2, 7)
    )
    _, passages = markdown_passages(text)
    assert len(passages) == 5
    for passage in passages:
        parse_locator(f"local:x.md@1/{passage.path}")  # raises when a path breaks the grammar


_MARKDOWN_LINES = st.lists(
    st.one_of(
        st.sampled_from(["", "# ", "## ", "### Title", "```", "~~~", "---", "===", "***"]),
        st.text(st.characters(blacklist_categories=("Cs",)), max_size=30),
        st.builds(lambda n, t: "#" * n + " " + t, st.integers(1, 7), st.text(max_size=50)),
    ),
    max_size=30,
)


@settings(max_examples=200)
@given(_MARKDOWN_LINES)
def test_any_markdown_gives_unique_citable_paths_and_no_empty_passage(lines: list[str]) -> None:
    _, passages = markdown_passages("\n".join(lines))
    paths = [p.path for p in passages]
    assert len(set(paths)) == len(paths)
    for passage in passages:
        assert passage.text and passage.text == passage.text.strip()
        parse_locator(f"local:x.md@1/{passage.path}")


def test_plain_text_paragraphs_are_numbered() -> None:
    passages = text_passages("One\nline.\r\n\r\n\n  Two.  \n\n\n")
    assert [(p.path, p.text) for p in passages] == [
        ("body.main.p1", "One line."),
        ("body.main.p2", "Two."),
    ]


def test_pdf_pages_keep_their_physical_numbers() -> None:
    passages = pdf_passages(["First  page.", "  ", "Third\npage."])
    assert [(p.path, p.section, p.text) for p in passages] == [
        ("page.1", "Page 1", "First page."),
        ("page.3", "Page 3", "Third page."),
    ]


# -- one document ------------------------------------------------------------------------------


def test_a_document_record_is_versioned_by_its_bytes() -> None:
    data = b"# Notes\n\nZentravir.\n"
    record = document_record("sub/notes.md", data)
    assert record.record_id == "local:sub%2Fnotes.md"
    assert record.version == hashlib.sha256(data).hexdigest()[:12]
    assert (record.title, record.content_type, record.source) == ("Notes", "document", "local")
    assert record.metadata == {
        "file": "sub/notes.md",
        "format": "markdown",
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "segmentation": "1",
    }
    assert (record.licence, record.licence_raw) == ("unknown", None)
    licensed = document_record("sub/notes.md", data, licence="cc by")
    assert (licensed.licence, licensed.licence_raw) == ("CC-BY", "cc by")
    assert licensed.content_hash() == record.content_hash()  # a licence is not the text
    changed = document_record("sub/notes.md", data.replace(b".", b"!"))
    assert changed.version != record.version
    assert changed.content_hash() != record.content_hash()


def test_a_pdf_record_has_one_passage_per_page() -> None:
    record = document_record("report 2024.pdf", text_pdf([["Page one."], ["HR 0.97 on page two."]]))
    assert record.record_id == "local:report%202024.pdf"
    assert [(p.path, p.text) for p in record.passages] == [
        ("page.1", "Page one."),
        ("page.2", "HR 0.97 on page two."),
    ]


def test_parse_shows_what_a_document_would_store() -> None:
    result = parse(b"Plain words.\n\nMore.\n", url="notes.txt")
    assert [p.path for p in result.records[0].passages] == ["body.main.p1", "body.main.p2"]
    assert parse(text_pdf([["A page."]])).records[0].metadata["format"] == "pdf"


# -- a folder through the harvest ---------------------------------------------------------------


class Sink:
    def __init__(self) -> None:
        self.records_in: dict[str, Record] = {}
        self.failures: list[tuple[str, str]] = []

    def records(
        self, source: str, records: Sequence[Record], *, incomplete: Collection[str] = ()
    ) -> None:
        del source, incomplete
        self.records_in.update((r.record_id, r) for r in records)

    def failure(self, source: str, step: str, error: HarvestError | ParseError) -> None:
        self.failures.append((f"{source}: {step}", error.message))

    def step(self, source: str, step: str, count: int, detail: str | None = None) -> None:
        del source, step, count, detail


def harvest(spec_dir: Path, table: str = 'folder = "docs"') -> Sink:
    sink = Sink()
    spec = parse_spec(f'name = "mine"\n[local]\n{table}\n', spec_dir / "mine.toml")
    with HttpClient(Settings()) as client:
        Harvester(spec, client, sink, NullProgress()).run()
    return sink


def write_folder(root: Path) -> Path:
    docs = root / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "notes.md").write_text("# Notes\n\nZentravir did not increase the risk.\n")
    (docs / "sub" / "plain é.txt").write_text("A paragraph.\n")
    (docs / "report.pdf").write_bytes(text_pdf([["Page one."]]))
    (docs / ".hidden.md").write_text("never read\n")
    (docs / ".git").mkdir()
    return docs


def test_a_folder_gives_one_record_per_document(tmp_path: Path) -> None:
    write_folder(tmp_path)
    sink = harvest(tmp_path)
    assert sink.failures == []
    assert sorted(sink.records_in) == [
        "local:notes.md",
        "local:report.pdf",
        "local:sub%2Fplain%20%C3%A9.txt",
    ]
    assert sink.records_in["local:sub%2Fplain%20%C3%A9.txt"].metadata["file"] == "sub/plain é.txt"


def test_every_file_that_cannot_be_ingested_is_a_listed_failure_naming_it(tmp_path: Path) -> None:
    from pypdf import PdfWriter

    docs = write_folder(tmp_path)
    (docs / "latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    (docs / "nul.md").write_bytes(b"text\x00more\n")
    (docs / "empty.md").write_text("\n\n   \n")
    (docs / "scan.pdf").write_bytes(blank_pdf())
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4\nnot really\n")
    (docs / "slides.pptx").write_bytes(b"PK")
    (docs / "README").write_text("no suffix\n")
    (docs / "link.txt").symlink_to("/etc/hostname")
    writer = PdfWriter()
    writer.add_blank_page(612, 792)
    writer.encrypt("secret")
    with (docs / "locked.pdf").open("wb") as out:
        writer.write(out)
    sink = harvest(tmp_path)
    assert sorted(sink.records_in) == [
        "local:notes.md",
        "local:report.pdf",
        "local:sub%2Fplain%20%C3%A9.txt",
    ]
    assert sink.failures == [
        (
            "local: read",
            "README: not a document type citeseal reads (no suffix; the [local] "
            "source reads .pdf, .md, .markdown, .txt)",
        ),
        ("local: read", "broken.pdf: the PDF does not parse: Stream has ended unexpectedly"),
        ("local: read", "empty.md: the document has no text to cite"),
        ("local: read", "latin1.txt: not UTF-8 text (byte 0xe9 at offset 3); save it as UTF-8"),
        ("local: read", "link.txt: a symbolic link; links are not followed"),
        ("local: read", "locked.pdf: the PDF is encrypted; citeseal reads unencrypted PDFs"),
        ("local: read", "nul.md: holds a NUL byte at offset 4: not text"),
        (
            "local: read",
            "scan.pdf: the PDF has no text layer (a scanned image?); citeseal reads "
            "only the text layer and does no OCR",
        ),
        (
            "local: read",
            "slides.pptx: not a document type citeseal reads ('.pptx'; the [local] "
            "source reads .pdf, .md, .markdown, .txt)",
        ),
    ]
    assert not any(str(tmp_path) in message for _, message in sink.failures)


def test_a_file_over_the_size_bound_is_not_read(tmp_path: Path) -> None:
    write_folder(tmp_path)
    sink = harvest(tmp_path, 'folder = "docs"\nmax_file_bytes = 40')
    assert sorted(sink.records_in) == ["local:sub%2Fplain%20%C3%A9.txt"]
    assert ("local: read", "notes.md: larger than 40 bytes ([local] max_file_bytes); not read") in (
        sink.failures
    )


def test_a_missing_folder_is_one_failure_named_as_the_spec_writes_it(tmp_path: Path) -> None:
    sink = harvest(tmp_path, 'folder = "nowhere"')
    assert sink.failures == [
        (
            "local: folder nowhere",
            "the [local] folder 'nowhere' (relative to the spec) does not exist",
        )
    ]


def test_the_folder_is_relative_to_the_spec_file_not_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_folder(tmp_path)
    monkeypatch.chdir(tmp_path / "docs")
    assert len(harvest(tmp_path).records_in) == 3


@pytest.mark.parametrize("folder", ["/home/me/papers", "~/papers"])
def test_an_absolute_folder_is_refused_since_the_spec_is_stored(folder: str) -> None:
    with pytest.raises(SpecError) as caught:
        parse_spec(f'name = "mine"\n[local]\nfolder = "{folder}"\n', Path("mine.toml"))
    assert caught.value.message == (
        "mine.toml:3: [local].folder: expected a folder relative to the spec file (an absolute "
        f"path would be stored in every snapshot), got {folder!r}"
    )


def test_a_spec_read_back_from_a_snapshot_reads_no_file(tmp_path: Path) -> None:
    write_folder(tmp_path)
    spec = parse_spec('name = "mine"\n[local]\nfolder = "docs"\n', tmp_path / "mine.toml")
    stored = type(spec).model_validate_json(spec.model_dump_json())
    assert stored.local is not None and stored.local.root is None
    assert "docs" in spec.model_dump_json() and str(tmp_path) not in spec.model_dump_json()


def test_a_path_too_long_to_cite_is_a_listed_failure(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    name = "é" * 20 + ".md"  # 20 letters, 120 characters of id
    (docs / name).write_text("Text.\n")
    assert harvest(tmp_path).failures == [
        (
            "local: read",
            f"{name}: its path makes an id of 123 characters (at most 90); move it to a "
            "shorter path",
        )
    ]


def test_two_names_one_normalisation_apart_are_not_one_record(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "cafe\u0301.md").write_text("Decomposed.\n")  # sorts before the composed name
    (docs / "caf\u00e9.md").write_text("Composed.\n")
    sink = harvest(tmp_path)
    assert list(sink.records_in) == ["local:caf%C3%A9.md"]
    assert sink.records_in["local:caf%C3%A9.md"].passages[0].text == "Decomposed."
    assert sink.failures == [
        (
            "local: read",
            "café.md: the same name as cafe\u0301.md in another Unicode normalisation (one id "
            "for both); rename one",
        )
    ]


# -- a complete listing: files gone from the folder are withdrawn --------------------------------


class Refusing:
    """``os`` as pipeline/sources/local.py sees it, except that ``call`` on an entry named
    ``name`` fails as a permission error would (the tests run as root too, where chmod
    does not make a file unreadable)."""

    def __init__(self, call: str, name: str) -> None:
        self._call, self._name = call, name

    def __getattr__(self, attr: str) -> Any:
        real = getattr(os, attr)
        if attr != self._call:
            return real

        def refuse(path: Any, *args: Any, **kwargs: Any) -> Any:
            if Path(path).name == self._name:
                raise PermissionError(13, "Permission denied")
            return real(path, *args, **kwargs)

        return refuse


def refresh(spec_dir: Path, unseen: list[str]) -> tuple[Sink, set[str]]:
    """A harvest of the folder, then its refresh of the lineage's ``unseen`` records (those
    this harvest did not deliver): the sink and the ids found missing (to withdraw)."""
    sink = Sink()
    spec = parse_spec('name = "mine"\n[local]\nfolder = "docs"\n', spec_dir / "mine.toml")
    with HttpClient(Settings()) as client:
        harvester = Harvester(spec, client, sink, NullProgress())
        harvester.run()
        outcome = harvester.refresh({"local": unseen})
    return sink, outcome.missing


def test_a_record_whose_file_left_the_folder_is_missing_and_no_other(tmp_path: Path) -> None:
    docs = write_folder(tmp_path)
    (docs / "latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))  # there, but fails
    sink, missing = refresh(
        tmp_path, ["local:gone.md", "local:sub%2Fgone%20too.txt", "local:latin1.txt"]
    )
    assert missing == {"local:gone.md", "local:sub%2Fgone%20too.txt"}
    assert sink.failures == [
        ("local: read", "latin1.txt: not UTF-8 text (byte 0xe9 at offset 3); save it as UTF-8")
    ]


def test_a_file_there_but_unreadable_is_a_listed_failure_not_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_folder(tmp_path)
    monkeypatch.setattr(local, "os", Refusing("open", "notes.md"))
    sink, missing = refresh(tmp_path, ["local:notes.md"])
    assert missing == set()
    assert sink.failures == [("local: read", "notes.md: cannot be read (Permission denied)")]
    assert "local:notes.md" not in sink.records_in


def test_a_subfolder_that_cannot_be_listed_withdraws_nothing_of_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_folder(tmp_path)
    monkeypatch.setattr(local, "os", Refusing("scandir", "sub"))
    sink, missing = refresh(tmp_path, ["local:sub%2Fplain%20%C3%A9.txt", "local:gone.md"])
    assert missing == set()  # gone.md may be gone, but the listing cannot say so
    assert sink.failures == [
        ("local: read", "sub: the folder cannot be listed (Permission denied)")
    ]


def test_a_folder_that_cannot_be_listed_withdraws_nothing(tmp_path: Path) -> None:
    sink, missing = refresh(tmp_path, ["local:notes.md"])  # no docs/ at all
    assert missing == set()
    assert sink.failures == [
        ("local: folder docs", "the [local] folder 'docs' (relative to the spec) does not exist")
    ]


def test_the_listing_names_every_entry_read_or_not(tmp_path: Path) -> None:
    docs = write_folder(tmp_path)
    (docs / "slides.pptx").write_bytes(b"PK")
    spec = parse_spec('name = "mine"\n[local]\nfolder = "docs"\n', tmp_path / "mine.toml")
    assert spec.local is not None
    *reads, listing = local.searches(spec.local)
    assert [s.step for s in reads] == ["read"] * 4 and listing.lists
    with HttpClient(Settings()) as client:
        answer = listing.run(client)
    assert answer == Listing(
        frozenset(
            {
                "local:notes.md",
                "local:report.pdf",
                "local:slides.pptx",
                "local:sub%2Fplain%20%C3%A9.txt",
            }
        )
    )


def test_a_local_build_with_one_unreadable_file_is_partial_not_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder whose files were read but one: ``partial`` (records came in), the way an API
    source with some answers and one failed request is; the local source makes no request,
    so its status comes from the steps that delivered."""
    from pipeline.snapshot.build import build_snapshot
    from pipeline.snapshot.manifest import read_manifest
    from tests.conftest import TEST_KEYRING

    docs = write_folder(tmp_path)
    (docs / "slides.pptx").write_bytes(b"PK")
    (tmp_path / "mine.toml").write_text('name = "mine"\n[local]\nfolder = "docs"\n')
    monkeypatch.setenv("CITESEAL_DATA_DIR", str(tmp_path / "data"))
    built = build_snapshot(
        tmp_path / "mine.toml",
        keyring=TEST_KEYRING,
        settings=Settings(),
        resume=False,
        allow_partial=True,
    )
    manifest = read_manifest(built.path)
    assert manifest.partial is True
    assert manifest.sources["local"].status == "partial"
    assert manifest.sources["local"].records == 3


def test_a_bad_byte_after_a_byte_order_mark_is_named_at_its_offset_in_the_file() -> None:
    with pytest.raises(ParseError) as caught:
        local._utf8(b"\xef\xbb\xbfcaf\xe9\n", "bom.txt")
    assert str(caught.value) == (
        "bom.txt: not UTF-8 text (byte 0xe9 at offset 6); save it as UTF-8"
    )
