"""CLI: ``citeseal handle mint | verify`` — authenticated citation handles."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated

import typer

from audit.errors import CitationSyntaxError
from audit.handles import mint, parse_handle, parse_locator, verify
from audit.keys import Keyring
from audit.terminal import caret_lines, one_line
from pipeline.cli.common import keyring_from_settings, minting_keyring
from pipeline.cli.options import DemoKeyOpt, JsonOpt
from pipeline.settings import Settings

handle_app = typer.Typer(
    name="handle",
    help="Mint and verify citation handles (scheme:id[@version]/path~check).",
    no_args_is_help=True,
)


@dataclass(frozen=True)
class Verdict:
    """The verdict on one handle given on the command line."""

    handle: str
    verdict: str  # "ok" | "forged" | "malformed"
    reason: str | None = None
    span: tuple[int, int] | None = None

    def lines(self) -> list[str]:
        """``ok H`` / ``forged H`` / ``malformed H: reason`` plus a caret line under the span."""
        if self.verdict != "malformed" or self.span is None:
            return [f"{self.verdict} {one_line(self.handle)}"]
        shown, caret = caret_lines(self.handle, *self.span, prefix="malformed ")
        return [f"{shown}: {one_line(self.reason or '')}", caret]

    def to_json(self) -> dict[str, object]:
        return {
            "handle": self.handle,
            "verdict": self.verdict,
            "reason": self.reason,
            "span": list(self.span) if self.span is not None else None,
        }


def judge(keyring: Keyring, text: str) -> Verdict:
    """``malformed`` when the grammar fails, ``forged`` when no key verifies, else ``ok``."""
    try:
        handle = parse_handle(text)
    except CitationSyntaxError as error:
        return Verdict(text, "malformed", error.message, (error.start, error.end))
    if not verify(keyring, handle):
        return Verdict(text, "forged", "the check code does not verify under any key")
    return Verdict(text, "ok")


@handle_app.command("mint")
def mint_command(
    locators: Annotated[
        list[str],
        typer.Argument(
            metavar="LOCATOR",
            help="Passage locator(s), e.g. pmid:99000001/abstract.2 or "
            "nct:NCT99000001@2025-06-02/trial.brief_summary.1",
        ),
    ],
    demo_key: DemoKeyOpt = False,
) -> None:
    """Print the handle of each locator, signed with the current key."""
    settings = Settings.from_env()
    parsed = [parse_locator(text) for text in locators]  # every locator checked before a key
    keyring = minting_keyring(settings, demo_key)
    for locator in parsed:
        typer.echo(mint(keyring, locator))
    if keyring.demo:
        typer.echo("note: minted with the public demo key: anyone can forge these", err=True)


@handle_app.command("verify")
def verify_command(
    handles: Annotated[list[str], typer.Argument(metavar="HANDLE", help="Handles to check.")],
    demo_key: DemoKeyOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """Say for each handle: ok, forged or malformed (with the failing part); exit 1 if any fails."""
    keyring = keyring_from_settings(Settings.from_env(), demo_key, create=False)
    verdicts = [judge(keyring, text) for text in handles]
    if json_out:
        typer.echo(json.dumps([v.to_json() for v in verdicts], indent=2))
    else:
        for verdict in verdicts:
            for line in verdict.lines():
                typer.echo(line)
    if any(v.verdict != "ok" for v in verdicts):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Attach ``citeseal handle …`` to the root app."""
    app.add_typer(handle_app)
