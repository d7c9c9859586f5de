"""CLI: ``citeseal search QUERY`` and ``citeseal cite RECORD_ID`` — passages with handles."""

from __future__ import annotations

import textwrap
from typing import Annotated

import typer

from audit.terminal import one_line
from pipeline.cli.common import keyring_from_settings, seal_policy, trusted_snapshot
from pipeline.cli.options import DemoKeyOpt, JsonOpt, SnapshotOpt
from pipeline.settings import Settings
from pipeline.snapshot.designs import DESIGNS
from pipeline.snapshot.facets import PHASES
from pipeline.snapshot.filters import (
    CLI_NAMES,
    SearchFilters,
    make_filters,
    undecided_lines,
    work_lines,
)
from pipeline.snapshot.listing import find_page
from pipeline.snapshot.search import (
    PassageView,
    also_text,
    held_statuses,
    record_passages,
    to_json,
)

WIDTH = 100


def _flags(flags: dict[str, bool | None]) -> str:
    on = [name.replace("_", " ") for name, value in flags.items() if value]
    return f"  [{', '.join(on)}]" if on else ""


def _passage_lines(view: PassageView, number: int | None = None) -> list[str]:
    head = f"{number}. " if number is not None else ""
    handle = view.handle or f"{view.record_id}@{view.version}/{view.path} (no handle scheme)"
    score = f"  (score {view.score:.3f})" if view.score is not None else ""
    lines = [f"{head}{one_line(handle)}{score}"]
    context = [one_line(view.section or "")]
    if view.title:
        title = one_line(view.title)
        context.insert(0, title if len(title) <= 80 else title[:79] + "…")
    if view.source:
        context.append(view.source)
    if view.status:
        context.append(f"status {one_line(view.status)}")
    if view.published:
        context.append(f"published {one_line(view.published)}")
    lines.append("   " + " — ".join(c for c in context if c) + _flags(view.flags))
    lines.extend(
        textwrap.wrap(one_line(view.text), WIDTH, initial_indent="   ", subsequent_indent="   ")
    )
    if view.also:
        lines.append("   also: " + "; ".join(also_text(other) for other in view.also))
    return lines


def _flag_option(flag: str, what: str) -> object:
    return typer.Option(
        flag,
        help=f"Keep {what} (include, the default), leave them out (exclude: keeps only "
        "records known not to be) or keep only them (only).",
    )


def _trial_date(flag: str, what: str, side: str) -> object:
    return typer.Option(
        flag,
        metavar="DATE",
        help=f"Only trials whose {what} date (actual or anticipated) is {side} this date "
        "(YYYY, YYYY-MM or YYYY-MM-DD; other sources are left out).",
    )


def search_command(
    snapshot: SnapshotOpt,
    query: Annotated[
        str | None,
        typer.Argument(
            help="Words to look for (BM25 ranking). Without it, --drug lists that drug's "
            "labels newest first."
        ),
    ] = None,
    source: Annotated[
        list[str] | None,
        typer.Option("--source", help="Only passages of this source (repeatable)."),
    ] = None,
    limit: Annotated[
        int, typer.Option("--limit", "-n", help="How many works (one passage each).")
    ] = 10,
    retracted: Annotated[str, _flag_option("--retracted", "retracted records")] = "include",
    concern: Annotated[
        str, _flag_option("--expression-of-concern", "records with an expression of concern")
    ] = "include",
    preprint: Annotated[str, _flag_option("--preprint", "preprints")] = "include",
    published_from: Annotated[
        str | None,
        typer.Option(
            "--from",
            metavar="DATE",
            help="Only records published on or after this date: YYYY, YYYY-MM or YYYY-MM-DD "
            "(2021 = from 2021-01-01). Records whose date is unknown or too coarse to decide "
            "are left out and counted.",
        ),
    ] = None,
    published_to: Annotated[
        str | None,
        typer.Option(
            "--to",
            metavar="DATE",
            help="Only records published on or before this date: YYYY, YYYY-MM or YYYY-MM-DD "
            "(2021-06 = to 2021-06-30).",
        ),
    ] = None,
    status: Annotated[
        list[str] | None,
        typer.Option(
            "--status",
            metavar="STATUS",
            help="Only trials with this ClinicalTrials.gov overall status, e.g. RECRUITING "
            "(repeatable; other sources are left out).",
        ),
    ] = None,
    design: Annotated[
        list[str] | None,
        typer.Option(
            "--design",
            metavar="DESIGN",
            help=f"Only records of this study design, from their publication types "
            f"(repeatable: any of them): {', '.join(DESIGNS)}. Records whose types do not "
            "tell are left out and counted.",
        ),
    ] = None,
    open_access: Annotated[
        str,
        typer.Option(
            "--open-access",
            help="Keep open-access records (include, the default), leave them out (exclude: "
            "keeps only records known not to be) or keep only them (only). Open: Europe "
            "PMC's isOpenAccess, or an open licence the snapshot knows.",
        ),
    ] = "include",
    phase: Annotated[
        list[str] | None,
        typer.Option(
            "--phase",
            metavar="PHASE",
            help=f"Only trials of this phase (repeatable): {', '.join(PHASES)}.",
        ),
    ] = None,
    has_results: Annotated[
        str | None,
        typer.Option(
            "--has-results",
            metavar="yes|no",
            help="Only trials with (yes) or without (no) posted results.",
        ),
    ] = None,
    condition: Annotated[
        str | None,
        typer.Option(
            "--condition",
            metavar="TEXT",
            help="Only trials whose conditions field holds these words (case and accents folded).",
        ),
    ] = None,
    intervention: Annotated[
        str | None,
        typer.Option(
            "--intervention",
            metavar="TEXT",
            help="Only trials whose interventions field holds these words (case and "
            "accents folded).",
        ),
    ] = None,
    drug: Annotated[
        str | None,
        typer.Option(
            "--drug",
            metavar="NAME",
            help="Only drug labels naming this brand, generic or substance name (folded "
            "exact match). Without QUERY: every such label, newest first.",
        ),
    ] = None,
    started_from: Annotated[
        str | None, _trial_date("--started-from", "start", "on or after")
    ] = None,
    started_to: Annotated[str | None, _trial_date("--started-to", "start", "on or before")] = None,
    completed_from: Annotated[
        str | None, _trial_date("--completed-from", "completion", "on or after")
    ] = None,
    completed_to: Annotated[
        str | None, _trial_date("--completed-to", "completion", "on or before")
    ] = None,
    demo_key: DemoKeyOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """Rank the works of a snapshot for QUERY: each work's best passage with its handle, and
    the work's other records (its PubMed, Europe PMC, Crossref, preprint copies)."""
    settings = Settings.from_env()
    keyring = keyring_from_settings(settings, demo_key)
    policy = seal_policy(settings, demo_key, keyring=keyring)
    con = trusted_snapshot(snapshot, settings, policy).search_connection()
    try:
        filters = make_filters(
            sources=source or (),
            retracted=retracted,
            expression_of_concern=concern,
            preprint=preprint,
            published_from=published_from,
            published_to=published_to,
            statuses=status or (),
            held_statuses=held_statuses(con) if status else (),
            designs=design or (),
            open_access=open_access,
            phases=phase or (),
            has_results=has_results,
            condition=condition,
            intervention=intervention,
            drug=drug,
            started_from=started_from,
            started_to=started_to,
            completed_from=completed_from,
            completed_to=completed_to,
            names=CLI_NAMES,
        )
        page = find_page(con, query, keyring, filters, limit=limit)
    finally:
        con.close()
    hits = page.hits
    if json_out:
        typer.echo(
            to_json(
                {
                    "query": query,
                    "filters": filters.canonical(),
                    "demo_key": keyring.demo,
                    "total": page.total,
                    "passages": page.passages,
                    "excluded_unknown": page.excluded_unknown,
                    "excluded_by_work": page.excluded_by_work,
                    "results": hits,
                }
            )
        )
        return
    if not hits and query:
        narrowed = " with these filters" if filters != SearchFilters() else ""
        typer.echo(f"no passage matches {one_line(query)!r}{narrowed}")
    elif not hits:
        typer.echo(f"no label names {one_line(filters.drug or '')!r} with these filters")
    for number, hit in enumerate(hits, start=1):
        typer.echo("\n".join(_passage_lines(hit, number)))
    if len(hits) < page.total:
        what = "matching works" if query else "labels"
        typer.echo(f"shown: {len(hits)} of {page.total} {what} (--limit)")
    for line in undecided_lines(page.excluded_unknown) + work_lines(page.excluded_by_work):
        typer.echo(line)
    if keyring.demo:
        typer.echo("note: handles minted with the public demo key", err=True)


def cite_command(
    record_id: Annotated[str, typer.Argument(help="e.g. pmid:99000001, nct:NCT99000001.")],
    snapshot: SnapshotOpt,
    version: Annotated[
        str | None, typer.Option("--version", help="A version the snapshot holds.")
    ] = None,
    demo_key: DemoKeyOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """Print every passage of one record version with its handle."""
    settings = Settings.from_env()
    keyring = keyring_from_settings(settings, demo_key)
    policy = seal_policy(settings, demo_key, keyring=keyring)
    con = trusted_snapshot(snapshot, settings, policy).search_connection()
    try:
        view = record_passages(con, record_id, keyring, version=version)
    finally:
        con.close()
    if json_out:
        typer.echo(to_json({"demo_key": keyring.demo, "record": view}))
        return
    typer.echo(f"{view.record_id} @{view.version}: {one_line(view.title or '')}")
    others = [v for v in view.versions if v != view.version]
    typer.echo(
        f"  source {view.source}; current version {view.current_version}"
        + (f"; other versions {', '.join(others)}" if others else "")
        + (f"; status {one_line(view.status)}" if view.status else "")
        + _flags(view.flags)
    )
    if view.withdrawn:
        typer.echo(f"  withdrawn upstream since {view.withdrawn_since}")
    for rel in view.relations:
        typer.echo(f"  {rel['kind']} {one_line(rel['target'] or '')} ({rel['source']})")
    for passage in view.passages:
        typer.echo("\n".join(_passage_lines(passage)))
    if keyring.demo:
        typer.echo("note: handles minted with the public demo key", err=True)


def register(app: typer.Typer) -> None:
    """Attach ``citeseal search`` and ``citeseal cite`` to the root app."""
    app.command("search")(search_command)
    app.command("cite")(cite_command)
