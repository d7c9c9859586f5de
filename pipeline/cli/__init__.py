"""The ``citeseal`` command line.

Each command lives in a module of this package that exposes ``register(app)``; commands are
thin: parse options, call one function of :mod:`pipeline` or :mod:`audit`, map known errors.
The one error boundary is :func:`main`: a :class:`~audit.errors.CiteSealError` becomes
``error: <message>`` on stderr and its exit code; ``--verbose`` (or ``CITESEAL_VERBOSE=1``)
prints the traceback instead. Everything printed goes through the terminal sanitiser
(:mod:`pipeline.cli.output`).
"""

from __future__ import annotations

import os
import sys
import traceback

import typer

from audit.errors import CitationSyntaxError, CiteSealError, InputError
from audit.terminal import one_line
from pipeline.cli import (
    audit_cmd,
    check_cmd,
    demo_cmd,
    evaluate_cmd,
    evaluate_support_cmd,
    handle_cmd,
    key_cmd,
    parse_cmd,
    reaudit_cmd,
    replay_cmd,
    scale_cmd,
    search_cmd,
    serve_cmd,
    site_cmd,
    snapshot_cmd,
    support_cmd,
)
from pipeline.cli.output import PIPE_CLOSED_EXIT, OutputClosed, safe_streams, stop_writing
from pipeline.settings import env_flag

app = typer.Typer(
    name="citeseal",
    help="Checkable citations for biomedical writing: snapshots, handles, audits, reports.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

for _module in (
    key_cmd,
    handle_cmd,
    parse_cmd,
    snapshot_cmd,
    scale_cmd,
    search_cmd,
    audit_cmd,
    support_cmd,
    reaudit_cmd,
    site_cmd,
    demo_cmd,
    replay_cmd,
    serve_cmd,
    evaluate_cmd,
    evaluate_support_cmd,
    check_cmd,
):
    _module.register(app)


@app.callback()
def _root(
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="Show tracebacks instead of one-line errors."
    ),
) -> None:
    env_flag(os.environ, "CITESEAL_VERBOSE")  # a bad value is a one-line error, like any other
    if verbose:
        os.environ["CITESEAL_VERBOSE"] = "1"


def _verbose() -> bool:
    try:
        switch = env_flag(os.environ, "CITESEAL_VERBOSE")
    except InputError:  # this runs inside the error boundary, which must not raise
        switch = False
    return switch or "--verbose" in sys.argv or "-v" in sys.argv


def report_error(error: CiteSealError) -> None:
    """Print a project error as people should see it: one line, then advice if any."""
    typer.echo(f"error: {one_line(error.message)}", err=True)
    if isinstance(error, CitationSyntaxError):
        typer.echo(error.caret(), err=True)
    if error.advice:
        typer.echo(f"hint: {one_line(error.advice)}", err=True)


def main() -> None:
    """Console-script entry point: the single error boundary, with every line printed through
    the terminal sanitiser (:mod:`pipeline.cli.output`)."""
    with safe_streams():
        try:
            _run()
        except OutputClosed as closed:  # here, so one raised by an error line is caught too
            stop_writing(closed)
            sys.exit(PIPE_CLOSED_EXIT)


def _run() -> None:
    try:
        # returns the code of `raise typer.Exit(code)`
        code = app(standalone_mode=False, prog_name="citeseal")
        if isinstance(code, int) and code:
            sys.exit(code)
    except CiteSealError as error:
        if _verbose():
            traceback.print_exc()  # here, so the traceback goes through the sanitiser too
        else:
            report_error(error)
        sys.exit(error.exit_code)
    except KeyboardInterrupt:
        typer.echo("error: interrupted", err=True)
        sys.exit(130)
    except typer.Abort:
        typer.echo("error: aborted", err=True)
        sys.exit(1)
    except typer.Exit as done:
        sys.exit(done.exit_code)
    except typer.TyperException as usage_error:  # a bad option, value or command: one line
        message = usage_error.format_message().replace("Value error, ", "")  # pydantic's prefix
        typer.echo(f"error: {one_line(message)}", err=True)
        ctx = getattr(usage_error, "ctx", None)
        if ctx is not None:
            typer.echo(f"hint: see {ctx.command_path} --help", err=True)
        sys.exit(usage_error.exit_code)
