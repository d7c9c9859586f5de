"""Helpers shared by several commands: the keyring from the settings and the environment."""

from __future__ import annotations

import os
from collections.abc import Mapping

from audit.keys import Keyring, key_file_path, load_keyring
from pipeline.settings import Settings

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


def key_source(settings: Settings, keyring: Keyring, env: Mapping[str, str] | None = None) -> str:
    """Where the keyring came from, for people: never the key itself."""
    if keyring.demo:
        return "the public demo key"
    if env_key_text(env) is not None:
        return f"${KEY_ENV}"
    return str(key_file_path(settings))
