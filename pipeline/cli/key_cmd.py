"""CLI: ``citeseal key init | rotate | id`` — the keyring that signs handles."""

from __future__ import annotations

import json

import typer

from audit.errors import KeyringError
from audit.keys import create_key_file, key_file_path, rotate_key_file
from pipeline.cli.common import KEY_ENV, env_key_text, key_source, keyring_from_settings
from pipeline.cli.options import DemoKeyOpt, JsonOpt
from pipeline.settings import Settings

key_app = typer.Typer(
    name="key",
    help="Manage the key that signs handle check codes (never printed).",
    no_args_is_help=True,
)


@key_app.command("init")
def init_command() -> None:
    """Create the key file (mode 0600) with a fresh random key; refuses to overwrite."""
    settings = Settings.from_env()
    path = key_file_path(settings)
    if path.exists():
        raise KeyringError(
            f"key file {path} already exists",
            advice="to replace the current key (the old one keeps verifying): citeseal key rotate",
        )
    try:
        keyring = create_key_file(path)
    except FileExistsError:
        raise KeyringError(f"key file {path} already exists") from None
    typer.echo(f"created key file {path}")
    typer.echo(f"key id {keyring.fingerprint}")
    if env_key_text() is not None:
        typer.echo(f"note: {KEY_ENV} is set and takes precedence over the key file", err=True)


@key_app.command("rotate")
def rotate_command() -> None:
    """Make a fresh key current; the old key is retired and keeps verifying its handles."""
    settings = Settings.from_env()
    if env_key_text() is not None:
        raise KeyringError(
            f"{KEY_ENV} is set, so the key file is not used",
            advice=f"rotate an environment key by putting the new key first: {KEY_ENV}=NEW,OLD",
        )
    path = key_file_path(settings)
    keyring = rotate_key_file(path)
    retired = len(keyring.retired_fingerprints)
    typer.echo(f"rotated key file {path}")
    typer.echo(f"key id {keyring.fingerprint} (retired keys still verifying: {retired})")


@key_app.command("id")
def id_command(demo_key: DemoKeyOpt = False, json_out: JsonOpt = False) -> None:
    """Print the short fingerprint of the current key (never the key)."""
    settings = Settings.from_env()
    keyring = keyring_from_settings(settings, demo_key, create=False)
    if json_out:
        document = {
            "fingerprint": keyring.fingerprint,
            "demo": keyring.demo,
            "retired": list(keyring.retired_fingerprints),
            "source": key_source(settings, keyring),
        }
        typer.echo(json.dumps(document, indent=2))
        return
    typer.echo(f"{keyring.fingerprint} (demo key)" if keyring.demo else keyring.fingerprint)


def register(app: typer.Typer) -> None:
    """Attach ``citeseal key …`` to the root app."""
    app.add_typer(key_app)
