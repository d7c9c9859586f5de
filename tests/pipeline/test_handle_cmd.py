"""`citeseal handle mint | verify` through the real CLI boundary."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from audit.handles import parse_handle, verify
from audit.keys import Keyring, read_key_file
from pipeline.cli import main

ROOT = Path(__file__).resolve().parents[2]
CITESEAL = ROOT / ".venv" / "bin" / "citeseal"


def run(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str):
    """Run ``citeseal ARGS`` in-process through main(); (exit code, stdout, stderr)."""
    monkeypatch.setattr(sys, "argv", ["citeseal", *args])
    try:
        main()
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    captured = capsys.readouterr()
    return code, captured.out, captured.err


DEMO_HANDLE = "pmid:30831578/abstract.7~wk9p5"


def test_mint_with_the_demo_key(capsys, monkeypatch) -> None:
    code, out, err = run(
        capsys, monkeypatch, "handle", "mint", "--demo-key", "pmid:30831578/abstract.7"
    )
    assert (code, out) == (0, f"{DEMO_HANDLE}\n")
    assert err == "note: minted with the public demo key: anyone can forge these\n"


def test_mint_creates_the_key_on_first_use(capsys, monkeypatch, tmp_path: Path) -> None:
    key_path = tmp_path / "citeseal-data" / "key.json"
    locator = "nct:NCT99000001@2025-06-02/trial.brief_summary.1"
    code, out, err = run(capsys, monkeypatch, "handle", "mint", locator)
    keyring = read_key_file(key_path)
    assert code == 0
    assert err == f"note: created key file {key_path} (key id {keyring.fingerprint})\n"
    assert verify(keyring, parse_handle(out.strip()))
    assert out.startswith(locator + "~")
    code, again, err = run(capsys, monkeypatch, "handle", "mint", locator)
    assert (code, again, err) == (0, out, "")


def test_mint_several_locators(capsys, monkeypatch) -> None:
    code, out, _ = run(
        capsys,
        monkeypatch,
        "handle",
        "mint",
        "--demo-key",
        "pmid:30831578/abstract.7",
        "setid:5eed0001-0000-4000-8000-000000000001@4/label.boxed_warning.1",
    )
    lines = out.splitlines()
    assert code == 0 and len(lines) == 2 and lines[0] == DEMO_HANDLE
    assert verify(Keyring.demo_keyring(), parse_handle(lines[1]))


def test_mint_rejects_a_bad_locator_with_a_caret(capsys, monkeypatch, tmp_path: Path) -> None:
    code, out, err = run(capsys, monkeypatch, "handle", "mint", "nct:NCT123/trial.x")
    assert (code, out) == (2, "")
    assert err == (
        "error: nct id must be NCT followed by 8 digits, got 'NCT123'\n"
        "nct:NCT123/trial.x\n"
        "    ^^^^^^\n"
    )
    assert not (tmp_path / "citeseal-data" / "key.json").exists()


def test_verify_ok_forged_malformed(capsys, monkeypatch) -> None:
    forged = "pmid:30831578/abstract.7~wk9p6"
    code, out, err = run(
        capsys,
        monkeypatch,
        "handle",
        "verify",
        "--demo-key",
        DEMO_HANDLE,
        forged,
        "pmd:1/title~abcde",
    )
    assert (code, err) == (1, "")
    assert out == (
        f"ok {DEMO_HANDLE}\n"
        f"forged {forged}\n"
        "malformed pmd:1/title~abcde: unknown scheme 'pmd' "
        "(expected one of pmid, pmcid, ppr, nct, setid, local)\n"
        "          ^^^\n"
    )


def test_verify_all_ok_exits_zero(capsys, monkeypatch) -> None:
    code, out, _ = run(capsys, monkeypatch, "handle", "verify", "--demo-key", DEMO_HANDLE)
    assert (code, out) == (0, f"ok {DEMO_HANDLE}\n")


def test_verify_demo_handle_with_a_real_key_is_forged(capsys, monkeypatch) -> None:
    monkeypatch.setenv("CITESEAL_KEY", "cd" * 32)
    code, out, _ = run(capsys, monkeypatch, "handle", "verify", DEMO_HANDLE)
    assert (code, out) == (1, f"forged {DEMO_HANDLE}\n")


def test_verify_json(capsys, monkeypatch) -> None:
    code, out, _ = run(
        capsys,
        monkeypatch,
        "handle",
        "verify",
        "--demo-key",
        "--json",
        DEMO_HANDLE,
        "pmid:1/title",
    )
    assert code == 1
    assert json.loads(out) == [
        {"handle": DEMO_HANDLE, "verdict": "ok", "reason": None, "span": None},
        {
            "handle": "pmid:1/title",
            "verdict": "malformed",
            "reason": "missing check code: expected '~' followed by 5 characters",
            "span": [12, 13],
        },
    ]


def test_verify_without_a_key_does_not_create_one(capsys, monkeypatch, tmp_path: Path) -> None:
    key_path = tmp_path / "citeseal-data" / "key.json"
    code, out, err = run(capsys, monkeypatch, "handle", "verify", DEMO_HANDLE)
    assert (code, out) == (2, "")
    assert err == f"error: no key file at {key_path}\nhint: create one with: citeseal key init\n"
    assert not key_path.exists()


def test_demo_key_from_the_environment(capsys, monkeypatch) -> None:
    monkeypatch.setenv("CITESEAL_DEMO_KEY", "1")
    code, out, _ = run(capsys, monkeypatch, "handle", "verify", DEMO_HANDLE)
    assert (code, out) == (0, f"ok {DEMO_HANDLE}\n")


@pytest.mark.skipif(not CITESEAL.exists(), reason="console script not installed in .venv")
def test_console_script_shows_the_failing_part_of_a_malformed_handle(tmp_path: Path) -> None:
    env = {**os.environ, "CITESEAL_DATA_DIR": str(tmp_path)}
    done = subprocess.run(
        [str(CITESEAL), "handle", "verify", "--demo-key", "nct:NCT123/trial.x~abcde"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr == ""
    assert done.stdout == (
        "malformed nct:NCT123/trial.x~abcde: nct id must be NCT followed by 8 digits, "
        "got 'NCT123'\n"
        "              ^^^^^^\n"
    )


def test_handle_mint_refuses_an_unpinned_trial_locator(capsys, monkeypatch) -> None:
    code, out, err = run(
        capsys, monkeypatch, "handle", "mint", "--demo-key", "nct:NCT99000001/trial.brief_summary.1"
    )
    assert (code, out) == (2, "")
    assert err == (
        "error: nct handles pin the record version: expected '@' and a version after the id, "
        "got '/'\n"
        "nct:NCT99000001/trial.brief_summary.1\n"
        "               ^\n"
    )
