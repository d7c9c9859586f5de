"""The manifest beside each snapshot: ``<name>-<stamp>.manifest.json``.

It holds the sha256 of the snapshot file, the parent (path relative to the manifest and its
sha256), the spec hash, tool/schema/segmentation versions, per-source counts and statuses,
the requests that failed, and whether the snapshot is ``partial`` (some request failed: the
records those requests concerned are the parent's, carried unchanged; ``carried`` counts the
records of the lineage the harvest did not refresh). Its ``seal`` is an HMAC-SHA256 under the
installation's keyring over everything else in it (:func:`seal_message`), so whoever holds the
key can tell a manifest citeseal wrote from one written or edited by anyone else; the sha256
in it binds the file. :mod:`pipeline.snapshot.trust` checks both before any command reads a
snapshot.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from audit.keys import Keyring
from pipeline.errors import SnapshotError

MANIFEST_FORMAT = "citeseal-snapshot-manifest"
MANIFEST_VERSION = 1


class ParentRef(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str  # relative to the manifest's folder when possible
    sha256: str
    snapshot_id: str | None = None


class SourceSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: str  # ok | partial | failed | not_harvested
    records: int = 0
    passages: int = 0
    new_versions: int = 0
    failed_requests: int = 0
    refused: dict[str, int] = Field(default_factory=dict)  # records refused at parse, by reason


class FailedRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: str
    step: str
    error: str


class ManifestSeal(BaseModel):
    """The HMAC seal of a manifest: which key made it and the tag (never the key)."""

    model_config = ConfigDict(extra="forbid")

    algorithm: Literal["hmac-sha256"] = "hmac-sha256"
    key: str  # the fingerprint of the key that sealed it (audit.keys.DEMO_FINGERPRINT: demo)
    mac: str  # 64 hex digits over seal_message(the manifest without its seal)


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: str = MANIFEST_FORMAT
    format_version: int = MANIFEST_VERSION
    name: str
    snapshot_id: str
    file: str
    sha256: str
    size: int
    created_at: str
    parent: ParentRef | None = None
    rebuilt_from: ParentRef | None = None
    spec_hash: str
    tool_version: str
    schema_version: int
    segmentation_version: str | None = None
    mode: str  # live | replay | rebuild
    records: int = 0  # distinct records in the lineage
    versions: int = 0  # record versions held
    passages: int = 0  # passages held (all versions)
    withdrawn: int = 0  # records newly marked withdrawn in this snapshot
    carried: int = 0  # lineage records not refreshed by this harvest (their parent state kept)
    partial: bool = False  # some request failed (always True when failed_requests is not empty)
    sources: dict[str, SourceSummary] = Field(default_factory=dict)
    failed_requests: list[FailedRequest] = Field(default_factory=list)
    seal: ManifestSeal | None = None  # None: written before seals existed, or stripped

    @model_validator(mode="after")
    def _failures_make_it_partial(self) -> Manifest:
        # a manifest written before the field existed says so through its failed requests
        if self.failed_requests and not self.partial:
            self.partial = True
        return self


def manifest_path(snapshot: Path) -> Path:
    """``demo-20250602T100000Z.duckdb`` → ``demo-20250602T100000Z.manifest.json``."""
    return snapshot.with_name(snapshot.name.removesuffix(".duckdb") + ".manifest.json")


def sha256_file(path: Path, *, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def read_manifest(snapshot: Path) -> Manifest:
    """The manifest of ``snapshot``; :class:`SnapshotError` when missing or unreadable."""
    return read_sealed_manifest(snapshot)[0]


def read_sealed_manifest(snapshot: Path) -> tuple[Manifest, bytes]:
    """The manifest of ``snapshot`` and the message its seal covers (:func:`seal_message` of
    the document as stored, so fields added by a later citeseal cannot change it)."""
    path = manifest_path(snapshot)
    try:
        data: Any = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise SnapshotError(
            f"snapshot {snapshot} has no manifest ({path.name} is missing)"
        ) from None
    except (OSError, ValueError, RecursionError) as error:
        reason = error.strerror if isinstance(error, OSError) else "not valid JSON"
        raise SnapshotError(f"cannot read manifest {path}: {reason or error}") from None
    try:
        manifest = Manifest.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise SnapshotError(f"manifest {path} is invalid: {loc}: {first['msg']}") from None
    return manifest, seal_message(data)


def seal_message(document: dict[str, Any]) -> bytes:
    """The bytes a manifest's seal covers: the document without ``seal``, as canonical JSON
    (keys sorted, no spaces, ASCII only)."""
    rest = {key: value for key, value in document.items() if key != "seal"}
    return json.dumps(rest, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def sealed_with(manifest: Manifest, keyring: Keyring) -> Manifest:
    """``manifest`` with a fresh seal under the keyring's current key (any old seal replaced)."""
    document = manifest.model_dump(mode="json", exclude={"seal"})
    seal = ManifestSeal(key=keyring.fingerprint, mac=keyring.seal(seal_message(document)))
    return manifest.model_copy(update={"seal": seal})


def fsync_path(path: Path) -> None:
    """fsync a file or a folder (so a rename inside it is durable)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_manifest(snapshot: Path, manifest: Manifest) -> Path:
    """Write the manifest atomically (temp file, fsync, rename, fsync the folder)."""
    path = manifest_path(snapshot)
    text = json.dumps(manifest.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".manifest-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_path(path.parent)
    return path


def relative_to(path: Path, folder: Path) -> str:
    """``path`` relative to ``folder`` when possible, else absolute."""
    try:
        return os.path.relpath(path.resolve(), folder.resolve())
    except ValueError:
        return str(path.resolve())
