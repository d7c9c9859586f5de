"""Build one immutable snapshot file from a corpus spec.

``build_snapshot`` harvests (live, or from replay folders), applies the lineage of the
parent, and writes ``snapshots/<name>/<name>-<UTC stamp>.duckdb`` with its manifest, sealed
with the keyring's current key. The parent is trusted only once its file matches its manifest
and the manifest's seal verifies under that keyring (:mod:`pipeline.snapshot.trust`).

Atomicity: everything is written into ``snapshots/<name>/.build-<stamp>.duckdb`` (hidden), then
checkpointed, closed, verified and fsynced. The manifest is written (atomically) before the
file is renamed into place: the rename is the commit point, so an interrupted build (Ctrl-C,
``kill -9``, a crash) never leaves a visible snapshot, partial or without its manifest, and
never touches the parent. The next build of the corpus deletes leftovers. Responses fetched so
far stay in the resume cache (:mod:`pipeline.snapshot.resume`), so the rerun does not fetch
them again.

Lineage: without ``parent`` a build continues the newest snapshot of its corpus; a new history
is asked for with ``new_lineage``. Failures: a build in which any request failed seals
nothing and raises :class:`~pipeline.errors.PartialHarvestError` (exit 3), keeping the resume
cache (minus the failed answers) so the rerun asks only what failed; with ``allow_partial``
it seals a snapshot marked ``partial`` in which every record whose refresh failed keeps its
parent state (:mod:`pipeline.harvest`, :mod:`pipeline.snapshot.ingest`). A first build (no
parent) that harvested no record because requests failed writes nothing either way.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import duckdb
import httpx

from audit.errors import InputError
from audit.keys import Keyring
from pipeline import __version__
from pipeline.collector import fewer_collections
from pipeline.errors import (
    HarvestError,
    ParseError,
    SnapshotError,
    TamperedSnapshotError,
)
from pipeline.harvest import Harvester, HarvestOutcome, Progress
from pipeline.http import Exchange, HttpClient
from pipeline.network import network_transport
from pipeline.records import Record, Refusal
from pipeline.replay import RecordingTransport, ReplayTransport
from pipeline.settings import Settings
from pipeline.snapshot.apply import apply_batch
from pipeline.snapshot.folder import clean_leftovers, corpus_lock, free_stamp
from pipeline.snapshot.harvestlog import HarvestLog
from pipeline.snapshot.index import INDEX_VERSION, index_unindexed, next_docid
from pipeline.snapshot.ingest import Ingest
from pipeline.snapshot.lineage import (
    carry_parent,
    create_staging,
    drop_staging,
    finalize_state,
    unrefreshed_count,
    unseen_records,
)
from pipeline.snapshot.locate import latest_snapshot
from pipeline.snapshot.manifest import (
    Manifest,
    ParentRef,
    manifest_path,
    read_manifest,
    relative_to,
)
from pipeline.snapshot.partial import require_complete
from pipeline.snapshot.progress import NullProgress
from pipeline.snapshot.resume import (
    ResumeTransport,
    clear_resume,
    drop_if_stale,
    resume_folder,
)
from pipeline.snapshot.schema import SCHEMA_VERSION
from pipeline.snapshot.seal import seal
from pipeline.snapshot.spec import CorpusSpec, load_spec
from pipeline.snapshot.store import (
    BatchWriter,
    apply_migrations,
    checkpoint,
    first_line,
    index_record_ids,
    insert_sources,
    insert_staged,
    limit_memory,
    load_fts,
    now_text,
    require_unique_keys,
    snapshot_totals,
    write_meta,
)
from pipeline.snapshot.trust import SealPolicy, trust_snapshot
from pipeline.snapshot.works import store_works
from pipeline.snapshot.writer import WriterProcess

ParentArg = Path | Literal["latest"] | None
WRITER_THREADS = 1  # DuckDB threads in the writer process; the harvest process has the other core
REOPEN_EVERY = 10  # record batches (of up to harvest.CHUNK records) between database reopens


@dataclass(frozen=True)
class BuildResult:
    path: Path
    manifest_path: Path
    manifest: Manifest
    resumed_requests: int = 0  # answers served from the resume cache
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class BuildOptions:
    """Everything about a build that is not the spec."""

    parent: Path | None
    keyring: Keyring  # seals the new manifest; the parent's seal must verify under it
    replay: tuple[Path, ...] = ()
    record: Path | None = None
    strict: bool = False
    allow_partial: bool = False  # seal even when requests failed (marked partial)
    refresh: bool = True  # re-check lineage records the harvest did not meet
    resume: bool = True
    mode: str = "live"
    transport: httpx.BaseTransport | None = None  # replaces network/replay (rebuild, tests)
    rebuilt_from: ParentRef | None = None


def build_snapshot(
    spec_path: Path,
    *,
    keyring: Keyring,
    parent: ParentArg = None,
    new_lineage: bool = False,
    replay: Sequence[Path] = (),
    record: Path | None = None,
    strict: bool = False,
    allow_partial: bool = False,
    live: bool = False,
    resume: bool = True,
    settings: Settings | None = None,
    progress: Progress | None = None,
    transport: httpx.BaseTransport | None = None,
) -> BuildResult:
    """Harvest ``spec_path`` into a new snapshot of its corpus (see the module docstring).

    ``replay`` folders serve recorded exchanges instead of the network (first match wins);
    without them the spec's own ``replay`` list is used unless ``live``. ``parent`` is a
    snapshot file or ``"latest"``; not given (None), it is ``"latest"``: the newest snapshot
    of the corpus folder, none yet → no parent. ``new_lineage`` starts a history without a
    parent and cannot be combined with ``parent``. ``allow_partial`` seals a build whose
    requests failed, marked partial (otherwise :class:`PartialHarvestError`). ``keyring``
    seals the new snapshot's manifest and must verify the parent's seal.
    """
    if new_lineage and parent is not None:
        raise InputError(
            "--parent and --new-lineage cannot be combined: a new lineage has no parent",
            advice="drop --new-lineage to continue a lineage, or --parent to start one",
        )
    spec = load_spec(spec_path)
    corpus_dir = spec_path.parent / spec.name
    folders = tuple(Path(p) for p in replay)
    if not folders and not live and transport is None:
        folders = tuple(spec_path.parent / p for p in spec.replay)
    corpus_dir.mkdir(parents=True, exist_ok=True)
    with corpus_lock(corpus_dir):
        options = BuildOptions(
            parent=None if new_lineage else resolve_parent(parent or "latest", corpus_dir, keyring),
            keyring=keyring,
            replay=folders,
            record=record,
            strict=strict,
            allow_partial=allow_partial,
            resume=resume,
            mode="replay" if folders else "live",
            transport=transport,
        )
        return build_locked(spec, corpus_dir, options, settings, progress)


def build_locked(
    spec: CorpusSpec,
    corpus_dir: Path,
    options: BuildOptions,
    settings: Settings | None,
    progress: Progress | None,
) -> BuildResult:
    """The build proper; the caller holds :func:`corpus_lock`."""
    settings = settings or Settings.from_env()
    progress = progress or NullProgress()
    clean_leftovers(corpus_dir)
    stamp = free_stamp(corpus_dir, spec.name, after=options.parent)
    snapshot_id = f"{spec.name}-{stamp}"
    final = corpus_dir / f"{snapshot_id}.duckdb"
    temp = corpus_dir / f".build-{stamp}.duckdb"
    work = corpus_dir / f".build-{stamp}.tmp"
    cache = resume_folder(corpus_dir, spec.spec_hash(), options.replay)
    drop_if_stale(cache)
    run = _Run(spec, snapshot_id, options, settings, progress, corpus_dir=corpus_dir)
    try:
        with fewer_collections():
            run.write(temp, work, cache if options.resume else None)
        manifest = seal(temp, final, run.manifest(corpus_dir), options.keyring)
    except BaseException:
        for leftover in (temp, temp.with_name(temp.name + ".wal")):
            leftover.unlink(missing_ok=True)
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if options.resume:
        clear_resume(cache)
    return BuildResult(
        path=final,
        manifest_path=manifest_path(final),
        manifest=manifest,
        resumed_requests=run.resumed,
        warnings=tuple(run.warnings),
    )


# -- the parent -------------------------------------------------------------------------------


def resolve_parent(parent: ParentArg, corpus_dir: Path, keyring: Keyring) -> Path | None:
    """The parent snapshot file, trusted (its digest and its seal under ``keyring``); None for
    no parent."""
    if parent is None:
        return None
    path = latest_snapshot(corpus_dir) if parent == "latest" else Path(parent)
    if path is None:
        return None
    if not path.is_file():
        raise SnapshotError(f"parent snapshot {path} does not exist")
    try:
        trust_snapshot(path, SealPolicy.of(keyring), what="parent snapshot")
    except TamperedSnapshotError as error:
        raise TamperedSnapshotError(
            error.message,
            advice=f"{error.advice}; or build from another one with --parent FILE, or start a "
            "new lineage with --new-lineage",
        ) from None
    return path


# -- one run ------------------------------------------------------------------------------------


@dataclass
class _Run:
    """State of one build between opening the temp file and sealing it; the harvest's
    :class:`~pipeline.harvest.Sink` (records to the ingest, the rest to ``log``)."""

    spec: CorpusSpec
    snapshot_id: str
    options: BuildOptions
    settings: Settings
    progress: Progress
    corpus_dir: Path | None = None
    created_at: str = field(default_factory=now_text)
    resumed: int = 0
    warnings: list[str] = field(default_factory=list)
    log: HarvestLog = field(init=False)
    withdrawn: int = 0
    carried: int = 0
    totals: tuple[int, int, int] = (0, 0, 0)
    parent_ref: ParentRef | None = None
    _ingest: Ingest | None = None
    _db: WriterProcess | None = None
    _batches: int = 0
    _writer: BatchWriter | None = None
    _resume: ResumeTransport | None = None

    def __post_init__(self) -> None:
        self.log = HarvestLog(self.spec.sources(), self.progress)

    # -- writing ------------------------------------------------------------------------------
    def write(self, temp: Path, work: Path, cache: Path | None) -> None:
        """Harvest into ``temp``; the database work runs in a writer process (see
        :mod:`pipeline.snapshot.writer`) while this one fetches, parses and stages."""
        parent = self.options.parent
        with WriterProcess(temp) as db:
            self._db = db
            # queued, not awaited: the first batch is fetched and parsed meanwhile
            db.configure(
                limit_memory, work, memory=self.settings.build_memory, threads=WRITER_THREADS
            )
            db.configure(load_fts)  # its stem() tokenises passages for the search index
            db.submit(apply_migrations, now=self.created_at)
            db.submit(write_meta, self._meta())
            db.submit(create_staging)
            first_docid = 1  # an empty index starts at 1 (index.next_docid)
            if parent is not None:
                db.submit(carry_parent, parent)
                db.submit(index_unindexed)
                first_docid = db.call(next_docid)
            self._writer = BatchWriter(work)
            # The lineage's versions are the parent's (records met twice in this build are
            # caught in memory), so they are read from the parent file, not through the writer.
            with _reader(parent) as reader:
                self._ingest = Ingest(
                    reader, self._writer, self.snapshot_id, _fold(), first_docid=first_docid
                )
                outcome = self._harvest(cache)
                self._flush()
            self._require_complete()
            held = self._ingest.held
            gone = {rid for rid in outcome.missing if rid not in held}
            self.withdrawn = db.call(finalize_state, gone, self.snapshot_id)
            self.carried = db.call(unrefreshed_count)
            db.call(drop_staging)
            db.call(store_works)  # one result per work, grouped once (works.py)
            db.call(insert_sources, self.log.source_rows(self._ingest.stats.by_source))
            self.totals = db.call(snapshot_totals)
            db.call(require_unique_keys)
            db.call(index_record_ids)
            db.call(checkpoint)
        self._db = None
        self.warnings.extend(self._ingest.stats.warnings)

    def _meta(self) -> dict[str, str | None]:
        parent = self.options.parent
        if parent is not None:
            manifest = read_manifest(parent)
            self.parent_ref = ParentRef(
                path=str(parent), sha256=manifest.sha256, snapshot_id=manifest.snapshot_id
            )
        spec = self.spec
        return {
            "name": spec.name,
            "description": spec.description,
            "snapshot_id": self.snapshot_id,
            "created_at": self.created_at,
            "parent_sha256": self.parent_ref.sha256 if self.parent_ref else None,
            "parent_snapshot_id": self.parent_ref.snapshot_id if self.parent_ref else None,
            "spec_hash": spec.spec_hash(),
            "spec": spec.model_dump_json(exclude={"replay"}, exclude_none=True),
            "tool_version": __version__,
            "schema_version": str(SCHEMA_VERSION),
            "segmentation_version": _segmentation_version(),
            "mode": self.options.mode,
            "search_index": INDEX_VERSION,
        }

    def _transport(self, cache: Path | None) -> httpx.BaseTransport:
        options = self.options
        inner: httpx.BaseTransport
        if options.transport is not None:
            inner = options.transport
        elif options.replay:
            inner = ReplayTransport(list(options.replay))
        else:
            inner = network_transport(self.settings)  # proxies and CAs of the settings
        cap = self.settings.max_response_bytes
        if options.record is not None:
            inner = RecordingTransport(inner, options.record, max_bytes=cap)
        if cache is not None:
            inner = self._resume = ResumeTransport(inner, cache, max_bytes=cap)
        return inner

    def _harvest(self, cache: Path | None) -> HarvestOutcome:
        assert self._ingest is not None
        transport = self._transport(cache)
        with HttpClient(
            self.settings, transport=transport, on_exchange=self._exchange, on_refusal=self.refused
        ) as client:
            harvester = Harvester(
                self.spec,
                client,
                self,
                self.progress,
                strict=self.options.strict,
                lineage=self._ingest,
                refused=self.log.refusals,
                jobs=self.settings.harvest_jobs,
            )
            outcome = harvester.run()
            if self.options.refresh and self._db is not None:
                # the look-up runs after every batch queued before it; records delivered
                # incomplete (held) were met, and keep their parent state
                unseen = self._db.call(unseen_records, self.spec.sources())
                skip = outcome.missing | set(self._ingest.held)
                for source in list(unseen):
                    unseen[source] = [r for r in unseen[source] if r not in skip]
                outcome = harvester.refresh({s: ids for s, ids in unseen.items() if ids})
        outcome.missing -= self.log.refused_ids  # upstream answered with them: not gone
        if isinstance(transport, ResumeTransport):
            self.resumed = transport.served
        for source in self.spec.sources():
            self.progress.finish(source, self.log.status(source))
        return outcome

    def _require_complete(self) -> None:
        """Raise when the failed requests forbid sealing (:mod:`pipeline.snapshot.partial`)."""
        assert self._ingest is not None
        require_complete(
            self.log.failed,
            where=str(self.corpus_dir or self.spec.name),
            has_parent=self.options.parent is not None,
            harvested=sum(c.records for c in self._ingest.stats.by_source.values()),
            allow_partial=self.options.allow_partial,
            resumable=self._resume is not None,
        )

    # -- the Sink protocol (pipeline.harvest) ---------------------------------------------------
    def records(
        self, source: str, records: Sequence[Record], *, incomplete: Collection[str] = ()
    ) -> None:
        assert self._ingest is not None and self._db is not None
        batches = self._ingest.prepare(source, records, incomplete=incomplete)  # Python work
        for batch in batches:
            self._db.submit(apply_batch, batch, self.snapshot_id)  # SQL, in the writer process
            self._batches += 1
            if self._batches % REOPEN_EVERY == 0:
                self._db.reopen()  # DuckDB's memory back: flat RSS however large the corpus
        if self._resume is not None:
            self._resume.settle()

    def failure(self, source: str, step: str, error: HarvestError | ParseError) -> None:
        self.log.failure(source, step, error)
        if self._resume is not None:
            self._resume.drop_unsettled()  # the failed answer is never replayed

    def refused(self, source: str, refusals: Sequence[Refusal]) -> None:
        self.log.refused(source, refusals)

    def step(self, source: str, step: str, count: int, detail: str | None = None) -> None:
        self.log.step(source, step, count, detail)
        if self._resume is not None:
            self._resume.settle()

    def _exchange(self, exchange: Exchange) -> None:
        if self.log.exchange(exchange):
            self._flush()

    def _flush(self) -> None:
        writer = self._writer
        if writer is None:
            return
        responses, rows = self.log.take()
        staged = [
            ("responses", writer.stage("responses", responses)),
            ("harvest_log", writer.stage("harvest_log", rows)),
        ]
        if self._db is not None:
            self._db.submit(insert_staged, staged)

    # -- summary ------------------------------------------------------------------------------
    def manifest(self, corpus_dir: Path) -> Manifest:
        records, versions, passages = self.totals
        parent = self.parent_ref
        if parent is not None:
            parent = parent.model_copy(update={"path": relative_to(Path(parent.path), corpus_dir)})
        return Manifest(
            name=self.spec.name,
            snapshot_id=self.snapshot_id,
            file=f"{self.snapshot_id}.duckdb",
            sha256="",
            size=0,
            created_at=self.created_at,
            parent=parent,
            rebuilt_from=self.options.rebuilt_from,
            spec_hash=self.spec.spec_hash(),
            tool_version=__version__,
            schema_version=SCHEMA_VERSION,
            segmentation_version=_segmentation_version(),
            mode=self.options.mode,
            records=records,
            versions=versions,
            passages=passages,
            withdrawn=self.withdrawn,
            carried=self.carried,
            partial=bool(self.log.failed),
            sources=self.log.summaries(self._ingest.stats.by_source if self._ingest else {}),
            failed_requests=self.log.failed,
        )


@contextlib.contextmanager
def _reader(parent: Path | None) -> Iterator[duckdb.DuckDBPyConnection | None]:
    """A read-only view of the parent snapshot (None without a parent).

    The parent is attached to a private in-memory database rather than opened: a process
    that already has the file open (a server, a test) may do so with another configuration,
    which DuckDB refuses for a second ``connect`` of the same file.
    """
    if parent is None:
        yield None
        return
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")  # never on stdout (store.connect)
    try:
        try:
            quoted = str(parent).replace("'", "''")
            con.execute(f"ATTACH '{quoted}' AS parent (READ_ONLY)")
            con.execute("USE parent")
        except duckdb.Error as error:
            message = f"cannot read parent snapshot {parent}: {first_line(error)}"
            raise SnapshotError(message) from None
        yield con
    finally:
        con.close()


def _fold() -> Callable[[str], str]:
    from audit.folding import fold

    return fold


def _segmentation_version() -> str | None:
    try:
        from pipeline.segment import SEGMENTATION_VERSION
    except ImportError:
        return None
    return SEGMENTATION_VERSION
