"""`citeseal key init | rotate | id` through the real CLI boundary."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path

import pytest

from audit.keys import fingerprint, read_key_file
from pipeline.cli import main


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


@pytest.fixture
def key_path(tmp_path: Path) -> Path:
    return tmp_path / "citeseal-data" / "key.json"  # the data dir set by tests/conftest.py


def test_init_creates_a_private_key_file(capsys, monkeypatch, key_path: Path) -> None:
    code, out, err = run(capsys, monkeypatch, "key", "init")
    keyring = read_key_file(key_path)
    assert (code, err) == (0, "")
    assert out == f"created key file {key_path}\nkey id {keyring.fingerprint}\n"
    assert stat.S_IMODE(key_path.stat().st_mode) == 0o600


def test_init_refuses_to_overwrite(capsys, monkeypatch, key_path: Path) -> None:
    run(capsys, monkeypatch, "key", "init")
    before = key_path.read_bytes()
    code, out, err = run(capsys, monkeypatch, "key", "init")
    assert (code, out) == (2, "")
    assert err == (
        f"error: key file {key_path} already exists\n"
        "hint: to replace the current key (the old one keeps verifying): citeseal key rotate\n"
    )
    assert key_path.read_bytes() == before


def test_init_honours_citeseal_key_file(capsys, monkeypatch, tmp_path: Path) -> None:
    path = tmp_path / "custom" / "k.json"
    monkeypatch.setenv("CITESEAL_KEY_FILE", str(path))
    code, out, _ = run(capsys, monkeypatch, "key", "init")
    assert code == 0
    assert out.startswith(f"created key file {path}\n")


def test_id_prints_the_fingerprint_only(capsys, monkeypatch, key_path: Path) -> None:
    run(capsys, monkeypatch, "key", "init")
    code, out, err = run(capsys, monkeypatch, "key", "id")
    assert (code, err) == (0, "")
    assert out == f"{read_key_file(key_path).fingerprint}\n"
    key_hex = json.loads(key_path.read_text())["current"]["key"]
    assert key_hex not in out


def test_id_with_the_demo_key(capsys, monkeypatch) -> None:
    code, out, _ = run(capsys, monkeypatch, "key", "id", "--demo-key")
    assert (code, out) == (0, "09e177002fd7 (demo key)\n")


def test_id_json(capsys, monkeypatch, key_path: Path) -> None:
    run(capsys, monkeypatch, "key", "init")
    run(capsys, monkeypatch, "key", "rotate")
    code, out, _ = run(capsys, monkeypatch, "key", "id", "--json")
    keyring = read_key_file(key_path)
    assert code == 0
    assert json.loads(out) == {
        "fingerprint": keyring.fingerprint,
        "demo": False,
        "retired": list(keyring.retired_fingerprints),
        "source": str(key_path),
    }


def test_id_without_a_key(capsys, monkeypatch, key_path: Path) -> None:
    code, out, err = run(capsys, monkeypatch, "key", "id")
    assert (code, out) == (2, "")
    assert err == f"error: no key file at {key_path}\nhint: create one with: citeseal key init\n"
    assert not key_path.exists()


def test_world_readable_key_file_is_refused(capsys, monkeypatch, key_path: Path) -> None:
    run(capsys, monkeypatch, "key", "init")
    key_path.chmod(0o644)
    code, out, err = run(capsys, monkeypatch, "key", "id")
    assert (code, out) == (2, "")
    assert err == (
        f"error: key file {key_path} is accessible to group or others (mode 0644)\n"
        f"hint: make it private with: chmod 600 {key_path}\n"
    )


def test_rotate_keeps_old_handles_verifying(capsys, monkeypatch, key_path: Path) -> None:
    run(capsys, monkeypatch, "key", "init")
    old = read_key_file(key_path).fingerprint
    _, handle, _ = run(capsys, monkeypatch, "handle", "mint", "pmid:99000001/title")
    code, out, err = run(capsys, monkeypatch, "key", "rotate")
    new = read_key_file(key_path)
    assert (code, err) == (0, "")
    assert out == (
        f"rotated key file {key_path}\nkey id {new.fingerprint} (retired keys still verifying: 1)\n"
    )
    assert new.retired_fingerprints == (old,)
    code, out, _ = run(capsys, monkeypatch, "handle", "verify", handle.strip())
    assert (code, out) == (0, f"ok {handle.strip()}\n")


def test_rotate_refuses_when_citeseal_key_is_set(capsys, monkeypatch) -> None:
    monkeypatch.setenv("CITESEAL_KEY", "ab" * 32)
    code, _, err = run(capsys, monkeypatch, "key", "rotate")
    assert code == 2
    assert err == (
        "error: CITESEAL_KEY is set, so the key file is not used\n"
        "hint: rotate an environment key by putting the new key first: CITESEAL_KEY=NEW,OLD\n"
    )


def test_citeseal_key_hex(capsys, monkeypatch, key_path: Path) -> None:
    monkeypatch.setenv("CITESEAL_KEY", "ab" * 32)
    code, out, _ = run(capsys, monkeypatch, "key", "id")
    assert (code, out) == (0, f"{fingerprint(bytes.fromhex('ab' * 32))}\n")
    assert not key_path.exists()


def test_citeseal_key_base64(capsys, monkeypatch) -> None:
    monkeypatch.setenv("CITESEAL_KEY", "emVudHJhdmlyLWtleS1mb3ItdGVzdHMtb25seS0wMDAx")
    code, out, _ = run(capsys, monkeypatch, "key", "id")
    assert (code, out) == (0, f"{fingerprint(b'zentravir-key-for-tests-only-0001')}\n")


def test_citeseal_key_too_short(capsys, monkeypatch) -> None:
    monkeypatch.setenv("CITESEAL_KEY", "ab" * 16)
    code, out, err = run(capsys, monkeypatch, "key", "id")
    assert (code, out) == (2, "")
    assert err == (
        "error: CITESEAL_KEY holds a 16-byte key; a key needs at least 32 bytes\n"
        "hint: generate one with: python3 -c 'import secrets; print(secrets.token_hex(32))'\n"
    )
