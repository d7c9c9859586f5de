"""Settings: one object passed in, read from the environment once at the edge.

Every field has a safe default; nothing here is a module-level mutable global.

Every environment variable citeseal reads goes through one of the readers below (README,
"Configuration", lists them all). The rules are the same for each: unset, empty or blank
means the default; anything else must be a value of the documented form, or the reader raises
an :class:`~audit.errors.InputError` (exit 2) that names the variable, what it expected and
what it got — never a traceback, never a silent default. Secret values (API keys, the contact
e-mail) are never quoted in the message.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import platformdirs

from audit.errors import InputError

APP_NAME = "citeseal"
BUILD_MEMORY = "128MB"  # DuckDB memory limit of a snapshot build's writer (CITESEAL_BUILD_MEMORY)
MAX_ATTEMPTS_LIMIT = 100
GITHUB_API = "https://api.github.com"
MAX_RESPONSE_BYTES = 64 * 1024 * 1024  # the default cap on a decoded answer
MAX_RESPONSE_BYTES_LIMIT = 1 << 40

_ADVICE = "fix or unset it (README, Configuration, lists every variable)"
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})
_TOOL = re.compile(r"[A-Za-z0-9._-]{1,64}")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_TOKEN = re.compile(r"[!-~]+")  # printable ASCII without spaces: safe as a query parameter
_URL = re.compile(r"https?://[^\s/?#]+(/[^\s?#]*)?")
_MEMORY = re.compile(r"[0-9]+(\.[0-9]+)?\s*[KMGT]i?B", re.IGNORECASE)


def _bad(name: str, expected: str, raw: str | None) -> InputError:
    got = "" if raw is None else f", got {raw!r}"
    return InputError(f"{name} must be {expected}{got}", advice=_ADVICE)


def env_text(env: Mapping[str, str], name: str) -> str | None:
    """The value of ``name`` stripped of surrounding blanks, None when unset or blank."""
    value = env.get(name, "").strip()
    return value or None


def env_flag(env: Mapping[str, str], name: str, *, default: bool = False) -> bool:
    """A switch: ``1``/``true``/``yes``/``on`` or ``0``/``false``/``no``/``off`` (any case)."""
    raw = env_text(env, name)
    if raw is None:
        return default
    if raw.lower() in _TRUE:
        return True
    if raw.lower() in _FALSE:
        return False
    raise _bad(name, "1, true, yes, on, 0, false, no or off", raw)


def env_seconds(env: Mapping[str, str], name: str, default: float) -> float:
    """A finite number of seconds > 0."""
    raw = env_text(env, name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise _bad(name, "a number of seconds > 0", raw)
    return value


def env_count(env: Mapping[str, str], name: str, default: int, *, low: int, high: int) -> int:
    """A whole number from ``low`` to ``high``."""
    raw = env_text(env, name)
    if raw is None:
        return default
    if not raw.isascii() or not raw.isdigit() or not low <= int(raw) <= high:
        raise _bad(name, f"a whole number from {low} to {high}", raw)
    return int(raw)


def env_secret(
    env: Mapping[str, str], name: str, pattern: re.Pattern[str], form: str
) -> str | None:
    """A secret of the given form; the message names the form, never the value."""
    raw = env_text(env, name)
    if raw is not None and not pattern.fullmatch(raw):
        raise _bad(name, f"{form} (the value is not shown)", None)
    return raw


def env_memory(env: Mapping[str, str], name: str = "CITESEAL_BUILD_MEMORY") -> str:
    """A DuckDB memory limit such as ``512MB`` or ``2GB`` (default :data:`BUILD_MEMORY`)."""
    raw = env_text(env, name)
    if raw is None:
        return BUILD_MEMORY
    if not _MEMORY.fullmatch(raw):
        raise _bad(name, "a size such as 512MB or 2GB", raw)
    return raw


def env_url(env: Mapping[str, str], name: str, default: str) -> str:
    """An ``http://`` or ``https://`` address (default ``default``)."""
    raw = env_text(env, name)
    if raw is None:
        return default
    if not _URL.fullmatch(raw):
        raise _bad(name, "an http:// or https:// address", raw)
    return raw.rstrip("/")


def source_date_epoch(env: Mapping[str, str]) -> datetime | None:
    """``SOURCE_DATE_EPOCH`` (whole seconds since 1970, UTC) as a time, None when unset."""
    raw = env_text(env, "SOURCE_DATE_EPOCH")
    if raw is None:
        return None
    try:
        if not raw.isascii() or not raw.isdigit():
            raise ValueError(raw)
        return datetime.fromtimestamp(int(raw), tz=UTC)
    except (ValueError, OverflowError, OSError):
        raise _bad("SOURCE_DATE_EPOCH", "a whole number of seconds since 1970", raw) from None


@dataclass(frozen=True)
class Settings:
    """Runtime configuration (see README, "Configuration")."""

    email: str | None = None  # NCBI `email`, Crossref `mailto`
    tool: str = "citeseal"  # NCBI `tool`
    ncbi_api_key: str | None = None  # NCBI_API_KEY: 10 req/s instead of 3
    openfda_api_key: str | None = None  # OPENFDA_API_KEY
    data_dir: Path = Path(platformdirs.user_data_dir(APP_NAME))
    key_file: Path | None = None  # CITESEAL_KEY_FILE
    demo_key: bool = False  # CITESEAL_DEMO_KEY
    history_backfill: bool = False  # CITESEAL_HISTORY_BACKFILL: use unofficial history services
    timeout: float = 30.0  # seconds per read (and to connect)
    max_attempts: int = 6  # per request, under the retry policy
    build_memory: str = BUILD_MEMORY  # CITESEAL_BUILD_MEMORY: DuckDB limit of a build's writer
    deadline: float = 120.0  # CITESEAL_DEADLINE: seconds per attempt, redirects and reads included
    max_response_bytes: int = MAX_RESPONSE_BYTES  # CITESEAL_MAX_RESPONSE_BYTES (decoded body)
    digest_cache: bool = True  # CITESEAL_DIGEST_CACHE: remember verified snapshot digests
    github_token: str | None = None  # GITHUB_TOKEN (or GH_TOKEN): a GitHub Releases archive
    github_api: str = GITHUB_API  # CITESEAL_GITHUB_API: GitHub's REST API (Enterprise, tests)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Read the settings from environment variables (``CITESEAL_*`` and API keys)."""
        env = os.environ if env is None else env
        data_dir = env_text(env, "CITESEAL_DATA_DIR")
        key_file = env_text(env, "CITESEAL_KEY_FILE")
        tool = env_text(env, "CITESEAL_TOOL") or "citeseal"
        if not _TOOL.fullmatch(tool):
            raise _bad("CITESEAL_TOOL", "1 to 64 letters, digits, '.', '_' or '-'", tool)
        api_key = "printable ASCII without spaces"
        return cls(
            email=env_secret(env, "CITESEAL_EMAIL", _EMAIL, "an e-mail address (name@host.domain)"),
            tool=tool,
            ncbi_api_key=env_secret(env, "NCBI_API_KEY", _TOKEN, api_key),
            openfda_api_key=env_secret(env, "OPENFDA_API_KEY", _TOKEN, api_key),
            data_dir=Path(data_dir) if data_dir else Path(platformdirs.user_data_dir(APP_NAME)),
            key_file=Path(key_file) if key_file else None,
            demo_key=env_flag(env, "CITESEAL_DEMO_KEY"),
            history_backfill=env_flag(env, "CITESEAL_HISTORY_BACKFILL"),
            timeout=env_seconds(env, "CITESEAL_TIMEOUT", 30.0),
            max_attempts=env_count(env, "CITESEAL_MAX_ATTEMPTS", 6, low=1, high=MAX_ATTEMPTS_LIMIT),
            build_memory=env_memory(env),
            deadline=env_seconds(env, "CITESEAL_DEADLINE", 120.0),
            max_response_bytes=env_count(
                env,
                "CITESEAL_MAX_RESPONSE_BYTES",
                MAX_RESPONSE_BYTES,
                low=1024,
                high=MAX_RESPONSE_BYTES_LIMIT,
            ),
            digest_cache=env_flag(env, "CITESEAL_DIGEST_CACHE", default=True),
            github_token=env_secret(env, "GITHUB_TOKEN", _TOKEN, api_key)
            or env_secret(env, "GH_TOKEN", _TOKEN, api_key),
            github_api=env_url(env, "CITESEAL_GITHUB_API", GITHUB_API),
        )

    def secrets(self) -> list[str]:
        """Values that must never reach a log line, an error, a snapshot or the site."""
        return [s for s in (self.ncbi_api_key, self.openfda_api_key, self.github_token) if s]
