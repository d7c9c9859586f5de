"""The user's own documents end to end, in-process through the CLI's error boundary: a folder
we write (a PDF made here, a Markdown and a text file) built into a snapshot, its ``local:``
handles minted and verified, a claim judged against them, an answer audited; then the files
change (one edited, one removed, one unreadable) and a second build shows the versioning and
withdrawal rules; and no absolute path gets anywhere."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pytest

from pipeline.cli import main
from pipeline.sources import local
from tests.audit.references.pdfs import text_pdf
from tests.pipeline.sources.test_local import Refusing

PDF_PAGES = [
    ["Report 2024 of the zentravir cohort."],
    ["Zentravir does not increase the risk of Farrow syndrome."],
]
NOTES_V1 = "# Field notes\n\n## Dosing\n\nPatients took 20 mg zentravir once daily.\n"
NOTES_V2 = "# Field notes\n\n## Dosing\n\nPatients took 40 mg zentravir twice daily.\n"
PLAIN = "Enrolment closed in March.\n\nFollow-up lasted 12 weeks.\n"
LOCKED = "Adverse events were mild.\n"
SPEC = 'name = "mine"\n[local]\nfolder = "my docs"\n'


def cli(*args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    """``citeseal ARGS`` in-process through ``main()``: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.ExitStack() as stack:
        if cwd is not None:
            stack.enter_context(contextlib.chdir(cwd))
        stack.enter_context(contextlib.redirect_stdout(out))
        stack.enter_context(contextlib.redirect_stderr(err))
        saved, sys.argv = sys.argv, ["citeseal", *args]
        try:
            main()
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else 1
        finally:
            sys.argv = saved
    return code, out.getvalue(), err.getvalue()


def version(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:12]


@dataclass(frozen=True)
class Lineage:
    root: Path
    first: Path
    second: Path
    pdf: str  # locator prefixes, version pinned
    notes_v1: str
    notes_v2: str
    plain: str
    locked: str
    built: tuple[int, str, str]
    rebuilt: tuple[int, str, str]


@pytest.fixture(scope="module")
def lineage(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lineage]:
    """Build 1 from the folder; then notes.md changes, plain.txt is removed and locked.md
    cannot be read; build 2 (partial: the unreadable file is a listed failure)."""
    root = tmp_path_factory.mktemp("home-of-me")
    docs = root / "my docs"
    (docs / "2024").mkdir(parents=True)
    pdf = text_pdf(PDF_PAGES)
    (docs / "2024" / "report-2024.pdf").write_bytes(pdf)
    (docs / "notes.md").write_text(NOTES_V1, encoding="utf-8")
    (docs / "plain.txt").write_text(PLAIN, encoding="utf-8")
    (docs / "locked.md").write_text(LOCKED, encoding="utf-8")
    (root / "mine.toml").write_text(SPEC, encoding="utf-8")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("CITESEAL_DATA_DIR", str(root / "data"))
        built = cli("snapshot", "build", str(root / "mine.toml"), "--demo-key")
        assert built[0] == 0, built
        first = next((root / "mine").glob("*.duckdb"))
        (docs / "notes.md").write_text(NOTES_V2, encoding="utf-8")
        (docs / "plain.txt").unlink()
        env.setattr(local, "os", Refusing("open", "locked.md"))
        again = cli("snapshot", "build", str(root / "mine.toml"), "--demo-key", "--allow-partial")
        env.undo()
        assert again[0] == 0, again
        second = next(p for p in (root / "mine").glob("*.duckdb") if p != first)
        yield Lineage(
            root=root,
            first=first,
            second=second,
            pdf=f"local:2024%2Freport-2024.pdf@{version(pdf)}",
            notes_v1=f"local:notes.md@{version(NOTES_V1.encode())}",
            notes_v2=f"local:notes.md@{version(NOTES_V2.encode())}",
            plain=f"local:plain.txt@{version(PLAIN.encode())}",
            locked=f"local:locked.md@{version(LOCKED.encode())}",
            built=built,
            rebuilt=again,
        )


def mint(*locators: str) -> list[str]:
    code, out, err = cli("handle", "mint", "--demo-key", *locators)
    assert (code, err) == (0, "note: minted with the public demo key: anyone can forge these\n")
    return out.split()


def test_a_build_ingests_every_document_of_the_folder(lineage: Lineage) -> None:
    code, out, err = lineage.built
    assert code == 0
    assert "  local           ok            4 records       7 passages" in out.splitlines()
    assert "warning" not in err


def test_minted_local_handles_verify_and_any_change_to_them_does_not(lineage: Lineage) -> None:
    (handle,) = mint(f"{lineage.pdf}/page.2")
    other_file = handle.replace("report-2024", "report-2025")
    other_check = handle[:-1] + ("a" if handle[-1] != "a" else "b")
    code, out, _ = cli("handle", "verify", "--demo-key", handle, other_file, other_check)
    assert code == 1
    assert [line.split()[0] for line in out.splitlines()] == ["ok", "forged", "forged"]


def test_search_finds_a_pdf_page_and_gives_a_local_handle_that_verifies(lineage: Lineage) -> None:
    code, out, err = cli(
        "search", "Farrow syndrome risk", "--snapshot", str(lineage.second), "--demo-key"
    )
    assert (code, err) == (0, "note: handles minted with the public demo key\n")
    first = out.splitlines()[0]
    handle = first.split()[1]
    assert handle.startswith(f"{lineage.pdf}/page.2~"), first  # minted, version pinned
    code, out, _ = cli("handle", "verify", "--demo-key", handle)
    assert (code, out.split()[0]) == (0, "ok")


def test_support_judges_a_claim_against_a_pdf_page(lineage: Lineage) -> None:
    (handle,) = mint(f"{lineage.pdf}/page.2")
    snapshot = str(lineage.first)
    claim = "Zentravir raises the risk of Farrow syndrome."
    code, out, _ = cli("support", claim, "--handle", handle, "--snapshot", snapshot, "--demo-key")
    assert code == 1
    assert out.splitlines()[2:4] == [
        f"ok             {handle}",
        "               support: contradicted (rules 1.5): the passage reports a null finding "
        '("does not increase") where the claim asserts an effect (4 of 5 claim terms).',
    ]
    paraphrase = "Zentravir does not increase the risk of Farrow syndrome."
    code, out, _ = cli(
        "support", paraphrase, "--handle", handle, "--snapshot", snapshot, "--demo-key", "--json"
    )
    assert code == 0
    assert json.loads(out)["results"][0]["support"]["label"] == "supported"


def audit(snapshot: Path, answer: str, root: Path) -> dict[str, Any]:
    path = root / "answer.md"
    path.write_text(answer, encoding="utf-8")
    code, out, err = cli(
        "audit", str(path), "--snapshot", str(snapshot), "--demo-key", "-f", "json"
    )
    assert code == 0, err
    report: dict[str, Any] = json.loads(out)
    return report


def citations(report: dict[str, Any]) -> list[dict[str, Any]]:
    sentences = report["sentences"]
    assert isinstance(sentences, list)
    return [c for s in sentences for c in s["citations"]]


def test_an_answer_citing_a_pdf_markdown_and_text_passes(lineage: Lineage) -> None:
    pdf, notes, plain = mint(
        f"{lineage.pdf}/page.2",
        f"{lineage.notes_v1}/body.dosing.p1",
        f"{lineage.plain}/body.main.p2",
    )
    answer = (
        f'Zentravir showed no added risk [{pdf} "does not increase the risk"]. '
        f'The dose was 20 mg daily [{notes} "20 mg zentravir once daily"]. '
        f"Follow-up was 12 weeks ({plain}).\n"
    )
    report = audit(lineage.first, answer, lineage.root)
    assert report["verdict"] == "pass"
    assert [(c["verdict"], c["checked_against"]) for c in citations(report)] == [
        ("ok", "issued"),
        ("ok", "issued"),
        ("ok", None),
    ]


def test_a_changed_file_is_a_new_version_and_its_old_handles_say_so(lineage: Lineage) -> None:
    old, new = mint(f"{lineage.notes_v1}/body.dosing.p1", f"{lineage.notes_v2}/body.dosing.p1")
    answer = (
        f'The dose was 20 mg [{old} "20 mg zentravir once daily"]. '
        f'It is now 40 mg [{old} "40 mg zentravir twice daily"]. '
        f'The dose is 40 mg [{new} "40 mg zentravir twice daily"].\n'
    )
    found = citations(audit(lineage.second, answer, lineage.root))
    assert [(c["verdict"], c["checked_against"]) for c in found] == [
        ("ok", "issued"),  # the text it was minted from is kept
        ("ok", "current"),  # what the file says now, found in the current version only
        ("ok", "issued"),
    ]
    assert [[f["name"] for f in c["flags"]] for c in found] == [
        ["version_changed"],
        ["version_changed"],
        [],
    ]
    assert found[0]["flags"][0]["detail"] == (
        f"current version {lineage.notes_v2.split('@')[1]} (this passage changed)"
    )


def test_a_removed_file_is_withdrawn_and_its_handles_say_so(lineage: Lineage) -> None:
    _, out, _ = lineage.rebuilt
    assert "  lineage   4 records, 5 versions, 9 passages; 1 new versions, 1 newly withdrawn" in (
        out.splitlines()
    )
    (handle,) = mint(f"{lineage.plain}/body.main.p2")
    answer = f"Follow-up was 12 weeks ({handle}).\n"
    report = audit(lineage.second, answer, lineage.root)
    found = citations(report)
    since = report["snapshot"]["snapshot_id"]
    assert [(c["verdict"], c["detail"]) for c in found] == [
        ("withdrawn", f"local:plain.txt was withdrawn upstream since snapshot {since}")
    ]
    assert report["verdict"] == "warn"
    assert citations(audit(lineage.first, answer, lineage.root))[0]["verdict"] == "ok"
    path = lineage.root / "answer.md"
    code, out, _ = cli(
        "audit", str(path), "-s", str(lineage.second), "--demo-key", "--fail-on", "withdrawn",
        "-f", "json",
    )  # fmt: skip
    assert (code, json.loads(out)["verdict"]) == (1, "fail")


def test_an_unreadable_file_is_a_listed_failure_and_keeps_its_last_version(
    lineage: Lineage,
) -> None:
    _, _, err = lineage.rebuilt
    assert "local: read failed: locked.md: cannot be read (Permission denied)" in err.splitlines()
    (handle,) = mint(f"{lineage.locked}/body.main.p1")
    found = citations(audit(lineage.second, f"Events were mild ({handle}).\n", lineage.root))
    assert [(c["verdict"], [f["name"] for f in c["flags"]]) for c in found] == [
        ("ok", ["not_refreshed"])
    ]


def test_no_absolute_path_reaches_the_snapshot_its_manifest_a_report_or_the_site(
    lineage: Lineage,
) -> None:
    secret = str(lineage.root)
    con = duckdb.connect(str(lineage.second), read_only=True)
    try:
        tables = [row[0] for row in con.execute("SHOW TABLES").fetchall()]
        stored = " ".join(
            repr(con.execute(f'SELECT * FROM "{table}"').fetchall())  # noqa: S608 (its own names)
            for table in tables
        )
    finally:
        con.close()
    assert "my docs" in stored and "2024/report-2024.pdf" in stored  # relative paths only
    assert secret not in stored and lineage.root.name not in stored
    for manifest in (lineage.root / "mine").glob("*.json"):
        assert secret not in manifest.read_text(encoding="utf-8")
    (handle,) = mint(f"{lineage.pdf}/page.2")
    answer = lineage.root / "answer.md"
    answer.write_text(f"No added risk ({handle}).\n", encoding="utf-8")
    for fmt in ("json", "html", "md", "text"):
        code, out, _ = cli("audit", str(answer), "-s", str(lineage.second), "--demo-key", "-f", fmt)
        assert code == 0 and "report-2024.pdf" in out and secret not in out
        if fmt == "json":
            (lineage.root / "reports").mkdir(exist_ok=True)
            (lineage.root / "reports" / "answer.json").write_text(out, encoding="utf-8")
    site = lineage.root / "site"
    code, _, err = cli(
        "site", "build", "--reports", str(lineage.root / "reports"), "--demo-key",
        "--snapshots", str(lineage.root / "mine"), "--out", str(site),
    )  # fmt: skip
    assert code == 0, err
    pages = [p.read_text(encoding="utf-8") for p in site.rglob("*.html")]
    assert any("report-2024.pdf" in page for page in pages)
    assert not any(secret in page or lineage.root.name in page for page in pages)


def test_an_unreadable_document_seals_nothing_and_names_the_file(tmp_path: Path) -> None:
    docs = tmp_path / "my docs"
    docs.mkdir()
    (docs / "ok.md").write_text("Fine text.\n", encoding="utf-8")
    (docs / "latin1.txt").write_bytes("caf\xe9\n".encode("latin-1"))
    (tmp_path / "mine.toml").write_text(SPEC, encoding="utf-8")
    code, _, err = cli("snapshot", "build", "mine.toml", "--demo-key", cwd=tmp_path)
    assert code == 3
    assert (
        "local: read failed: latin1.txt: not UTF-8 text (byte 0xe9 at offset 3); save it as UTF-8"
        in err.splitlines()
    )
    assert "error: 1 request failed (local 1): no snapshot of mine was sealed" in err.splitlines()
    assert list((tmp_path / "mine").glob("*.duckdb")) == []
