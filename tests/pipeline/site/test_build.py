"""``citeseal site build``: reproducible, inert against hostile text, links that resolve,
``--strict``, one-line errors, and a failed build that leaves the previous site intact."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from urllib.parse import unquote, urlsplit

import html5lib
import pytest

from audit.errors import InputError
from audit.publish import SOURCE_URLS, published_report
from audit.report import Report
from pipeline.site.build import MARKER, build_site
from tests.cli import citeseal
from tests.conftest import TEST_KEY_HEX, TEST_KEYRING, TRUST
from tests.pipeline.site.factory import HOSTILE, ids_of, make_inputs, pages_of, parse_html

EPOCH = {"SOURCE_DATE_EPOCH": "1750000000"}
SOURCE_PAGES = tuple(template.split("{}")[0] for template in SOURCE_URLS.values())


def tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    return make_inputs(tmp_path / "in")


@pytest.fixture
def site(tmp_path: Path, inputs: tuple[Path, Path]) -> Path:
    out = tmp_path / "public"
    build_site(*inputs, out, env=EPOCH, trust=TRUST)
    return out


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return citeseal(*args, env=env)


def test_building_twice_gives_identical_bytes(tmp_path: Path, inputs: tuple[Path, Path]) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    build_site(*inputs, first, env=EPOCH, trust=TRUST)
    build_site(*inputs, second, env=EPOCH, trust=TRUST)
    assert tree(first) == tree(second)
    build_site(*inputs, first, env=EPOCH, trust=TRUST)  # rebuilding in place changes nothing either
    assert tree(first) == tree(second)
    assert "built 2025-06-15T15:06:40Z" in (first / "index.html").read_text(encoding="utf-8")


def test_the_build_date_comes_from_the_inputs_without_source_date_epoch(
    tmp_path: Path, inputs: tuple[Path, Path]
) -> None:
    build_site(*inputs, tmp_path / "out", env={}, trust=TRUST)
    # the newest date among the reports and snapshots, never the clock
    assert "built 2025-06-03T02:00:00Z" in (tmp_path / "out/index.html").read_text("utf-8")


def test_the_site_has_every_page(site: Path) -> None:
    names = {p.relative_to(site).as_posix() for p in pages_of(site)}
    assert {
        "index.html",
        "reports-fail-by-date.html",
        "reports-all-by-fabricated.html",
        "reports/answer-0.html",
        "reports/answer-2.html",
        "snapshots.html",
        "snapshots/demo-20250115.html",
        "snapshots/demo-20250602.html",
        "diffs/demo-20250115--demo-20250602.html",
        "reaudit.html",
    } <= names
    assert (site / "static/site.css").is_file()
    assert (site / MARKER).is_file()


def test_hostile_text_in_answers_and_records_is_inert(site: Path) -> None:
    pages = pages_of(site)
    for page in pages:
        for element in parse_html(page).iter():
            assert element.tag != "script", page
            for name, value in element.attrib.items():
                assert not name.lower().startswith("on"), (page, name)
                if name in ("href", "src", "action", "formaction"):
                    assert not value.strip().lower().startswith("javascript:"), (page, value)
    report = (site / "reports/answer-0.html").read_text(encoding="utf-8")
    escaped = (
        "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;"
        "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;"
    )
    assert escaped in report  # the text is shown, as text
    assert "<mark>&lt;script&gt;" in report  # even inside the highlighted closest match
    snapshot = (site / "snapshots/demo-20250602.html").read_text(encoding="utf-8")
    assert "Zentravir cohort &lt;script&gt;" in snapshot  # record text from the snapshot
    for page in pages:
        assert HOSTILE not in page.read_text(encoding="utf-8")


def test_every_page_parses_without_a_single_html5_parse_error(site: Path) -> None:
    parser = html5lib.HTMLParser(strict=True, namespaceHTMLElements=False)
    for page in pages_of(site):
        parser.parse(page.read_text(encoding="utf-8"))  # raises on the first parse error
        assert parser.errors == [], page


def test_every_page_has_the_csp_and_no_external_reference(site: Path) -> None:
    for page in pages_of(site):
        root = parse_html(page)
        csp = [m.get("content") for m in root.iter("meta") if m.get("http-equiv")]
        assert csp == [
            "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; "
            "form-action 'none'"
        ], page
        assert not list(root.iter("style")) and not [
            e for e in root.iter() if e.get("style") is not None
        ], page
        for element in root.iter():
            for name in ("href", "src"):
                value = element.get(name)
                if value is None:
                    continue
                if element.tag == "a" and urlsplit(value).scheme:
                    # an excerpt's link to its record's source (audit.publish): a link to
                    # follow, not a resource the page loads
                    assert element.get("rel") == "external" and value.startswith(SOURCE_PAGES), (
                        value
                    )
                    continue
                assert not urlsplit(value).scheme and not value.startswith("//"), value


def test_every_internal_link_resolves(site: Path) -> None:
    checked = 0
    for page in pages_of(site):
        for element in parse_html(page).iter():
            href = element.get("href")
            if href is None or element.tag not in ("a", "link") or element.get("rel") == "external":
                continue  # a source link is checked by the test above
            parts = urlsplit(href)
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            assert target.is_file(), f"{page.relative_to(site)} links to missing {href}"
            assert site.resolve() in target.parents, href  # stays inside the site
            if parts.fragment:
                assert parts.fragment in ids_of(target), f"{page.name}: no #{parts.fragment}"
            checked += 1
    assert checked > 100


def test_report_page_has_sentence_and_citation_anchors(site: Path) -> None:
    ids = ids_of(site / "reports/answer-1.html")
    assert {"main", "s1", "s2", "s2c1", "s5c2", "sentences", "metrics"} <= ids


def test_a_changed_passage_shows_a_word_diff(tmp_path: Path, inputs: tuple[Path, Path]) -> None:
    build_site(*inputs, tmp_path / "full", env=EPOCH, trust=TRUST, publish="full")
    html = (tmp_path / "full" / "reports/answer-1.html").read_text(encoding="utf-8")
    assert "<del>once</del><ins>twice</ins>" in html
    assert "<del>240</del><ins>236</ins>" in html


def test_the_default_build_shows_the_word_diff_of_short_passages_of_unknown_licence(
    site: Path,
) -> None:
    # the excerpts show both texts whole, so the diff shows nothing more of the record
    html = (site / "reports/answer-1.html").read_text(encoding="utf-8")
    assert "<del>once</del><ins>twice</ins>" in html
    assert "the change is not shown word by word" not in html


OVERALLS = ("fail", "incomplete", "warn", "pass")


def test_the_verdict_views_list_only_their_verdict(site: Path) -> None:
    for verdict in OVERALLS:
        html = (site / f"reports-{verdict}-by-date.html").read_text(encoding="utf-8")
        rows = html.split("<tbody>")[1] if "<tbody>" in html else ""
        others = set(OVERALLS) - {verdict}
        assert not any(f"badge-{o}" in rows for o in others)


def test_an_incomplete_report_has_its_own_view_count_and_badge(
    tmp_path: Path, inputs: tuple[Path, Path]
) -> None:
    reports, snapshots = inputs
    path = reports / "answer-2.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    document["verdict"] = "incomplete"
    document["verdict_reasons"] = ["incomplete: 1 unavailable citation"]
    path.write_text(json.dumps(document), encoding="utf-8")
    out = tmp_path / "public"
    build_site(reports, snapshots, out, env=EPOCH, trust=TRUST)
    index = (out / "index.html").read_text(encoding="utf-8")
    assert '<a href="reports-incomplete-by-date.html">incomplete (1)</a>' in index
    assert index.index(">fail (") < index.index(">incomplete (") < index.index(">warn (")
    view = (out / "reports-incomplete-by-date.html").read_text(encoding="utf-8")
    [rows] = view.split("<tbody>")[1:]
    assert rows.count('<span class="badge badge-incomplete">INCOMPLETE</span>') == 1
    assert "reports/answer-2.html" in rows and "reports/answer-1.html" not in rows
    page = (out / "reports/answer-2.html").read_text(encoding="utf-8")
    assert '<p class="verdict-line"><span class="badge badge-incomplete">INCOMPLETE</span>' in page
    assert "<li>incomplete: 1 unavailable citation</li>" in page
    assert ".badge-incomplete {" in (out / "static/site.css").read_text(encoding="utf-8")


def test_the_fabricated_view_sorts_by_fabricated_count(site: Path) -> None:
    html = (site / "reports-all-by-fabricated.html").read_text(encoding="utf-8")
    assert 'aria-sort="descending"' in html
    order = [html.index(f"reports/answer-{i}.html") for i in (1, 0, 2)]
    assert order == sorted(order)  # 2, 1, 1 fabricated; ties newest verdict order, then name


def test_strict_fails_on_warnings(tmp_path: Path, inputs: tuple[Path, Path]) -> None:
    reports, snapshots = inputs
    document = json.loads((reports / "answer-1.json").read_text(encoding="utf-8"))
    document["snapshot"]["sha256"] = "f" * 64
    (reports / "answer-1.json").write_text(json.dumps(document), encoding="utf-8")
    result = build_site(reports, snapshots, tmp_path / "lenient", env=EPOCH, trust=TRUST)
    assert [w.line() for w in result.warnings] == [
        f"answer-1.json: its snapshot demo (sha256 ffffffffffff…) is not among the snapshots "
        f"in {snapshots}"
    ]
    with pytest.raises(InputError) as caught:
        build_site(reports, snapshots, tmp_path / "strict", strict=True, env=EPOCH, trust=TRUST)
    assert caught.value.message == (
        "1 warning and --strict: answer-1.json: its snapshot demo "
        f"(sha256 ffffffffffff…) is not among the snapshots in {snapshots}"
    )
    assert not (tmp_path / "strict").exists()


def test_a_malformed_report_is_a_one_line_error_naming_the_file(
    tmp_path: Path, inputs: tuple[Path, Path]
) -> None:
    reports, snapshots = inputs
    (reports / "broken.json").write_text('{"verdict": ', encoding="utf-8")
    done = run_cli(
        "site",
        "build",
        "--reports",
        str(reports),
        "--snapshots",
        str(snapshots),
        "--out",
        str(tmp_path / "out"),
    )
    assert done.returncode == 2
    assert done.stderr == (
        "error: malformed report broken.json: not valid JSON (Invalid JSON: EOF while parsing "
        "a value at line 1 column 12)\n"
        "hint: a report is the JSON that `citeseal audit --format json` writes\n"
    )
    (reports / "broken.json").write_text('{"verdict": "fail"}', encoding="utf-8")
    done = run_cli(
        "site",
        "build",
        "--reports",
        str(reports),
        "--snapshots",
        str(snapshots),
        "--out",
        str(tmp_path / "out"),
    )
    assert done.stderr.splitlines()[0] == (
        "error: malformed report broken.json: contract_version: Field required "
        "(and 7 more problems)"
    )


def test_a_failed_build_leaves_the_previous_site_intact(
    tmp_path: Path, inputs: tuple[Path, Path], site: Path
) -> None:
    before = tree(site)
    reports, snapshots = inputs
    (reports / "zz-broken.json").write_text("[]", encoding="utf-8")
    with pytest.raises(InputError):
        build_site(reports, snapshots, site, env=EPOCH, trust=TRUST)
    assert tree(site) == before
    (reports / "zz-broken.json").unlink()
    with pytest.raises(InputError):
        build_site(reports, snapshots, site, env={"SOURCE_DATE_EPOCH": "yesterday"}, trust=TRUST)
    assert tree(site) == before
    assert sorted(p.name for p in site.parent.iterdir() if p.name.startswith(".")) == []


def test_the_cli_builds_prints_warnings_and_strict_fails(
    tmp_path: Path, inputs: tuple[Path, Path]
) -> None:
    reports, snapshots = inputs
    out = tmp_path / "out"
    env = {**os.environ, **EPOCH, "CITESEAL_KEY": TEST_KEY_HEX}
    args = ["site", "build", "--reports", str(reports), "--snapshots", str(snapshots)]
    done = run_cli(*args, "--out", str(out), env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"site: 23 pages (3 reports, 2 snapshots) in {out}/index.html\n"
    document = json.loads((reports / "answer-1.json").read_text(encoding="utf-8"))
    document["snapshot"]["sha256"] = "f" * 64
    (reports / "answer-1.json").write_text(json.dumps(document), encoding="utf-8")
    warning = (
        "answer-1.json: its snapshot demo (sha256 ffffffffffff…) is not among the snapshots "
        f"in {snapshots}"
    )
    done = run_cli(*args, "--out", str(out), env=env)
    assert (done.returncode, done.stderr) == (0, f"warning: {warning}\n")
    done = run_cli(*args, "--out", str(tmp_path / "strict"), "--strict", env=env)
    assert done.returncode == 2
    assert done.stderr == (
        f"warning: {warning}\n"
        f"error: 1 warning and --strict: {warning}\n"
        "hint: fix the inputs, or build without --strict\n"
    )
    assert not (tmp_path / "strict").exists()


def test_the_cli_refuses_a_snapshot_without_its_manifest_and_keeps_the_site(
    tmp_path: Path, inputs: tuple[Path, Path]
) -> None:
    reports, snapshots = inputs
    out = tmp_path / "out"
    env = {**os.environ, **EPOCH, "CITESEAL_KEY": TEST_KEY_HEX}
    args = ["site", "build", "--reports", str(reports), "--snapshots", str(snapshots)]
    assert run_cli(*args, "--out", str(out), env=env).returncode == 0
    before = tree(out)
    (snapshots / "demo" / "demo-20250602.manifest.json").unlink()
    done = run_cli(*args, "--out", str(out), env=env)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"error: snapshot {snapshots}/demo/demo-20250602.duckdb failed its manifest check: "
        "its manifest demo-20250602.manifest.json is missing\n"
        "hint: restore the manifest from where the snapshot came from, or rebuild it\n"
    )
    assert tree(out) == before


def test_the_cli_refuses_to_publish_snapshots_whose_seal_it_cannot_check(
    tmp_path: Path, inputs: tuple[Path, Path]
) -> None:
    reports, snapshots = inputs
    args = ["site", "build", "--reports", str(reports), "--snapshots", str(snapshots)]
    done = run_cli(*args, "--out", str(tmp_path / "out"), env={**os.environ, **EPOCH})
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith(
        f"error: snapshot {snapshots}/demo/demo-20250115.duckdb failed its seal check: no key "
        f"here to check its seal (sealed with key {TEST_KEYRING.fingerprint})\n"
    )
    assert not (tmp_path / "out").exists()


def test_refuses_to_replace_a_folder_it_did_not_build(
    tmp_path: Path, inputs: tuple[Path, Path]
) -> None:
    out = tmp_path / "precious"
    out.mkdir()
    (out / "thesis.txt").write_text("years of work", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        build_site(*inputs, out, env=EPOCH, trust=TRUST)
    assert caught.value.message == (
        f"refusing to replace {out}: it is not a site built by citeseal (no {MARKER} file)"
    )
    assert (out / "thesis.txt").read_text(encoding="utf-8") == "years of work"


def test_a_bad_source_date_epoch_is_named(tmp_path: Path, inputs: tuple[Path, Path]) -> None:
    with pytest.raises(InputError) as caught:
        build_site(*inputs, tmp_path / "out", env={"SOURCE_DATE_EPOCH": "yesterday"}, trust=TRUST)
    assert caught.value.message == (
        "SOURCE_DATE_EPOCH must be a whole number of seconds since 1970, got 'yesterday'"
    )


def test_each_report_is_published_as_json_beside_its_page(
    site: Path, inputs: tuple[Path, Path]
) -> None:
    reports, _ = inputs
    for source in sorted(reports.glob("*.json")):
        page = site / "reports" / f"{source.stem}.html"
        published = json.loads((site / "reports" / source.name).read_text(encoding="utf-8"))
        report = Report.model_validate_json(source.read_bytes())
        assert published == published_report(report, "policy").model_dump(mode="json")
        assert f'<a href="{source.name}">this report as JSON</a>' in page.read_text("utf-8")


def test_snapshot_pages_link_their_release_files_and_say_how_to_re_audit(
    tmp_path: Path, inputs: tuple[Path, Path]
) -> None:
    out = tmp_path / "public"
    build_site(*inputs, out, env=EPOCH, trust=TRUST, archive="octo/evidence")
    html = (out / "snapshots" / "demo-20250602.html").read_text(encoding="utf-8")
    base = "https://github.com/octo/evidence/releases"
    assert f'<a href="{base}/tag/snapshot-demo-20250602">the release</a>' in html
    for name in ("demo-20250602.duckdb", "demo-20250602.manifest.json", "demo-20250602.sha256"):
        assert f'<a href="{base}/download/snapshot-demo-20250602/{name}">{name}</a>' in html
    assert "sha256sum -c demo-20250602.sha256" in html
    assert "citeseal reaudit REPORT.json --snapshot demo-20250602.duckdb" in html
    plain = (tmp_path / "plain").resolve()
    build_site(*inputs, plain, env=EPOCH, trust=TRUST)
    without = (plain / "snapshots" / "demo-20250602.html").read_text(encoding="utf-8")
    assert base not in without and "built without an archive address" in without


def test_the_cli_links_only_a_public_archive(tmp_path: Path, inputs: tuple[Path, Path]) -> None:
    reports, snapshots = inputs
    done = run_cli(
        "site",
        "build",
        "--reports",
        str(reports),
        "--snapshots",
        str(snapshots),
        "--out",
        str(tmp_path / "out"),
        "--archive",
        str(tmp_path / "folder"),
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"error: --archive '{tmp_path / 'folder'}': the site links only a public archive, "
        "github:OWNER/REPO\n"
    )
