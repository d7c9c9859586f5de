"""``snapshot rebuild PATH``: re-parse a snapshot's stored responses with today's parsers.

The raw responses a snapshot was built from are written to a temporary replay folder and the
snapshot's own spec is harvested again from them, offline, into a *new* snapshot whose parent
is the rebuilt one. Versions whose content the new parsers reproduce stay as they are; those
they parse differently become new versions, and the old ones remain, so every handle issued
before the rebuild still verifies. Nothing is fetched, so nothing is re-checked upstream:
records no stored response covers are carried unchanged. A stored response today's parsers
reject (or a request of a partial snapshot that never got one) is a failed request, as in a
build: without ``allow_partial`` nothing is sealed.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from pydantic import ValidationError

from audit.keys import Keyring
from pipeline.errors import SnapshotError
from pipeline.harvest import Progress
from pipeline.replay import ReplayTransport, make_wrapper, replay_key, short_hash, write_wrapper
from pipeline.settings import Settings
from pipeline.snapshot.build import BuildOptions, BuildResult, build_locked, corpus_lock
from pipeline.snapshot.manifest import ParentRef
from pipeline.snapshot.spec import CorpusSpec
from pipeline.snapshot.store import connect, read_meta, unpack_body
from pipeline.snapshot.trust import SealPolicy
from pipeline.snapshot.verify import verify_snapshot


def extract_responses(path: Path, folder: Path) -> int:
    """Write the stored responses of ``path`` as replay wrapper files; returns their number."""
    con = connect(path, read_only=True)
    count = 0
    try:
        cursor = con.execute(
            "SELECT id, source, method, url, status, content_type, body, request_body "
            "FROM responses ORDER BY id"
        )
        while batch := cursor.fetchmany(64):
            for rid, source, method, url, status, content_type, body, request_body in batch:
                key = replay_key(method, url, request_body)
                name = f"{source or 'unknown'}/{rid:08d}-{short_hash(key)}.json"
                text = unpack_body(body).decode("utf-8", "replace")
                wrapper = make_wrapper(method, url, status, content_type or "", text, request_body)
                write_wrapper(folder / name, wrapper)
                count += 1
    finally:
        con.close()
    return count


def stored_spec(path: Path) -> CorpusSpec:
    """The corpus spec a snapshot was built from (kept in its meta table)."""
    con = connect(path, read_only=True)
    try:
        meta = read_meta(con)
    finally:
        con.close()
    if "spec" not in meta:
        raise SnapshotError(f"{path} does not record the spec it was built from")
    try:
        return CorpusSpec.model_validate_json(meta["spec"])
    except ValidationError as error:
        raise SnapshotError(f"{path}: its stored spec is no longer valid: {error}") from None


def rebuild_snapshot(
    path: Path,
    *,
    keyring: Keyring,
    allow_partial: bool = False,
    settings: Settings | None = None,
    progress: Progress | None = None,
) -> BuildResult:
    """A new snapshot beside ``path``, re-parsed from the responses ``path`` stores.

    ``path`` is verified first (its seal under ``keyring``, which also seals the new one)."""
    report = verify_snapshot(path, SealPolicy.of(keyring))
    assert report.manifest is not None
    spec = stored_spec(path)
    corpus_dir = path.parent
    with corpus_lock(corpus_dir), tempfile.TemporaryDirectory(prefix="citeseal-rebuild-") as tmp:
        folder = Path(tmp)
        if extract_responses(path, folder) == 0:
            raise SnapshotError(f"{path} stores no responses to rebuild from")
        options = BuildOptions(
            parent=path,
            keyring=keyring,
            allow_partial=allow_partial,
            refresh=False,
            resume=False,
            mode="rebuild",
            transport=ReplayTransport([folder]),
            rebuilt_from=ParentRef(
                path=path.name,
                sha256=report.manifest.sha256,
                snapshot_id=report.manifest.snapshot_id,
            ),
        )
        return build_locked(spec, corpus_dir, options, settings, progress)
