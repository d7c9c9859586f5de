"""Helpers shared by several commands: keyrings, seal policies and trusted snapshots."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import typer

from audit.keys import Keyring, create_key_file, key_file_path, load_keyring
from pipeline.settings import Settings
from pipeline.snapshot.digests import CACHE_FILE, DigestCache
from pipeline.snapshot.locate import resolve_snapshot
from pipeline.snapshot.trust import SealPolicy, TrustedSnapshot, trust_snapshot

KEY_ENV = "CITESEAL_KEY"


def env_key_text(env: Mapping[str, str] | None = None) -> str | None:
    """The value of ``CITESEAL_KEY`` (None when unset or blank)."""
    value = (os.environ if env is None else env).get(KEY_ENV, "")
    return value if value.strip() else None


def keyring_from_settings(
    settings: Settings,
    demo: bool,
    *,
    create: bool = True,
    env: Mapping[str, str] | None = None,
) -> Keyring:
    """The keyring a command uses: the demo key (``--demo-key`` or ``CITESEAL_DEMO_KEY``),
    else ``CITESEAL_KEY``, else the key file (created on first use when ``create``)."""
    return load_keyring(
        settings,
        key_text=env_key_text(env),
        demo=demo or settings.demo_key,
        create=create,
    )


def sealing_keyring(settings: Settings, demo: bool) -> Keyring:
    """The keyring that seals what a command writes: the demo key, else the installation's
    (its key file created on first use, with a note)."""
    path = key_file_path(settings)
    existed = path.exists()
    keyring = keyring_from_settings(settings, demo)
    if not keyring.demo and env_key_text() is None and not existed:
        typer.echo(f"note: created key file {path} (key id {keyring.fingerprint})", err=True)
    return keyring


def minting_keyring(
    settings: Settings, demo: bool, *, env: Mapping[str, str] | None = None
) -> Keyring:
    """The keyring of a command that mints handles (``handle mint``, ``serve``).

    The demo key only when asked (``--demo-key``, ``CITESEAL_DEMO_KEY``), else
    ``CITESEAL_KEY``, else the key file; on a fresh machine the key file is created (0600,
    :func:`audit.keys.create_key_file`) and a ``note: created key file PATH (key id …)`` line
    on stderr says where, so nobody loses track of the key their handles depend on. Only the
    process that created the file says so (another one creating it first wins quietly).
    Commands that only verify (``audit``) never create a key: a fresh one would call every
    handle forged."""
    if demo or settings.demo_key or env_key_text(env) is not None:
        return keyring_from_settings(settings, demo, create=False, env=env)
    path = key_file_path(settings)
    if not path.exists():
        try:
            created = create_key_file(path)
        except FileExistsError:
            pass  # another process created it first: read theirs
        else:
            typer.echo(f"note: created key file {path} (key id {created.fingerprint})", err=True)
    return keyring_from_settings(settings, demo, create=False, env=env)


def key_source(settings: Settings, keyring: Keyring, env: Mapping[str, str] | None = None) -> str:
    """Where the keyring came from, for people: never the key itself."""
    if keyring.demo:
        return "the public demo key"
    if env_key_text(env) is not None:
        return f"${KEY_ENV}"
    return str(key_file_path(settings))


def installation_keyring(
    settings: Settings, env: Mapping[str, str] | None = None
) -> Keyring | None:
    """The installation's keyring when a key is configured here (``CITESEAL_KEY`` or an
    existing key file; never created), else None."""
    key_text = env_key_text(env)
    if key_text is None and not key_file_path(settings).is_file():
        return None
    return load_keyring(settings, key_text=key_text, create=False)


def seal_policy(
    settings: Settings,
    demo: bool,
    *,
    required: bool = True,
    keyring: Keyring | None = None,
    env: Mapping[str, str] | None = None,
) -> SealPolicy:
    """Whose snapshot seals a command accepts: the installation's keyring (``keyring`` when
    the command already loaded it) and, in demo mode, the public demo key. ``required``:
    refuse a snapshot whose seal cannot be checked (no key here)."""
    installation = keyring if keyring is not None and not keyring.demo else None
    if installation is None:
        installation = installation_keyring(settings, env)
    demo_ring = Keyring.demo_keyring() if demo or settings.demo_key else None
    return SealPolicy.of(installation, demo_ring, required=required)


def digest_cache(settings: Settings) -> DigestCache | None:
    """The verified-digest cache in the data dir (None when ``CITESEAL_DIGEST_CACHE=0``)."""
    return DigestCache(settings.data_dir / CACHE_FILE) if settings.digest_cache else None


def trusted_snapshot(path: Path, settings: Settings, policy: SealPolicy) -> TrustedSnapshot:
    """The snapshot meant by ``--snapshot`` (a file, or a corpus folder's newest), checked
    against its manifest and its seal before anything reads it (exit 1 when it fails)."""
    return trust_snapshot(resolve_snapshot(path), policy, digest_cache(settings))


def note_unchecked(trusted: TrustedSnapshot) -> None:
    """Say on stderr what a read-only command could not check."""
    if trusted.seal == "unchecked":
        typer.echo(
            f"note: the seal of {trusted.path} was not checked: no key here "
            "(its file matches its manifest)",
            err=True,
        )
    elif trusted.seal == "demo":
        typer.echo(f"note: {trusted.path} is sealed with the public demo key", err=True)
