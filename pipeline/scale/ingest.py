"""``citeseal scale ingest``: PubMed baseline and update files → a scale folder, on Spark.

The job (local mode here, any Spark cluster in production: ``master``):

1. every input file is one task (:func:`pipeline.scale.history.file_events`: the file's
   bytes, read where the executor runs, → its records' events, keyed by record id);
2. the events are grouped by record id and each record's rows are made
   (:func:`pipeline.scale.history.record_rows`);
3. each table is written as Parquet, partitioned by ``source``
   (:mod:`pipeline.scale.folder`), into a hidden folder beside ``out`` that is renamed to
   ``out`` once every table and the manifest are written. A job that fails or is killed
   leaves no ``out``: nothing half-written is ever taken for a scale folder.

Fails closed: a file that cannot be read or parsed fails the whole job (its name and the
reason in one line) and nothing is written; a record the parser refuses (an id no handle can
carry) is counted in the manifest and reported, never dropped silently.

The folders must be readable at the same path on every executor (local mode: this machine;
a cluster: a shared file system), and every executor needs citeseal installed in the Python
that ``PYSPARK_PYTHON`` names (docs/scale.md).
"""

from __future__ import annotations

import os
import shutil
import sys
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline import __version__
from pipeline.errors import ParseError, ScaleError
from pipeline.scale.folder import InputSummary, ScaleManifest, write_manifest
from pipeline.scale.history import (
    TABLES,
    Event,
    FileSummary,
    file_events,
    generation_ids,
    record_rows,
)
from pipeline.snapshot.schema import SCHEMA_VERSION
from pipeline.snapshot.store import now_text
from pipeline.sources.pubmed_files import InputFile, file_bytes, input_files

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"
_FILE = "\x00file"  # keys that are not record ids: a file's summary, a file's failure
_FAILED = "\x00failed"
MAX_WARNINGS = 50  # warnings kept in the manifest (their count is always kept)


@dataclass(frozen=True)
class IngestResult:
    out: Path
    manifest: ScaleManifest
    seconds: float  # the whole ingest, Spark's start included
    job_seconds: float  # the Spark job alone: from the first task to the rename


def ingest(
    baseline: Path,
    updates: Path | None,
    out: Path,
    *,
    name: str = "pubmed",
    master: str = DEFAULT_MASTER,
    conf: Mapping[str, str] | None = None,
) -> IngestResult:
    """Read ``baseline`` (and ``updates``) into the scale folder ``out`` (module docstring);
    ``out`` must not exist yet."""
    if out.exists():
        raise ScaleError(
            f"{out} exists: a scale folder is written whole, never over another",
            advice="give a new --out folder (or remove the old one)",
        )
    try:
        files = input_files(baseline, updates)
    except ParseError as error:
        raise ScaleError(error.message) from None
    out.parent.mkdir(parents=True, exist_ok=True)
    temp = out.parent / f".{out.name}.tmp-{uuid.uuid4().hex[:12]}"
    started = time.perf_counter()
    try:
        with spark_session(master, conf) as spark:
            ready = time.perf_counter()
            manifest = _run(spark, files, generation_ids(name, files), name, temp)
            write_manifest(temp, manifest)
            temp.rename(out)
            done = time.perf_counter()
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    return IngestResult(out, manifest, time.perf_counter() - started, done - ready)


def _run(
    spark: SparkSession, files: list[InputFile], generations: list[str], name: str, temp: Path
) -> ScaleManifest:
    from pyspark import StorageLevel

    sc = spark.sparkContext
    items = list(enumerate(files))
    parsed = sc.parallelize(items, len(items)).flatMap(_file_task)
    partitions = max(sc.defaultParallelism, len(items))
    tagged = parsed.groupByKey(partitions).flatMap(lambda kv: _record_task(kv, generations))
    tagged.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        notes = _job(lambda: tagged.filter(lambda t: t[0] in (_FILE, _FAILED)).collect())
        failed = sorted(str(row) for tag, row in notes if tag == _FAILED)
        if failed:
            more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
            raise ScaleError(f"cannot ingest {failed[0]}{more}; nothing was written")
        for table, columns in TABLES.items():
            rows = tagged.filter(lambda t, table=table: t[0] == table).map(lambda t: t[1])
            frame = spark.createDataFrame(rows, _schema(columns))
            _job(lambda frame=frame, table=table: _write(frame, temp / table))
        counts = _job(lambda: tagged.map(lambda t: t[0]).countByValue())
    finally:
        tagged.unpersist()
    summaries = sorted((row for tag, row in notes if tag == _FILE), key=lambda s: s.name)
    return _manifest(name, generations, files, summaries, counts)


def _file_task(item: tuple[int, InputFile]) -> Iterator[tuple[str, Any]]:
    """One file → its events keyed by record id, and its summary (or its failure)."""
    number, input_file = item
    try:
        summary, events = file_events(number, input_file, file_bytes(input_file.path))
    except ParseError as error:
        yield _FAILED, error.message
        return
    yield _FILE, summary
    yield from events


def _record_task(
    kv: tuple[str, Iterable[Any]], generations: list[str]
) -> Iterator[tuple[str, Any]]:
    key, values = kv
    if key in (_FILE, _FAILED):
        for value in values:
            yield key, value
        return
    events: list[Event] = list(values)
    rows = record_rows(key, events, generations)
    for table in TABLES:
        for row in rows.table(table):
            yield table, row


def _schema(columns: tuple[tuple[str, str], ...]) -> Any:
    from pyspark.sql.types import BooleanType, IntegerType, StringType, StructField, StructType

    types = {"string": StringType, "int": IntegerType, "bool": BooleanType}
    return StructType([StructField(name, types[kind](), True) for name, kind in columns])


def _write(frame: Any, target: Path) -> None:
    frame.write.partitionBy("source").parquet(str(target))


def _manifest(
    name: str,
    generations: list[str],
    files: list[InputFile],
    summaries: list[FileSummary],
    counts: Mapping[str, int],
) -> ScaleManifest:
    from pipeline.segment import SEGMENTATION_VERSION

    if len(summaries) != len(files):  # a task's output lost: never seal what is short
        raise ScaleError(f"{len(summaries)} of {len(files)} files were read; nothing was written")
    warnings = [w for s in summaries for w in s.warnings]
    return ScaleManifest(
        name=name,
        created_at=now_text(),
        tool_version=__version__,
        schema_version=SCHEMA_VERSION,
        segmentation_version=SEGMENTATION_VERSION,
        generations=generations,
        files=[
            InputSummary(
                name=s.name,
                generation=s.generation,
                sha256=s.sha256,
                bytes=s.size,
                records=s.records,
                deleted=s.deleted,
                refused=s.refused,
            )
            for s in summaries
        ],
        rows={table: int(counts.get(table, 0)) for table in TABLES},
        warnings=warnings[:MAX_WARNINGS]
        + ([f"… and {len(warnings) - MAX_WARNINGS} more"] if len(warnings) > MAX_WARNINGS else []),
    )


# -- Spark ----------------------------------------------------------------------------------


def _job(run: Any) -> Any:
    """Run one Spark action; a failure in the JVM or a Python worker is one ScaleError."""
    from py4j.protocol import Py4JError
    from pyspark.errors import PySparkException  # a JVM that did not start, a worker's error

    try:
        return run()
    except (Py4JError, PySparkException) as error:
        raise ScaleError(f"the Spark job failed: {_last_line(error)}") from None


def _last_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    causes = [line for line in lines if "Error:" in line or "Exception:" in line]
    return (causes[-1] if causes else lines[-1] if lines else type(error).__name__)[:300]


def java_missing() -> str | None:
    """Why Spark cannot start here (no Java runtime, no PySpark), or None."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "PySpark is not installed (pip install 'citeseal[scale]')"
    java_home = os.environ.get("JAVA_HOME")
    if java_home:  # Spark runs JAVA_HOME's java when it is set, whatever PATH holds
        if (Path(java_home) / "bin" / "java").is_file():
            return None
        return f"JAVA_HOME={java_home} holds no bin/java (unset it, or point it at a Java 17 or 21)"
    if shutil.which("java") is None:
        return (
            "no Java runtime (java not on PATH, JAVA_HOME not set); Spark needs Java 17 or 21 "
            "(Debian: apt-get install default-jre-headless; make jre)"
        )
    return None


BASE_CONF: dict[str, str] = {
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.parquet.compression.codec": "zstd",
}
LOCAL_CONF: dict[str, str] = {  # local mode only: no web UI, nothing listens beyond loopback
    "spark.ui.enabled": "false",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
}


@contextmanager
def spark_session(master: str, conf: Mapping[str, str] | None = None) -> Iterator[SparkSession]:
    """A Spark session on ``master``: the active one when there is one (a test's, a
    notebook's; left running), else a new one, stopped at the end."""
    why = java_missing()
    if why is not None:
        raise ScaleError(f"citeseal scale cannot start Spark: {why}")
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        yield active
        return
    builder = SparkSession.builder.master(master).appName("citeseal scale")
    local = master.startswith("local")
    settings = {**BASE_CONF, **(LOCAL_CONF if local else {}), **(conf or {})}
    if local:  # the workers run this Python, which has citeseal (PySpark reads only the env)
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = _job(builder.getOrCreate)
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()
