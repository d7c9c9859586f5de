"""``citeseal demo``: the whole system, offline, on the bundled demo corpus, in seconds.

Steps (each prints what it did):

1. build the demo snapshot from the recorded exchanges in ``snapshots/demo/replay`` (in a
   checkout; the wheel carries a copy, see :mod:`audit.resources`), then a
   second one from ``replay-update`` + ``replay`` with the first as parent (the trial and the
   label get a new version);
2. search the newest snapshot and print the top passages with their handles;
3. cite passages (handles minted with the fixed, public demo key) and write a planted answer
   with the six seed cases — a correct quote, a misquote, a forged check code, a malformed
   handle, a retracted paper, an uncited sentence — plus a handle minted from the OLD trial
   version (``version_changed``);
4. audit it against the newest snapshot and print the text report (FAIL);
5. audit an "earlier" answer against the first snapshot (as if published then), and render the
   site from both reports and both snapshots: its re-audit page shows the citations of the
   earlier answer whose trial and label changed since.

Everything goes into one working folder (default ``site/demo`` in the source checkout,
``./citeseal-demo`` from an installed wheel) that the demo owns: it is wiped and rebuilt on
every run, and nothing else is touched.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from audit.citations import parse_answer
from audit.engine import audit_answer
from audit.errors import InputError
from audit.keys import Keyring
from audit.render_text import render_text
from audit.report import Report
from audit.resources import resources
from audit.terminal import one_line
from pipeline.site.build import BuildResult, build_site
from pipeline.snapshot.build import build_snapshot
from pipeline.snapshot.search import record_passages, search_passages
from pipeline.snapshot.trust import SealPolicy, trust_snapshot

SPEC = resources().demo_spec
REPLAY = resources().demo_replay
REPLAY_UPDATE = resources().demo_replay_update
DEFAULT_OUT = resources().demo_out
MARKER = ".citeseal-demo"
SEARCH_QUERY = "zentravir Farrow syndrome"

COHORT = "pmid:99000001"
RETRACTED = "pmid:99000002"
TRIAL = "nct:NCT99000001"
LABEL = "setid:5eed0001-0000-4000-8000-000000000001"
OLD_TRIAL_VERSION = "2025-01-15"


@dataclass(frozen=True)
class DemoResult:
    out: Path
    snapshots: tuple[Path, Path]
    answer: Path
    report: Report
    site: BuildResult

    @property
    def index(self) -> Path:
        return self.site.out / "index.html"


def shown(path: Path) -> str:
    """``path`` as the demo prints it: relative to the working folder when inside it (what a
    user types next), else absolute."""
    absolute = path.absolute()
    try:
        return absolute.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return str(absolute)


def _prepare(out: Path) -> None:
    """Make ``out`` an empty folder the demo owns (refuse a folder it did not create)."""
    if out.exists():
        if not out.is_dir():
            raise InputError(f"--out {out} exists and is not a folder")
        if any(out.iterdir()) and not (out / MARKER).is_file():
            raise InputError(
                f"refusing to use {out}: it is not a citeseal demo folder (no {MARKER} file)",
                advice="choose an empty or new folder for --out",
            )
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / MARKER).write_text("Made by `citeseal demo`; wiped on every run.\n", encoding="utf-8")


DEMO = Keyring.demo_keyring()
TRUST = SealPolicy.of(DEMO)  # the demo's snapshots are sealed with the public demo key


def _handles(snapshot: Path, record_id: str, version: str | None = None) -> dict[str, str]:
    """path → handle for every passage of one version of a record (minted with the demo key)."""
    con = trust_snapshot(snapshot, TRUST).search_connection()
    try:
        view = record_passages(con, record_id, DEMO, version=version)
    finally:
        con.close()
    return {p.path: p.handle for p in view.passages if p.handle}


def _forge(handle: str) -> str:
    """The same handle with its last check character changed."""
    last = handle[-1]
    return handle[:-1] + ("0" if last != "0" else "1")


def planted_answer(newest: Path) -> str:
    """The six Tekmeria seed cases on our demo corpus, plus a citation of an old trial version."""
    cohort = _handles(newest, COHORT)
    retracted = _handles(newest, RETRACTED)
    trial_then = _handles(newest, TRIAL, OLD_TRIAL_VERSION)
    return (
        "A nationwide cohort found no increased risk of Farrow syndrome after prenatal "
        f'zentravir exposure [{cohort["abstract.3"]} "During 48 210 person-years of follow-up, '
        '312 children were diagnosed with Farrow syndrome"]. '
        "The same study concluded that zentravir raises the risk "
        f'[{cohort["abstract.4"]} "Zentravir exposure strongly increases the risk of Farrow '
        'syndrome"]. '
        f"A second cohort reported the same null association [{_forge(cohort['abstract.3'])}]. "
        "Earlier reviews reached the same conclusion [pmid:99000001-abstract]. "
        "A case series that reported liver injury in treated children was later retracted "
        f"[{retracted['abstract.1']}]. "
        "In the ZEN-FARROW-1 trial, children took zentravir or placebo once daily for 24 weeks "
        f'[{trial_then["trial.brief_summary.1"]} "once daily for 24 weeks"]. '
        "Parents should discuss the treatment with their paediatrician.\n"
    )


def earlier_answer(first: Path) -> str:
    """An answer written when only the first snapshot existed (trial and label at old versions)."""
    trial = _handles(first, TRIAL)
    label = _handles(first, LABEL)
    return (
        "ZEN-FARROW-1 counts Farrow flares per participant over 24 weeks "
        f'[{trial["trial.primary_outcome.1"]} "Number of Farrow flares per participant"]. '
        "The label says to stop zentravir when ALT rises above 5 times the upper limit of "
        f'normal [{label["label.boxed_warning.1"]} "Stop zentravir if ALT rises above 5 times '
        'the upper limit of normal"].\n'
    )


def _audit(text: str, snapshot: Path, label: str, now: datetime | None = None) -> Report:
    with (
        trust_snapshot(snapshot, TRUST).corpus() as corpus,
        closing(corpus.reference_resolver()) as resolver,
    ):
        return audit_answer(
            parse_answer(text),
            corpus,
            DEMO,
            source_label=label,
            now=now,
            text=text,
            references=resolver,
        )


def run_demo(
    out: Path = DEFAULT_OUT,
    *,
    echo: Callable[[str], None] = print,
    env: Mapping[str, str] | None = None,
) -> DemoResult:
    """Run every step of the demo into ``out`` (see the module docstring)."""
    for folder in (REPLAY, REPLAY_UPDATE):
        if not folder.is_dir():
            raise InputError(
                f"the demo's recorded exchanges are missing: {folder}",
                advice="reinstall citeseal (its wheel carries the demo corpus) or use a checkout",
            )
    if not SPEC.is_file():
        raise InputError(
            f"the demo's corpus spec is missing: {SPEC}",
            advice="reinstall citeseal (its wheel carries the demo corpus) or use a checkout",
        )
    _prepare(out)
    corpus = out / "snapshots"
    corpus.mkdir()
    spec = corpus / "demo.toml"
    shutil.copyfile(SPEC, spec)

    echo("1. snapshots (offline, from recorded responses)")
    first = build_snapshot(spec, keyring=DEMO, replay=[REPLAY])
    second = build_snapshot(spec, keyring=DEMO, parent=first.path, replay=[REPLAY_UPDATE, REPLAY])
    for built in (first, second):
        m = built.manifest
        echo(
            f"   {shown(built.path)}: {m.records} records, {m.versions} versions, "
            f"{m.passages} passages"
        )

    echo(f"2. search {SEARCH_QUERY!r} (BM25, newest snapshot)")
    con = trust_snapshot(second.path, TRUST).search_connection()
    try:
        hits = search_passages(con, SEARCH_QUERY, DEMO, limit=3)
    finally:
        con.close()
    for hit in hits:
        status = f"  (status {one_line(hit.status)})" if hit.status else ""
        echo(f"   {hit.handle}  {one_line(hit.text[:60])}…{status}")

    echo("3. an answer citing passages by handle (demo key: public, NOT a seal)")
    answer = out / "answer.md"
    answer.write_text(planted_answer(second.path), encoding="utf-8")
    echo(f"   {shown(answer)}: six planted cases and a handle from an old trial version")

    echo("4. audit against the newest snapshot")
    report = _audit(answer.read_text(encoding="utf-8"), second.path, "answer.md")
    reports = out / "reports"
    reports.mkdir()
    (reports / "answer.json").write_text(report.model_dump_json(indent=2), encoding="utf-8")
    for line in render_text(report).rstrip("\n").splitlines():
        echo("   " + line)

    echo("5. the site (an earlier answer, audited against the first snapshot, is re-audited)")
    published = datetime.fromisoformat(first.manifest.created_at.replace("Z", "+00:00"))
    earlier = _audit(earlier_answer(first.path), first.path, "earlier.md", now=published)
    (reports / "earlier.json").write_text(earlier.model_dump_json(indent=2), encoding="utf-8")
    site = build_site(reports, corpus, out / "public", keyring=DEMO, env=env)
    echo(
        f"   re-audit: {site.changed_citations} citations of the published reports changed "
        "status since publication"
    )
    echo(f"   {site.pages} pages: {shown(site.out / 'index.html')}")
    return DemoResult(
        out=out,
        snapshots=(first.path, second.path),
        answer=answer,
        report=report,
        site=site,
    )
