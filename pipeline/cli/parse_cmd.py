"""CLI: ``citeseal parse SOURCE FILE [--json]`` — show what a response body would store.

FILE is a raw response body or a wrapper file ``{"url", "status", "content_type", "body"}``
(the replay/record format), or ``-`` for standard input. ``auto`` picks the source from the
wrapper URL, else from the shape of the body. The body goes to the source's pure parser
whatever the wrapper status (openFDA answers "no matches" with a 404 body the parser reads).
Records the parser refuses (an id or version no handle can carry) are listed with their
reason and count; a body of the wrong shape is a one-line error (exit 2).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import urlsplit

import typer

from audit.errors import InputError
from audit.terminal import one_line
from pipeline.cli.options import JsonOpt
from pipeline.errors import ParseError
from pipeline.sources import names, parser_for
from pipeline.xmlsafe import decode_json

if TYPE_CHECKING:
    from pipeline.records import ParseResult, Record
    from pipeline.sources.base import Source

MAX_BYTES = 64 * 1024 * 1024


def read_input(file: str) -> bytes:
    """The bytes of FILE (``-`` is standard input); InputError when unreadable or too big."""
    if file == "-":
        data = sys.stdin.buffer.read(MAX_BYTES + 1)
    else:
        path = Path(file)
        try:
            if path.stat().st_size > MAX_BYTES:
                raise InputError(f"{file} is larger than {MAX_BYTES // (1024 * 1024)} MB")
            data = path.read_bytes()
        except IsADirectoryError:
            raise InputError(f"{file} is a directory, not a response file") from None
        except FileNotFoundError:
            raise InputError(f"{file} does not exist") from None
        except OSError as error:
            raise InputError(f"cannot read {file}: {error.strerror or error}") from None
    if len(data) > MAX_BYTES:
        raise InputError(f"input is larger than {MAX_BYTES // (1024 * 1024)} MB")
    return data


def unwrap(data: bytes) -> tuple[str | bytes, str | None, int | None]:
    """``(body, url, status)``: a wrapper file is opened, anything else is a raw body."""
    if not data.lstrip().startswith(b"{"):
        return data, None, None
    try:
        wrapper = decode_json(data, what="a wrapper file")
    except (ValueError, ParseError):  # not JSON, or nested too deep: a raw body
        return data, None, None
    if isinstance(wrapper, dict) and "body" in wrapper and isinstance(wrapper.get("url"), str):
        body = wrapper["body"]
        if not isinstance(body, str):
            body = json.dumps(body)
        status = wrapper.get("status")
        return body, wrapper["url"], status if isinstance(status, int) else None
    return data, None, None


def detect(body: str | bytes, url: str | None) -> str | None:
    """The source of a body, from its URL or its shape (each source's ``shapes``, in registry
    order); None when it cannot be told."""
    from pipeline.sources import sources  # the registry loads the parsers

    registered = sources()
    if url:
        parts = urlsplit(url)
        for plugin in registered:
            for host, prefix in plugin.shapes.hosts:
                if parts.hostname == host and parts.path.startswith(prefix):
                    return plugin.name
    head = (body if isinstance(body, bytes) else body.encode("utf-8"))[:4096].lstrip()
    if head.startswith(b"<"):
        for plugin in registered:
            if any(marker in head for marker in plugin.shapes.xml):
                return plugin.name
        return None
    try:
        data = decode_json(body, what="a response body")
    except (ValueError, ParseError):
        return None
    return _json_source(data, registered)


def _json_source(data: object, registered: list[Source]) -> str | None:
    """The source of a decoded JSON body, from the keys it has (never their order: openFDA
    puts ``meta`` first, ahead of the ``results`` that say what it is), then from each
    source's last ``sniff``."""
    if isinstance(data, dict):
        for plugin in registered:
            if any(all(key in data for key in keys) for keys in plugin.shapes.json):
                return plugin.name
    for plugin in registered:
        sniff = plugin.shapes.sniff
        if sniff is not None and sniff(data):
            return plugin.name
    return None


def to_json(result: ParseResult, *, url: str | None, status: int | None) -> dict[str, Any]:
    """The ``--json`` document (see docs/sources.md)."""
    data = result.model_dump(mode="json")
    data["url"] = url
    data["status"] = status
    return data


def _clean(text: object) -> str:
    """Untrusted text for a terminal, one line (:func:`audit.terminal.one_line`)."""
    return one_line(str(text))


def _flag(value: bool | None) -> str:
    return {True: "yes", False: "no", None: "unknown"}[value]


def _record_lines(record: Record) -> list[str]:
    flags = record.flags
    lines = [
        f"{_clean(record.record_id)}  version {_clean(record.version or '-')}  "
        f"({_clean(record.content_type)})",
        f"  title: {_clean(record.title) or '-'}",
    ]
    facts = [
        f"{name}: {_clean(value)}"
        for name, value in (
            ("doi", record.doi),
            ("pmcid", record.pmcid),
            ("year", record.year),
            ("journal", record.journal),
            ("status", record.status),
        )
        if value
    ]
    if facts:
        lines.append("  " + "; ".join(facts))
    lines.append(
        f"  flags: retracted {_flag(flags.retracted)}, expression of concern "
        f"{_flag(flags.expression_of_concern)}, preprint {_flag(flags.preprint)}"
    )
    for relation in record.relations:
        lines.append(f"  relation: {_clean(relation.kind)} {_clean(relation.target)}")
    paths = [p.path for p in record.passages]
    shown = ", ".join(paths[:6]) + (", …" if len(paths) > 6 else "")
    lines.append(f"  passages: {len(paths)} ({_clean(shown)})")
    return lines


def to_text(result: ParseResult, source: str) -> list[str]:
    """A readable summary of a parse result."""
    from pipeline.records import refusal_counts  # loaded with the parser that made result

    lines = [f"source: {source}; {len(result.records)} record(s)"]
    for record in result.records:
        lines += _record_lines(record)
    if result.ids and not result.records:
        shown = ", ".join(result.ids[:20]) + (", …" if len(result.ids) > 20 else "")
        lines.append(f"ids: {_clean(shown)}")
    if result.count is not None:
        lines.append(f"count: {result.count}")
    if result.next:
        lines.append(f"next: {_clean(result.next)}")
    for key, found in result.annotations.items():
        types = Counter(a.type for a in found)
        summary = ", ".join(f"{t} {n}" for t, n in sorted(types.items()))
        lines.append(
            f"annotations {_clean(key)}: {len(found)}"
            + (f" ({_clean(summary)})" if summary else "")
        )
    for notice in result.notices:
        lines.append(
            f"notice: {_clean(notice.kind)} {_clean(notice.target)} ({_clean(notice.detail or '')})"
        )
    for reason, count in refusal_counts(result.refused).items():
        shown = ", ".join(repr(r.value) for r in result.refused if r.reason == reason)
        lines.append(
            f"refused {count} record(s) that cannot be cited: {reason} ({_clean(shown[:200])})"
        )
    return lines


def parse_file(source: str, file: str) -> tuple[str, ParseResult, str | None, int | None]:
    """Read FILE, pick the source, run its parser: ``(source, result, url, status)``."""
    choices = (*names(), "auto")
    if source not in choices:
        raise InputError(f"unknown source {source!r}; choose one of {', '.join(choices)}")
    body, url, status = unwrap(read_input(file))
    if source == "auto":
        found = detect(body, url)
        if found is None:
            raise InputError(
                f"cannot tell which source {file} comes from",
                advice=f"name it: citeseal parse {{{'|'.join(names())}}} {file}",
            )
        source = found
    result = parser_for(source)(body, url=url)
    return source, result, url, status


def parse_command(
    source: Annotated[
        str,
        typer.Argument(
            metavar="SOURCE",
            help="pubmed, europepmc, pubtator3, crossref, clinicaltrials, openfda or auto.",
        ),
    ],
    file: Annotated[
        str,
        typer.Argument(
            metavar="FILE", help="A raw response body or a wrapper file; - reads standard input."
        ),
    ],
    json_out: JsonOpt = False,
) -> None:
    """Parse one API response and print the records it would store."""
    chosen, result, url, status = parse_file(source.strip().lower(), file)
    if json_out:
        typer.echo(
            json.dumps(to_json(result, url=url, status=status), ensure_ascii=False, indent=2)
        )
        return
    for line in to_text(result, chosen):
        typer.echo(line)


def register(app: typer.Typer) -> None:
    """Attach ``citeseal parse`` to the root app."""
    app.command("parse")(parse_command)
