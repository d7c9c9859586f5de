"""Snapshot build throughput on generated PubMed replay folders (never committed).

:func:`generate_pubmed_replay` writes a replay folder of synthetic PubMed records — esearch
JSON pages and efetch XML batches, exactly the requests a build of the matching spec makes,
recorded through :class:`~pipeline.replay.RecordingTransport` from a synthesising transport —
and the spec that harvests them. :func:`run` builds snapshots from such folders at two corpus
sizes in child processes, three times each, and reports records/s (median, slowest,
fastest), passages/s and the highest peak RSS of the build's two processes (the harvest,
and its database writer — see :mod:`pipeline.snapshot.writer`), so the figures show
whether memory grows with the corpus. At the large size each round also builds with the
database work in the build's own process (:class:`InlineWriter`, the plain design the
writer process is kept against: it stays while it pays 10 % of the build's records/s in the
same rounds). On the last 50k snapshot it then measures what every
command pays before it reads a snapshot (:mod:`pipeline.snapshot.trust`): the check with the
whole file hashed, interleaved with a plain sha256 of the same file (the physical reference),
and the check served by the verified-digest cache.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit
from xml.sax.saxutils import escape

import httpx

from audit.keys import Keyring
from pipeline.bench import Figure
from pipeline.errors import HarvestError, ParseError

QUERY_SIZE = 10_000  # PubMed esearch reaches at most 10,000 ids per query
FIRST_PMID = 99_100_000
SECTIONS = (
    "BACKGROUND",
    "OBJECTIVE",
    "DESIGN",
    "SETTING",
    "PARTICIPANTS",
    "INTERVENTIONS",
    "MEASUREMENTS",
    "RESULTS",
    "CONCLUSIONS",
)
WORDS = [
    "zentravir",
    "farrow",
    "syndrome",
    "cohort",
    "children",
    "exposure",
    "risk",
    "hazard",
    "ratio",
    "interval",
    "flare",
    "placebo",
    "randomised",
    "trial",
    "adverse",
    "events",
    "hepatic",
    "outcome",
    "follow-up",
    "incidence",
    "dose",
    "observed",
    "reduced",
    "increased",
    "baseline",
    "participants",
    "analysis",
    "adjusted",
    "confidence",
]
SIZES = (10_000, 50_000)
GOAL_RECORDS_PER_S = 2_000.0  # the goal, for corpora of at least GOAL_MIN_RECORDS
GOAL_MIN_RECORDS = 50_000
WRITER_GOAL = 1.1  # the writer process stays while it pays 10 % of the build's records/s
RUNS = 3  # builds per corpus size; the median is held against the goal, peaks are the highest
BENCH_KEYRING = Keyring([b"citeseal bench key: not a secret, bench only"])
VERIFY_ROUNDS = 5  # interleaved rounds of (plain sha256, trust check) on the 50k snapshot
GOAL_COLD_RATIO = 1.10  # a trust check costs at most this many plain sha256 passes of the file
GOAL_WARM_MS = 20.0  # a trust check served by the digest cache


def _sentence(rng: random.Random, n: int) -> str:
    words = [rng.choice(WORDS) for _ in range(n)]
    return " ".join(words).capitalize() + f" ({rng.randint(1, 999)} of {rng.randint(1000, 9999)})."


def article_xml(pmid: int, rng: random.Random) -> str:
    """One synthetic PubmedArticle: title, 9-section abstract (10 passages), authors, DOI."""
    sections = "".join(
        f'<AbstractText Label="{label}" NlmCategory="{label}">'
        f"{escape(' '.join(_sentence(rng, 14) for _ in range(3)))}</AbstractText>"
        for label in SECTIONS
    )
    authors = "".join(
        f"<Author><LastName>Synth{rng.randint(1, 500)}</LastName><ForeName>A</ForeName></Author>"
        for _ in range(4)
    )
    return (
        f'<PubmedArticle><MedlineCitation Status="MEDLINE" Owner="NLM">'
        f'<PMID Version="1">{pmid}</PMID><Article PubModel="Electronic">'
        "<Journal><JournalIssue><PubDate><Year>2024</Year></PubDate></JournalIssue>"
        "<Title>Journal of Generated Benchmarks</Title></Journal>"
        f"<ArticleTitle>{escape(_sentence(rng, 10))} (synthetic bench record)</ArticleTitle>"
        f"<Abstract>{sections}</Abstract><AuthorList>{authors}</AuthorList>"
        "<PublicationTypeList><PublicationType>Journal Article</PublicationType>"
        "</PublicationTypeList></Article></MedlineCitation><PubmedData>"
        f'<ArticleIdList><ArticleId IdType="pubmed">{pmid}</ArticleId>'
        f'<ArticleId IdType="doi">10.5555/bench.{pmid}</ArticleId></ArticleIdList>'
        "<PublicationStatus>epublish</PublicationStatus></PubmedData></PubmedArticle>"
    )


class SyntheticPubMed(httpx.BaseTransport):
    """Answers esearch (query ``benchN`` → ids of block N) and efetch for any bench PMID."""

    offline = True

    def __init__(self, records: int) -> None:
        self.records = records

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        params = dict(parse_qsl(urlsplit(str(request.url)).query))
        if request.method == "POST":
            request.read()
            params.update(parse_qsl(request.content.decode("utf-8")))
        if request.url.path.endswith("esearch.fcgi"):
            block = int(params["term"].removeprefix("bench"))
            first = FIRST_PMID + block * QUERY_SIZE
            count = max(0, min(QUERY_SIZE, self.records - block * QUERY_SIZE))
            start, size = int(params.get("retstart", 0)), int(params.get("retmax", 20))
            ids = [str(first + i) for i in range(start, min(start + size, count))]
            body = {
                "esearchresult": {
                    "count": str(count),
                    "retmax": str(len(ids)),
                    "retstart": str(start),
                    "idlist": ids,
                }
            }
            return httpx.Response(200, json=body, request=request)
        pmids = [int(p) for p in params["id"].split(",")]
        xml = "".join(article_xml(p, random.Random(p)) for p in pmids)
        text = f'<?xml version="1.0" ?>\n<PubmedArticleSet>{xml}</PubmedArticleSet>'
        return httpx.Response(
            200, content=text.encode("utf-8"), headers={"content-type": "text/xml"}, request=request
        )


def write_spec(path: Path, name: str, records: int, replay: Path) -> Path:
    queries = ", ".join(
        f'{{ term = "bench{i}", limit = {QUERY_SIZE} }}'
        for i in range((records + QUERY_SIZE - 1) // QUERY_SIZE)
    )
    path.write_text(
        f'name = "{name}"\n'
        f'description = "Generated benchmark corpus of {records} synthetic PubMed records."\n'
        f"replay = [{json.dumps(str(replay))}]\n\n[pubmed]\nqueries = [{queries}]\n",
        encoding="utf-8",
    )
    return path


def generate_pubmed_replay(workdir: Path, records: int, *, name: str = "bench") -> Path:
    """A replay folder and spec (``workdir/<name>.toml``) for ``records`` PubMed records."""
    from pipeline.harvest import Harvester
    from pipeline.http import HttpClient
    from pipeline.replay import RecordingTransport
    from pipeline.settings import Settings
    from pipeline.snapshot.progress import NullProgress
    from pipeline.snapshot.spec import load_spec

    replay = workdir / f"{name}-replay"
    spec_path = write_spec(workdir / f"{name}.toml", name, records, replay)
    transport = RecordingTransport(SyntheticPubMed(records), replay)
    with HttpClient(Settings(), transport=transport) as client:
        Harvester(load_spec(spec_path), client, _NullSink(), NullProgress()).run()
    return spec_path


class _NullSink:
    def records(self, source: str, records: object, *, incomplete: object = ()) -> None:
        del source, records, incomplete

    def failure(self, source: str, step: str, error: HarvestError | ParseError) -> None:
        raise error

    def step(self, source: str, step: str, count: int, detail: str | None = None) -> None:
        del source, step, count, detail


class InlineWriter:
    """The writer process's interface (:class:`~pipeline.snapshot.writer.WriterProcess`)
    doing the same database work at once in the build's own process: the plain design the
    bench measures the writer process against."""

    def __init__(self, path: Path) -> None:
        from pipeline.snapshot.store import connect

        self._connect = lambda: connect(path)
        self._con = self._connect()
        self._settings: list[tuple[Callable[..., object], tuple[object, ...], dict]] = []

    def submit(self, function: Callable[..., object], *args: object, **kwargs: object) -> None:
        function(self._con, *args, **kwargs)

    def call(self, function: Callable[..., object], *args: object, **kwargs: object) -> object:
        return function(self._con, *args, **kwargs)

    def configure(self, function: Callable[..., object], *args: object, **kwargs: object) -> None:
        function(self._con, *args, **kwargs)
        self._settings.append((function, args, kwargs))

    def reopen(self) -> None:
        self._con.close()
        self._con = self._connect()
        for function, args, kwargs in self._settings:
            function(self._con, *args, **kwargs)

    def drain(self) -> None:
        pass

    def __enter__(self) -> InlineWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self._con.close()


_CHILD = """
import json, sys, time
from pathlib import Path
from pipeline.settings import Settings
from pipeline.snapshot import build
from pipeline.snapshot.build import build_snapshot
from pipeline.bench.bench_snapshot import BENCH_KEYRING, InlineWriter
from pipeline.bench.procmem import ChildPeaks, peak_kb
if sys.argv[2:] == ["inline"]:
    build.WriterProcess = InlineWriter
writer = ChildPeaks()
started = time.perf_counter()
result = build_snapshot(
    Path(sys.argv[1]), keyring=BENCH_KEYRING, settings=Settings(), resume=False
)
elapsed = time.perf_counter() - started
writer_kb = writer.stop()
m = result.manifest
print(json.dumps({"seconds": elapsed, "records": m.records, "passages": m.passages,
                  "rss_kb": peak_kb(), "writer_rss_kb": writer_kb, "size": m.size}))
"""


def build_in_child(spec_path: Path, *, inline: bool = False) -> dict[str, float]:
    """Build in a fresh interpreter; returns seconds, counts and the peak RSS of the build
    process and of its writer process (the only child it waits for; with ``inline``, the
    database work runs in the build's process: :class:`InlineWriter`)."""
    done = subprocess.run(  # noqa: S603 (our own interpreter and code)
        [sys.executable, "-c", _CHILD, str(spec_path), *(["inline"] if inline else [])],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"bench build failed: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(workdir: Path) -> list[Figure]:
    figures: list[Figure] = []
    peaks: dict[int, tuple[float, float]] = {}  # size: (harvest, writer) peak RSS in MiB
    specs: dict[int, Path] = {}
    for size in SIZES:
        label = _label(size)
        started = time.perf_counter()
        spec = specs[size] = generate_pubmed_replay(workdir, size, name=f"bench{label}")
        generated = time.perf_counter() - started
        runs, inline = [], []
        for _ in range(RUNS):  # this machine's speed varies by ±10 % from run to run
            shutil.rmtree(spec.parent / spec.stem, ignore_errors=True)
            if size == SIZES[-1]:  # the plain design, interleaved
                inline.append(build_in_child(spec, inline=True))
                shutil.rmtree(spec.parent / spec.stem, ignore_errors=True)
            runs.append(build_in_child(spec))
        rates = sorted(out["records"] / out["seconds"] for out in runs)
        middle = sorted(runs, key=lambda out: out["records"] / out["seconds"])[RUNS // 2]
        peaks[size] = (
            max(out["rss_kb"] for out in runs) / 1024,
            max(out["writer_rss_kb"] for out in runs) / 1024,
        )
        figures += [
            Figure(
                f"snapshot build {label}: records/s, median of {RUNS}",
                statistics.median(rates),
                "rec/s",
                GOAL_RECORDS_PER_S if size >= GOAL_MIN_RECORDS else None,
            ),
            Figure(f"snapshot build {label}: records/s, slowest run", rates[0], "rec/s"),
            Figure(f"snapshot build {label}: records/s, fastest run", rates[-1], "rec/s"),
            Figure(
                f"snapshot build {label}: passages/s, median run",
                middle["passages"] / middle["seconds"],
                "pass/s",
            ),
            Figure(f"snapshot build {label}: wall time, median run", middle["seconds"], "s"),
            Figure(f"snapshot build {label}: peak RSS, harvest", peaks[size][0], "MiB"),
            Figure(f"snapshot build {label}: peak RSS, writer", peaks[size][1], "MiB"),
            Figure(f"snapshot build {label}: file size", middle["size"] / 1e6, "MB"),
            Figure(f"replay generation {label}", generated, "s"),
        ]
        if inline:
            plain = statistics.median(out["records"] / out["seconds"] for out in inline)
            figures += [
                Figure(f"  {label}, the database work in the build's process", plain, "rec/s"),
                Figure(
                    "  writer process over it, same rounds",
                    statistics.median(rates) / plain,
                    "x",
                    WRITER_GOAL,
                ),
                Figure(
                    "  peak RSS, the build's process alone",
                    max(out["rss_kb"] for out in inline) / 1024,
                    "MiB",
                ),
            ]
    small, large = SIZES[0], SIZES[-1]
    growth = f"{large // small}x the records"
    figures += [
        Figure(f"peak RSS harvest, {growth}", peaks[large][0] / peaks[small][0], "x"),
        Figure(f"peak RSS writer, {growth}", peaks[large][1] / peaks[small][1], "x"),
    ]
    built = specs[large].parent / specs[large].stem  # the last 50k build is left in place
    newest = sorted(built.glob("*.duckdb"))[-1]
    return figures + verify_figures(newest, workdir / "data", _label(large))


def _label(size: int) -> str:
    return f"{size // 1000}k" if size % 1000 == 0 else str(size)


def verify_figures(snapshot: Path, data_dir: Path, label: str) -> list[Figure]:
    """The cost of checking ``snapshot`` before use: hashed in full (against a plain sha256 of
    the file, interleaved) and served by the digest cache."""
    from pipeline.snapshot.digests import RACY_SECONDS, DigestCache
    from pipeline.snapshot.trust import SealPolicy, trust_snapshot

    policy = SealPolicy.of(BENCH_KEYRING)

    def plain() -> None:
        digest = hashlib.sha256()
        with snapshot.open("rb") as handle:
            while block := handle.read(1 << 20):
                digest.update(block)

    cold, reference = [], []
    for _ in range(VERIFY_ROUNDS):
        reference.append(_seconds(plain))
        cold.append(_seconds(lambda: trust_snapshot(snapshot, policy)))
    ratios = sorted(c / r for c, r in zip(cold, reference, strict=True))
    settle = RACY_SECONDS - (time.time() - snapshot.stat().st_mtime)
    if settle > 0:
        time.sleep(settle + 0.1)  # a file this fresh is hashed but not remembered
    cache = DigestCache(data_dir / "digests.json")
    trust_snapshot(snapshot, policy, cache)  # hashed once, remembered
    warm = sorted(_seconds(lambda: trust_snapshot(snapshot, policy, cache)) for _ in range(20))
    size_mb = snapshot.stat().st_size / 1e6
    return [
        Figure(
            f"trust check {label} ({size_mb:.0f} MB): hashed, median", statistics.median(cold), "s"
        ),
        Figure("plain sha256 of the same file, median", statistics.median(reference), "s"),
        Figure(
            "trust check hashed / plain sha256 (interleaved)",
            statistics.median(ratios),
            "x",
            GOAL_COLD_RATIO,
            higher_is_better=False,
        ),
        Figure(
            "trust check from the digest cache, median",
            statistics.median(warm) * 1000,
            "ms",
            GOAL_WARM_MS,
            higher_is_better=False,
        ),
        Figure("digest cache hits / checks", cache.hits / (cache.hits + cache.misses), "x"),
    ]


def _seconds(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started
