"""Replay and record HTTP exchanges as wrapper files, so the same code runs offline.

Wrapper file format (the one of ``../shared/reference-responses/``)::

    {"url": "...", "method": "POST", "request_body": "db=pubmed&id=1%2C2",
     "status": 200, "content_type": "text/xml", "body": "<the raw body as text>"}

``method`` (default ``GET``), ``request_body`` and ``location`` (the ``Location`` header of a
recorded redirect, so the client follows the same chain on replay) are optional. A request
matches a file when the method, the scheme/host/path, the query parameters
(order-insensitive, percent-encoding normalised) and, for POST, the form parameters are equal
— credential and polite parameters (``api_key``, ``email``, ``tool``, ``mailto``) are ignored
on both sides. A request sent to a configured base URL (a mirror) is keyed, recorded and
matched by its public URL (:func:`pipeline.network.key_url`), so recordings made through a
mirror and without one are interchangeable.

:class:`ReplayTransport` indexes its folders once at construction (keys only; bodies are read
when a request asks for them). A file as :class:`RecordingTransport` writes it (its key
hashed into its name, the body last) is indexed from the keys before its body; any other
file is parsed whole. :class:`RecordingTransport` wraps a real transport and writes
each successful exchange as ``<folder>/<source-or-host>/<endpoint>-<hash>.json``.

A folder written by ``citeseal replay import`` (:mod:`pipeline.replay_import`: it holds
``citeseal-replay.json``) also holds *parts* of by-id answers, one file per id under
``units/<kind>/``, indexed by their names. A request no exact exchange answers is read for
what it asks (:func:`pipeline.replay_match.asked_of`); a by-id request is answered from the
parts of the ids it asks, each taken from the first folder that holds a part that serves it,
merged into one body in the API's format (:func:`pipeline.replay_match.answer`). When one
id asked has no such part the request fails (:class:`~pipeline.errors.ReplayMissError`,
naming the ids): never an answer that silently lacks it. An id held as *absent* (recorded in
an answer that did not hold it) is left out of the answer, as the API left it out. Where no
folder holds an imported part for an id, the first recorded by-id exchange that asked for
it answers it (its body placed once, as ``replay import`` places a file:
:func:`pipeline.replay_units.place`): a first build's whole batches answer a refresh build's
batches, which keep room for lineage controls, and one DOI's recorded Crossref notices
answer a batch that names it (a recorded list that is not the whole answer is an error).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

import httpx

from audit.paths import public_path
from pipeline.bodies import read_limited
from pipeline.errors import ParseError, ReplayMissError
from pipeline.http import SOURCE_EXTENSION
from pipeline.network import key_url
from pipeline.pacing import busy_check
from pipeline.redact import (
    CREDENTIAL_PARAMS,
    Redactor,
    request_secrets,
    strip_credentials,
    strip_form_credentials,
)
from pipeline.replay_match import (
    CROSSREF_UPDATES,
    KINDS,
    Asked,
    Part,
    answer,
    asked_of,
    kind_of,
    serves,
)
from pipeline.replay_units import place
from pipeline.retry_policy import RETRY_STATUSES
from pipeline.settings import Settings
from pipeline.xmlsafe import decode_json, load_json

ReplayKey = tuple[str, str, tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]
IMPORT_MANIFEST = "citeseal-replay.json"  # marks a folder written by ``replay import``
IMPORT_UNITS = "units"


def _pairs(query: str) -> tuple[tuple[str, str], ...]:
    return tuple(
        sorted(
            (k, v)
            for k, v in parse_qsl(query, keep_blank_values=True)
            if k.lower() not in CREDENTIAL_PARAMS
        )
    )


def replay_key(method: str, url: str, request_body: str | None = None) -> ReplayKey:
    """The normalised matching key of a request (see the module docstring)."""
    parts = urlsplit(url)
    base = f"{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path or '/'}"
    form = _pairs(request_body) if request_body and method.upper() != "GET" else ()
    return (method.upper(), base, _pairs(parts.query), form)


def short_hash(key: ReplayKey) -> str:
    """A stable 12-hex-digit hash of a replay key (used in recorded file names)."""
    return hashlib.sha256(json.dumps(key).encode("utf-8")).hexdigest()[:12]


def _request_body(request: httpx.Request) -> str | None:
    if request.method == "GET":
        return None
    request.read()
    return request.content.decode("utf-8", "replace") if request.content else None


def public_folder(folder: Path) -> str:
    """A replay or record folder as messages name it: relative to the working folder when
    inside it, else its last part (:func:`audit.paths.public_path`), so no absolute local path
    reaches a manifest, a harvest log or the site through an error."""
    return public_path(str(folder), cwd=str(Path.cwd()))


def _describe(request: httpx.Request) -> str:
    text = f"{request.method} {strip_credentials(str(request.url))}"
    body = _request_body(request)
    if body:
        form = strip_form_credentials(body)
        text += f" (form {form[:120]}{'…' if len(form) > 120 else ''})"
    return text


class ReplayTransport(httpx.BaseTransport):
    """Serves recorded wrapper files; folders are searched in order, the first match wins."""

    offline = True  # HttpClient does not pace an offline transport

    def __init__(self, folders: Sequence[Path]) -> None:
        self.folders = [Path(f) for f in folders]
        self._index: dict[ReplayKey, tuple[Path, Path]] = {}  # key -> (folder, file)
        self._parts: dict[tuple[str, str], list[tuple[Path, Path]]] = {}  # (kind, id) -> files
        # (kind, id) -> the recorded by-id exchanges that asked for it (module docstring)
        self._recorded: dict[tuple[str, str], list[tuple[Path, Path]]] = {}
        self._placed: dict[Path, _Placed] = {}  # a recorded file's parts, once placed
        for folder in self.folders:
            if not folder.is_dir():
                raise ReplayMissError(
                    f"replay folder {public_folder(folder)} does not exist",
                    advice="pass a folder of recorded exchanges with --replay",
                )
            units = folder / IMPORT_UNITS if (folder / IMPORT_MANIFEST).is_file() else None
            if units is not None:
                self._index_parts(folder, units)
            for path in sorted(folder.rglob("*.json")):
                if units is not None and path.is_relative_to(units):
                    continue
                key = self._key_of(path)
                if key is not None:
                    self._index.setdefault(key, (folder, path))
                    for asked in _by_id_asked(key):
                        self._recorded.setdefault(asked, []).append((folder, path))

    def _index_parts(self, folder: Path, units: Path) -> None:
        """The parts of an imported folder, by their names (``units/<kind>/<id>.json``)."""
        for kind in KINDS:
            for path in sorted((units / kind).glob("*.json")):
                ident = unquote(path.name.removesuffix(".json").partition("~")[0])
                self._parts.setdefault((kind, ident), []).append((folder, path))

    def __len__(self) -> int:
        return len(self._index)

    @staticmethod
    def _key_of(path: Path) -> ReplayKey | None:
        try:
            data = path.read_bytes()
        except OSError:
            return None
        key = _recorded_key(path, data)
        if key is not None:
            return key
        try:
            wrapper = decode_json(data, what="a wrapper file")
        except (ValueError, ParseError):  # not JSON, or nested too deep: not a wrapper
            return None
        if not isinstance(wrapper, dict) or not isinstance(wrapper.get("url"), str):
            return None
        method = wrapper.get("method") or "GET"
        return replay_key(str(method), wrapper["url"], wrapper.get("request_body"))

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        key = replay_key(request.method, key_url(request), _request_body(request))
        found = self._index.get(key)
        asked = None
        if found is None and (self._parts or self._recorded):
            asked = asked_of(request.method, str(request.url), _request_body(request))
        if asked is not None:
            return self._answer(request, asked)
        if found is None:
            folders = ", ".join(public_folder(f) for f in self.folders)
            raise ReplayMissError(
                f"no recorded exchange for {_describe(request)} in {folders}",
                advice="record it first (citeseal snapshot build --record FOLDER) "
                "or add a wrapper file for it",
            )
        folder, path = found
        return _response(
            request, path, f"{public_folder(folder)}/{path.relative_to(folder).as_posix()}"
        )

    def _answer(self, request: httpx.Request, asked: Asked) -> httpx.Response:
        """A by-id request answered from the parts of its ids (module docstring)."""
        parts: list[Part] = []
        lacking: list[str] = []
        for ident in asked.ids:
            part = self._part(asked, ident)
            if part is None:
                lacking.append(ident)
            else:
                parts.append(part)
        if lacking:
            source, what = KINDS[asked.kind]
            shown = ", ".join(lacking[:5]) + (", …" if len(lacking) > 5 else "")
            folders = ", ".join(public_folder(f) for f in self.folders)
            kind = kind_of(asked.kind)  # a kind whose parts remember the fields they hold
            fields = " with the fields asked" if kind is not None and kind.serves else ""
            raise ReplayMissError(
                f"{folders} hold{'s' if len(self.folders) == 1 else ''} no recorded {source} "
                f"answer{fields} for {len(lacking)} of the {len(asked.ids)} {what}(s) asked by "
                f"{_describe(request)}: {shown}",
                advice="import responses that hold them (citeseal replay import) or record "
                "them (citeseal snapshot build --record FOLDER)",
            )
        status, content_type, body = answer(asked, parts)
        return httpx.Response(
            status,
            headers={"content-type": content_type},
            content=body.encode("utf-8"),
            request=request,
        )

    def _part(self, asked: Asked, ident: str) -> Part | None:
        """The part of the first folder that has one serving ``ident`` for ``asked``: a held
        part, else the id recorded absent."""
        absent: tuple[Path, Part] | None = None
        for folder, path in self._parts.get((asked.kind, ident), []):
            if absent is not None and absent[0] != folder:
                break  # an earlier folder recorded it absent and holds no part for it
            shown = f"{public_folder(folder)}/{path.relative_to(folder).as_posix()}"
            part = _read_part(path, shown)
            if part.kind != asked.kind or part.ident != ident:
                raise ParseError(
                    f"the part file {shown} holds {part.kind} {part.ident}, not what its name says"
                )
            if part.held and serves(part, asked.fields):
                return part
            if not part.held and absent is None:
                absent = (folder, part)
        if absent is None:
            return self._recorded_part(asked, ident)
        return absent[1]

    def _recorded_part(self, asked: Asked, ident: str) -> Part | None:
        """The part for ``ident`` from the first recorded by-id exchange that asked for it
        (a first build's batch answering a refresh's, Crossref's notices of one DOI from a
        batch; module docstring): placed once per file, like an imported one."""
        for folder, path in self._recorded.get((asked.kind, ident), [])[:1]:
            shown = f"{public_folder(folder)}/{path.relative_to(folder).as_posix()}"
            placed = self._placed.get(path)
            if placed is None:
                placed = self._placed[path] = _placed_parts(path, shown)
            parts, reason = placed
            part = parts.get((asked.kind, ident))
            if part is not None and part.held and serves(part, asked.fields):
                return part
            if part is not None and not part.held and reason is None:
                return part  # the whole recorded answer lacked it: recorded absent
            if asked.kind == CROSSREF_UPDATES:
                raise ParseError(
                    f"the recorded exchange {shown} cannot answer the Crossref notices of "
                    f"{ident}: {reason or 'it holds no part for it'}"
                )
        return None


_Placed = tuple[dict[tuple[str, str], Part], str | None]  # parts by (kind, id), why none


def _placed_parts(path: Path, shown: str) -> _Placed:
    """The parts a recorded wrapper file holds, by (kind, id), and why it holds none."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ReplayMissError(
            f"the wrapper file {shown} cannot be read: {error.strerror or error}"
        ) from None
    wrapper = load_json(data, what=f"the wrapper file {shown}")
    body = wrapper.get("body") if isinstance(wrapper, dict) else None
    status = wrapper.get("status", 200) if isinstance(wrapper, dict) else None
    if not isinstance(body, str) or not isinstance(status, int):
        raise ParseError(f"the wrapper file {shown} is not a wrapper of a body")
    form = wrapper.get("request_body")
    placement = place(
        body,
        url=str(wrapper.get("url")),
        method=str(wrapper.get("method") or "GET"),
        form=form if isinstance(form, str) else None,
        status=status,
    )
    return {(p.kind, p.ident): p for p in placement.parts}, placement.reason


def _by_id_asked(key: ReplayKey) -> list[tuple[str, str]]:
    """The (kind, id) a recorded request asks for by id (none: another request)."""
    method, base, query, form = key
    url = f"{base}?{urlencode(query)}" if query else base
    asked = asked_of(method, url, urlencode(form) if form else None)
    return [(asked.kind, i) for i in asked.ids] if asked is not None else []


def _read_part(path: Path, shown: str) -> Part:
    """One part file of an imported folder; a file that cannot be read or is no part is a
    one-line error naming it by ``shown``."""
    what = f"the part file {shown}"
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ReplayMissError(f"{what} cannot be read: {error.strerror or error}") from None
    value = load_json(data, what=what)
    fields = value.get("fields") if isinstance(value, dict) else None
    if (
        not isinstance(value, dict)
        or not isinstance(value.get("kind"), str)
        or not isinstance(value.get("id"), str)
        or not isinstance(value.get("held"), bool)
        or not isinstance(value.get("fragment", ""), str)
        or not (
            fields is None or (isinstance(fields, list) and all(isinstance(f, str) for f in fields))
        )
    ):
        raise ParseError(f"{what} is not a part (an object with kind, id, held and fragment)")
    return Part(
        value["kind"],
        value["id"],
        held=value["held"],
        fragment=value.get("fragment", ""),
        fields=tuple(fields) if fields is not None else None,
    )


def _response(request: httpx.Request, path: Path, shown: str) -> httpx.Response:
    """The answer a wrapper file holds; a file that cannot be read, or is no wrapper (it
    changed since it was indexed), is a one-line error naming it by ``shown``."""
    what = f"the wrapper file {shown}"
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ReplayMissError(f"{what} cannot be read: {error.strerror or error}") from None
    wrapper = load_json(data, what=what)
    status = wrapper.get("status", 200) if isinstance(wrapper, dict) else None
    if not isinstance(status, int) or isinstance(status, bool) or not 100 <= status <= 599:
        raise ParseError(f"{what} is not a wrapper (an object with an HTTP status)")
    body = wrapper.get("body", "")
    content = body.encode("utf-8") if isinstance(body, str) else json.dumps(body).encode()
    headers = {"content-type": str(wrapper.get("content_type") or "application/octet-stream")}
    if isinstance(wrapper.get("location"), str):
        headers["location"] = wrapper["location"]  # a recorded redirect
    return httpx.Response(status, headers=headers, content=content, request=request)


_HASHED_NAME = re.compile(r".*-([0-9a-f]{12})\.json")
_BODY_LINE = b'\n "body": '  # the body key of a wrapper written by write_wrapper


def _recorded_key(path: Path, data: bytes) -> ReplayKey | None:
    """The key of a wrapper written by :class:`RecordingTransport`, from the keys before its
    body (a large body is most of the parsing), or None: parse the whole file.

    Exact, not a guess: the line ``\n "body": `` can only be the top-level key (a JSON
    string holds no raw newline, and the head parses as an object only when cut at the top
    level), and the key is used only when it hashes to the name the file was recorded
    under — a file edited or renamed by hand is parsed whole.
    """
    named = _HASHED_NAME.fullmatch(path.name)
    cut = data.find(_BODY_LINE)
    if named is None or cut < 0:
        return None
    try:
        head = decode_json(data[:cut].rstrip().rstrip(b",") + b"}", what="a wrapper file")
    except (ValueError, ParseError):
        return None
    if not isinstance(head, dict) or not isinstance(head.get("url"), str):
        return None
    body = head.get("request_body")
    key = replay_key(
        str(head.get("method") or "GET"), head["url"], body if isinstance(body, str) else None
    )
    return key if short_hash(key) == named.group(1) else None


def _slug(text: str, *, limit: int = 40) -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_")
    return slug[:limit] or "root"


def wrapper_name(request: httpx.Request, key: ReplayKey) -> str:
    """``<source-or-host>/<endpoint>-<hash>.json`` for a request."""
    source = request.extensions.get(SOURCE_EXTENSION)
    url = httpx.URL(key_url(request))
    folder = _slug(source if isinstance(source, str) and source else url.host)
    segments = [s for s in url.path.split("/") if s]
    endpoint = _slug(segments[-1].split(".")[0] if segments else "root")
    return f"{folder}/{endpoint}-{short_hash(key)}.json"


def write_wrapper(path: Path, wrapper: dict[str, object]) -> None:
    """Write a wrapper file atomically (temp file in the same folder, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(wrapper, ensure_ascii=False, indent=1) + "\n"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        Path(tmp).replace(path)
    except OSError:
        Path(tmp).unlink(missing_ok=True)
        raise


def make_wrapper(
    method: str,
    url: str,
    status: int,
    content_type: str,
    body: str,
    request_body: str | None = None,
    location: str | None = None,
) -> dict[str, object]:
    """A wrapper dict in the canonical key order (body last), credentials stripped;
    ``location`` is the ``Location`` header of a redirect."""
    wrapper: dict[str, object] = {"url": strip_credentials(url)}
    if method.upper() != "GET":
        wrapper["method"] = method.upper()
        if request_body:
            wrapper["request_body"] = strip_form_credentials(request_body)
    wrapper["status"] = status
    if location:
        wrapper["location"] = strip_credentials(location)
    wrapper["content_type"] = content_type
    wrapper["body"] = body
    return wrapper


class RecordingTransport(httpx.BaseTransport):
    """Passes requests to ``inner`` and writes every final answer as a wrapper file.

    Answers the retry policy will retry (429/5xx, NCBI rate-limit bodies) are not written,
    so a later successful attempt is what ends up on disk. The body is read by
    :func:`pipeline.bodies.read_limited` within the bounds the client put on the request (its
    deadline, and the smaller of its cap and ``max_bytes``, the settings' default unless
    given), so an answer that fails them (too slow, too large, not decodable) raises here and
    is never written. The credential values the request carries are redacted from the body
    before it is written, as from its URL (an API may echo them back).
    """

    def __init__(
        self,
        inner: httpx.BaseTransport,
        folder: Path,
        *,
        max_bytes: int = Settings.max_response_bytes,
    ) -> None:
        self.inner = inner
        self.folder = Path(folder)
        self.max_bytes = max_bytes
        self.written: list[Path] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        answer = self.inner.handle_request(request)
        response = read_limited(answer, request, max_bytes=self.max_bytes)
        content = response.content
        source = request.extensions.get(SOURCE_EXTENSION)
        busy = busy_check(source, request.url.host)  # a refusal for rate is never recorded
        if response.status_code in RETRY_STATUSES or (busy is not None and busy(content)):
            return response
        body_text = _request_body(request)
        key = replay_key(request.method, key_url(request), body_text)
        path = self.folder / wrapper_name(request, key)
        redact = Redactor(request_secrets(str(request.url), body_text))
        write_wrapper(
            path,
            make_wrapper(
                request.method,
                key_url(request),
                response.status_code,
                response.headers.get("content-type", ""),
                redact(content.decode("utf-8", "replace")),
                body_text,
                response.headers.get("location") if response.is_redirect else None,
            ),
        )
        self.written.append(path)
        return response

    def close(self) -> None:
        self.inner.close()
