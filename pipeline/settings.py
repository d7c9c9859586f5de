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

import ipaddress
import math
import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import platformdirs

from audit.errors import InputError

APP_NAME = "citeseal"
BUILD_MEMORY = "128MB"  # DuckDB memory limit of a snapshot build's writer (CITESEAL_BUILD_MEMORY)
MAX_ATTEMPTS_LIMIT = 100
HARVEST_JOBS = 3  # threads a harvest uses (pipeline.harvest_pipeline); 1: one step at a time
HARVEST_JOBS_LIMIT = 16
GITHUB_API = "https://api.github.com"
MAX_RESPONSE_BYTES = 64 * 1024 * 1024  # the default cap on a decoded answer
MAX_RESPONSE_BYTES_LIMIT = 1 << 40

_ADVICE = "fix or unset it (README, Configuration, lists every variable)"
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})
_TOOL = re.compile(r"[A-Za-z0-9._-]{1,64}")
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
EMAIL = _EMAIL  # the form of a contact e-mail (CITESEAL_EMAIL, citeseal check --mailto)
_TOKEN = re.compile(r"[!-~]+")  # printable ASCII without spaces: safe as a query parameter
_SERVE_TOKEN = re.compile(r"[!-~]{32,1024}")  # a bearer token worth the name: ≥ 32 characters
_URL = re.compile(r"https?://[^\s/?#]+(/[^\s?#]*)?")
_MEMORY = re.compile(r"[0-9]+(\.[0-9]+)?\s*[KMGT]i?B", re.IGNORECASE)

# The public address of each source's API (no trailing slash) and the variable that moves it
# (a mirror, a proxy, a test server): :meth:`Settings.base_url`, README "Configuration". Both
# read the registry of sources (:mod:`pipeline.sources`) when asked: the variables from the
# names alone (no source module is imported to read the environment), the addresses from each
# source's ``base_url``.


class _Registered(Mapping[str, str]):
    """One fact per registered source that asks an API, read from the registry when asked (so
    a source added with :func:`pipeline.sources.register` has it too; one that reads files,
    ``local``, has no base URL)."""

    def __init__(self, fact: Callable[[str], str]) -> None:
        self._fact = fact

    def _names(self) -> tuple[str, ...]:
        from pipeline.sources import api_names

        return api_names()

    def __getitem__(self, name: str) -> str:
        if name not in self._names():
            raise KeyError(name)
        return self._fact(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())


def _public_base(name: str) -> str:
    from pipeline.sources import source

    return source(name).base_url


BASE_URLS: Mapping[str, str] = _Registered(_public_base)
BASE_URL_VARIABLES: Mapping[str, str] = _Registered(lambda name: f"CITESEAL_{name.upper()}_URL")
# The standard proxy variables, in the order they are read (lower case first, as curl and
# Python's urllib do); NO_PROXY lists hosts reached directly.
PROXY_VARIABLES: Mapping[str, tuple[str, str]] = {
    "https": ("https_proxy", "HTTPS_PROXY"),
    "http": ("http_proxy", "HTTP_PROXY"),
    "all": ("all_proxy", "ALL_PROXY"),
}
NO_PROXY_VARIABLES = ("no_proxy", "NO_PROXY")
_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain"})
_PROXY_SCHEMES = frozenset({"http", "https"})


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


def is_loopback(host: str) -> bool:
    """``localhost``, ``127.0.0.0/8`` or ``::1``: a host that never leaves the machine."""
    name = host.strip("[]").lower()
    if name in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def env_base_url(env: Mapping[str, str], name: str) -> str | None:
    """A source's base URL: ``https://HOST[:PORT][/PATH]``, or ``http://`` for a loopback
    host only (a test server, a local mirror); no user, query or fragment, so nothing secret
    or surprising is ever part of it. Returned without a trailing ``/``; None when unset."""
    raw = env_text(env, name)
    if raw is None:
        return None
    expected = (
        "an https:// address (http:// only for a loopback host such as 127.0.0.1), "
        "without user, query or fragment"
    )
    try:
        parts = urlsplit(raw)
        port = parts.port  # raises on a bad port
    except ValueError:
        raise _bad(name, expected, raw) from None
    del port
    host = parts.hostname or ""
    plain_ok = parts.scheme == "http" and is_loopback(host)
    if (
        not (parts.scheme == "https" or plain_ok)
        or not host
        or "@" in parts.netloc
        or parts.query
        or parts.fragment
        or "?" in raw
        or "#" in raw
        or not _URL.fullmatch(raw)
    ):
        raise _bad(name, expected, raw)
    return raw.rstrip("/")


def redact_userinfo(url: str) -> str:
    """``http://user:pass@host:3128`` → ``http://[REDACTED]@host:3128`` (for messages)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    netloc, slash, path = rest.partition("/")
    if "@" not in netloc:
        return url
    shown = "[REDACTED]@" + netloc.rpartition("@")[2] + slash + path
    return f"{scheme}://{shown}" if sep else shown


def env_proxy(env: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    """The first set of ``names``: a proxy ``http://`` or ``https://`` address, optionally
    with ``user:password@`` (``HOST:PORT`` alone means ``http://HOST:PORT``, as for curl).
    A bad value is named with its credentials redacted."""
    for name in names:
        raw = env_text(env, name)
        if raw is None:
            continue
        url = raw if "://" in raw else f"http://{raw}"
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError:
            port, parts = -1, None
        if (
            parts is None
            or port == -1
            or parts.scheme not in _PROXY_SCHEMES
            or not parts.hostname
            or parts.query
            or parts.fragment
            or parts.path not in ("", "/")
        ):
            raise _bad(
                name,
                "a proxy address http://[USER:PASSWORD@]HOST[:PORT] or https://…",
                redact_userinfo(raw),
            )
        return url.rstrip("/")
    return None


def env_no_proxy(env: Mapping[str, str]) -> tuple[str, ...]:
    """``NO_PROXY``: comma-separated hosts (``example.org`` also covers its subdomains, a
    leading ``.`` likewise), ``HOST:PORT``, IP addresses or CIDR blocks, or ``*`` (no
    proxy at all). Lower-cased, blanks dropped."""
    for name in NO_PROXY_VARIABLES:
        raw = env_text(env, name)
        if raw is not None:
            return tuple(e.strip().lower() for e in raw.split(",") if e.strip())
    return ()


def env_path(env: Mapping[str, str], name: str, *, folder: bool) -> Path | None:
    """An existing file (or, ``folder``, directory), e.g. ``SSL_CERT_FILE``."""
    raw = env_text(env, name)
    if raw is None:
        return None
    path = Path(raw)
    if not (path.is_dir() if folder else path.is_file()):
        raise _bad(name, f"an existing {'folder' if folder else 'file'}", raw)
    return path


@dataclass(frozen=True)
class Proxies:
    """The standard proxy variables, validated: one proxy per URL scheme (``all`` for any
    scheme without its own) and the hosts reached directly (``no_proxy``)."""

    https: str | None = None
    http: str | None = None
    all: str | None = None
    no_proxy: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.https or self.http or self.all)

    def secrets(self) -> list[str]:
        """The ``user:password`` parts and passwords of the proxy addresses."""
        out: list[str] = []
        for url in (self.https, self.http, self.all):
            if url and "@" in url:
                userinfo = urlsplit(url).netloc.rpartition("@")[0]
                out.append(userinfo)
                password = userinfo.partition(":")[2]
                if password:
                    out.append(password)
        return out

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Proxies:
        return cls(
            https=env_proxy(env, PROXY_VARIABLES["https"]),
            http=env_proxy(env, PROXY_VARIABLES["http"]),
            all=env_proxy(env, PROXY_VARIABLES["all"]),
            no_proxy=env_no_proxy(env),
        )


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


def _network_settings(env: Mapping[str, str]) -> dict[str, Any]:
    """The proxies and CA certificates of the standard variables (``HTTPS_PROXY``…,
    ``SSL_CERT_FILE``, ``SSL_CERT_DIR``), or, when one is bad, none of them and the error, kept
    for the first live request (``network_error``): an offline command runs whatever other
    tools put there, a live one refuses to guess a route."""
    try:
        return {
            "proxies": Proxies.from_env(env),
            "ca_file": env_path(env, "SSL_CERT_FILE", folder=False),
            "ca_dir": env_path(env, "SSL_CERT_DIR", folder=True),
        }
    except InputError as error:
        return {"network_error": error}


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
    harvest_jobs: int = HARVEST_JOBS  # CITESEAL_HARVEST_JOBS: threads a harvest uses (1: off)
    build_memory: str = BUILD_MEMORY  # CITESEAL_BUILD_MEMORY: DuckDB limit of a build's writer
    deadline: float = 120.0  # CITESEAL_DEADLINE: seconds per attempt, redirects and reads included
    max_response_bytes: int = MAX_RESPONSE_BYTES  # CITESEAL_MAX_RESPONSE_BYTES (decoded body)
    digest_cache: bool = True  # CITESEAL_DIGEST_CACHE: remember verified snapshot digests
    github_token: str | None = None  # GITHUB_TOKEN (or GH_TOKEN): a GitHub Releases archive
    github_api: str = GITHUB_API  # CITESEAL_GITHUB_API: GitHub's REST API (Enterprise, tests)
    serve_token: str | None = None  # CITESEAL_SERVE_TOKEN: bearer token of `serve --http`
    serve_deadline: float | None = None  # CITESEAL_SERVE_DEADLINE: seconds per MCP tool call
    # CITESEAL_<SOURCE>_URL: a source's base URL where it is not the public one (BASE_URLS)
    base_urls: Mapping[str, str] = field(default_factory=dict)
    proxies: Proxies = Proxies()  # HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY
    ca_file: Path | None = None  # SSL_CERT_FILE: the CA bundle trusted instead of certifi's
    ca_dir: Path | None = None  # SSL_CERT_DIR: a folder of CA certificates (OpenSSL layout)
    # what was wrong with the standard proxy and CA variables, raised only where a live request
    # is prepared (pipeline.network): other tools set them, offline commands do not need them
    network_error: InputError | None = field(default=None, compare=False)

    def base_url(self, source: str) -> str:
        """The base URL requests of ``source`` go to (no trailing ``/``)."""
        return self.base_urls.get(source) or BASE_URLS[source]

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
            harvest_jobs=env_count(
                env, "CITESEAL_HARVEST_JOBS", HARVEST_JOBS, low=1, high=HARVEST_JOBS_LIMIT
            ),
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
            serve_token=env_secret(
                env,
                "CITESEAL_SERVE_TOKEN",
                _SERVE_TOKEN,
                "32 to 1,024 printable ASCII characters without spaces",
            ),
            # unset reads as 0.0 (refused when given), i.e. None: serve's own default
            serve_deadline=env_seconds(env, "CITESEAL_SERVE_DEADLINE", 0.0) or None,
            base_urls={
                source: url
                for source, name in BASE_URL_VARIABLES.items()
                if (url := env_base_url(env, name)) is not None
            },
            **_network_settings(env),
        )

    def secrets(self) -> list[str]:
        """Values that must never reach a log line, an error, a snapshot or the site."""
        keys = [
            s
            for s in (self.ncbi_api_key, self.openfda_api_key, self.github_token, self.serve_token)
            if s
        ]
        return keys + self.proxies.secrets()
