"""``python -m pipeline.bench scale``: ``scale ingest`` throughput in Spark local mode.

On a generated baseline (:mod:`pipeline.scale.generate`: :data:`RECORDS` records in
:data:`FILES` files, one update file), interleaved for :data:`ROUNDS` rounds (medians):

* the physical reference, in one process: the plain PubMed parser over the files (gunzip and
  parse), and the same plus what a Spark task adds (content hash, folding, rows:
  :func:`pipeline.scale.history.file_events`);
* ``scale ingest`` on ``local[1]`` and ``local[2]``: records/s per core of the Spark job
  (the session's start, reported apart, is paid once per run, not per record);
* bytes per record of the Parquet written, beside the gzipped input's.

Not in plain ``make bench`` (it needs a JVM and takes minutes): ``make bench-scale`` runs it.
``CITESEAL_BENCH_SCALE_RECORDS`` and ``CITESEAL_BENCH_SCALE_ROUNDS`` shrink it (a round of
200,000 records takes several minutes even on a quiet host); each measurement is also
printed to stderr as it is taken.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import time
from pathlib import Path

from pipeline.bench import Figure
from pipeline.scale.generate import generate_baseline
from pipeline.scale.history import file_events
from pipeline.sources.pubmed_files import file_bytes, input_files, read_file

RECORDS = int(os.environ.get("CITESEAL_BENCH_SCALE_RECORDS", "200000"))
FILES = 20  # 10,000 records a file (real baseline files hold about 30,000)
ROUNDS = int(os.environ.get("CITESEAL_BENCH_SCALE_ROUNDS", "3"))
CORES = (1, 2)


def _reference(paths: list[Path], *, rows: bool) -> tuple[float, int]:
    """Seconds and records of reading every file in this process (``rows``: as a task does)."""
    files = input_files(paths[0], paths[1])
    started = time.perf_counter()
    records = 0
    for number, item in enumerate(files):
        data = file_bytes(item.path)
        if rows:
            summary, _ = file_events(number, item, data)
            records += summary.records
        else:
            records += len(read_file(item.name, data).records)
    return time.perf_counter() - started, records


def _note(rates: dict[str, list[float]], name: str, rate: float) -> None:
    rates.setdefault(name, []).append(rate)
    load = os.getloadavg()[0]
    print(
        f"  ({name}: {rate:,.1f} records/s per core, load {load:.1f})", file=sys.stderr, flush=True
    )


def _parquet_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*.parquet"))


def run(workdir: Path) -> list[Figure]:
    from pipeline.scale.ingest import ingest, java_missing

    why = java_missing()
    if why is not None:
        return [Figure(f"skipped: {why}", 0, "", note=True)]
    started = time.perf_counter()
    made = generate_baseline(workdir / "in", RECORDS, files=FILES, updates=1)
    generated = time.perf_counter() - started
    folders = [made.baseline, made.updates]
    rates: dict[str, list[float]] = {}
    starts: list[float] = []
    size = records = distinct = 0
    loads = [os.getloadavg()[0]]
    for round_no in range(ROUNDS):
        seconds, count = _reference(folders, rows=False)
        _note(rates, "parse", count / seconds)
        seconds, count = _reference(folders, rows=True)
        _note(rates, "rows", count / seconds)
        for cores in CORES:
            out = workdir / f"out-{cores}-{round_no}"
            result = ingest(made.baseline, made.updates, out, master=f"local[{cores}]")
            records = sum(f.records for f in result.manifest.files)
            _note(rates, f"local[{cores}]", records / result.job_seconds / cores)
            starts.append(result.seconds - result.job_seconds)
            size = _parquet_bytes(out)
            distinct = result.manifest.rows["state"]
            shutil.rmtree(out)
        loads.append(os.getloadavg()[0])
    gzipped = sum(p.stat().st_size for f in folders for p in f.iterdir())
    medians = {name: statistics.median(values) for name, values in rates.items()}
    return [
        Figure(
            f"{RECORDS:,} generated records in {FILES} files + 1 update; {ROUNDS} interleaved "
            f"rounds, medians; load average {min(loads):.1f}–{max(loads):.1f} on "
            f"{os.cpu_count()} cores",
            0,
            "",
            note=True,
        ),
        Figure("plain parser, 1 process (gunzip + parse)", medians["parse"], "rec/s"),
        Figure("file → rows, 1 process (+ hash, fold, rows)", medians["rows"], "rec/s"),
        Figure("scale ingest local[1]: records/s per core", medians["local[1]"], "rec/s"),
        Figure("scale ingest local[2]: records/s per core", medians["local[2]"], "rec/s"),
        Figure(
            "local[2] per core / file → rows in 1 process",
            medians["local[2]"] / medians["rows"],
            "x",
        ),
        Figure(
            "local[2] / local[1] (whole job)", 2 * medians["local[2]"] / medians["local[1]"], "x"
        ),
        Figure("Spark session start, median", statistics.median(starts), "s"),
        Figure("Parquet, bytes per record (all tables)", size / max(distinct, 1), "B"),
        Figure("gzipped input, bytes per record", gzipped / records, "B"),
        Figure("generation of the baseline", generated, "s"),
    ]
