"""The lookup snapshot of ``citeseal check --online``: built through the one build path, and
read back as a resolver.

* **Built as every snapshot is.** :func:`build_lookup` hands the plan's corpus spec
  (:func:`~pipeline.check_online.plan.lookup_spec`) to
  :func:`pipeline.snapshot.build.build_locked` — the same harvest, parsers, pacing, retry
  policy, redaction, atomic write, manifest and seal as ``citeseal snapshot build`` and
  ``serve --online`` — as a snapshot of its own lineage (no parent: a lookup is what was
  fetched for one check, not a corpus), named ``<snapshot name>-lookup-<UTC stamp>.duckdb``
  in its own corpus folder. A failed request does not stop it (``allow_partial``): the
  manifest lists it, and every key asked of that source is ``unreachable``. When requests
  failed and nothing at all came back, no snapshot is written (the build's rule) and every
  key asked is ``unreachable`` (:class:`FailedLookup`).
* **Read back as it was asked.** :func:`open_lookup` trusts the file (manifest, digest, seal:
  exit 1 when a check fails), refuses a snapshot that is not a lookup snapshot (its spec's
  description says so), and judges by its spec and its manifest's failed requests
  (:func:`~pipeline.check_online.plan.asked`), so ``citeseal check … --lookup FILE`` re-runs
  the online check offline with the same answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb
import httpx

from audit.duckdb_corpus import read_only_connection
from audit.errors import CiteSealError
from audit.keys import Keyring
from audit.references.check import LookupRef
from audit.references.resolve import (
    RESOLVABLE,
    Asked,
    Key,
    Lookup,
    LookupResolver,
    SnapshotResolver,
)
from pipeline.check_online.plan import Plan, asked, lookup_spec
from pipeline.errors import PartialHarvestError, SnapshotError
from pipeline.harvest_spec import CorpusSpec
from pipeline.settings import Settings
from pipeline.snapshot.build import BuildOptions, build_locked
from pipeline.snapshot.digests import DigestCache
from pipeline.snapshot.folder import corpus_lock
from pipeline.snapshot.progress import NullProgress
from pipeline.snapshot.trust import SealPolicy, trust_snapshot

DESCRIPTION = "fetched by citeseal check --online"
SCHEMES = RESOLVABLE | {"arxiv"}


def lookup_name(name: str) -> str:
    """The corpus name of the lookup snapshots of snapshot ``name``."""
    return f"{name[:57]}-lookup"


class _Failures(NullProgress):
    """The build's progress, keeping only what failed (the harvester redacts each message)."""

    def __init__(self) -> None:
        self.failures: list[str] = []

    def note(self, message: str) -> None:
        if " failed: " in message:
            self.failures.append(message)


@dataclass(frozen=True)
class Built:
    path: Path | None
    failure: str | None = None  # why nothing was written


def build_lookup(
    wanted: Plan,
    name: str,
    folder: Path,
    keyring: Keyring,
    settings: Settings,
    transport: httpx.BaseTransport | None = None,
) -> Built:
    """Fetch ``wanted`` into a new lookup snapshot ``name`` in ``folder`` (module docstring)."""
    spec = lookup_spec(name, wanted)
    options = BuildOptions(
        parent=None,
        keyring=keyring,
        allow_partial=True,
        refresh=False,
        resume=False,
        mode="live",
        transport=transport,
    )
    notes = _Failures()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with corpus_lock(folder):
            result = build_locked(spec, folder, options, settings, notes)
    except PartialHarvestError as error:
        return Built(None, notes.failures[0] if notes.failures else error.message)
    except OSError as error:
        raise SnapshotError(
            f"cannot write the lookup snapshot into {folder.name}: {error.strerror or error}",
            advice="free space or make the folder writable, or name another with --lookup-dir",
        ) from None
    return Built(result.path)


class FailedLookup:
    """The resolver of a lookup that wrote nothing: every key and title asked is
    ``unreachable`` (what went wrong), anything else was not asked."""

    name = "lookup"

    def __init__(self, wanted: Plan, why: str) -> None:
        self.spec = lookup_spec("lookup", wanted)
        self.asked = asked(self.spec, ())
        self.why = why

    def by_identifiers(self, keys: Sequence[Key]) -> dict[Key, Lookup]:
        return {key: self._lookup(f"{key[0]}:{key[1]}", key in self.asked.keys) for key in keys}

    def by_title(self, title: str) -> Lookup:
        return self._lookup(f"title:{title}", title in self.asked.titles)

    def _lookup(self, name: str, was_asked: bool) -> Lookup:
        if was_asked:
            return Lookup(self.name, name, "unreachable", detail=self.why)
        return Lookup(self.name, name, "unmatched", detail="not asked online")

    def close(self) -> None:
        return None


@dataclass
class OpenedLookup:
    resolver: LookupResolver
    ref: LookupRef


def open_lookup(
    path: Path, policy: SealPolicy, digests: DigestCache | None, shown: str
) -> OpenedLookup:
    """The resolver of the lookup snapshot at ``path``, trusted first (module docstring);
    ``shown``: how the report names its path."""
    trusted = trust_snapshot(path, policy, digests, what="lookup snapshot")
    spec_text = _meta_spec(path)
    spec = CorpusSpec.model_validate_json(spec_text) if spec_text else None
    if spec is None or spec.description != DESCRIPTION:
        raise SnapshotError(
            f"{path.name} is not a lookup snapshot (one written by citeseal check --online)",
            advice="give --lookup the lookup snapshot an online check named in its report",
        )
    failures = [(f.source, f.step, f.error) for f in trusted.manifest.failed_requests]
    inner = SnapshotResolver.open(path, trusted.manifest.name, SCHEMES)
    try:
        trusted.still_unchanged()  # the file opened is the file checked
    except CiteSealError:
        inner.close()
        raise
    ref = LookupRef(
        name=trusted.manifest.name,
        sha256=trusted.sha256,
        snapshot_id=trusted.manifest.snapshot_id,
        path=shown,
    )
    return OpenedLookup(LookupResolver(inner, asked(spec, failures)), ref)


def _meta_spec(path: Path) -> str | None:
    try:
        con = read_only_connection(path)
    except duckdb.Error as error:
        raise SnapshotError(f"cannot open lookup snapshot {path.name}: {error}") from None
    try:
        row = con.execute("SELECT value FROM meta WHERE key = 'spec'").fetchone()
    except duckdb.Error:
        row = None
    finally:
        con.close()
    return row[0] if row and isinstance(row[0], str) else None


__all__ = ["Asked", "Built", "FailedLookup", "OpenedLookup", "build_lookup", "open_lookup"]
