"""Keep credentials out of URLs, log lines, error messages and recorded exchanges.

Three tools:

* :func:`strip_credentials` removes the polite/credential query parameters (``api_key``,
  ``email``, ``tool``, ``mailto``) from a URL or a form body, so what is recorded or shown is
  the request *as the API sees it minus who asked*.
* :class:`Redactor` replaces every known secret value (API keys and the contact e-mail) with
  ``[REDACTED]`` in any text — a last line of defence for messages that quote a URL or a body —
  and, with :meth:`Redactor.bytes`, in a response body before it is stored: an API may echo
  a key back (NCBI's rate-limit reply carries ``"api-key": "…"``).
* :func:`request_secrets` lists the credential values a request carries (``api_key``,
  ``email``, ``mailto`` in its query or form), for a transport that knows no settings, and
  :func:`carries_credentials` tells whether it carries any of :data:`CREDENTIAL_PARAMS` (the
  client follows such a request's redirects only within its origin).

The contact e-mail is not a secret in the API sense, but it is personal data and adds nothing
to a log line or a snapshot, so it is redacted too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

CREDENTIAL_PARAMS = frozenset({"api_key", "email", "tool", "mailto"})
SECRET_PARAMS = frozenset({"api_key", "email", "mailto"})  # ``tool`` names us, it is no secret
REDACTED = "[REDACTED]"


def strip_credentials(url: str) -> str:
    """The URL without credential/polite query parameters (other parameters keep their order)."""
    parts = urlsplit(url)
    if not parts.query:
        return url
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    kept = [(k, v) for k, v in pairs if k.lower() not in CREDENTIAL_PARAMS]
    if len(kept) == len(pairs):
        return url
    query = urlencode(kept, quote_via=quote, safe="")
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))


def strip_form_credentials(body: str) -> str:
    """A form-encoded body without credential/polite parameters."""
    kept = [
        (k, v)
        for k, v in parse_qsl(body, keep_blank_values=True)
        if k.lower() not in CREDENTIAL_PARAMS
    ]
    return urlencode(kept, quote_via=quote, safe=",")


def request_secrets(url: str, form: str | None = None) -> list[str]:
    """The values of the secret parameters (:data:`SECRET_PARAMS`) in a URL and a form body."""
    pairs = parse_qsl(urlsplit(url).query, keep_blank_values=True)
    if form:
        pairs += parse_qsl(form, keep_blank_values=True)
    return [v for k, v in pairs if k.lower() in SECRET_PARAMS and v]


def carries_credentials(url: str, form: str | None = None) -> bool:
    """Whether a URL's query or a form body holds a credential/polite parameter
    (:data:`CREDENTIAL_PARAMS`), even an empty one."""
    pairs = parse_qsl(urlsplit(url).query, keep_blank_values=True)
    if form:
        pairs += parse_qsl(form, keep_blank_values=True)
    return any(k.lower() in CREDENTIAL_PARAMS for k, _ in pairs)


class Redactor:
    """Replaces known secret values (and their URL-encoded forms) in text or bytes."""

    def __init__(self, secrets: Iterable[str | None]) -> None:
        values: set[str] = set()
        for secret in secrets:
            if secret and len(secret) >= 3:
                values.add(secret)
                values.add(quote(secret, safe=""))
                values.add(quote(secret, safe="@"))
        ordered = sorted(values, key=len, reverse=True)
        self._pattern = re.compile("|".join(re.escape(v) for v in ordered)) if ordered else None
        self._bytes = (
            re.compile(b"|".join(re.escape(v.encode("utf-8", "replace")) for v in ordered))
            if ordered
            else None
        )

    def __bool__(self) -> bool:
        """False when there is nothing to redact."""
        return self._pattern is not None

    def __call__(self, text: str) -> str:
        if self._pattern is None:
            return text
        return self._pattern.sub(REDACTED, text)

    def bytes(self, data: bytes) -> bytes:
        """``data`` with every secret value (raw or URL-encoded) replaced by ``[REDACTED]``."""
        if self._bytes is None:
            return data
        return self._bytes.sub(REDACTED.encode(), data)
