"""``citeseal replay import DIR --into REPLAYDIR``: index someone else's recorded responses.

:func:`plan_import` reads every file under DIR (wrapper files and raw bodies alike, in path
order) and places each one (:func:`pipeline.replay_units.place`); :func:`write_import`
writes what was placed as a replay folder that ``--replay`` reads
(:class:`pipeline.replay.ReplayTransport`)::

    REPLAYDIR/citeseal-replay.json               what was imported, and what was not placed
    REPLAYDIR/units/<kind>/<id>.json             one part of a by-id answer per id
    REPLAYDIR/<source>/<endpoint>-<hash>.json    exact exchanges, named as a recording names them

Rules:

* every file is accounted for: placed (its parts, absent ids or its exact exchange), or
  listed with a one-line reason; a folder with no file, or none placed, is an
  :class:`~audit.errors.InputError` and writes nothing;
* the first file (in path order) that holds an id wins; a later file whose part for that id
  differs is noted (``pmid:1 differs from the part placed from a.json; the first is kept``),
  and an id held by one file wins over a file that answered without it;
* credentials never reach REPLAYDIR: URLs and forms lose their credential parameters, and
  every body is passed through a :class:`~pipeline.redact.Redactor` that knows the values of
  this installation's keys and contact e-mail and those the recorded request carried;
* REPLAYDIR must not exist yet, or be an empty folder, and lie outside DIR; it is written
  in a temporary folder beside it and renamed into place, so an interruption leaves no
  half-written replay folder.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import httpx

from audit.errors import InputError
from pipeline.errors import ParseError
from pipeline.http import SOURCE_EXTENSION
from pipeline.redact import Redactor, request_secrets, strip_credentials, strip_form_credentials
from pipeline.replay import make_wrapper, public_folder, replay_key, wrapper_name, write_wrapper
from pipeline.replay_match import KINDS, Part
from pipeline.replay_units import Exchange, Placement, place
from pipeline.settings import Settings
from pipeline.xmlsafe import decode_json

MANIFEST = "citeseal-replay.json"
UNITS = "units"
FORMAT = "citeseal-replay-import/1"
MAX_NAME = 200  # an id longer than this (quoted) cannot be a file name; it is noted
PartKey = tuple[str, str, tuple[str, ...] | None]  # kind, id, ClinicalTrials.gov fields


@dataclass
class Placed:
    """A part kept, and the file (relative to DIR) it came from."""

    part: Part
    origin: str


@dataclass
class ImportPlan:
    """What an import will write, and what it could not place (see the module docstring)."""

    files: int = 0
    parts: dict[PartKey, Placed] = field(default_factory=dict)
    exchanges: dict[str, tuple[Exchange, str, str]] = field(default_factory=dict)  # name →
    not_placed: list[tuple[str, str]] = field(default_factory=list)  # (file, reason)
    notes: list[tuple[str, str]] = field(default_factory=list)  # (file, note)
    placed_files: Counter[str] = field(default_factory=Counter)  # source → files placed
    secrets: set[str] = field(default_factory=set)  # every credential value met, and ours

    @property
    def redact(self) -> Redactor:
        """Redacts every secret value met in any file of the import (and this
        installation's): what one recorded request carried, another's body may echo."""
        return Redactor(self.secrets)

    def held(self) -> Counter[str]:
        """Ids held per kind (absent ones not counted; an id under two projections once)."""
        return Counter(kind for kind, _ in {k[:2] for k, p in self.parts.items() if p.part.held})

    def absent(self) -> Counter[str]:
        """Ids recorded absent per kind."""
        return Counter(p.part.kind for p in self.parts.values() if not p.part.held)

    def summary(self) -> dict[str, object]:
        """The manifest written beside the parts (file names relative to DIR), redacted."""
        redact = self.redact
        return {
            "format": FORMAT,
            "files": self.files,
            "placed_files": dict(sorted(self.placed_files.items())),
            "held": dict(sorted(self.held().items())),
            "absent": dict(sorted(self.absent().items())),
            "exchanges": len(self.exchanges),
            "not_placed": [{"file": redact(f), "reason": redact(r)} for f, r in self.not_placed],
            "notes": [{"file": redact(f), "note": redact(n)} for f, n in self.notes],
        }


def _read(path: Path, max_bytes: int) -> str:
    """The text of one file; why it cannot be placed is raised as a ValueError."""
    size = path.stat().st_size
    if size > max_bytes:
        raise ValueError(f"larger than the response cap ({max_bytes // (1024 * 1024)} MB)")
    data = path.read_bytes()
    if not data.strip():
        raise ValueError("an empty file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None


def _unwrap(text: str) -> dict[str, object] | None:
    """The wrapper a file holds (an object with a ``url`` and a ``body``), else None."""
    if not text.lstrip().startswith("{"):
        return None
    try:
        data = decode_json(text, what="a wrapper file")
    except (ValueError, ParseError):
        return None
    if isinstance(data, dict) and isinstance(data.get("url"), str) and "body" in data:
        return data
    return None


def place_file(text: str, secrets: set[str]) -> Placement:
    """Place one file's text (a wrapper or a raw body), redacted with ``secrets``, to which
    the credential values its recorded request carried are added (module docstring)."""
    wrapper = _unwrap(text)
    if wrapper is None:
        return place(Redactor(secrets)(text))
    url = str(wrapper["url"])
    method = str(wrapper.get("method") or "GET")
    form = wrapper.get("request_body")
    form = form if isinstance(form, str) and form else None
    secrets.update(request_secrets(url, form))
    redact = Redactor(secrets)
    body = wrapper["body"]
    body = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
    status = wrapper.get("status", 200)
    if not isinstance(status, int) or isinstance(status, bool) or not 100 <= status <= 599:
        return Placement(reason="a wrapper without a valid HTTP status")
    location = wrapper.get("location")
    return place(
        redact(body),
        url=redact(strip_credentials(url)),
        method=method,
        form=redact(strip_form_credentials(form)) if form else None,
        status=status,
        content_type=str(wrapper.get("content_type") or ""),
        location=redact(strip_credentials(location)) if isinstance(location, str) else None,
    )


def plan_import(folder: Path, settings: Settings) -> ImportPlan:
    """Read and place every file under ``folder`` (module docstring); writes nothing."""
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise InputError(f"{public_folder(folder)} {what}")
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    if not files:
        raise InputError(f"{public_folder(folder)} holds no file to import")
    plan = ImportPlan(files=len(files), secrets={*settings.secrets(), settings.email or ""})
    for path in files:
        name = path.relative_to(folder).as_posix()
        try:
            text = _read(path, settings.max_response_bytes)
        except ValueError as reason:
            plan.not_placed.append((name, str(reason)))
            continue
        except OSError as error:
            plan.not_placed.append((name, f"cannot be read: {error.strerror or error}"))
            continue
        _keep(plan, name, place_file(text, plan.secrets))
    return plan


def _keep(plan: ImportPlan, name: str, placement: Placement) -> None:
    plan.notes += [(name, note) for note in placement.notes]
    kept = False
    for part in placement.parts:
        kept = _keep_part(plan, name, part) or kept
    if placement.exchange is not None:
        kept = _keep_exchange(plan, name, placement) or kept
    if kept or placement.placed:
        plan.placed_files[placement.source or "?"] += 1
    else:
        plan.not_placed.append((name, placement.reason or "it answers nothing citeseal asks"))


def _keep_part(plan: ImportPlan, name: str, part: Part) -> bool:
    if len(quote(part.ident, safe="")) > MAX_NAME:
        plan.notes.append((name, f"an id too long to be kept: {part.ident[:60]}…"))
        return False
    key = (part.kind, part.ident, part.fields)
    absence = (part.kind, part.ident, None)
    if not part.held and any(k[:2] == key[:2] for k in plan.parts):
        return False  # held (under some projection), or already recorded absent
    if part.held and absence in plan.parts and not plan.parts[absence].part.held:
        del plan.parts[absence]  # an id held by one file wins over one answered without it
    earlier = plan.parts.get(key)
    if earlier is None:
        plan.parts[key] = Placed(part, name)
        return True
    if part.held and earlier.part != part:
        scheme = KINDS[part.kind][1]
        plan.notes.append(
            (
                name,
                f"its {scheme} {part.ident} differs from the part placed from {earlier.origin}; "
                "the first is kept",
            )
        )
    return False


def _keep_exchange(plan: ImportPlan, name: str, placement: Placement) -> bool:
    exchange = placement.exchange
    assert exchange is not None
    request = httpx.Request(
        exchange.method,
        exchange.url,
        content=(exchange.request_body or "").encode() if exchange.method != "GET" else None,
        extensions={SOURCE_EXTENSION: placement.source},
    )
    key = replay_key(exchange.method, exchange.url, exchange.request_body)
    target = wrapper_name(request, key)
    earlier = plan.exchanges.get(target)
    if earlier is None:
        plan.exchanges[target] = (exchange, name, placement.source or "")
        return True
    if earlier[0] != exchange:
        plan.notes.append(
            (name, f"the same request as {earlier[1]} with another answer; the first is kept")
        )
    return False


def write_import(plan: ImportPlan, into: Path, *, read_from: Path) -> None:
    """Write ``plan`` as the replay folder ``into`` (module docstring)."""
    into = into.absolute()
    shown = public_folder(into)
    if into.is_relative_to(read_from.absolute()):
        raise InputError(f"{shown} is inside the folder read; write the replay folder elsewhere")
    if into.exists() and (not into.is_dir() or any(into.iterdir())):
        raise InputError(
            f"{shown} already exists and is not an empty folder",
            advice="choose a new folder for --into",
        )
    try:
        into.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=into.parent, prefix=f".{into.name}.tmp-"))
    except OSError as error:
        raise InputError(f"cannot write {shown}: {error.strerror or error}") from None
    try:
        _write(plan, staging)
        if into.exists():
            into.rmdir()
        staging.replace(into)
    except OSError as error:
        shutil.rmtree(staging, ignore_errors=True)
        raise InputError(f"cannot write {shown}: {error.strerror or error}") from None


def _order(item: tuple[PartKey, Placed]) -> tuple[str, str, tuple[str, ...]]:
    kind, ident, fields = item[0]
    return kind, ident, fields or ()


def part_name(ident: str, fields: tuple[str, ...] | None) -> str:
    """The file name of a part: its id, quoted; a ClinicalTrials.gov study recorded with a
    ``fields`` projection adds ``~`` and a hash of it (the whole study has none)."""
    name = quote(ident, safe="")
    if fields is not None:
        name += "~" + hashlib.sha256(",".join(fields).encode()).hexdigest()[:12]
    return name + ".json"


def _write(plan: ImportPlan, root: Path) -> None:
    redact = plan.redact  # again, with every secret of the import: bodies quote each other
    for (kind, ident, fields), placed in sorted(plan.parts.items(), key=_order):
        part = placed.part
        data: dict[str, object] = {
            "citeseal_part": FORMAT,
            "kind": kind,
            "id": ident,
            "held": part.held,
            "from": redact(placed.origin),
        }
        if part.held:
            data["fields"] = list(part.fields) if part.fields is not None else None
            data["fragment"] = redact(part.fragment)
        folder = root / UNITS / kind
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / part_name(ident, fields)
        target.write_text(json.dumps(data, ensure_ascii=False) + "\n", encoding="utf-8")
    for name, (exchange, _, _) in sorted(plan.exchanges.items()):
        wrapper = make_wrapper(
            exchange.method,
            redact(exchange.url),
            exchange.status,
            exchange.content_type,
            redact(exchange.body),
            exchange.request_body,
            exchange.location,
        )
        write_wrapper(root / name, wrapper)
    text = json.dumps(plan.summary(), ensure_ascii=False, indent=1) + "\n"
    (root / MANIFEST).write_text(text, encoding="utf-8")
