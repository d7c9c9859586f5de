"""Sealed manifests for snapshot files that tests write by hand (not through a build).

Every command reads a snapshot only once it matches its manifest and the manifest's seal
verifies (:mod:`pipeline.snapshot.trust`), so hand-made snapshots get a real, sealed manifest.
"""

from __future__ import annotations

from pathlib import Path

from audit.keys import Keyring
from pipeline.snapshot.manifest import Manifest, sealed_with, sha256_file, write_manifest
from pipeline.snapshot.schema import SCHEMA_VERSION


def seal_snapshot(path: Path, keyring: Keyring, *, name: str | None = None) -> Manifest:
    """Write the sealed manifest of the snapshot file ``path`` as it is now."""
    manifest = Manifest(
        name=name or path.parent.name or "test",
        snapshot_id=path.stem,
        file=path.name,
        sha256=sha256_file(path),
        size=path.stat().st_size,
        created_at="2025-06-02T00:00:00Z",
        spec_hash="0" * 64,
        tool_version="test",
        schema_version=SCHEMA_VERSION,
        mode="test",
    )
    sealed = sealed_with(manifest, keyring)
    write_manifest(path, sealed)
    return sealed
