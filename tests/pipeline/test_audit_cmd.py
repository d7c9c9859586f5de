"""``citeseal audit`` and ``citeseal schema report`` through the CLI's error boundary."""

from __future__ import annotations

import gc
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import audit
from audit.keys import Keyring
from audit.report import Report
from pipeline.cli import main
from pipeline.collector import GC_THRESHOLD
from tests.audit.planted import h, make_corpus, write_snapshot

GOOD = h("pmid:99000001/abstract.3")
FORGED = GOOD[:-1] + ("0" if GOOD[-1] != "0" else "1")
PASSING = f"A cohort found no increased risk [{GOOD}].\n"
WARNING = f"A cohort found no increased risk [{GOOD}]. Nobody cited this.\n"
FAILING = f"A cohort found no increased risk [{FORGED}].\n"
INCOMPLETE = f"A cohort found no increased risk [{h('pmid:99000999/abstract.1')}].\n"


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_snapshot(make_corpus(), tmp_path_factory.mktemp("snap") / "planted.duckdb")


def run(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    *args: str,
    stdin: bytes | None = None,
) -> tuple[int, str, str]:
    """Run ``citeseal ARGS`` in-process through ``main()``; (exit code, stdout, stderr)."""
    monkeypatch.setattr(sys, "argv", ["citeseal", *args])
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    code = 0
    try:
        main()
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("answer", "code", "verdict"),
    [
        (PASSING, 0, "PASS"),
        (WARNING, 0, "WARN"),
        (INCOMPLETE, 0, "INCOMPLETE"),
        (FAILING, 1, "FAIL"),
    ],
    ids=["pass", "warn", "incomplete", "fail"],
)
def test_exit_code_follows_the_verdict(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    snapshot: Path,
    answer: str,
    code: int,
    verdict: str,
) -> None:
    path = write(tmp_path, "answer.md", answer)
    done, out, err = run(monkeypatch, capsys, "audit", str(path), "-s", str(snapshot), "--demo-key")
    assert (done, err) == (code, "")
    assert out.splitlines()[0].startswith(f"verdict: {verdict}  (1 citation: ")


def test_fail_on_incomplete_exits_1_and_names_the_unchecked_citation(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    snapshot: Path,
) -> None:
    path = write(tmp_path, "answer.md", INCOMPLETE)
    args = ("audit", str(path), "-s", str(snapshot), "--demo-key")
    done, out, err = run(monkeypatch, capsys, *args, "--fail-on", "incomplete", "--format", "json")
    report = json.loads(out)
    assert (done, err) == (1, "")
    assert (report["verdict"], report["verdict_reasons"]) == (
        "fail",
        ["fail: 1 unavailable citation", "warn: 1 sentence with only invalid citations"],
    )
    assert report["fail_on"] == ["malformed", "forged", "incomplete"]
    done, out, _ = run(monkeypatch, capsys, *args, "--fail-on", "incomplete")
    assert out.splitlines()[0] == (
        "verdict: FAIL  (1 citation: 1 unavailable)  --fail-on: 1 unavailable citation"
    )


def test_text_report_lines(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    snapshot: Path,
) -> None:
    answer = (
        f'One [{GOOD} "312 children were diagnosed"]. Two [{FORGED}]. '
        "Three [pmid:99000001-abstract]. Four.\n"
    )
    path = write(tmp_path, "answer.md", answer)
    done, out, _ = run(monkeypatch, capsys, "audit", str(path), "-s", str(snapshot), "--demo-key")
    lines = out.splitlines()
    assert done == 1
    assert lines[0] == "verdict: FAIL  (3 citations: 1 malformed, 1 forged, 1 ok)"
    assert lines[1] == (
        "fabricated: 2  retracted cited: 0  cited sentences: 1/4  verbatim quotes: 1/1"
    )
    assert lines[2].startswith("snapshot: planted (sha256 ")
    assert lines[2].endswith("(DEMO KEY: public, anyone can mint these handles)")
    assert lines[3:] == [
        "[1] cited: One.",
        f'    ok             {GOOD} "312 children were diagnosed"',
        "                   support: not_checked",
        "[2] invalid_only: Two.",
        f"    forged         {FORGED}",
        "[3] invalid_only: Three.",
        "    malformed      pmid:99000001-abstract",
        "[4] uncited: Four.",
    ]


def test_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], snapshot: Path
) -> None:
    done, out, _ = run(
        monkeypatch,
        capsys,
        "audit",
        "-",
        "-s",
        str(snapshot),
        "--demo-key",
        "-f",
        "json",
        stdin=PASSING.encode(),
    )
    report = Report.model_validate_json(out)
    assert (done, report.source, report.verdict) == (0, "-", "pass")


def test_claims_json(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    snapshot: Path,
) -> None:
    claims = [{"sentence": "A cohort.", "citations": [{"handle": GOOD, "quote": "312 children"}]}]
    path = write(tmp_path, "claims.json", json.dumps(claims))
    done, out, err = run(
        monkeypatch, capsys, "audit", str(path), "-s", str(snapshot), "--demo-key", "-f", "json"
    )
    report = Report.model_validate_json(out)
    assert (done, err, report.verdict) == (0, "", "pass")
    assert report.sentences[0].citations[0].checked_against == "issued"


def test_directory_with_out_writes_one_report_each_and_prints_summaries(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    snapshot: Path,
) -> None:
    answers = tmp_path / "answers"
    answers.mkdir()
    write(answers, "a.md", PASSING)
    write(answers, "b.txt", FAILING)
    write(answers, "b.md", WARNING)
    write(answers, "notes.csv", "ignored")
    out = tmp_path / "reports"
    done, stdout, err = run(
        monkeypatch,
        capsys,
        "audit",
        str(answers),
        "-s",
        str(snapshot),
        "--demo-key",
        "-f",
        "json",
        "--out",
        str(out),
    )
    assert (done, err) == (1, "")
    assert stdout.splitlines() == [
        f"{answers / 'a.md'}: PASS  (1 citation: 1 ok)",
        f"{answers / 'b.md'}: WARN  (1 citation: 1 ok)",
        f"{answers / 'b.txt'}: FAIL  (1 citation: 1 forged)",
    ]
    assert sorted(p.name for p in out.iterdir()) == ["a.json", "b.json", "b.txt.json"]
    verdicts = {
        p.name: Report.model_validate_json(p.read_text(encoding="utf-8")).verdict
        for p in out.iterdir()
    }
    assert verdicts == {"a.json": "pass", "b.json": "warn", "b.txt.json": "fail"}


def test_answers_are_audited_with_the_collector_paced_and_its_pace_restored(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    snapshot: Path,
) -> None:
    from audit import engine

    seen: list[int] = []
    audit_many = engine.audit_many

    def spy(*args: Any, **kwargs: Any) -> Iterator[Report]:
        seen.append(gc.get_threshold()[0])
        yield from audit_many(*args, **kwargs)

    monkeypatch.setattr(engine, "audit_many", spy)
    before = gc.get_threshold()
    path = write(tmp_path, "answer.md", PASSING)
    done, out, err = run(monkeypatch, capsys, "audit", str(path), "-s", str(snapshot), "--demo-key")
    assert (done, err, out.splitlines()[0][:14]) == (0, "", "verdict: PASS ")
    assert seen == [GC_THRESHOLD]
    assert (gc.get_threshold(), gc.get_freeze_count()) == (before, 0)


def test_bad_input_among_good_ones_exits_2_and_audits_the_rest(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    snapshot: Path,
) -> None:
    good = write(tmp_path, "good.md", PASSING)
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"\xff\xfe not utf-8")
    done, out, err = run(
        monkeypatch, capsys, "audit", str(bad), str(good), "-s", str(snapshot), "--demo-key"
    )
    assert done == 2
    assert err == f"error: {bad}: not UTF-8 text (byte 0)\n"
    assert f"== {good}: PASS  (1 citation: 1 ok)" in out
    bad.write_bytes(b"\xef\xbb\xbfClaim \xff.")  # after a byte order mark: the file's offset
    done, out, err = run(monkeypatch, capsys, "audit", str(bad), "-s", str(snapshot), "--demo-key")
    assert (done, err) == (2, f"error: {bad}: not UTF-8 text (byte 9)\n")


def test_several_json_reports_without_out_are_json_lines(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    snapshot: Path,
) -> None:
    paths = [str(write(tmp_path, f"{n}.md", PASSING)) for n in ("x", "y")]
    done, out, _ = run(
        monkeypatch, capsys, "audit", *paths, "-s", str(snapshot), "--demo-key", "-f", "json"
    )
    reports = [Report.model_validate_json(line) for line in out.splitlines()]
    # outside the working folder, a report names its input by file name only
    assert (done, [r.source for r in reports]) == (0, [Path(p).name for p in paths])


def test_fail_on_uncited(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    snapshot: Path,
) -> None:
    path = write(tmp_path, "answer.md", WARNING)
    args = ("audit", str(path), "-s", str(snapshot), "--demo-key", "-f", "json")
    done, out, _ = run(monkeypatch, capsys, *args, "--fail-on", "uncited,retracted")
    report = Report.model_validate_json(out)
    assert (done, report.verdict) == (1, "fail")
    assert report.fail_on == ["malformed", "forged", "uncited", "retracted"]
    assert report.verdict_reasons == ["fail: 1 uncited sentence"]


def test_markdown_and_reproducible_time(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    snapshot: Path,
) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1748822400")
    path = write(tmp_path, "answer.md", "A *claim* <b>x</b> [" + GOOD + "].\n")
    done, out, _ = run(
        monkeypatch, capsys, "audit", str(path), "-s", str(snapshot), "--demo-key", "-f", "md"
    )
    assert done == 0
    assert "2025-06-02T00:00:00Z" in out
    assert "1. **cited**: A \\*claim\\* \\<b\\>x\\</b\\>." in out
    assert f"   - **ok** `{GOOD}`" in out


def test_html_format(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    snapshot: Path,
) -> None:
    path = write(tmp_path, "answer.md", "A claim <script>x</script> [" + GOOD + "].\n")
    done, out, _ = run(
        monkeypatch, capsys, "audit", str(path), "-s", str(snapshot), "--demo-key", "-f", "html"
    )
    assert done == 0
    assert out.lstrip().lower().startswith("<!doctype html>")
    assert "<script>x</script>" not in out


def test_snapshot_folder_uses_the_newest_file(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    write_snapshot(make_corpus(), folder / "demo-20250101T000000Z.duckdb", name="old")
    write_snapshot(make_corpus(), folder / "demo-20250602T000000Z.duckdb", name="new")
    path = write(tmp_path, "answer.md", PASSING)
    done, out, _ = run(
        monkeypatch, capsys, "audit", str(path), "-s", str(folder), "--demo-key", "-f", "json"
    )
    assert (done, Report.model_validate_json(out).snapshot.name) == (0, "new")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("nope.md",), "error: nope.md: no such file or directory"),
        (("-", "-"), "error: stdin ('-') can be given only once"),
        (
            ("{answer}", "--fail-on", "typo"),
            "error: unknown --fail-on value 'typo' (expected one of malformed, forged, "
            "unavailable, withdrawn, quote_mismatch, uncited, invalid_only, retracted, "
            "expression_of_concern, preprint, version_changed, not_refreshed, contradicted, "
            "hallucinated, mismatch, unresolved, incomplete)",
        ),
        (
            ("{answer}", "{answer}", "-f", "html"),
            "error: --format html with several inputs needs --out DIR",
        ),
        (("{empty}",), "error: {empty} holds no answers (.md, .markdown, .txt, .json files)"),
    ],
    ids=["missing-file", "stdin-twice", "bad-fail-on", "html-many", "empty-folder"],
)
def test_bad_usage_is_one_line(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    snapshot: Path,
    args: tuple[str, ...],
    message: str,
) -> None:
    answer = write(tmp_path, "answer.md", PASSING)
    empty = tmp_path / "empty"
    empty.mkdir()
    names = {"answer": str(answer), "empty": str(empty)}
    argv = [a.format(**names) for a in args]
    done, out, err = run(monkeypatch, capsys, "audit", *argv, "-s", str(snapshot), "--demo-key")
    assert (done, out) == (2, "")
    assert err.splitlines()[0] == message.format(**names)


def test_missing_snapshot(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(tmp_path, "answer.md", PASSING)
    missing = tmp_path / "none.duckdb"
    done, _, err = run(monkeypatch, capsys, "audit", str(path), "-s", str(missing), "--demo-key")
    assert done == 2
    assert err == (
        f"error: snapshot {missing} does not exist\n"
        "hint: build one with: citeseal snapshot build snapshots/demo.toml\n"
    )


def test_without_a_key_the_audit_says_how_to_make_one(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    snapshot: Path,
) -> None:
    path = write(tmp_path, "answer.md", PASSING)
    done, out, err = run(monkeypatch, capsys, "audit", str(path), "-s", str(snapshot))
    key_file = tmp_path / "citeseal-data" / "key.json"
    assert (done, out) == (2, "")
    assert err == f"error: no key file at {key_file}\nhint: create one with: citeseal key init\n"
    assert not key_file.exists()  # a fresh key would call every handle forged: none is made


def test_schema_report_prints_the_committed_schema(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    done, out, _ = run(monkeypatch, capsys, "schema", "report")
    golden = Path(audit.__file__).parent / "schemas" / "report.schema.json"
    assert (done, out) == (0, golden.read_text(encoding="utf-8"))


def test_real_process_reads_stdin_and_shows_no_traceback(tmp_path: Path, snapshot: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from pipeline.cli import main; main()",
            "audit",
            "-",
            "-s",
            str(snapshot),
            "--demo-key",
            "--claims",
        ],
        input="not json",
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error: -: claims JSON is not valid JSON: ")
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("size", "message"),
    [
        (200_001, "answer is 200,001 characters long (limit 200,000)"),
        (800_001, "answer is over 800,000 bytes (limit 200,000 characters)"),
    ],
    ids=["too-many-characters", "too-many-bytes"],
)
def test_oversized_answer_is_refused(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    snapshot: Path,
    size: int,
    message: str,
) -> None:
    path = write(tmp_path, "big.md", "x" * size)
    done, out, err = run(monkeypatch, capsys, "audit", str(path), "-s", str(snapshot), "--demo-key")
    assert (done, out, err) == (2, "", f"error: {path}: {message}\n")


# --- no silent drops, no silent pass (issue 12 §1) --------------------------------------------

BAD_CLAIMS = {
    "unknown-key": (
        '{"citatoins": []}',
        "claims JSON: unknown key 'citatoins' (expected 'claims')",
    ),
    "claim-key": (
        f'[{{"sentence": "A cohort.", "citatoins": ["{GOOD}"]}}]',
        "claims JSON: claim 1: unknown key 'citatoins' (expected 'sentence', 'kind', 'citations')",
    ),
    "wrong-type": (
        '[{"sentence": 3}]',
        "claims JSON: claim 1: 'sentence' must be a string",
    ),
    "deep-nesting": (
        "[" * 100_000 + "]" * 100_000,
        "claims JSON nests 100,000 levels deep (limit 32)",
    ),
    "lone-surrogate": (
        '[{"sentence": "A cohort \\ud800."}]',
        "claims JSON: claim 1: 'sentence' holds a lone surrogate (\\ud800), not valid Unicode",
    ),
    "no-claims": ("[]", "nothing to audit: claims JSON holds no claims"),
}


@pytest.mark.parametrize("fmt", ["text", "json", "md", "html"])
@pytest.mark.parametrize("case", sorted(BAD_CLAIMS))
def test_bad_claims_json_is_one_line_exit_2_in_every_format(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    snapshot: Path,
    case: str,
    fmt: str,
) -> None:
    data, message = BAD_CLAIMS[case]
    path = write(tmp_path, "claims.json", data)
    done, out, err = run(
        monkeypatch, capsys, "audit", str(path), "-s", str(snapshot), "--demo-key", "-f", fmt
    )
    assert (done, out, err) == (2, "", f"error: {path}: {message}\n")


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("", "nothing to audit: the answer is empty"),
        (
            "# Zentravir\n\n## Safety\n",
            "nothing to audit: the answer has no sentence and no citation",
        ),
    ],
    ids=["empty", "only-headings"],
)
def test_answer_with_nothing_to_audit_exits_2_and_the_others_are_still_audited(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    snapshot: Path,
    answer: str,
    message: str,
) -> None:
    empty = write(tmp_path, "a-empty.md", answer)
    good = write(tmp_path, "b-good.md", PASSING)
    done, out, err = run(
        monkeypatch, capsys, "audit", str(empty), str(good), "-s", str(snapshot), "--demo-key"
    )
    assert (done, err) == (2, f"error: {empty}: {message}\n")
    assert out.startswith(f"== {good}: PASS  (1 citation: 1 ok)\n")


@pytest.mark.parametrize(
    ("answer", "line"),
    [
        (
            f"Risk was unchanged ({GOOD}; see also [1]).\n\n[1]: {FORGED}\n",
            f"    forged         {FORGED}",
        ),
        (
            f"Risk was unchanged [{GOOD}].\n\n```{FORGED}\ncode\n```\n",
            f"    forged         {FORGED}",
        ),
        (
            f"Risk was unchanged [{GOOD}]. So said \uff50\uff4d\uff49\uff44{GOOD[4:]}.\n",
            f"    malformed      \uff50\uff4d\uff49\uff44{GOOD[4:]}",
        ),
    ],
    ids=["footnote-in-a-group", "fence-info-string", "fullwidth-lookalike"],
)
def test_a_hidden_bad_citation_fails_the_audit_instead_of_passing(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    snapshot: Path,
    answer: str,
    line: str,
) -> None:
    path = write(tmp_path, "answer.md", answer)
    done, out, err = run(monkeypatch, capsys, "audit", str(path), "-s", str(snapshot), "--demo-key")
    assert (done, err) == (1, "")
    assert out.startswith("verdict: FAIL  (2 citations: ")
    assert line in out.splitlines()


def test_real_process_refuses_deep_and_surrogate_claims_without_a_traceback(
    tmp_path: Path, snapshot: Path
) -> None:
    folder = tmp_path / "claims"
    folder.mkdir()
    write(folder, "deep.json", BAD_CLAIMS["deep-nesting"][0])
    write(folder, "surrogate.json", BAD_CLAIMS["lone-surrogate"][0])
    command = ["audit", str(folder), "-s", str(snapshot), "--demo-key", "--format", "json"]
    done = subprocess.run(
        [sys.executable, "-c", "from pipeline.cli import main; main()", *command],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.splitlines() == [
        f"error: {folder / 'deep.json'}: {BAD_CLAIMS['deep-nesting'][1]}",
        f"error: {folder / 'surrogate.json'}: {BAD_CLAIMS['lone-surrogate'][1]}",
    ]


@pytest.fixture(scope="module")
def partial_snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo corpus built while Crossref could not answer one request (--allow-partial)."""
    import shutil

    from pipeline.settings import Settings
    from pipeline.snapshot.build import build_snapshot
    from tests.pipeline.snapshot.conftest import DEMO_REPLAY, copy_demo_spec

    base = tmp_path_factory.mktemp("partial")
    replay = Path(shutil.copytree(DEMO_REPLAY, base / "replay"))
    (replay / "crossref" / "works-f3c631259611.json").unlink()  # 10.5555/demo.0002's notices
    spec = copy_demo_spec(base)
    settings = Settings(data_dir=base / "data")
    return build_snapshot(
        spec,
        keyring=Keyring.demo_keyring(),  # read below with --demo-key
        replay=[replay],
        allow_partial=True,
        settings=settings,
        resume=False,
    ).path


def test_a_report_against_a_partial_snapshot_says_so_in_every_format(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    partial_snapshot: Path,
) -> None:
    path = write(tmp_path, "answer.md", PASSING)
    base = ("audit", str(path), "-s", str(partial_snapshot), "--demo-key", "--format")
    done, text, _ = run(monkeypatch, capsys, *base, "text")
    assert done == 0
    assert text.splitlines()[3] == (
        "warning: partial snapshot (crossref partial): records whose refresh failed are as an "
        "earlier snapshot of the lineage had them"
    )
    _, md, _ = run(monkeypatch, capsys, *base, "md")
    assert (
        "**Warning:** partial snapshot \\(crossref partial\\): records whose refresh failed are "
        "as an earlier snapshot of the lineage had them."
    ) in md.splitlines()
    _, js, _ = run(monkeypatch, capsys, *base, "json")
    snapshot = json.loads(js)["snapshot"]
    assert (snapshot["partial"], snapshot["incomplete_sources"]) == (True, {"crossref": "partial"})
    _, html, _ = run(monkeypatch, capsys, *base, "html")
    assert (
        '<p class="notice" role="note"><strong>Warning:</strong> partial snapshot (crossref '
        "partial): records whose refresh failed are as an earlier snapshot of the lineage had "
        "them.</p>"
    ) in html


def test_audit_checks_the_answers_ordinary_references_against_the_snapshot(
    demo_pair: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from pipeline.cli import app
    from tests.conftest import TEST_KEY_HEX
    from tests.pipeline.check_demo_golden import DOCUMENT, golden_path

    monkeypatch.setenv("CITESEAL_KEY", TEST_KEY_HEX)
    monkeypatch.chdir(DOCUMENT.parent)
    args = ["audit", DOCUMENT.name, "--snapshot", str(demo_pair[0]), "--format", "json"]
    result = CliRunner().invoke(app, args)
    assert (result.exit_code, result.stderr) == (1, "")  # two hallucinated references fail it
    report = json.loads(result.stdout)
    golden = json.loads(golden_path("json").read_text(encoding="utf-8"))
    assert report["references"]["counts"] == golden["counts"]  # exactly citeseal check's tiers
    checks = [item["check"] for item in report["references"]["references"]]
    assert [c["tier"] for c in checks] == [c["tier"] for c in golden["documents"][0]["references"]]
    assert report["verdict_reasons"][:3] == [
        "fail: 2 hallucinated references",
        "incomplete: 1 unresolved reference",
        "warn: 1 reference that disagrees with its record",
    ]
    Report.model_validate(report)
    again = CliRunner().invoke(
        app, ["audit", DOCUMENT.name, "--snapshot", str(demo_pair[0]), "--fail-on", "mismatch"]
    )
    assert again.stdout.splitlines()[0] == (
        "verdict: FAIL  (0 citations; 11 references: 2 hallucinated, 1 mismatch, 1 unresolved, "
        "2 needs_review, 5 verified)  --fail-on: 1 reference that disagrees with its record"
    )


def _with_closed_stdout(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``citeseal ARGS`` in a real process whose standard output has no reader (``| true``)."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # every write to the pipe is now EPIPE
    try:
        return subprocess.run(
            [sys.executable, "-c", "from pipeline.cli import main; main()", *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    finally:
        os.close(write_end)


def test_a_closed_output_pipe_is_one_line_and_exit_141_not_a_failed_audit(
    tmp_path: Path, snapshot: Path
) -> None:
    """``citeseal audit DIR | head`` used to exit 1 silently, which a script reads as "an answer
    failed"; it is the shell's 141 with one line saying why the output stopped."""
    answers = tmp_path / "answers"
    answers.mkdir()
    for n in range(3):
        write(answers, f"a{n}.md", PASSING)
    done = _with_closed_stdout("audit", str(answers), "-s", str(snapshot), "--demo-key")
    assert done.returncode == 141
    assert done.stderr.splitlines() == [
        "error: standard output was closed before citeseal finished writing (broken pipe); "
        "nothing more was written"
    ]


def test_a_closed_output_pipe_keeps_the_reports_already_written(
    tmp_path: Path, snapshot: Path
) -> None:
    """With ``--out`` the first summary line meets the closed pipe after its report is written
    whole (atomically); nothing half-written is left behind."""
    answers = tmp_path / "answers"
    answers.mkdir()
    for n in range(3):
        write(answers, f"a{n}.md", PASSING)
    out = tmp_path / "reports"
    done = _with_closed_stdout(
        "audit", str(answers), "-s", str(snapshot), "--demo-key", "-f", "json", "--out", str(out)
    )
    assert done.returncode == 141
    assert "Traceback" not in done.stderr
    written = sorted(out.iterdir())
    assert [p.name for p in written] == ["a0.json"]  # the summary of a0 hit the closed pipe
    assert Report.model_validate_json(written[0].read_text(encoding="utf-8")).verdict == "pass"
