"""Every line the CLI prints goes through the terminal sanitiser: hostile titles, passages,
statuses, handles, file names and usage errors reach the terminal escaped, JSON stays equal."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from audit.keys import Keyring
from pipeline.cli import main
from pipeline.cli.output import PIPE_CLOSED_EXIT, OutputClosed, SafeStream, raw, safe_streams
from pipeline.settings import Settings
from pipeline.snapshot.build import build_snapshot
from tests.cli import citeseal
from tests.conftest import ROOT

REPLAY = ROOT / "snapshots" / "demo" / "replay"
EVIL_TITLE = "Evil\x1b]0;pwned\x07 \u202eelttit\u202c trial\x9b2J"
EVIL_SUMMARY = (
    "Zentravir safety.\n1. nct:NCT99000002@forged/trial.x~aaaaa  (score 9.999)\u2066hidden"
)
EVIL_STATUS = "WITHDRAWN\x1b[8m"
UNSAFE = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


def unsafe(text: str) -> list[str]:
    return [c for c in text if c != "\n" and unicodedata.category(c) in UNSAFE]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A snapshot of the demo trials whose NCT99000002 carries escapes, bidi and line breaks."""
    root = tmp_path_factory.mktemp("hostile")
    replay = root / "replay"
    shutil.copytree(REPLAY / "clinicaltrials", replay / "clinicaltrials")
    (exchange,) = (replay / "clinicaltrials").glob("*.json")
    wrapper = json.loads(exchange.read_text(encoding="utf-8"))
    body = json.loads(wrapper["body"])
    for study in body["studies"]:
        section = study["protocolSection"]
        if section["identificationModule"]["nctId"] == "NCT99000002":
            section["identificationModule"]["briefTitle"] = EVIL_TITLE
            section["descriptionModule"]["briefSummary"] = EVIL_SUMMARY
            section["statusModule"]["overallStatus"] = EVIL_STATUS
    wrapper["body"] = json.dumps(body)
    exchange.write_text(json.dumps(wrapper), encoding="utf-8")
    spec = root / "hostile.toml"
    spec.write_text(
        'name = "hostile"\n[clinicaltrials]\nids = ["NCT99000001", "NCT99000002", "NCT99000003"]\n',
        encoding="utf-8",
    )
    demo = Keyring.demo_keyring()  # the commands below read it with --demo-key
    return build_snapshot(
        spec, keyring=demo, replay=[replay], settings=Settings(), resume=False
    ).path


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return citeseal(*args, env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=cwd)


def test_search_output_escapes_hostile_titles_passages_and_statuses(hostile: Path) -> None:
    done = run_cli("search", "zentravir safety", "-s", str(hostile), "--demo-key", "-n", "3")
    assert done.returncode == 0, done.stderr
    assert unsafe(done.stdout) == [] and unsafe(done.stderr) == []
    assert "Evil\\u001b]0;pwned\\u0007 \\u202eelttit\\u202c trial\\u009b2J" in done.stdout
    assert "status WITHDRAWN\\u001b[8m" in done.stdout
    # the line break inside the passage cannot start a line that looks like a search hit
    hits = [line for line in done.stdout.splitlines() if line[:1].isdigit()]
    assert [line.split(".", 1)[0] for line in hits] == ["1", "2", "3"]
    assert "Zentravir safety. 1. nct:NCT99000002@forged" in done.stdout.replace("\n   ", " ")


def test_cite_output_escapes_hostile_text(hostile: Path) -> None:
    done = run_cli("cite", "nct:NCT99000002", "-s", str(hostile), "--demo-key")
    assert done.returncode == 0, done.stderr
    assert unsafe(done.stdout) == []
    first = done.stdout.splitlines()[0]
    assert first == (
        "nct:NCT99000002 @2024-11-20: Evil\\u001b]0;pwned\\u0007 \\u202eelttit\\u202c "
        "trial\\u009b2J"
    )
    assert "; status WITHDRAWN\\u001b[8m" in done.stdout


def test_json_output_is_escaped_and_still_the_same_value(hostile: Path) -> None:
    done = run_cli("cite", "nct:NCT99000002", "-s", str(hostile), "--demo-key", "--json")
    assert done.returncode == 0, done.stderr
    assert unsafe(done.stdout) == []
    record = json.loads(done.stdout)["record"]
    assert (record["title"], record["status"]) == (EVIL_TITLE, EVIL_STATUS)


def test_handle_verify_escapes_the_handle_and_keeps_the_caret_under_the_fault() -> None:
    evil = "pmid:1\u202e/Title\x1b[2J~abcde"
    done = run_cli("handle", "verify", "--demo-key", evil)
    assert done.returncode == 1
    assert unsafe(done.stdout) == []
    line, caret = done.stdout.splitlines()
    assert line == (
        "malformed pmid:1\\u202e/Title\\u001b[2J~abcde: pmid must be 1 to 10 digits without a "
        "leading zero, got '1\\u202e'"
    )
    assert caret == " " * len("malformed pmid:") + "^" * len("1\\u202e")


def test_an_error_message_quoting_hostile_input_is_escaped() -> None:
    done = run_cli("audit", "x\x1b]0;pwned\x07.md", "--snapshot", "s", "--demo-key")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == "error: x\\u001b]0;pwned\\u0007.md: no such file or directory\n"


def test_an_error_naming_a_hostile_file_is_one_line(tmp_path: Path, hostile: Path) -> None:
    name = "answer\x1b[2J\nok: PASS\u202e.md"
    (tmp_path / name).write_bytes(b"\xff not utf-8")
    done = run_cli("audit", name, "-s", str(hostile), "--demo-key", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == ("error: answer\\u001b[2J ok: PASS\\u202e.md: not UTF-8 text (byte 0)\n")


def test_an_html_report_shows_the_answers_controls_as_escapes_on_screen_and_in_a_file(
    tmp_path: Path, hostile: Path
) -> None:
    (tmp_path / "a.md").write_text("Claim \u202eevil\x1b[2J here.\n", encoding="utf-8")
    done = run_cli("audit", "a.md", "-s", str(hostile), "--demo-key", "-f", "html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert unsafe(done.stdout) == []
    assert "Claim \\u202eevil\\u001b[2J here." in done.stdout  # drawn, not obeyed
    flags = ("-s", str(hostile), "--demo-key", "-f", "html", "-o", "out")
    written = run_cli("audit", "a.md", *flags, cwd=tmp_path)
    assert written.returncode == 0, written.stderr
    page = (tmp_path / "out" / "a.html").read_text(encoding="utf-8")
    assert unsafe(page) == []
    assert "Claim \\u202eevil\\u001b[2J here." in page


def test_the_safe_stream_writes_through_the_sanitiser() -> None:
    under = io.StringIO()
    stream = SafeStream(under)
    assert stream.write("a\x1b[1mb\nc") == len("a\x1b[1mb\nc")
    assert under.getvalue() == "a\\u001b[1mb\nc"
    assert raw(stream) is under and raw(under) is under  # type: ignore[arg-type]
    assert not hasattr(stream, "buffer")  # bytes cannot go around it


def test_safe_streams_put_the_streams_back() -> None:
    before = sys.stdout, sys.stderr
    with safe_streams():
        assert isinstance(sys.stdout, SafeStream) and isinstance(sys.stderr, SafeStream)
    assert (sys.stdout, sys.stderr) == before
    with pytest.raises(SystemExit), safe_streams():
        sys.exit(3)
    assert (sys.stdout, sys.stderr) == before


def test_no_cli_module_writes_around_the_error_boundary() -> None:
    """Output is sanitised by main(); a module that printed at import time would escape it."""
    for path in sorted((ROOT / "pipeline" / "cli").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert "sys.stdout.buffer" not in text and "sys.stderr.buffer" not in text, path
        assert "os.write(" not in text, path


def test_verbose_prints_the_traceback_through_the_sanitiser_and_keeps_the_exit_code() -> None:
    done = run_cli("--verbose", "audit", "x\x1b]0;pwned\x07.md", "--snapshot", "s", "--demo-key")
    assert done.returncode == 2
    assert unsafe(done.stderr) == []
    assert done.stderr.startswith("Traceback (most recent call last):\n")
    assert done.stderr.endswith(
        "audit.errors.InputError: x\\u001b]0;pwned\\u0007.md: no such file or directory\n"
    )


class _ClosedPipe(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_stream_without_a_reader_raises_output_closed_naming_it() -> None:
    """Not BrokenPipeError: Click turns any EPIPE OSError into a silent exit 1."""
    for name in ("stdout", "stderr"):
        stream = SafeStream(_ClosedPipe(), name)
        with pytest.raises(OutputClosed) as write_failed:
            stream.write("x")
        with pytest.raises(OutputClosed) as flush_failed:
            stream.flush()
        assert not isinstance(write_failed.value, OSError)
        assert write_failed.value.stream == flush_failed.value.stream == name


def test_a_closed_stderr_stops_the_command_without_a_word(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The closed stream is standard error itself: nothing to say it on, still exit 141."""
    monkeypatch.setattr(sys, "argv", ["citeseal", "snapshot", "build", "/no/such/spec.toml"])
    monkeypatch.setattr(sys, "stderr", _ClosedPipe())
    with pytest.raises(SystemExit) as done:
        main()
    assert done.value.code == PIPE_CLOSED_EXIT == 141
    assert capsys.readouterr().out == ""
