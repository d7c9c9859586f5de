"""Where requests go: each source's base URL, and the live transport (proxies, CA certificates).

**Base URLs.** Every request builder names the *public* address of its API (``BASE_URLS`` in
:mod:`pipeline.settings`). :class:`Endpoints` moves a request whose URL lies under a source's
public base to the base configured for that source (``CITESEAL_<SOURCE>_URL``: a mirror, a
proxy, a test server) — one mapping in one place, so every builder of every source follows
it. The request keeps its public URL as its *key* (:data:`KEY_URL_EXTENSION`,
:func:`key_url`): the resume cache, ``--record`` and the replay transport file and match an
answer under the request it answers at the public API, so an answer recorded from a mirror
replays for the same request without it, and the other way round. Only the origin and the
base path change; the rest of the URL (path below the base, query) is kept byte for byte.

**The live transport.** :func:`network_transport` builds the transport of every live request
from the settings (never from ``os.environ`` behind their back): the standard proxy variables
(``HTTPS_PROXY``, ``HTTP_PROXY``, ``ALL_PROXY``, ``NO_PROXY``; :class:`~pipeline.settings.
Proxies`) choose, per request, a proxy or the direct route, and ``SSL_CERT_FILE`` /
``SSL_CERT_DIR`` replace the bundled CA certificates (certifi's) for every TLS connection,
direct or through a proxy. A proxy's ``user:password`` goes to the proxy only; it is one of the
settings' secrets (so the redactor removes it) and is shown as ``[REDACTED]`` in messages.
"""

from __future__ import annotations

import ipaddress
import logging
import ssl
from collections.abc import Mapping
from dataclasses import dataclass

import httpx

from audit.errors import InputError
from pipeline.redact import carries_credentials
from pipeline.settings import BASE_URLS, Proxies, Settings, redact_userinfo

log = logging.getLogger("citeseal.http")

KEY_URL_EXTENSION = "citeseal_key_url"  # request extension: the public URL a request answers


def key_url(request: httpx.Request) -> str:
    """The URL a request is keyed by: its public URL when it was moved to a configured base
    (:class:`Endpoints`), else its own."""
    moved = request.extensions.get(KEY_URL_EXTENSION)
    return moved if isinstance(moved, str) else str(request.url)


def origin(url: httpx.URL) -> str:
    """``scheme://host[:port]`` of a URL (httpx leaves a default port out)."""
    return f"{url.scheme}://{url.host}" + (f":{url.port}" if url.port else "")


def same_origin(url: str, base: str) -> bool:
    """Whether ``url`` has the scheme, host and port of ``base``."""
    try:
        return origin(httpx.URL(url)) == origin(httpx.URL(base))
    except httpx.InvalidURL:
        return False


def _under(url: str, base: str) -> str | None:
    """The part of ``url`` below ``base`` (``""``, ``/…``, ``?…``), or None when it is not
    under it (``…/rest`` does not hold ``…/restx``)."""
    if not url.startswith(base):
        return None
    rest = url[len(base) :]
    return rest if rest == "" or rest[0] in "/?" else None


@dataclass(frozen=True)
class Endpoints:
    """The public base URL → configured base URL mapping of one client (module docstring)."""

    moved: Mapping[str, str]  # source → its configured base, where it is not the public one

    @classmethod
    def of(cls, settings: Settings) -> Endpoints:
        moved = {}
        for source, url in settings.base_urls.items():
            base = str(httpx.URL(url)).rstrip("/")  # as httpx writes it: host lower-cased
            if source in BASE_URLS and base != BASE_URLS[source]:
                moved[source] = base
        return cls(moved)

    def send_to(self, url: str) -> str | None:
        """Where a request for the public ``url`` goes, when a configured base moves it."""
        for source, base in self.moved.items():
            rest = _under(url, BASE_URLS[source])
            if rest is not None:
                return base + rest
        return None

    def public(self, url: str) -> str | None:
        """The public URL of a URL under a configured base (a redirect within the mirror)."""
        for source, base in self.moved.items():
            rest = _under(url, base)
            if rest is not None:
                return BASE_URLS[source] + rest
        return None


def unsafe_hop(request: httpx.Request, following: httpx.Request) -> str | None:
    """Why following ``request``'s redirect to ``following`` is refused, or None: a
    downgrade from https to http (always), or another origin (scheme, host or port) for a
    request that carries credential or polite parameters in its query or its form."""
    old, new = origin(request.url), origin(following.url)
    if request.url.scheme == "https" and following.url.scheme == "http":
        return f"from https to http ({old} -> {new})"
    if old == new:
        return None
    form = None
    if request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
        form = request.read().decode("utf-8", "replace")
    if carries_credentials(str(request.url), form):
        return f"to another origin ({old} -> {new}), and the request carries credentials"
    return None


# -- the live transport ----------------------------------------------------------------------


def ssl_context(settings: Settings) -> ssl.SSLContext | bool:
    """The TLS verification of every live connection: ``True`` (httpx's default, certifi's
    bundle) unless ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` name the CA certificates to trust
    instead. A file or folder that holds no usable certificate is an InputError naming it."""
    if settings.ca_file is None and settings.ca_dir is None:
        return True
    try:
        return ssl.create_default_context(
            cafile=str(settings.ca_file) if settings.ca_file else None,
            capath=str(settings.ca_dir) if settings.ca_dir else None,
        )
    except (ssl.SSLError, OSError, ValueError) as error:
        name = "SSL_CERT_FILE" if settings.ca_file is not None else "SSL_CERT_DIR"
        reason = " ".join(str(error).split())[:120] or type(error).__name__
        raise InputError(
            f"{name} holds no CA certificate that can be loaded: {reason}",
            advice="point it at a PEM file (or an OpenSSL certificate folder), or unset it",
        ) from None


def bypasses(host: str, port: int | None, no_proxy: tuple[str, ...]) -> bool:
    """Whether ``NO_PROXY`` sends a request to ``host`` directly: ``*``; the host itself or a
    parent domain (``example.org`` and ``.example.org`` both cover ``api.example.org``); an
    entry with a port only for that port; an IP address or CIDR block containing the host."""
    host = host.strip("[]").lower()
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    for entry in no_proxy:
        if entry == "*":
            return True
        name, want_port = entry, None
        if entry.count(":") == 1 and not entry.startswith("["):
            name, _, text = entry.partition(":")
            want_port = int(text) if text.isdigit() else -1
        name = name.strip("[]")
        if want_port is not None and want_port != port:
            continue
        if address is not None:
            try:
                if address in ipaddress.ip_network(name, strict=False):
                    return True
            except ValueError:
                pass
            continue
        bare = name.lstrip(".")
        if bare and (host == bare or host.endswith("." + bare)):
            return True
    return False


class ProxyRoutes(httpx.BaseTransport):
    """Sends each request through the proxy for its scheme (``all`` when the scheme has none),
    or directly when ``NO_PROXY`` covers its host or no proxy is set for it."""

    def __init__(self, proxies: Proxies, verify: ssl.SSLContext | bool) -> None:
        self.proxies = proxies
        self.direct = httpx.HTTPTransport(retries=0, verify=verify, trust_env=False)
        self.routes: dict[str, httpx.HTTPTransport] = {}
        for scheme in ("https", "http"):
            proxy = getattr(proxies, scheme) or proxies.all
            if proxy:
                self.routes[scheme] = httpx.HTTPTransport(
                    retries=0, verify=verify, trust_env=False, proxy=httpx.Proxy(proxy)
                )
                log.debug("%s requests go through the proxy %s", scheme, redact_userinfo(proxy))

    def route(self, url: httpx.URL) -> httpx.HTTPTransport:
        """The transport a request to ``url`` takes."""
        via = self.routes.get(url.scheme)
        if via is None or bypasses(url.host, url.port, self.proxies.no_proxy):
            return self.direct
        return via

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self.route(request.url).handle_request(request)

    def close(self) -> None:
        self.direct.close()
        for transport in self.routes.values():
            transport.close()


def network_transport(settings: Settings) -> httpx.BaseTransport:
    """The transport of live requests (module docstring): direct, or through the proxies the
    settings name, with the CA certificates they name; no retries of its own (the client's
    policy retries). A bad proxy or CA variable is raised here, before any request."""
    if settings.network_error is not None:
        raise settings.network_error
    verify = ssl_context(settings)
    if not settings.proxies:
        return httpx.HTTPTransport(retries=0, verify=verify, trust_env=False)
    return ProxyRoutes(settings.proxies, verify)
