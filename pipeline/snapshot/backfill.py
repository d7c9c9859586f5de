"""``snapshot backfill``: add pinned registry versions a snapshot lacks, from the history.

A handle such as ``nct:NCT99000001@2024-02-20/trial.brief_summary.1~…`` pins a version. When
the snapshot's lineage never harvested that version, the audit says ``withdrawn`` ("version
not retained"). :func:`backfill_snapshot` asks the registry's history for each such version
(:mod:`pipeline.sources.history`, only with ``CITESEAL_HISTORY_BACKFILL=1``), live or from
replay folders, and writes a NEW child snapshot of the same corpus: every version of the
parent is carried, each fetched version is added with ``origin = 'backfill'``, and no record's
current version changes. Its ``seq`` is placed by date among the versions the lineage knows
(``seq`` 1 stays the oldest). Naming, locking, sealing and the manifest are those of
``snapshot build`` (:mod:`pipeline.snapshot.build`); nothing is written when no version
could be fetched.

Check codes are not verified here (a backfill only adds text; the audit verifies handles).
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import duckdb
import httpx

from audit.errors import InputError
from audit.folding import fold
from audit.handles import Locator, parse_handle, parse_locator
from audit.keys import Keyring
from pipeline import __version__
from pipeline.errors import HarvestError, ParseError, SnapshotError
from pipeline.http import Exchange, HttpClient
from pipeline.network import network_transport
from pipeline.records import Record
from pipeline.replay import ReplayTransport
from pipeline.settings import Settings
from pipeline.snapshot.build import (
    BuildResult,
    clean_leftovers,
    corpus_lock,
    free_stamp,
    resolve_parent,
)
from pipeline.snapshot.index import INDEX_VERSION, index_unindexed
from pipeline.snapshot.ingest import Ingest
from pipeline.snapshot.lineage import carry_parent, create_staging, drop_staging
from pipeline.snapshot.manifest import (
    Manifest,
    ParentRef,
    SourceSummary,
    manifest_path,
    read_manifest,
    relative_to,
)
from pipeline.snapshot.schema import SCHEMA_VERSION
from pipeline.snapshot.seal import seal
from pipeline.snapshot.store import (
    BatchWriter,
    ResponseRow,
    apply_migrations,
    connect,
    index_record_ids,
    insert_sources,
    limit_memory,
    load_fts,
    now_text,
    read_meta,
    require_unique_keys,
    snapshot_totals,
    write_meta,
)
from pipeline.snapshot.works import store_works
from pipeline.sources import history

Status = Literal[
    "backfilled", "already_present", "not_retained", "disabled", "unfetchable", "not_in_snapshot"
]
BACKFILL_SCHEMES = ("nct", "setid")
DISABLED_ADVICE = (
    "set CITESEAL_HISTORY_BACKFILL=1 to let citeseal ask the registries' history services "
    "(unofficial or separate services)"
)


@dataclass(frozen=True)
class Target:
    """One handle or locator given on the command line, and the version it pins."""

    text: str
    locator: Locator

    @property
    def key(self) -> tuple[str, str]:
        assert self.locator.version is not None
        return self.locator.record_id, self.locator.version


@dataclass(frozen=True)
class Item:
    """What became of one target."""

    target: str
    record_id: str
    version: str
    status: Status
    detail: str = ""

    @property
    def line(self) -> str:
        """``<target>: <status> (<detail>)`` as printed by the CLI."""
        if self.status == "disabled":
            return f"{self.target}: disabled (set CITESEAL_HISTORY_BACKFILL=1)"
        label = self.status.replace("_", " ")
        shown = self.detail if self.status not in ("backfilled", "already_present") else ""
        return f"{self.target}: {label}" + (f" ({shown})" if shown else "")


@dataclass(frozen=True)
class BackfillResult:
    items: tuple[Item, ...]
    build: BuildResult | None = None  # the child snapshot; None when nothing was backfilled

    @property
    def backfilled(self) -> int:
        return len({(i.record_id, i.version) for i in self.items if i.status == "backfilled"})


def parse_target(text: str) -> Target:
    """A handle (``…~check``) or a bare locator that pins a version of a trial or a label."""
    raw = text.strip()
    locator = parse_handle(raw).locator if "~" in raw else parse_locator(raw)
    if locator.scheme not in BACKFILL_SCHEMES:
        raise InputError(
            f"{raw}: only nct: and setid: versions can be backfilled, got {locator.scheme}:",
            advice="registries change records in place and keep a history; literature "
            "records do not",
        )
    return Target(raw, locator)  # nct: and setid: locators pin a version (the grammar says so)


def backfill_snapshot(
    snapshot: Path,
    targets: Sequence[str],
    *,
    keyring: Keyring,
    replay: Sequence[Path] = (),
    settings: Settings | None = None,
    transport: httpx.BaseTransport | None = None,
) -> BackfillResult:
    """Fetch the pinned versions ``snapshot`` lacks; write a child snapshot holding them.

    ``snapshot`` must be trusted under ``keyring`` (its digest and seal), which seals the child.
    """
    settings = settings or Settings.from_env()
    if not settings.history_backfill:
        raise InputError("version history backfill is off", advice=DISABLED_ADVICE)
    if not targets:
        raise InputError("give at least one nct: or setid: handle or locator to backfill")
    parsed = [parse_target(text) for text in targets]
    corpus_dir = snapshot.parent
    with corpus_lock(corpus_dir):
        parent = resolve_parent(snapshot, corpus_dir, keyring)
        assert parent is not None
        held, known = _held(parent, parsed)
        run = _Fetch(settings, _transport(settings, replay, transport))
        with run:
            decided = [_decide(t, held, known, run) for t in parsed]
        items = tuple(decided)
        fetched = {(r.record_id, r.version): r for r in run.records.values()}
        wanted = {(i.record_id, i.version) for i in items if i.status == "backfilled"}
        if not wanted:
            return BackfillResult(items)
        records = [fetched[k] for k in sorted(wanted)]
        build = _write_child(
            parent, corpus_dir, records, run.exchanges, keyring, settings.build_memory
        )
    return BackfillResult(items, build)


# -- what the parent holds --------------------------------------------------------------------


def _held(
    parent: Path, targets: Sequence[Target]
) -> tuple[set[tuple[str, str]], dict[str, dict[str, str]]]:
    """Versions the parent holds for the targets' records, and their content hashes by id."""
    ids = sorted({t.locator.record_id for t in targets})
    con = connect(parent, read_only=True)
    try:
        rows = con.execute(
            "SELECT v.record_id, v.version, v.content_hash FROM record_versions v "
            "JOIN record_state s USING (record_id) WHERE list_contains($1, v.record_id)",
            [ids],
        ).fetchall()
        present = {
            str(r[0])
            for r in con.execute(
                "SELECT record_id FROM record_state WHERE list_contains($1, record_id)", [ids]
            ).fetchall()
        }
    finally:
        con.close()
    held = {(str(rid), str(version)) for rid, version, _ in rows}
    known: dict[str, dict[str, str]] = {rid: {} for rid in present}
    for rid, version, content_hash in rows:
        known[str(rid)][str(content_hash)] = str(version)
    return held, known


def _transport(
    settings: Settings, replay: Sequence[Path], transport: httpx.BaseTransport | None
) -> httpx.BaseTransport:
    if transport is not None:
        return transport
    if replay:
        return ReplayTransport([Path(p) for p in replay])
    return network_transport(settings)  # proxies and CAs of the settings


@dataclass
class _Fetch:
    """The history look-ups of one backfill (each record version asked once)."""

    settings: Settings
    transport: httpx.BaseTransport
    records: dict[tuple[str, str], Record] = field(default_factory=dict)
    answers: dict[tuple[str, str], history.VersionLookup] = field(default_factory=dict)
    exchanges: list[Exchange] = field(default_factory=list)
    _client: HttpClient | None = None

    def __enter__(self) -> _Fetch:
        self._client = HttpClient(
            self.settings, transport=self.transport, on_exchange=self.exchanges.append
        )
        return self

    def __exit__(self, *exc: object) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def lookup(self, target: Target) -> history.VersionLookup:
        key = target.key
        if key not in self.answers:
            self.answers[key] = self._ask(target)
            record = self.answers[key].record
            if record is not None:
                self.records[key] = record.model_copy(update={"relations": []})
        return self.answers[key]

    def _ask(self, target: Target) -> history.VersionLookup:
        assert self._client is not None
        locator, (_, version) = target.locator, target.key
        try:
            if locator.scheme == "nct":
                return history.lookup_trial_version(self._client, locator.id, version)
            return history.lookup_label_version(self._client, locator.id, version)
        except (HarvestError, ParseError) as error:
            return history.VersionLookup("unfetchable", error.message)


def _decide(
    target: Target,
    held: set[tuple[str, str]],
    known: dict[str, dict[str, str]],
    run: _Fetch,
) -> Item:
    record_id, version = target.key

    def item(status: Status, detail: str = "") -> Item:
        return Item(target.text, record_id, version, status, detail)

    if (record_id, version) in held:
        return item("already_present")
    if record_id not in known:
        return item(
            "not_in_snapshot",
            f"{record_id} was never in this snapshot's lineage; add it to the corpus spec and "
            "build first",
        )
    answer = run.lookup(target)
    if answer.outcome == "fetched":
        record = run.records[target.key]
        same = known[record_id].get(record.content_hash())
        if same is not None:
            return item(
                "unfetchable",
                f"the history's version {version} has the same content as stored version "
                f"{same}, under another label",
            )
        return item("backfilled", answer.detail)
    if answer.outcome == "not_found":
        return item("not_retained", answer.detail)
    return item(answer.outcome, answer.detail)


# -- the child snapshot -----------------------------------------------------------------------


def _write_child(
    parent: Path,
    corpus_dir: Path,
    records: Sequence[Record],
    exchanges: Sequence[Exchange],
    keyring: Keyring,
    memory: str,
) -> BuildResult:
    """Carry ``parent``, add ``records`` as backfilled versions, seal (build.py's rules);
    ``memory`` bounds DuckDB (``Settings.build_memory``)."""
    parent_manifest = read_manifest(parent)
    clean_leftovers(corpus_dir)
    stamp = free_stamp(corpus_dir, parent_manifest.name, after=parent)
    snapshot_id = f"{parent_manifest.name}-{stamp}"
    final = corpus_dir / f"{snapshot_id}.duckdb"
    temp = corpus_dir / f".build-{stamp}.duckdb"
    work = corpus_dir / f".build-{stamp}.tmp"
    created_at = now_text()
    try:
        con = connect(temp)
        try:
            meta, sources = _parent_meta(parent)
            limit_memory(con, work, memory=memory)
            apply_migrations(con, now=created_at)
            write_meta(
                con,
                {
                    **meta,
                    "snapshot_id": snapshot_id,
                    "created_at": created_at,
                    "parent_sha256": parent_manifest.sha256,
                    "parent_snapshot_id": parent_manifest.snapshot_id,
                    "tool_version": __version__,
                    "schema_version": str(SCHEMA_VERSION),
                    "mode": "backfill",
                    "search_index": INDEX_VERSION,
                },
            )
            create_staging(con)
            load_fts(con)
            carry_parent(con, parent)
            index_unindexed(con)
            writer = BatchWriter(work)
            ingest = Ingest.into(con, writer, snapshot_id, fold)
            by_source: dict[str, list[Record]] = {}
            for record in records:
                by_source.setdefault(record.source, []).append(record)
            for source, batch in by_source.items():
                ingest.add(source, batch)
            _mark_backfilled(con, snapshot_id)
            _store_exchanges(con, writer, exchanges)
            insert_sources(con, sources)
            drop_staging(con)
            store_works(con)  # one result per work, grouped once (works.py)
            totals = snapshot_totals(con)
            require_unique_keys(con)
            index_record_ids(con)
            con.execute("CHECKPOINT")
        finally:
            con.close()
        counts = {s: len(b) for s, b in by_source.items()}
        manifest = Manifest(
            name=parent_manifest.name,
            snapshot_id=snapshot_id,
            file=final.name,
            sha256="",
            size=0,
            created_at=created_at,
            parent=ParentRef(
                path=relative_to(parent, corpus_dir),
                sha256=parent_manifest.sha256,
                snapshot_id=parent_manifest.snapshot_id,
            ),
            spec_hash=parent_manifest.spec_hash,
            tool_version=__version__,
            schema_version=SCHEMA_VERSION,
            segmentation_version=parent_manifest.segmentation_version,
            mode="backfill",
            records=totals[0],
            versions=totals[1],
            passages=totals[2],
            partial=parent_manifest.partial,  # the harvest it carries, sources and all
            sources={
                name: SourceSummary(
                    status=s.status,
                    records=s.records,
                    passages=s.passages,
                    new_versions=counts.get(name, 0),
                )
                for name, s in parent_manifest.sources.items()
            },
        )
        sealed = seal(temp, final, manifest, keyring)
    except BaseException:
        for leftover in (temp, temp.with_name(temp.name + ".wal")):
            leftover.unlink(missing_ok=True)
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return BuildResult(path=final, manifest_path=manifest_path(final), manifest=sealed)


def _parent_meta(parent: Path) -> tuple[dict[str, str | None], list[tuple[object, ...]]]:
    """The parent's meta (spec, names) and its per-source harvest rows (carried as they are)."""
    con = connect(parent, read_only=True)
    try:
        meta: dict[str, str | None] = dict(read_meta(con))
        sources = con.execute(
            "SELECT source, status, records, passages, failed_requests, detail FROM sources"
        ).fetchall()
    except duckdb.Error as error:
        raise SnapshotError(f"cannot read parent snapshot {parent}: {error}") from None
    finally:
        con.close()
    return meta, [tuple(row) for row in sources]


def _mark_backfilled(con: duckdb.DuckDBPyConnection, snapshot_id: str) -> None:
    """Origin 'backfill' for the versions this snapshot added, each placed by date."""
    con.execute(
        "UPDATE record_versions SET origin = 'backfill' WHERE first_seen = ?", [snapshot_id]
    )
    added = con.execute(
        "SELECT v.record_id, v.version, r.version_date FROM record_versions v "
        "JOIN records r USING (record_id, version) WHERE v.first_seen = ? ORDER BY 1, 3",
        [snapshot_id],
    ).fetchall()
    for record_id, version, version_date in added:
        if version_date is None:
            continue  # undated: it stays last (the order the lineage learnt it)
        row = con.execute(
            "SELECT min(v.seq) FROM record_versions v JOIN records r USING (record_id, version) "
            "WHERE v.record_id = ? AND v.version <> ? AND r.version_date > ?",
            [record_id, version, version_date],
        ).fetchone()
        place = row[0] if row else None
        if place is None:
            continue
        con.execute(
            "UPDATE record_versions SET seq = seq + 1 "
            "WHERE record_id = ? AND version <> ? AND seq >= ?",
            [record_id, version, place],
        )
        con.execute(
            "UPDATE record_versions SET seq = ? WHERE record_id = ? AND version = ?",
            [place, record_id, version],
        )


def _store_exchanges(
    con: duckdb.DuckDBPyConnection, writer: BatchWriter, exchanges: Sequence[Exchange]
) -> None:
    """The history responses, kept like a build's (provenance), and one log row each."""
    fetched_at = now_text()
    rows = [
        ResponseRow(
            source=e.source,
            method=e.method,
            url=e.url,
            status=e.status,
            content_type=e.content_type,
            body=e.body,
            fetched_at=fetched_at,
            request_body=e.request_body,
        ).row(i)
        for i, e in enumerate(exchanges, start=1)
    ]
    writer.insert(con, "responses", rows)
    log = [
        (fetched_at, e.source or "unknown", "backfill", e.url, e.status, e.status < 400, None, None)
        for e in exchanges
    ]
    writer.insert(con, "harvest_log", log)
