"""URL inputs of ``citeseal check``: a document read over HTTP(S).

* **The same client settings as every live request**: the transport of
  :func:`pipeline.network.network_transport` (the proxy variables, ``SSL_CERT_FILE`` /
  ``SSL_CERT_DIR``), the settings' timeout, at most :data:`MAX_REDIRECTS` redirects, each to
  ``http``/``https`` only. No polite parameter or key is sent: the document's host is no
  registry.
* **Size-capped**: the body is streamed and refused once it passes the input limit
  (:data:`~audit.references.inputs.MAX_INPUT_BYTES`, read when asked, as for a file), never
  read whole first.
* **Content type → format**: ``text/html`` and ``application/xhtml+xml`` HTML,
  ``application/pdf`` PDF, ``text/markdown`` Markdown, ``text/plain`` text,
  ``application/x-bibtex`` / ``text/x-bibtex`` BibTeX, ``application/x-research-info-systems``
  RIS, ``application/vnd.citationstyles.csl+json`` CSL-JSON; any other type (or none): the
  URL path's extension, as for a file; else an error naming the type, never a guess.
  ``--input-format`` overrides both.
* **Named without its query**: the report names ``scheme://host/path`` (a query may carry a
  token); the HTML is read by the same reader as a file (scripts never run, text escaped
  wherever rendered).

Every failure is one :class:`~audit.errors.DocumentError` line naming the URL.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

import httpx

from audit.errors import DocumentError, InputError, LimitExceeded
from audit.references import inputs
from audit.references.inputs import format_for
from pipeline.settings import Settings

MAX_REDIRECTS = 5
CONTENT_TYPES = {
    "text/html": "html",
    "application/xhtml+xml": "html",
    "application/pdf": "pdf",
    "text/markdown": "markdown",
    "text/x-markdown": "markdown",
    "text/plain": "text",
    "application/x-bibtex": "bibtex",
    "text/x-bibtex": "bibtex",
    "application/x-research-info-systems": "ris",
    "application/vnd.citationstyles.csl+json": "csl-json",
}


def is_url(name: str) -> bool:
    return name.lower().startswith(("http://", "https://"))


def url_label(url: str) -> str:
    """``scheme://host[:port]/path`` of ``url`` (no user info, query or fragment)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme.lower(), netloc, parts.path or "/", "", ""))


def format_of(url: str, content_type: str | None, given: str | None) -> str:
    """The format of a fetched document (module docstring)."""
    if given is not None:
        return given
    kind = (content_type or "").split(";", 1)[0].strip().lower()
    if kind in CONTENT_TYPES:
        return CONTENT_TYPES[kind]
    path = urlsplit(url).path
    try:
        return format_for(path, None)
    except InputError:
        raise DocumentError(
            f"{url_label(url)}: cannot tell the format of a {kind or 'typeless'} answer",
            advice="name it with --input-format",
        ) from None


def fetch_document(
    url: str, settings: Settings, transport: httpx.BaseTransport | None = None
) -> tuple[bytes, str | None]:
    """The body of ``url`` (at most the input limit) and its content type."""
    from pipeline.network import network_transport

    label = url_label(url)
    client = httpx.Client(
        transport=transport or network_transport(settings),  # a bad proxy/CA: its own line
        timeout=settings.timeout,
        follow_redirects=False,
    )
    with client:
        target = url
        for _ in range(MAX_REDIRECTS + 1):
            try:
                with client.stream("GET", target) as response:
                    if response.is_redirect:
                        target = _next_hop(label, response)
                        continue
                    if response.status_code != 200:
                        raise DocumentError(
                            f"{label}: answered HTTP {response.status_code} "
                            f"{response.reason_phrase}"
                        )
                    return _capped(label, response), response.headers.get("content-type")
            except httpx.HTTPError as error:
                reason = str(error).splitlines()[0] if str(error) else type(error).__name__
                raise DocumentError(f"{label}: cannot be fetched: {reason}") from None
    raise DocumentError(f"{label}: redirects more than {MAX_REDIRECTS} times")


def _next_hop(label: str, response: httpx.Response) -> str:
    location = response.headers.get("location", "")
    target = str(response.url.join(location))
    if urlsplit(target).scheme not in ("http", "https"):
        raise DocumentError(f"{label}: redirects to a {urlsplit(target).scheme or 'bad'} URL")
    return target


def _capped(label: str, response: httpx.Response) -> bytes:
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > inputs.MAX_INPUT_BYTES:
            raise LimitExceeded(f"{label}: over the limit of {inputs.MAX_INPUT_BYTES} bytes")
        chunks.append(chunk)
    return b"".join(chunks)
