"""The keyring: check codes, retired keys, key text, the key file, rotation."""

from __future__ import annotations

import base64
import errno
import hashlib
import hmac
import json
import os
import re
import stat
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.errors import KeyringError
from audit.keys import (
    CHECK_ALPHABET,
    DEMO_KEY,
    Keyring,
    create_key_file,
    fingerprint,
    keyring_from_text,
    load_keyring,
    parse_key_text,
    read_key_file,
    rotate_key_file,
)

KEY_A = bytes(range(32))
KEY_B = bytes(range(100, 140))


@dataclass(frozen=True)
class FakeSettings:
    data_dir: Path
    key_file: Path | None = None


def reference_check(key: bytes, message: str) -> str:
    """The check code computed the slow, obvious way (independent of audit.keys)."""
    digest = hmac.new(key, message.encode(), hashlib.sha256).digest()
    bits = int.from_bytes(digest[:4], "big") >> 7
    return "".join(CHECK_ALPHABET[(bits >> shift) & 31] for shift in (20, 15, 10, 5, 0))


def test_check_alphabet_is_crockford_lower_case() -> None:
    assert CHECK_ALPHABET == "0123456789abcdefghjkmnpqrstvwxyz"


@pytest.mark.parametrize(
    "key",
    [KEY_A, b"x" * 64, b"y" * 65, bytes((i * 37 + 11) % 256 for i in range(100))],
    ids=["32-byte", "64-byte", "65-byte", "100-byte"],
)
@pytest.mark.parametrize(
    "message", ["pmid:1/title", "nct:NCT99000001@2025-06-02/trial.arms.1", "é"]
)
def test_check_code_is_first_25_bits_of_hmac_sha256(key: bytes, message: str) -> None:
    keyring = Keyring.from_keys(key)
    assert keyring.check_code(message) == reference_check(key, message)
    assert keyring.verifies(message, reference_check(key, message))


def test_current_key_signs_and_retired_keys_verify() -> None:
    keyring = Keyring.from_keys(KEY_B, [KEY_A])
    message = "pmid:99000001/title"
    assert keyring.check_code(message) == reference_check(KEY_B, message)
    assert keyring.verifies(message, reference_check(KEY_A, message))
    assert keyring.verifies(message, reference_check(KEY_B, message))
    assert not Keyring.from_keys(KEY_B).verifies(message, reference_check(KEY_A, message))


@pytest.mark.parametrize("check", ["", "abcd", "abcdef", "ÄBCDE", "ABCDE"])
def test_verifies_rejects_wrong_shapes(check: str) -> None:
    keyring = Keyring.from_keys(KEY_A)
    assert not keyring.verifies("pmid:1/title", check)


def test_upper_case_check_is_not_accepted() -> None:
    keyring = Keyring.from_keys(KEY_A)
    code = keyring.check_code("pmid:1/title")
    assert code == code.lower()
    if code != code.upper():
        assert not keyring.verifies("pmid:1/title", code.upper())


def test_short_keys_are_refused() -> None:
    with pytest.raises(KeyringError) as caught:
        Keyring.from_keys(b"k" * 31)
    assert str(caught.value) == "key is 31 bytes long; a key needs at least 32 bytes"


def test_fingerprint_is_short_public_and_stable() -> None:
    print_a = fingerprint(KEY_A)
    assert len(print_a) == 12
    assert all(c in "0123456789abcdef" for c in print_a)
    assert print_a not in KEY_A.hex()
    assert print_a != fingerprint(KEY_B)
    assert Keyring.from_keys(KEY_A, [KEY_B]).fingerprint == print_a
    assert Keyring.demo_keyring().fingerprint == "09e177002fd7"


def test_keyring_never_shows_its_keys() -> None:
    keyring = Keyring.from_keys(KEY_A, [KEY_B])
    assert repr(keyring) == f"Keyring({fingerprint(KEY_A)}, retired=1)"
    assert KEY_A.hex() not in repr(keyring)
    assert keyring.retired_fingerprints == (fingerprint(KEY_B),)


def test_demo_keyring_is_marked_and_uses_the_public_key() -> None:
    demo = Keyring.demo_keyring()
    assert demo.demo
    assert demo.check_code("pmid:1/title") == reference_check(DEMO_KEY, "pmid:1/title")
    assert not Keyring.from_keys(KEY_A).demo
    assert repr(demo) == f"Keyring({fingerprint(DEMO_KEY)}, retired=0, demo)"


# --- key text (CITESEAL_KEY) -----------------------------------------------------------------


def test_key_text_hex() -> None:
    assert parse_key_text(KEY_A.hex()) == KEY_A
    assert parse_key_text(KEY_A.hex().upper()) == KEY_A


def test_key_text_base64() -> None:
    assert parse_key_text(base64.b64encode(KEY_B).decode()) == KEY_B


def test_key_text_of_only_hex_digits_is_read_as_hex() -> None:
    text = "ab" * 48  # valid base64 as well, but hex wins
    assert parse_key_text(text) == bytes.fromhex(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("ab" * 31, "CITESEAL_KEY holds a 31-byte key; a key needs at least 32 bytes"),
        (
            base64.b64encode(b"s" * 20).decode(),
            "CITESEAL_KEY holds a 20-byte key; a key needs at least 32 bytes",
        ),
        ("abc", "CITESEAL_KEY has an odd number of hex digits (3)"),
        ("not a key!", "CITESEAL_KEY is neither hex digits nor valid base64"),
        ("", "CITESEAL_KEY holds a 0-byte key; a key needs at least 32 bytes"),
    ],
)
def test_bad_key_text(text: str, message: str) -> None:
    with pytest.raises(KeyringError) as caught:
        parse_key_text(text)
    assert str(caught.value) == message
    assert caught.value.advice is not None and "token_hex(32)" in caught.value.advice


def test_key_text_with_retired_keys() -> None:
    keyring = keyring_from_text(f"{KEY_B.hex()},{KEY_A.hex()}")
    assert keyring.fingerprint == fingerprint(KEY_B)
    assert keyring.verifies("pmid:1/title", reference_check(KEY_A, "pmid:1/title"))
    with pytest.raises(KeyringError) as caught:
        keyring_from_text(f"{KEY_B.hex()},abcd")
    assert (
        str(caught.value) == "CITESEAL_KEY key 2 holds a 2-byte key; a key needs at least 32 bytes"
    )


# --- loading ---------------------------------------------------------------------------------


def test_demo_wins_over_everything(tmp_path: Path) -> None:
    keyring = load_keyring(FakeSettings(tmp_path), key_text=KEY_A.hex(), demo=True)
    assert keyring.demo
    assert not (tmp_path / "key.json").exists()


def test_key_text_wins_over_the_key_file(tmp_path: Path) -> None:
    keyring = load_keyring(FakeSettings(tmp_path), key_text=KEY_A.hex())
    assert keyring.fingerprint == fingerprint(KEY_A)
    assert not (tmp_path / "key.json").exists()


def test_first_use_creates_a_private_key_file(tmp_path: Path) -> None:
    settings_ = FakeSettings(tmp_path / "data")
    keyring = load_keyring(settings_)
    path = tmp_path / "data" / "key.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_keyring(settings_).fingerprint == keyring.fingerprint
    document = json.loads(path.read_text())
    assert document["format"] == "citeseal-keyring"
    assert document["version"] == 1
    assert document["current"]["fingerprint"] == keyring.fingerprint
    assert len(bytes.fromhex(document["current"]["key"])) == 32
    assert document["retired"] == []
    assert [p.name for p in path.parent.iterdir()] == ["key.json"]


def test_key_file_setting_is_used(tmp_path: Path) -> None:
    path = tmp_path / "elsewhere" / "my-key.json"
    keyring = load_keyring(FakeSettings(tmp_path / "data", key_file=path))
    assert read_key_file(path).fingerprint == keyring.fingerprint
    assert not (tmp_path / "data").exists()


def test_missing_key_file_without_create(tmp_path: Path) -> None:
    with pytest.raises(KeyringError) as caught:
        load_keyring(FakeSettings(tmp_path), create=False)
    assert str(caught.value) == f"no key file at {tmp_path / 'key.json'}"
    assert caught.value.advice == "create one with: citeseal key init"


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660])
def test_key_file_readable_by_others_is_refused(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "key.json"
    create_key_file(path)
    path.chmod(mode)
    with pytest.raises(KeyringError) as caught:
        load_keyring(FakeSettings(tmp_path))
    assert str(caught.value) == (
        f"key file {path} is accessible to group or others (mode {mode:04o})"
    )
    assert caught.value.advice == f"make it private with: chmod 600 {path}"


def test_create_key_file_never_overwrites(tmp_path: Path) -> None:
    path = tmp_path / "key.json"
    first = create_key_file(path)
    before = path.read_bytes()
    with pytest.raises(FileExistsError):
        create_key_file(path)
    assert path.read_bytes() == before
    assert read_key_file(path).fingerprint == first.fingerprint
    assert [p.name for p in tmp_path.iterdir()] == ["key.json"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "key file {path} is not valid JSON"),
        ("[" * 100_000, "key file {path} is not valid JSON"),  # a RecursionError before
        ('{"format": "other"}', "key file {path} is not a citeseal keyring"),
        (
            '{"format": "citeseal-keyring", "version": 9}',
            "key file {path} has version 9; this citeseal reads version 1",
        ),
        (
            '{"format": "citeseal-keyring", "version": 1, "current": {"key": "zz"}}',
            "key file {path} is damaged: current key is not hex",
        ),
        (
            '{"format": "citeseal-keyring", "version": 1, "current": {"key": "abcd"}}',
            "key file {path} is damaged: current key is 2 bytes long (at least 32)",
        ),
        (
            '{"format": "citeseal-keyring", "version": 1, "current": 3}',
            "key file {path} is damaged: current is not an object",
        ),
        (
            '{"format": "citeseal-keyring", "version": 1, "current": {"key": "'
            + "00" * 32
            + '"}, "retired": {}}',
            "key file {path} is damaged: retired is not a list",
        ),
    ],
)
def test_damaged_key_file(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "key.json"
    path.write_text(content)
    path.chmod(0o600)
    with pytest.raises(KeyringError) as caught:
        read_key_file(path)
    assert str(caught.value) == message.format(path=path)


# --- rotation --------------------------------------------------------------------------------


def test_rotation_retires_the_old_key_and_keeps_it_verifying(tmp_path: Path) -> None:
    path = tmp_path / "key.json"
    old = create_key_file(path)
    code = old.check_code("pmid:99000001/title")
    new = rotate_key_file(path)
    assert new.fingerprint != old.fingerprint
    assert new.retired_fingerprints == (old.fingerprint,)
    assert new.verifies("pmid:99000001/title", code)
    reread = read_key_file(path)
    assert reread.fingerprint == new.fingerprint
    assert reread.verifies("pmid:99000001/title", code)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    document = json.loads(path.read_text())
    assert document["retired"][0]["fingerprint"] == old.fingerprint
    assert "retired" in document["retired"][0]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".key.json.lock", "key.json"]


def test_rotation_without_a_key_file(tmp_path: Path) -> None:
    with pytest.raises(KeyringError) as caught:
        rotate_key_file(tmp_path / "key.json")
    assert str(caught.value) == f"no key file at {tmp_path / 'key.json'}"


def test_rotation_refuses_an_open_key_file(tmp_path: Path) -> None:
    path = tmp_path / "key.json"
    create_key_file(path)
    path.chmod(0o644)
    before = path.read_bytes()
    with pytest.raises(KeyringError):
        rotate_key_file(path)
    assert path.read_bytes() == before


@settings(max_examples=15, deadline=None)
@given(
    rotations=st.integers(1, 4),
    messages=st.lists(st.text(min_size=1, max_size=30), min_size=1, max_size=5),
)
def test_a_rotated_keyring_verifies_every_handle_minted_before(
    tmp_path_factory: pytest.TempPathFactory, rotations: int, messages: list[str]
) -> None:
    path = tmp_path_factory.mktemp("rotate") / "key.json"
    keyring = create_key_file(path)
    issued: list[tuple[str, str]] = []
    for _ in range(rotations):
        issued += [(m, keyring.check_code(m)) for m in messages]
        keyring = rotate_key_file(path)
    final = read_key_file(path)
    assert len(final.retired_fingerprints) == rotations
    assert all(final.verifies(message, code) for message, code in issued)


# -- seals ------------------------------------------------------------------------------------


def test_a_seal_is_the_full_hmac_of_the_domain_separated_message() -> None:
    keyring = Keyring([KEY_A])
    expected = hmac.new(KEY_A, b"citeseal seal v1\x00manifest", hashlib.sha256).hexdigest()
    assert keyring.seal(b"manifest") == expected
    assert keyring.seal_verifies(b"manifest", fingerprint(KEY_A), expected)


def test_a_seal_never_doubles_as_a_check_code() -> None:
    keyring = Keyring([KEY_A])
    plain = hmac.new(KEY_A, b"manifest", hashlib.sha256).hexdigest()
    assert keyring.seal(b"manifest") != plain  # the seal context separates the two uses


@pytest.mark.parametrize(
    ("message", "key", "seal"),
    [
        (b"manifest!", "a", "seal of another message"),
        (b"manifest", "other", "a key the keyring does not hold"),
        (b"manifest", "a", "truncated"),
        (b"manifest", "a", "upper case"),
    ],
    ids=["message", "key", "truncated", "case"],
)
def test_a_seal_fails_for_any_other_message_key_or_spelling(
    message: bytes, key: str, seal: str
) -> None:
    keyring = Keyring([KEY_A])
    good = keyring.seal(b"manifest")
    tag = {"truncated": good[:32], "upper case": good.upper()}.get(seal, good)
    key_fingerprint = fingerprint(KEY_A) if key == "a" else fingerprint(KEY_B)
    assert not keyring.seal_verifies(message, key_fingerprint, tag)


def test_retired_keys_verify_the_seals_they_made_but_never_seal() -> None:
    old = Keyring([KEY_A])
    rotated = Keyring.from_keys(KEY_B, [KEY_A])
    assert rotated.seal_verifies(b"m", fingerprint(KEY_A), old.seal(b"m"))
    assert rotated.seal(b"m") == Keyring([KEY_B]).seal(b"m")
    assert rotated.holds(fingerprint(KEY_A)) and rotated.holds(fingerprint(KEY_B))
    assert not old.holds(fingerprint(KEY_B))


# -- derived tags (paging cursors) ------------------------------------------------------------


def test_a_derived_tag_is_the_hmac_under_the_key_derived_for_its_purpose() -> None:
    derived = hmac.new(KEY_A, b"citeseal derived key v1\x00cursor", hashlib.sha256).digest()
    expected = hmac.new(derived, b"page 2", hashlib.sha256).digest()
    keyring = Keyring([KEY_A])
    assert keyring.derived_tag(b"cursor", b"page 2") == expected
    assert keyring.derived_tag_verifies(b"cursor", b"page 2", expected)


def test_a_derived_tag_fails_for_another_purpose_message_key_or_length() -> None:
    keyring = Keyring([KEY_A])
    tag = keyring.derived_tag(b"cursor", b"page 2")
    assert not keyring.derived_tag_verifies(b"cursor2", b"page 2", tag)
    assert not keyring.derived_tag_verifies(b"cursor", b"page 3", tag)
    assert not Keyring([KEY_B]).derived_tag_verifies(b"cursor", b"page 2", tag)
    assert not keyring.derived_tag_verifies(b"cursor", b"page 2", tag[:16])
    assert tag != hmac.new(KEY_A, b"page 2", hashlib.sha256).digest()  # not the plain HMAC
    assert tag.hex() != keyring.seal(b"page 2")  # nor a seal


def test_retired_keys_verify_the_derived_tags_they_made() -> None:
    tag = Keyring([KEY_A]).derived_tag(b"cursor", b"m")
    assert Keyring.from_keys(KEY_B, [KEY_A]).derived_tag_verifies(b"cursor", b"m", tag)


def test_a_tag_made_by_the_current_key_verifies_beside_retired_keys() -> None:
    rotated = Keyring.from_keys(KEY_B, [KEY_A])
    assert rotated.derived_tag_verifies(b"cursor", b"m", rotated.derived_tag(b"cursor", b"m"))


# --- key text details ------------------------------------------------------------------------


def test_hex_key_text_with_every_hex_digit_in_both_cases_is_read_as_hex() -> None:
    text = "0123456789abcdefABCDEF" + "00" * 21
    assert parse_key_text(text) == bytes.fromhex(text)


def test_base64_key_text_with_a_character_outside_base64_is_refused() -> None:
    text = base64.b64encode(KEY_B).decode()
    with pytest.raises(KeyringError, match="is neither hex digits nor valid base64"):
        parse_key_text(text[:8] + "*" + text[8:])


def test_an_error_in_one_key_names_the_source_it_came_from() -> None:
    with pytest.raises(KeyringError) as caught:
        keyring_from_text("abc", source="CITESEAL_DEMO_KEY")
    assert str(caught.value) == "CITESEAL_DEMO_KEY has an odd number of hex digits (3)"


# --- the dates in the key file ---------------------------------------------------------------

STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def _stamp_age(stamp: str) -> float:
    """Seconds between a key file date and now (UTC)."""
    assert STAMP.fullmatch(stamp), stamp
    made = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    return abs((datetime.now(UTC) - made).total_seconds())


def test_key_file_dates_are_utc_whatever_the_local_time_zone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TZ", "Etc/GMT-14")  # 14 hours ahead of UTC
    time.tzset()
    try:
        create_key_file(tmp_path / "key.json")
    finally:
        monkeypatch.undo()
        time.tzset()
    document = json.loads((tmp_path / "key.json").read_text())
    assert _stamp_age(document["current"]["created"]) < 600


def test_rotation_keeps_every_date_of_every_key(tmp_path: Path) -> None:
    path = tmp_path / "key.json"
    create_key_file(path)
    first_created = json.loads(path.read_text())["current"]["created"]
    rotate_key_file(path)
    once = json.loads(path.read_text())
    rotate_key_file(path)
    document = json.loads(path.read_text())
    assert _stamp_age(document["current"]["created"]) < 600
    newest, oldest = document["retired"]
    assert newest["created"] == once["current"]["created"]
    assert newest["retired"] == document["current"]["created"]
    assert oldest == once["retired"][0]
    assert oldest["created"] == first_created and _stamp_age(oldest["retired"]) < 600
    assert set(oldest) == {"key", "fingerprint", "created", "retired"}
    # one field a line, two spaces deep, and a final newline: a file people read and diff
    assert path.read_text() == json.dumps(document, indent=2) + "\n"


@pytest.mark.parametrize(
    ("created", "retired", "kept_created", "kept_retired"),
    [
        (
            "2026-01-01T00:00:00Z",
            "2026-02-01T00:00:00Z",
            "2026-01-01T00:00:00Z",
            "2026-02-01T00:00:00Z",
        ),
        (None, None, "", None),  # absent
        (5, 7, "", None),  # not text
    ],
)
def test_rotation_reads_the_dates_of_a_hand_written_key_file(
    tmp_path: Path, created: object, retired: object, kept_created: str, kept_retired: str | None
) -> None:
    entry: dict[str, object] = {"key": KEY_B.hex()}
    if created is not None:
        entry["created"] = created
    if retired is not None:
        entry["retired"] = retired
    current = {"key": KEY_A.hex(), "created": "2026-03-01T00:00:00Z"}
    path = tmp_path / "key.json"
    path.write_text(
        json.dumps(
            {"format": "citeseal-keyring", "version": 1, "current": current, "retired": [entry]}
        )
    )
    path.chmod(0o600)
    rotate_key_file(path)
    kept = json.loads(path.read_text())["retired"][1]
    assert kept.get("created") == kept_created
    assert kept.get("retired") == kept_retired
    assert ("retired" in kept) == (kept_retired is not None)


def test_a_key_file_entry_without_a_key_is_damaged(tmp_path: Path) -> None:
    path = tmp_path / "key.json"
    path.write_text('{"format": "citeseal-keyring", "version": 1, "current": {"created": ""}}')
    path.chmod(0o600)
    with pytest.raises(KeyringError) as caught:
        read_key_file(path)
    assert str(caught.value) == f"key file {path} is damaged: current has no key"


def test_two_processes_creating_the_key_file_at_once_share_one_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import audit.keys

    created = create_key_file(tmp_path / "key.json")

    def lost_the_race(path: Path) -> Keyring:
        raise FileExistsError(errno.EEXIST, "File exists", str(path))

    monkeypatch.setattr(audit.keys.Path, "exists", lambda self: False)
    monkeypatch.setattr(audit.keys, "create_key_file", lost_the_race)
    keyring = load_keyring(FakeSettings(tmp_path))
    assert keyring.fingerprint == created.fingerprint


def test_rotation_without_a_key_file_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(KeyringError) as caught:
        rotate_key_file(tmp_path / "key.json")
    assert caught.value.advice == "create one with: citeseal key init"


def _full_disk(target: Path, data: bytes) -> Path:
    """A stand-in for writing the temp file on a full disk."""
    raise OSError(errno.ENOSPC, "No space left on device")


def test_a_rotation_that_cannot_write_says_why_and_leaves_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import audit.keys

    path = tmp_path / "key.json"
    create_key_file(path)
    before = path.read_bytes()

    monkeypatch.setattr(audit.keys, "_write_private_temp", _full_disk)
    with pytest.raises(KeyringError) as caught:
        rotate_key_file(path)
    assert str(caught.value) == f"cannot rotate key file {path}: No space left on device"
    assert path.read_bytes() == before


def test_a_rotation_whose_rename_fails_says_why_and_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "key.json"
    create_key_file(path)
    before = path.read_bytes()

    def refused(self: Path, target: Path) -> Path:
        raise OSError(errno.EBUSY, "Device or resource busy")

    monkeypatch.setattr(Path, "replace", refused)
    with pytest.raises(KeyringError) as caught:
        rotate_key_file(path)
    assert str(caught.value) == f"cannot rotate key file {path}: Device or resource busy"
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [".key.json.lock", "key.json"]


def test_first_use_creates_the_missing_folders_private(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        load_keyring(FakeSettings(tmp_path / "home" / "data"))
    finally:
        os.umask(old)
    assert (tmp_path / "home" / "data" / "key.json").is_file()
    assert stat.S_IMODE((tmp_path / "home" / "data").stat().st_mode) == 0o700


def test_the_key_file_and_its_folder_are_flushed_to_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))
    create_key_file(tmp_path / "key.json")
    assert len(synced) == 2  # the temp file before it is linked, then the folder
    rotate_key_file(tmp_path / "key.json")
    assert len(synced) == 4


def test_a_key_file_that_cannot_be_read_says_why(tmp_path: Path) -> None:
    path = tmp_path / "key.json"
    path.mkdir(mode=0o700)
    with pytest.raises(KeyringError) as caught:
        read_key_file(path)
    assert str(caught.value) == f"cannot read key file {path}: Is a directory"


def test_a_damaged_retired_entry_is_named_by_its_place(tmp_path: Path) -> None:
    path = tmp_path / "key.json"
    current = {"key": KEY_A.hex()}
    path.write_text(
        json.dumps({"format": "citeseal-keyring", "version": 1, "current": current, "retired": [3]})
    )
    path.chmod(0o600)
    with pytest.raises(KeyringError) as caught:
        read_key_file(path)
    assert str(caught.value) == f"key file {path} is damaged: retired[0] is not an object"


def test_a_key_file_that_cannot_be_created_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import audit.keys

    path = tmp_path / "key.json"

    with monkeypatch.context() as patch:
        patch.setattr(audit.keys, "_write_private_temp", _full_disk)
        with pytest.raises(KeyringError) as caught:
            create_key_file(path)
    assert str(caught.value) == f"cannot create key file {path}: No space left on device"

    def no_links(source: Path, target: Path) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    with pytest.raises(KeyringError) as caught:
        create_key_file(path)
    assert str(caught.value) == f"cannot create key file {path}: Operation not permitted"
    assert list(tmp_path.iterdir()) == []


def test_a_demo_keyring_built_from_keys_stays_marked() -> None:
    assert Keyring.from_keys(DEMO_KEY, demo=True).demo
    assert not Keyring.from_keys(DEMO_KEY).demo
    assert not Keyring([DEMO_KEY]).demo  # only demo_keyring() and demo=True mark a keyring


def test_a_keyring_without_keys_is_refused() -> None:
    with pytest.raises(KeyringError) as caught:
        Keyring([])
    assert str(caught.value) == "a keyring needs at least one key"


def test_a_seal_of_the_right_length_but_not_ascii_never_verifies() -> None:
    keyring = Keyring([KEY_A])
    assert not keyring.seal_verifies(b"m", keyring.fingerprint, "é" * 64)
