"""A loopback stand-in for the part of GitHub's REST API that the Releases archive uses.

Two servers on 127.0.0.1: the API (releases, uploads, asset metadata) and a "storage host"
on another port, to which asset downloads are redirected as GitHub redirects them to its
object storage — another origin, so a client must not send the token there. Faults can be
injected: answers to return next on a path, assets whose stored bytes are corrupted.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

TOKEN = "ghs_standin-token-0123456789"


@dataclass
class Asset:
    id: int
    name: str
    data: bytes
    state: str = "uploaded"


@dataclass
class Release:
    id: int
    tag_name: str
    name: str
    body: str
    draft: bool
    assets: list[Asset] = field(default_factory=list)


@dataclass
class GitHub:
    """The stand-in's state and its addresses (``api``, the base of ``CITESEAL_GITHUB_API``)."""

    repo: str = "octo/evidence"
    releases: list[Release] = field(default_factory=list)
    tags: set[str] = field(default_factory=set)
    faults: dict[str, list[int]] = field(default_factory=dict)  # path regex → statuses to answer
    corrupt: set[str] = field(default_factory=set)  # asset names served with a flipped byte
    seen: list[tuple[str, str, bool]] = field(default_factory=list)  # method, path, had token
    api: str = ""
    storage: str = ""
    page_size: int = 100
    _next_id: int = 1

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def release(self, release_id: int) -> Release | None:
        return next((r for r in self.releases if r.id == release_id), None)

    def asset(self, asset_id: int) -> Asset | None:
        for release in self.releases:
            for asset in release.assets:
                if asset.id == asset_id:
                    return asset
        return None

    def to_json(self, release: Release) -> dict[str, Any]:
        base = f"{self.api}/repos/{self.repo}"
        return {
            "id": release.id,
            "tag_name": release.tag_name,
            "name": release.name,
            "body": release.body,
            "draft": release.draft,
            "html_url": f"https://github.invalid/{self.repo}/releases/tag/{release.tag_name}",
            "upload_url": f"{self.api}/uploads/repos/{self.repo}/releases/{release.id}/assets"
            "{?name,label}",
            "assets": [
                {
                    "id": a.id,
                    "name": a.name,
                    "size": len(a.data),
                    "state": a.state,
                    "url": f"{base}/releases/assets/{a.id}",
                }
                for a in release.assets
            ],
        }


def _json(value: object) -> bytes:
    return json.dumps(value).encode()


def _handler(hub: GitHub, storage: bool) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            del format, args

        def _answer(
            self, status: int, body: object = None, headers: dict[str, str] | None = None
        ) -> None:
            data = (
                b""
                if body is None
                else body
                if isinstance(body, bytes)
                else json.dumps(body).encode()
            )
            self.send_response(status)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _body(self) -> bytes:
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def _route(self, method: str) -> None:
            url = urlsplit(self.path)
            token = self.headers.get("Authorization") == f"Bearer {TOKEN}"
            hub.seen.append((method, url.path, "Authorization" in self.headers))
            data = self._body() if method in ("POST", "PATCH") else b""
            for pattern, statuses in hub.faults.items():
                if statuses and re.fullmatch(pattern, f"{method} {url.path}"):
                    self._answer(statuses.pop(0), {"message": "injected fault"})
                    return
            if storage:
                asset = hub.asset(int(url.path.rsplit("/", 1)[-1]))
                if asset is None:
                    self._answer(404, {"message": "Not Found"})
                    return
                body = asset.data
                if asset.name in hub.corrupt:
                    body = bytes([body[0] ^ 0xFF]) + body[1:]
                self._answer(200, body, {"Content-Type": "application/octet-stream"})
                return
            if not token:
                self._answer(401, {"message": "Bad credentials"})
                return
            self._api(method, url.path, parse_qs(url.query), data)

        def _api(self, method: str, path: str, query: dict[str, list[str]], data: bytes) -> None:
            prefix = f"/repos/{hub.repo}"
            uploads = f"/uploads{prefix}/releases/"
            if method == "GET" and path == f"{prefix}/releases":
                page = int(query.get("page", ["1"])[0])
                size = min(int(query.get("per_page", ["30"])[0]), hub.page_size)
                newest = list(reversed(hub.releases))  # GitHub lists the newest first
                chunk = newest[(page - 1) * size : page * size]
                headers = {}
                if page * size < len(newest):
                    link = f"{hub.api}{prefix}/releases?per_page={size}&page={page + 1}"
                    headers["Link"] = f'<{link}>; rel="next"'
                self._answer(200, [hub.to_json(r) for r in chunk], headers)
            elif method == "POST" and path == f"{prefix}/releases":
                fields = json.loads(data)
                if any(r.tag_name == fields["tag_name"] for r in hub.releases):
                    self._answer(422, {"message": "Validation Failed: already_exists"})
                    return
                release = Release(
                    hub.new_id(),
                    fields["tag_name"],
                    fields["name"],
                    fields["body"],
                    fields["draft"],
                )
                hub.releases.append(release)
                self._answer(201, hub.to_json(release))
            elif m := re.fullmatch(rf"{re.escape(prefix)}/releases/(\d+)", path):
                release = hub.release(int(m.group(1)))
                if release is None:
                    self._answer(404, {"message": "Not Found"})
                elif method == "GET":
                    self._answer(200, hub.to_json(release))
                elif method == "PATCH":
                    release.draft = json.loads(data).get("draft", release.draft)
                    if not release.draft:
                        hub.tags.add(release.tag_name)
                    self._answer(200, hub.to_json(release))
                elif method == "DELETE":
                    hub.releases.remove(release)
                    self._answer(204)
            elif method == "DELETE" and path.startswith(f"{prefix}/git/refs/tags/"):
                tag = path.rsplit("/", 1)[-1]
                if tag in hub.tags:
                    hub.tags.discard(tag)
                    self._answer(204)
                else:
                    self._answer(422, {"message": "Reference does not exist"})
            elif method == "POST" and path.startswith(uploads):
                release = hub.release(int(path[len(uploads) :].split("/")[0]))
                name = query["name"][0]
                if release is None:
                    self._answer(404, {"message": "Not Found"})
                    return
                asset = Asset(hub.new_id(), name, data)
                release.assets.append(asset)
                self._answer(201, {"id": asset.id, "name": name, "size": len(data)})
            elif m := re.fullmatch(rf"{re.escape(prefix)}/releases/assets/(\d+)", path):
                asset = hub.asset(int(m.group(1)))
                if asset is None:
                    self._answer(404, {"message": "Not Found"})
                elif self.headers.get("Accept") == "application/octet-stream":
                    self._answer(302, None, {"Location": f"{hub.storage}/storage/{asset.id}"})
                else:
                    self._answer(200, {"id": asset.id, "name": asset.name})
            else:
                self._answer(404, {"message": "Not Found"})

        def do_GET(self) -> None:
            self._route("GET")

        def do_POST(self) -> None:
            self._route("POST")

        def do_PATCH(self) -> None:
            self._route("PATCH")

        def do_DELETE(self) -> None:
            self._route("DELETE")

    return Handler


@contextmanager
def github_standin() -> Iterator[GitHub]:
    """Start the stand-in's two servers on 127.0.0.1; stop them after the block."""
    hub = GitHub()
    servers = [
        ThreadingHTTPServer(("127.0.0.1", 0), _handler(hub, storage)) for storage in (False, True)
    ]
    hub.api, hub.storage = (f"http://127.0.0.1:{s.server_address[1]}" for s in servers)
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in servers]
    for thread in threads:
        thread.start()
    try:
        yield hub
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
