"""An archive in GitHub Releases: one immutable release per snapshot.

Each snapshot is the release tagged ``snapshot-<id>`` (``snapshot-demo-20250602T100000Z``)
with three assets: ``<id>.duckdb``, ``<id>.manifest.json`` and ``<id>.sha256``. Through the
REST API and our HTTP layer (:class:`~pipeline.http.HttpClient`: the retry policy, pacing,
redirects, deadlines, redaction of the token), with the token from ``GITHUB_TOKEN`` (or
``GH_TOKEN``; an Actions runner has one):

* **put**: a *draft* release is created, the three assets uploaded (the checksum and manifest
  first), and only then is it published — so a listing, which skips drafts, never shows a
  snapshot with missing assets; a draft left by a failed push is deleted on the next push of
  the same snapshot. A published release is never changed.
* **list**: the published releases whose tag is ``snapshot-<corpus>-<stamp>``, every page.
* **get**: the assets are downloaded (GitHub answers with a redirect to its storage host; the
  token is not sent there), each checked against the size the listing gave.
* **delete**: the release and its tag.

GitHub limits release assets to 2 GiB each (:data:`MAX_ASSET_BYTES`); a larger snapshot is
refused before anything is uploaded. ``CITESEAL_GITHUB_API`` points at another API (GitHub
Enterprise Server: ``https://HOST/api/v3``; the tests: a loopback stand-in).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from pipeline.archive import SNAPSHOT_ID, ArchivedSnapshot, SnapshotFiles, snapshot_id_parts
from pipeline.errors import ArchiveError, HarvestError
from pipeline.http import HttpClient
from pipeline.settings import Settings

SOURCE = "github"  # the HttpClient's name for these requests (logs, redaction, pacing)
TAG_PREFIX = "snapshot-"
MAX_ASSET_BYTES = 2 * 1024**3  # GitHub: each release asset is under 2 GiB
PAGE = 100  # releases per listing page (GitHub's maximum)
_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_NEXT = re.compile(r'<([^>]+)>;\s*rel="next"')


def tag_of(snapshot_id: str) -> str:
    return f"{TAG_PREFIX}{snapshot_id}"


def download_urls(repo: str, snapshot_id: str, web: str = "https://github.com") -> dict[str, str]:
    """The public web addresses of a snapshot's release and assets (for the site's pages)."""
    tag = quote(tag_of(snapshot_id), safe="")
    base = f"{web}/{repo}/releases"
    files = SnapshotFiles(Path(f"{snapshot_id}.duckdb"))
    return {
        "release": f"{base}/tag/{tag}",
        **{path.name: f"{base}/download/{tag}/{quote(path.name)}" for path in files.all()},
    }


@dataclass(frozen=True)
class _Asset:
    id: int
    name: str
    size: int
    url: str  # the API address of the asset (downloaded with Accept: octet-stream)


class ReleasesArchive:
    """Sealed snapshots kept as GitHub releases (see the module docstring)."""

    max_file_bytes: int | None = MAX_ASSET_BYTES - 1

    def __init__(self, repo: str, client: HttpClient, *, token: str, api: str) -> None:
        if not _REPO.match(repo):
            raise ArchiveError(f"github:{repo} is not github:OWNER/REPO")
        self.repo = repo
        self._client = client
        self._api = api.rstrip("/")
        self._headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
        }

    @classmethod
    def for_target(cls, repo: str, settings: Settings) -> ReleasesArchive:
        """The archive of ``github:REPO`` with the token and API address from the settings."""
        if not settings.github_token:
            raise ArchiveError(
                f"github:{repo} needs a token",
                advice="set GITHUB_TOKEN (an Actions runner has one; locally: gh auth token)",
            )
        return cls(repo, HttpClient(settings), token=settings.github_token, api=settings.github_api)

    @property
    def label(self) -> str:
        return f"github:{self.repo}"

    # -- the archive --------------------------------------------------------------------------

    def list(self, corpus: str) -> list[ArchivedSnapshot]:
        found = []
        for release in self._releases():
            item = self._item(release, corpus)
            if item is not None:
                found.append(item)
        return sorted(found, key=lambda item: item.stamp)

    def put(self, files: SnapshotFiles) -> str:
        corpus, _ = snapshot_id_parts(files.snapshot_id)
        tag = tag_of(files.snapshot_id)
        for release in self._releases(drafts=True):
            if release.get("tag_name") == tag:
                if not release.get("draft"):
                    raise ArchiveError(f"{self.label} already holds {files.snapshot_id}")
                self._call("DELETE", f"/releases/{release['id']}", expect=(204,))
        release = self._json(
            "POST",
            "/releases",
            body={
                "tag_name": tag,
                "name": f"Snapshot {files.snapshot_id}",
                "body": _notes(files.snapshot_id, corpus),
                "draft": True,
            },
            expect=(201,),
        )
        release_id = _field(release, "id", int)
        try:
            upload = _field(release, "upload_url", str).split("{", 1)[0]
            for path, kind in (
                (files.checksum, "text/plain"),
                (files.manifest, "application/json"),
                (files.snapshot, "application/octet-stream"),
            ):
                self._upload(upload, path, kind)
            published = self._json(
                "PATCH", f"/releases/{release_id}", body={"draft": False}, expect=(200,)
            )
        except BaseException:
            self._forget_draft(release_id)
            raise
        return str(published.get("html_url") or f"{self.label}@{tag}")

    def checksum(self, item: ArchivedSnapshot) -> str:
        asset = self._assets(item)[f"{item.snapshot_id}.sha256"]
        response = self._call(
            "GET", asset.url, headers={"Accept": "application/octet-stream"}, absolute=True
        )
        try:
            return response.content.decode("ascii")
        except UnicodeDecodeError:
            raise ArchiveError(f"the checksum of {item.snapshot_id} is not text") from None

    def get(self, item: ArchivedSnapshot, folder: Path) -> SnapshotFiles:
        assets = self._assets(item)
        files = SnapshotFiles(folder / f"{item.snapshot_id}.duckdb")
        for path in files.all():
            asset = assets[path.name]
            try:
                self._client.download(
                    asset.url,
                    path,
                    source=SOURCE,
                    headers={**self._headers, "Accept": "application/octet-stream"},
                    size=asset.size,
                )
            except HarvestError as error:
                raise ArchiveError(
                    f"cannot download {path.name} from {self.label}: {error.message}"
                ) from None
        return files

    def delete(self, item: ArchivedSnapshot) -> None:
        self._call("DELETE", f"/releases/{item.handle}", expect=(204,))
        tag = quote(tag_of(item.snapshot_id), safe="")
        self._call("DELETE", f"/git/refs/tags/{tag}", expect=(204, 422))  # 422: no such tag

    # -- the API ------------------------------------------------------------------------------

    def _releases(self, *, drafts: bool = False) -> list[dict[str, Any]]:
        """Every release of the repository (all pages); drafts only when asked."""
        out: list[dict[str, Any]] = []
        url: str | None = f"{self._api}/repos/{self.repo}/releases?per_page={PAGE}"
        seen: set[str] = set()
        while url is not None and url not in seen:
            seen.add(url)
            response = self._call("GET", url, absolute=True)
            page = _decode(response, "the release listing")
            if not isinstance(page, list):
                raise ArchiveError(f"{self.label}: the release listing is not a list")
            out.extend(r for r in page if isinstance(r, dict) and (drafts or not r.get("draft")))
            match = _NEXT.search(response.headers.get("link", ""))
            url = match.group(1) if match else None
        return out

    def _item(self, release: Mapping[str, Any], corpus: str) -> ArchivedSnapshot | None:
        tag = release.get("tag_name")
        if not isinstance(tag, str) or not tag.startswith(TAG_PREFIX):
            return None
        snapshot_id = tag.removeprefix(TAG_PREFIX)
        match = SNAPSHOT_ID.match(snapshot_id)
        if match is None or match["corpus"] != corpus:
            return None
        assets = _assets_of(release)
        snapshot = assets.get(f"{snapshot_id}.duckdb")
        return ArchivedSnapshot(
            corpus=corpus,
            snapshot_id=snapshot_id,
            size=snapshot.size if snapshot else None,
            location=str(release.get("html_url") or tag),
            handle=str(release.get("id", "")),
        )

    def _assets(self, item: ArchivedSnapshot) -> dict[str, _Asset]:
        release = self._json("GET", f"/releases/{item.handle}", expect=(200,))
        assets = _assets_of(release)
        missing = [p.name for p in SnapshotFiles(Path(f"{item.snapshot_id}.duckdb")).all()]
        missing = [name for name in missing if name not in assets]
        if missing:
            raise ArchiveError(
                f"{self.label}: the release of {item.snapshot_id} lacks {', '.join(missing)}"
            )
        return assets

    def _upload(self, upload_url: str, path: Path, kind: str) -> None:
        try:
            self._client.upload(
                f"{upload_url}?name={quote(path.name)}",
                path,
                source=SOURCE,
                headers={**self._headers, "Content-Type": kind},
                expect=(201,),
            )
        except HarvestError as error:
            raise ArchiveError(
                f"cannot upload {path.name} to {self.label}: {error.message}"
            ) from None

    def _forget_draft(self, release_id: int) -> None:
        """Delete a draft a failed push left (best effort: the next push deletes it too)."""
        with contextlib.suppress(ArchiveError):
            self._call("DELETE", f"/releases/{release_id}", expect=(204, 404))

    def _json(
        self,
        method: str,
        path: str,
        *,
        body: Mapping[str, Any] | None = None,
        expect: tuple[int, ...] = (200,),
    ) -> dict[str, Any]:
        response = self._call(method, path, body=body, expect=expect)
        document = _decode(response, f"{method} {path}")
        if not isinstance(document, dict):
            raise ArchiveError(f"{self.label}: {method} {path} did not answer an object")
        return document

    def _call(
        self,
        method: str,
        path: str,
        *,
        body: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        expect: tuple[int, ...] = (200,),
        absolute: bool = False,
    ) -> Any:
        url = path if absolute else f"{self._api}/repos/{self.repo}{path}"
        try:
            return self._client.call(
                method,
                url,
                source=SOURCE,
                headers={**self._headers, **(headers or {})},
                json=body,
                expect=expect,
            )
        except HarvestError as error:
            raise ArchiveError(f"{self.label}: {error.message}", advice=error.advice) from None


def _decode(response: Any, what: str) -> Any:
    try:
        return response.json()
    except (ValueError, RecursionError):
        raise ArchiveError(f"GitHub answered {what} with something that is not JSON") from None


def _field(document: Mapping[str, Any], key: str, kind: type) -> Any:
    value = document.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ArchiveError(f"GitHub's answer has no {key!r} ({kind.__name__})")
    return value


def _assets_of(release: Mapping[str, Any]) -> dict[str, _Asset]:
    assets: dict[str, _Asset] = {}
    raw = release.get("assets")
    for asset in raw if isinstance(raw, list) else []:
        if not isinstance(asset, dict):
            continue
        name, size, url, asset_id = (asset.get(k) for k in ("name", "size", "url", "id"))
        state = asset.get("state", "uploaded")
        if (
            isinstance(name, str)
            and isinstance(size, int)
            and isinstance(url, str)
            and isinstance(asset_id, int)
            and state == "uploaded"
        ):
            assets[name] = _Asset(asset_id, name, size, url)
    return assets


def _notes(snapshot_id: str, corpus: str) -> str:
    return (
        f"A sealed citeseal snapshot of corpus `{corpus}`.\n\n"
        f"Check a download with `sha256sum -c {snapshot_id}.sha256`; the key holder checks the "
        f"manifest's seal with `citeseal snapshot verify {snapshot_id}.duckdb`. Re-audit a "
        f"published report with `citeseal reaudit REPORT.json --snapshot {snapshot_id}.duckdb`."
    )
