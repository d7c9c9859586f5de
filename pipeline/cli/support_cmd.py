"""CLI: ``citeseal support "CLAIM" --handle H [--handle H2 …]`` — does each cited passage
support the claim?

Each handle is audited first through the real engine (:func:`audit.support.run.check_support`):
a malformed, forged, unavailable, withdrawn … handle is reported with its verdict and never
judged. The claim is then judged against the passage as issued of each ok handle by the judge
named with ``--judge`` (default: the deterministic rules; ``llm-openai``, ``llm-anthropic`` are
configured by environment, docs/support.md). Exit code: 0 when every handle is ok and none is
contradicted, 1 when one is contradicted or not ok (an ``abstain`` is neither), 2 on bad input.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated

import typer

from pipeline.cli.common import keyring_from_settings, seal_policy, trusted_snapshot
from pipeline.cli.options import DemoKeyOpt, JsonOpt, SnapshotOpt
from pipeline.settings import Settings

if TYPE_CHECKING:  # judges load only when a command runs
    from audit.support.model import Judge

JudgeOpt = Annotated[
    str | None,
    typer.Option(
        "--judge",
        help="The support judge: rules (default: deterministic, offline), llm-openai or "
        "llm-anthropic (configured by CITESEAL_LLM_* variables).",
        metavar="NAME",
        show_default=False,
    ),
]


def support_judge(name: str | None) -> Judge:
    """The judge called ``name`` (default :data:`~audit.support.judges.DEFAULT_JUDGE`),
    configured from the process environment."""
    from audit.support.judges import DEFAULT_JUDGE, judge_by_name

    return judge_by_name(name or DEFAULT_JUDGE, os.environ)


def support_command(
    claim: Annotated[
        str,
        typer.Argument(
            help="The sentence to check, as written.", show_default=False, metavar="CLAIM"
        ),
    ],
    handles: Annotated[
        list[str],
        typer.Option(
            "--handle",
            help="A handle citing the claim (repeatable).",
            metavar="HANDLE",
            show_default=False,
        ),
    ],
    snapshot: SnapshotOpt,
    judge: JudgeOpt = None,
    as_json: JsonOpt = False,
    demo_key: DemoKeyOpt = False,
) -> None:
    """Judge whether each handle's passage supports a claim (exit 1 on contradicted or a
    handle that is not ok, 2 on bad input)."""
    from audit.render_text import render_support_check
    from audit.support.run import check_claim, check_support

    check_claim(claim, handles)  # bad input is refused before the key or snapshot is opened
    chosen = support_judge(judge)
    settings = Settings.from_env()
    keyring = keyring_from_settings(settings, demo_key, create=False)
    trusted = trusted_snapshot(snapshot, settings, seal_policy(settings, demo_key, keyring=keyring))
    with trusted.corpus() as corpus:
        check = check_support(claim, handles, corpus, keyring, chosen)
    if as_json:
        typer.echo(check.model_dump_json(indent=2))
    else:
        typer.echo(render_support_check(check), nl=False)
    if check.failed:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Attach ``support`` to the root app."""
    app.command("support")(support_command)
