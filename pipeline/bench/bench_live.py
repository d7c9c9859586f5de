"""Live-path throughput: a harvest over HTTP against loopback APIs that enforce the limits.

The servers are in :mod:`pipeline.bench.bench_live_apis` (one per source, each on its own
loopback address, speaking its API's format, answering 429 past its published limit).
:func:`run` generates a spec (:data:`RECORDS` PubMed records found by two esearch queries,
with PubTator3 annotations and Crossref update notices, :data:`TRIALS` trials and
:data:`LABELS` labels by id), points ``CITESEAL_<SOURCE>_URL`` at the servers and runs
``build_snapshot(..., live=True)`` in a child process, whose limiter is instrumented to log
the moment each request starts waiting for its slot. The enrichments run beside the fetch
(:mod:`pipeline.harvest_pipeline`; ``CITESEAL_HARVEST_JOBS`` passed on, 1 to compare), so a
source *owns* its host's span (its first request's wait to its last one's, plus one
interval); a source's records/s is its records over that span, and its theoretical maximum
is its records over ``requests / limit`` (the requests that harvest needed at the published
limit) — for the sources of one chain (:data:`CHAIN`: PubMed's records, annotated, then
noticed, with memory held flat) the smallest of theirs, since none of them can deliver the
chain's records faster than its slowest host allows. It also prints the whole build's
records/s against the maximum of sources run one after another and run concurrently (each
host at its own pace), the busiest second each server saw, the 429s the servers answered and
the peak RSS of the build and writer processes: each process's own ``VmHWM`` (Linux), not
``ru_maxrss``, which a child started by ``subprocess`` inherits from its parent's peak at
``exec`` (the writer's is sampled every 0.2 s while the build runs).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pipeline.bench import Figure
from pipeline.bench.bench_figures import peak_per_second, shares, started_peaks
from pipeline.bench.bench_live_apis import (
    BASE_PATHS,
    HOSTS,
    LIMITS,
    Answer,
    Answers,
    LoopbackAPI,
    TokenBucket,
    loopback_apis,
    nct_id,
    set_id,
)
from pipeline.bench.bench_snapshot import QUERY_SIZE

__all__ = [
    "BASE_PATHS",
    "HOSTS",
    "LIMITS",
    "Answer",
    "Answers",
    "LoopbackAPI",
    "TokenBucket",
    "build_live",
    "peak_per_second",
    "run",
    "shares",
    "write_spec",
]

RECORDS = 20_000  # PubMed records (two esearch queries of QUERY_SIZE)
TRIALS = 1_000
LABELS = 500
GOAL_SHARE = 90.0  # % of the theoretical maximum, per source
# The sources whose records flow through one chain (PubMed's records, annotated by PubTator3,
# noticed by Crossref, at most AHEAD chunks on their way): none can deliver them faster than
# the slowest host of the chain allows, which is each one's theoretical maximum
CHAIN = ("pubmed", "pubtator3", "crossref")
NCBI_KEY = "bench-not-a-real-key-0000"  # NCBI allows 10 requests/s with a key
EMAIL = "bench@example.org"  # Crossref's polite pool (3 list requests/s)


# -- the harvest -----------------------------------------------------------------------------
def write_spec(
    path: Path,
    records: int = RECORDS,
    trials: int = TRIALS,
    labels: int = LABELS,
    *,
    full_text: bool = False,
) -> Path:
    """The bench corpus: ``records`` PubMed records by esearch queries of up to
    :data:`QUERY_SIZE` (``benchN`` answers block N), annotated and with Crossref's notices,
    ``trials`` NCT ids and ``labels`` set ids (``full_text``: and Europe PMC's full text of
    every PMCID met, :class:`~pipeline.bench.bench_live_apis.Answers`)."""
    queries = ", ".join(
        f'{{ term = "bench{i}", limit = {min(QUERY_SIZE, records - i * QUERY_SIZE)} }}'
        for i in range(math.ceil(records / QUERY_SIZE))
    )
    trial_ids = ", ".join(f'"{nct_id(i)}"' for i in range(1, trials + 1))
    label_ids = ", ".join(f'"{set_id(i)}"' for i in range(1, labels + 1))
    path.write_text(
        'name = "live"\n'
        f'description = "Generated live-path bench corpus ({records} PubMed records)."\n\n'
        f"[pubmed]\nqueries = [{queries}]\nannotations = true\n\n"
        "[crossref]\nupdates = true\n\n"
        + ("[europepmc]\nfull_text = true\n\n" if full_text else "")
        + f"[clinicaltrials]\nids = [{trial_ids}]\n\n"
        f"[openfda]\nset_ids = [{label_ids}]\n",
        encoding="utf-8",
    )
    return path


_CHILD = """
import json, os, sys, time
from pathlib import Path
from pipeline import pacing
from pipeline.bench.procmem import ChildPeaks, peak_kb
from pipeline.settings import Settings
from pipeline.snapshot.build import build_snapshot
from pipeline.bench.bench_snapshot import BENCH_KEYRING
from pipeline.http import HttpClient
log, granted, answered = [], [], [0.0]
original = pacing.RateLimiter.wait
def wait(self, host):
    log.append((host, time.perf_counter()))
    waited = original(self, host)
    granted.append((host, self.granted.at))  # the slot it was given (its own thread's)
    return waited
pacing.RateLimiter.wait = wait
writer = ChildPeaks()  # the writer process's own peak, sampled until the build ends
for name in ("get", "post"):
    def timed(self, *args, _call=getattr(HttpClient, name), **kwargs):
        try:
            return _call(self, *args, **kwargs)
        finally:
            answered[0] = time.perf_counter()
    setattr(HttpClient, name, timed)
started = time.perf_counter()
settings = Settings.from_env()
result = build_snapshot(Path(sys.argv[1]), keyring=BENCH_KEYRING, settings=settings,
                        live=True, resume=False)
ended = time.perf_counter()
writer_kb = writer.stop()
m = result.manifest
print(json.dumps({"started": started, "ended": ended, "log": log, "last": answered[0],
                  "jobs": settings.harvest_jobs, "granted": granted,
                  "records": {s: v.records for s, v in m.sources.items()},
                  "failed": len(m.failed_requests),
                  "rss_kb": peak_kb(), "writer_rss_kb": writer_kb}))
"""


def build_live(spec: Path, apis: Mapping[str, LoopbackAPI], data_dir: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CITESEAL_")}
    env |= {
        f"CITESEAL_{source.upper()}_URL": api.url(BASE_PATHS[source])
        for source, api in apis.items()
    }
    jobs = os.environ.get("CITESEAL_HARVEST_JOBS")
    if jobs is not None:
        env["CITESEAL_HARVEST_JOBS"] = jobs  # the one setting a comparison may change
    env |= {
        "CITESEAL_EMAIL": EMAIL,
        "NCBI_API_KEY": NCBI_KEY,
        "CITESEAL_DATA_DIR": str(data_dir),
        "NO_PROXY": "*",
    }
    env.pop("OPENFDA_API_KEY", None)
    done = subprocess.run(  # noqa: S603 (our own interpreter and code)
        [sys.executable, "-c", _CHILD, str(spec)],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    if done.returncode != 0:
        raise RuntimeError(f"live bench build failed: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(
    workdir: Path, *, records: int = RECORDS, trials: int = TRIALS, labels: int = LABELS
) -> list[Figure]:
    spec = write_spec(workdir / "live.toml", records, trials, labels)
    with loopback_apis(records) as apis:
        out = build_live(spec, apis, workdir / "data")
        refused = {s: api.counts.rejected for s, api in apis.items()}
        rejected = sum(refused.values())
        answered = {s: api.counts.answered for s, api in apis.items()}
        endpoints = {s: dict(api.counts.endpoints) for s, api in apis.items()}
        serving = {s: api.counts.serving for s, api in apis.items()}
        peaks = {s: peak_per_second(api.counts.arrivals) for s, api in apis.items()}
    starts = started_peaks(out["granted"], {api.host: s for s, api in apis.items()})
    by_host = {api.host: s for s, api in apis.items()}
    owned = shares(out, by_host, LIMITS)
    counted: dict[str, int] = dict(out["records"])
    counted["pubtator3"] = counted["crossref"] = counted.get("pubmed", 0)  # enriched records
    wall = out["ended"] - out["started"]
    figures: list[Figure] = []
    minimum = {  # the time the published limit imposes on the requests each source needed
        s: answered[s] / LIMITS[s] for s in LIMITS if owned.get(s, (0, 0.0))[0] and counted.get(s)
    }
    through = min((counted[s] / minimum[s] for s in CHAIN if s in minimum), default=0.0)
    for source in LIMITS:
        n, seconds = owned.get(source, (0, 0.0))
        got = counted.get(source, 0)
        if source not in minimum:
            figures.append(Figure(f"{source}: no request made", 0.0, "req"))
            continue
        alone = got / minimum[source]  # its records over its own requests at its limit
        best = min(alone, through) if source in CHAIN else alone
        achieved = got / seconds if seconds > 0 else float("inf")
        asked = ", ".join(f"{e} {c}" for e, c in sorted(endpoints[source].items()))
        chained = f", {through:,.1f} through the chain" if source in CHAIN else ""
        figures += [
            Figure(f"{source}: requests ({asked})", n, "req"),
            Figure(f"{source}: published limit", LIMITS[source], "req/s"),
            Figure(
                f"{source}: most requests the client started in one second",
                starts[source],
                "req",
                max(1, math.ceil(LIMITS[source])),
                higher_is_better=False,
            ),
            Figure(f"{source}: most arriving in one second (less 50 ms)", peaks[source], "req"),
            Figure(f"{source}: 429s answered", refused[source], "", 0, higher_is_better=False),
            Figure(
                f"{source}: records/s (max {alone:,.1f} at its limit{chained})", achieved, "rec/s"
            ),
            Figure(f"{source}: share of the maximum", 100 * achieved / best, "%", GOAL_SHARE),
            Figure(f"{source}: time owned", seconds, "s"),
            Figure(f"{source}: minimum time at the limit", minimum[source], "s"),
            Figure(f"{source}: the loopback API answering", serving[source], "s"),
        ]
    total = sum(counted.get(s, 0) for s in ("pubmed", "clinicaltrials", "openfda"))
    sequential = total / sum(minimum.values()) if minimum else 0.0
    concurrent = total / max(minimum.values()) if minimum else 0.0
    figures += [
        Figure("whole build: harvest jobs (CITESEAL_HARVEST_JOBS)", out["jobs"], ""),
        Figure(f"whole build: {total:,} records, wall time", wall, "s"),
        Figure("whole build: records/s", total / wall, "rec/s"),
        Figure("  max, sources one after another", sequential, "rec/s"),
        Figure("  max, sources concurrent (each host its pace)", concurrent, "rec/s"),
        Figure("429s answered by the loopback APIs", rejected, "", 0, higher_is_better=False),
        Figure("failed requests in the manifest", out["failed"], "", 0, higher_is_better=False),
        Figure("peak RSS, build (its own VmHWM)", out["rss_kb"] / 1024, "MiB"),
        Figure("peak RSS, writer (VmHWM sampled every 0.2 s)", out["writer_rss_kb"] / 1024, "MiB"),
    ]
    return figures
