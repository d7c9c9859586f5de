"""The keyring that signs and verifies handle check codes (DESIGN.md §3, docs/contract.md).

A keyring holds one *current* key, which signs, and any number of *retired* keys, which still
verify, so rotating the key never breaks a published handle. The check code of a message is
the first 25 bits of HMAC-SHA256(key, message) written as 5 lower-case Crockford base32
characters. Keys never leave this module: a keyring shows only its fingerprint.

Where keys come from (:func:`load_keyring`, first that applies):

1. ``demo=True``: the fixed, public :data:`DEMO_KEY` (anyone can forge handles with it; every
   report made with it says so).
2. ``CITESEAL_KEY`` (the value is handed in, this module reads no environment): one key, or
   several separated by commas (the first signs, the rest verify). Each key is at least 32
   bytes, written as hex (a string of only hex digits) or else as base64.
3. The key file ``CITESEAL_KEY_FILE`` or ``<data dir>/key.json``: JSON with the current key
   and the retired keys, created with mode 0600 on first use, refused when group or others can
   read it, replaced atomically on rotation.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import hmac
import json
import os
import secrets
import stat
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from audit.errors import KeyringError
from audit.locking import hold, require_locks

CHECK_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
"""Crockford base32, lower case (no i, l, o, u)."""
CHECK_LENGTH = 5
MIN_KEY_BYTES = 32
NEW_KEY_BYTES = 32
KEY_FILE_NAME = "key.json"
KEY_FILE_FORMAT = "citeseal-keyring"
KEY_FILE_VERSION = 1

DEMO_KEY = b"citeseal public demo key: NOT SECRET, demo only"
"""The fixed, public demo key. Anyone can mint valid handles with it: never use it for real
handles; every report made with it says "demo key"."""

SEAL_CONTEXT = b"citeseal seal v1\x00"
"""Prefixed to every message a keyring seals (:meth:`Keyring.seal`), never to a check code."""
SEAL_HEX_LENGTH = 64
DERIVE_CONTEXT = b"citeseal derived key v1\x00"
"""Prefixed to the purpose a key is derived for (:meth:`Keyring.derived_tag`)."""
TAG_BYTES = 32

_FIRST_WORD = struct.Struct(">I").unpack_from  # the first 4 bytes of a digest, big-endian


def _encode_check(digest: bytes) -> str:
    """The first 25 bits of ``digest`` as 5 Crockford base32 characters (most significant first).

    Five look-ups written out: a join over the shifts cost ~18 % of a verification from a
    string; a table of the 32,768 three-character prefixes saved nothing measurable."""
    bits = _FIRST_WORD(digest)[0] >> 7
    a = CHECK_ALPHABET
    return (
        a[bits >> 20] + a[bits >> 15 & 31] + a[bits >> 10 & 31] + a[bits >> 5 & 31] + a[bits & 31]
    )


def fingerprint(key: bytes) -> str:
    """A short public id of a key: 12 hex digits of a domain-separated SHA-256 of it."""
    return hashlib.sha256(b"citeseal key fingerprint\x00" + key).hexdigest()[:12]


DEMO_FINGERPRINT = fingerprint(DEMO_KEY)
"""The fingerprint of the public demo key: a seal or report under it proves nothing."""


def _key_pads(key: bytes) -> tuple[Any, Any]:
    """HMAC-SHA256 key pads hashed once (RFC 2104): (inner, outer) hash objects to copy.

    ``outer.copy().update(inner.copy().update(m).digest())`` equals
    ``hmac.new(key, m, "sha256")`` without rebuilding the pads per message.
    """
    block = hashlib.sha256().block_size
    if len(key) > block:
        key = hashlib.sha256(key).digest()
    key = key.ljust(block, b"\0")
    return hashlib.sha256(key.translate(_IPAD)), hashlib.sha256(key.translate(_OPAD))


_IPAD = bytes(x ^ 0x36 for x in range(256))
_OPAD = bytes(x ^ 0x5C for x in range(256))


def _derived_tag(key: bytes, purpose: bytes, message: bytes) -> bytes:
    derived = hmac.digest(key, DERIVE_CONTEXT + purpose, "sha256")
    return hmac.digest(derived, message, "sha256")


class Keyring:
    """A current key that signs plus retired keys that verify.

    The HMAC key pads are computed once per key; each message costs two hash ``.copy()`` calls
    per key tried.
    """

    __slots__ = ("_keys", "_pads", "demo", "fingerprint")

    def __init__(self, keys: Sequence[bytes], *, demo: bool = False) -> None:
        if not keys:
            raise KeyringError("a keyring needs at least one key")
        for key in keys:
            if len(key) < MIN_KEY_BYTES:
                raise KeyringError(
                    f"key is {len(key)} bytes long; a key needs at least {MIN_KEY_BYTES} bytes"
                )
        self._keys: tuple[bytes, ...] = tuple(keys)
        self._pads = tuple(_key_pads(key) for key in self._keys)
        self.demo = demo
        self.fingerprint = fingerprint(self._keys[0])

    @classmethod
    def from_keys(
        cls, current: bytes, retired: Sequence[bytes] = (), *, demo: bool = False
    ) -> Keyring:
        """A keyring signing with ``current`` and also verifying with ``retired``."""
        return cls((current, *retired), demo=demo)

    @classmethod
    def demo_keyring(cls) -> Keyring:
        """The keyring of the public demo key."""
        return cls((DEMO_KEY,), demo=True)

    @property
    def retired_fingerprints(self) -> tuple[str, ...]:
        """Fingerprints of the retired keys, newest first."""
        return tuple(fingerprint(key) for key in self._keys[1:])

    def holds(self, key_fingerprint: str) -> bool:
        """True when a key of this keyring (current or retired) has this fingerprint."""
        return any(hmac.compare_digest(fingerprint(key), key_fingerprint) for key in self._keys)

    def seal(self, message: bytes) -> str:
        """The seal of ``message`` under the current key: HMAC-SHA256, 64 hex digits.

        Seals authenticate documents such as snapshot manifests. They are domain-separated
        from check codes (:data:`SEAL_CONTEXT`), so a seal can never serve as a check code.
        """
        return hmac.new(self._keys[0], SEAL_CONTEXT + message, hashlib.sha256).hexdigest()

    def seal_verifies(self, message: bytes, key_fingerprint: str, seal: str) -> bool:
        """True when ``seal`` is the seal of ``message`` under the key with that fingerprint.

        The full 256-bit tag is compared in constant time; a key this keyring does not hold
        never verifies.
        """
        if len(seal) != SEAL_HEX_LENGTH or not seal.isascii():
            return False
        ok = False
        for key in self._keys:
            if hmac.compare_digest(fingerprint(key), key_fingerprint):
                tag = hmac.new(key, SEAL_CONTEXT + message, hashlib.sha256).hexdigest()
                ok |= hmac.compare_digest(tag, seal)
        return ok

    def derived_tag(self, purpose: bytes, message: bytes) -> bytes:
        """HMAC-SHA256 of ``message`` (32 bytes) under a key derived from the current key for
        ``purpose``: HMAC-SHA256(key, :data:`DERIVE_CONTEXT` + purpose).

        Tags authenticate tokens the server hands out and gets back, such as paging cursors.
        The derived key is domain-separated from check codes and seals (they never use
        :data:`DERIVE_CONTEXT`) and between purposes, so a tag made for one purpose never
        verifies for another, nor as a seal or a check code.
        """
        return _derived_tag(self._keys[0], purpose, message)

    def derived_tag_verifies(self, purpose: bytes, message: bytes, tag: bytes) -> bool:
        """True when ``tag`` is :meth:`derived_tag` of ``message`` under any key (constant
        time over the full 256 bits; a tag of another length never verifies)."""
        if len(tag) != TAG_BYTES:
            return False
        ok = False
        for key in self._keys:
            ok |= hmac.compare_digest(_derived_tag(key, purpose, message), tag)
        return ok

    def __repr__(self) -> str:
        demo = ", demo" if self.demo else ""
        return f"Keyring({self.fingerprint}, retired={len(self._keys) - 1}{demo})"

    def check_code(self, message: str) -> str:
        """The 5-character check code of ``message`` under the current key."""
        inner_pad, outer_pad = self._pads[0]
        inner = inner_pad.copy()
        inner.update(message.encode("utf-8"))
        outer = outer_pad.copy()
        outer.update(inner.digest())
        return _encode_check(outer.digest())

    def verifies(self, message: str, check: str) -> bool:
        """True when ``check`` is the check code of ``message`` under any key (constant time).

        The hot path of an audit: two hash copies per key tried, no per-message key setup.
        ``make bench`` times it against ``hmac.new(key, digestmod=sha256).copy()`` per
        message in the same rounds (2026-12-02, load 12 on 2 cores, 15 interleaved rounds:
        that plain HMAC verified 14 % fewer handle strings a second and minted 33 % fewer),
        so the pads stay (they must pay 10 %).
        """
        if len(check) != CHECK_LENGTH or not check.isascii():
            return False
        data = message.encode("utf-8")
        ok = False
        for inner_pad, outer_pad in self._pads:
            inner = inner_pad.copy()
            inner.update(data)
            outer = outer_pad.copy()
            outer.update(inner.digest())
            ok |= hmac.compare_digest(_encode_check(outer.digest()), check)
        return ok


# ---------------------------------------------------------------------------------------------
# Key text (CITESEAL_KEY) and the key file.

_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
_KEY_ADVICE = "generate one with: python3 -c 'import secrets; print(secrets.token_hex(32))'"


def parse_key_text(text: str, source: str = "CITESEAL_KEY") -> bytes:
    """One key from text: only hex digits → hex, otherwise base64; at least 32 bytes.

    ``source`` names where the text came from in error messages (never the text itself).
    """
    text = text.strip()
    if text and set(text) <= _HEX_DIGITS:
        if len(text) % 2:
            raise KeyringError(
                f"{source} has an odd number of hex digits ({len(text)})", advice=_KEY_ADVICE
            )
        key = bytes.fromhex(text)
    else:
        try:
            key = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise KeyringError(
                f"{source} is neither hex digits nor valid base64", advice=_KEY_ADVICE
            ) from None
    if len(key) < MIN_KEY_BYTES:
        raise KeyringError(
            f"{source} holds a {len(key)}-byte key; a key needs at least {MIN_KEY_BYTES} bytes",
            advice=_KEY_ADVICE,
        )
    return key


def keyring_from_text(text: str, source: str = "CITESEAL_KEY") -> Keyring:
    """A keyring from ``CITESEAL_KEY``: keys separated by commas, the first one signs."""
    parts = text.split(",")
    if len(parts) == 1:
        return Keyring([parse_key_text(text, source)])
    return Keyring([parse_key_text(part, f"{source} key {n}") for n, part in enumerate(parts, 1)])


class KeySettings(Protocol):
    """The part of the settings that locates the key file."""

    @property
    def data_dir(self) -> Path: ...

    @property
    def key_file(self) -> Path | None: ...


def key_file_path(settings: KeySettings) -> Path:
    """``CITESEAL_KEY_FILE`` when set, else ``<data dir>/key.json``."""
    return settings.key_file if settings.key_file is not None else settings.data_dir / KEY_FILE_NAME


def load_keyring(
    settings: KeySettings,
    *,
    key_text: str | None = None,
    demo: bool = False,
    create: bool = True,
) -> Keyring:
    """The keyring to use: demo key, else ``key_text`` (CITESEAL_KEY), else the key file.

    With ``create`` a missing key file is created (mode 0600) with a fresh random key;
    without it a missing key file is a :class:`KeyringError`.
    """
    if demo:
        return Keyring.demo_keyring()
    if key_text is not None and key_text.strip():
        return keyring_from_text(key_text)
    path = key_file_path(settings)
    if not path.exists():
        if not create:
            raise KeyringError(
                f"no key file at {path}", advice="create one with: citeseal key init"
            )
        with contextlib.suppress(FileExistsError):  # another process created it first
            create_key_file(path)
    return read_key_file(path)


@dataclass(frozen=True)
class _StoredKey:
    key: bytes
    created: str
    retired: str | None = None

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "key": self.key.hex(),
            "fingerprint": fingerprint(self.key),
            "created": self.created,
        }
        if self.retired is not None:
            entry["retired"] = self.retired
        return entry


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _file_json(current: _StoredKey, retired: Sequence[_StoredKey]) -> bytes:
    document = {
        "format": KEY_FILE_FORMAT,
        "version": KEY_FILE_VERSION,
        "current": current.to_json(),
        "retired": [entry.to_json() for entry in retired],
    }
    return (json.dumps(document, indent=2) + "\n").encode("utf-8")


def _check_private(path: Path) -> None:
    """Refuse a key file that group or others can read or write."""
    if os.name != "posix":
        return
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        raise KeyringError(
            f"key file {path} is accessible to group or others (mode {mode:04o})",
            advice=f"make it private with: chmod 600 {path}",
        )


def _entry(raw: object, path: Path, where: str) -> _StoredKey:
    if not isinstance(raw, dict):
        raise KeyringError(f"key file {path} is damaged: {where} is not an object")
    key_hex, created = raw.get("key"), raw.get("created", "")
    if not isinstance(key_hex, str):
        raise KeyringError(f"key file {path} is damaged: {where} has no key")
    try:
        key = bytes.fromhex(key_hex)
    except ValueError:
        raise KeyringError(f"key file {path} is damaged: {where} key is not hex") from None
    if len(key) < MIN_KEY_BYTES:
        raise KeyringError(
            f"key file {path} is damaged: {where} key is {len(key)} bytes long "
            f"(at least {MIN_KEY_BYTES})"
        )
    retired = raw.get("retired")
    return _StoredKey(
        key=key,
        created=created if isinstance(created, str) else "",
        retired=retired if isinstance(retired, str) else None,
    )


def _read_entries(path: Path) -> tuple[_StoredKey, list[_StoredKey]]:
    _check_private(path)
    try:
        document = json.loads(path.read_bytes())
    except OSError as error:
        raise KeyringError(f"cannot read key file {path}: {error.strerror}") from None
    except (ValueError, RecursionError):  # RecursionError: nested too deep to parse
        raise KeyringError(f"key file {path} is not valid JSON") from None
    if not isinstance(document, dict) or document.get("format") != KEY_FILE_FORMAT:
        raise KeyringError(f"key file {path} is not a citeseal keyring")
    if document.get("version") != KEY_FILE_VERSION:
        raise KeyringError(
            f"key file {path} has version {document.get('version')!r}; "
            f"this citeseal reads version {KEY_FILE_VERSION}"
        )
    retired_raw = document.get("retired", [])
    if not isinstance(retired_raw, list):
        raise KeyringError(f"key file {path} is damaged: retired is not a list")
    current = _entry(document.get("current"), path, "current")
    retired = [_entry(raw, path, f"retired[{i}]") for i, raw in enumerate(retired_raw)]
    return current, retired


def read_key_file(path: Path) -> Keyring:
    """The keyring stored in ``path`` (refused when group or others can read it)."""
    current, retired = _read_entries(path)
    return Keyring([current.key, *(entry.key for entry in retired)])


def _write_private_temp(path: Path, data: bytes) -> Path:
    """Write ``data`` to a new 0600 temp file beside ``path`` and fsync it."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return temp


def _fsync_dir(folder: Path) -> None:
    if os.name != "posix":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def create_key_file(path: Path) -> Keyring:
    """Create the key file with a fresh random key; :class:`FileExistsError` if it exists.

    The file appears complete or not at all: written to a 0600 temp file, fsynced, then
    hard-linked into place (which fails instead of replacing an existing file).
    """
    entry = _StoredKey(key=secrets.token_bytes(NEW_KEY_BYTES), created=_now())
    try:
        temp = _write_private_temp(path, _file_json(entry, []))
    except OSError as error:
        raise KeyringError(f"cannot create key file {path}: {error.strerror}") from None
    try:
        os.link(temp, path)
    except FileExistsError:
        raise
    except OSError as error:
        raise KeyringError(f"cannot create key file {path}: {error.strerror}") from None
    finally:
        temp.unlink(missing_ok=True)
    _fsync_dir(path.parent)
    return Keyring([entry.key])


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive advisory lock for read-modify-write of the key file (:mod:`audit.locking`:
    waits for another holder; stops with one line where the platform has no flock)."""
    what = f"changing key file {path}"
    require_locks(what)  # before creating the lock file
    lock = os.open(path.with_name(f".{path.name}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        with hold(lock, what=what, wait=True):
            yield
    finally:
        os.close(lock)


def rotate_key_file(path: Path) -> Keyring:
    """Make a fresh key current and retire the old one (it keeps verifying); atomic.

    The new file is written to a 0600 temp file, fsynced and renamed over the old one, so a
    crash leaves either the old or the new keyring, never a partial one and never a lost key.
    """
    if not path.exists():
        raise KeyringError(f"no key file at {path}", advice="create one with: citeseal key init")
    with _locked(path):
        current, retired = _read_entries(path)
        now = _now()
        old = _StoredKey(key=current.key, created=current.created, retired=now)
        new = _StoredKey(key=secrets.token_bytes(NEW_KEY_BYTES), created=now)
        entries = [old, *retired]
        try:
            temp = _write_private_temp(path, _file_json(new, entries))
        except OSError as error:
            raise KeyringError(f"cannot rotate key file {path}: {error.strerror}") from None
        try:
            temp.replace(path)
        except OSError as error:
            temp.unlink(missing_ok=True)
            raise KeyringError(f"cannot rotate key file {path}: {error.strerror}") from None
        _fsync_dir(path.parent)
    return Keyring([new.key, *(entry.key for entry in entries)])
