"""Planted citations about the handle and the record: forged and malformed handles,
withdrawn and unavailable records, and the flags of ``ok`` citations (the quote categories are
:mod:`audit.evaluation.categories`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from audit.evaluation import oracle
from audit.evaluation.categories import (
    Case,
    Cite,
    Ctx,
    pinned_pairs,
    quoted,
    round_robin,
    window,
    windows_only_in,
)
from audit.evaluation.world import Rec

# --- forged and malformed handles ----------------------------------------------------------


def _genuine_all(ctx: Ctx) -> list[tuple[Rec, str | None, str]]:
    return [(rec, ctx.pin(rec, v), p) for rec, v, p, _ in ctx.passages()]


def forged_check(ctx: Ctx) -> list[Case]:
    out = []
    for rec, version, path in _genuine_all(ctx):
        h = ctx.handle(rec.record_id, path, version)
        for pos in range(len(h) - 5, len(h)):
            new = oracle.CROCKFORD[(oracle.CROCKFORD.index(h[pos]) + ctx.rng.randrange(1, 32)) % 32]
            out.append(Case("forged_check_code", (Cite(h[:pos] + new + h[pos + 1 :]),)))
    ctx.rng.shuffle(out)
    return out


def swap_part(ctx: Ctx, cat: str, part: str) -> list[Case]:
    """A genuine check code moved to another path, record or version of the world."""
    out = []
    every = _genuine_all(ctx)
    for rec, version, path in every:
        h = ctx.handle(rec.record_id, path, version)
        check = h.rsplit("~", 1)[1]
        for rec2, version2, path2 in every:
            if part == "path" and rec2 is rec and path2 != path and version2 == version:
                out.append(
                    Case(cat, (Cite(ctx.handle(rec.record_id, path2, version)[:-5] + check),))
                )
            if (
                part == "record"
                and rec2 is not rec
                and rec2.scheme == rec.scheme
                and path in rec2.paths()
            ):
                out.append(
                    Case(cat, (Cite(ctx.handle(rec2.record_id, path, version2)[:-5] + check),))
                )
        if part == "version" and version is not None:
            for other in rec.versions:
                if other != version:
                    out.append(
                        Case(cat, (Cite(ctx.handle(rec.record_id, path, other)[:-5] + check),))
                    )
    ctx.rng.shuffle(out)
    return out


def foreign_key(ctx: Ctx) -> list[Case]:
    return [
        Case("other_installation_key", (Cite(ctx.handle(r.record_id, p, v, ctx.other)),))
        for r, v, p in _genuine_all(ctx)
    ]


def broken(cat: str, breaks: Callable[[str], Iterable[str]]) -> Callable[[Ctx], Iterator[Case]]:
    """Genuine handles broken in each way ``breaks(handle)`` lists (round robin over ways)."""

    def build(ctx: Ctx) -> Iterator[Case]:
        groups: list[list[Case]] = []
        for rec, version, path in _genuine_all(ctx):
            for n, text in enumerate(breaks(ctx.handle(rec.record_id, path, version))):
                while len(groups) <= n:
                    groups.append([])
                groups[n].append(Case(cat, (Cite(text),)))
        return round_robin(ctx.rng, groups)

    return build


def _parts(h: str) -> tuple[str, str, str, str]:
    scheme, rest = h.split(":", 1)
    ident_version, rest = rest.split("/", 1)
    path, check = rest.rsplit("~", 1)
    return scheme, ident_version, path, check


def scheme_breaks(h: str) -> list[str]:
    s, iv, p, c = _parts(h)
    return [
        f"{s.upper()}:{iv}/{p}~{c}",
        f"{s[:-1]}:{iv}/{p}~{c}",
        f"{s.capitalize()}:{iv}/{p}~{c}",
        f"doi:{iv}/{p}~{c}",
    ]


def id_breaks(h: str) -> list[str]:
    s, iv, p, c = _parts(h)
    ident, _, version = iv.partition("@")
    pin = f"@{version}" if version else ""
    digits = "".join(ch for ch in ident if ch.isdigit())
    prefix = ident[: len(ident) - len(digits)] if ident[-len(digits) :] == digits else ident
    return [
        f"{s}:0{ident}{pin}/{p}~{c}",
        f"{s}:{ident}-x{pin}/{p}~{c}",
        f"{s}:{prefix.lower() or ident.upper()}{digits}{pin}/{p}~{c}"
        if prefix
        else f"{s}:{ident}1234567890{pin}/{p}~{c}",
        f"{s}:{pin}/{p}~{c}",
    ]


def version_breaks(h: str) -> list[str]:
    s, iv, p, c = _parts(h)
    ident, _, version = iv.partition("@")
    out = [
        f"{s}:{ident}@/{p}~{c}",
        f"{s}:{ident}@-{version or '1'}/{p}~{c}",
        f"{s}:{ident}@{'9' * 41}/{p}~{c}",
    ]
    if version:
        out.append(f"{s}:{ident}/{p}~{c}")
        out.append(f"{s}:{ident}@{version}_x/{p}~{c}")
    return out


def path_breaks(h: str) -> list[str]:
    s, iv, p, c = _parts(h)
    return [
        f"{s}:{iv}/{p.capitalize()}~{c}",
        f"{s}:{iv}/~{c}",
        f"{s}:{iv}/{p}.~{c}",
        f"{s}:{iv}/{p.replace('.', '..', 1) if '.' in p else p + '..x'}~{c}",
        f"{s}:{iv}/{p}-x~{c}",
        f"{s}:{iv}/{'p' * 201}~{c}",
    ]


def check_breaks(h: str) -> list[str]:
    locator, c = h.rsplit("~", 1)
    bad = next(ch for ch in "ilou")
    return [
        locator,
        f"{locator}~{c[:4]}",
        f"{locator}~{c.upper()}" if c.upper() != c else f"{locator}~{c[:4]}I",
        f"{locator}~{c[:4]}{bad}",
        f"{locator}~",
    ]


_LOOKALIKE = {
    "p": ("\uff50", "\u0440", "\U0001d429"),
    "m": ("\uff4d",),
    "i": ("\u0456", "\u00ed"),
    "d": ("\u0501",),
    "c": ("\u0441",),
    "a": ("\u0430",),
    "o": ("\u03bf", "\u043e"),
}


def lookalike_breaks(h: str) -> list[str]:
    out = []
    for i, ch in enumerate(h):
        for other in _LOOKALIKE.get(ch, ()):
            out.append(h[:i] + other + h[i + 1 :])
    return out[:6]


def invisible_breaks(h: str) -> list[str]:
    mid = h.index(":") + 2
    return [h[:2] + mark + h[2:] for mark in ("\u200b", "\u202e", "\u00ad", "\u2060")] + [
        h[:mid] + "\u0301" + h[mid:]
    ]


def markup_breaks(h: str) -> list[str]:
    s, rest = h.split(":", 1)
    return [
        f"{s}\\:{rest}",
        f"{s}&#58;{rest}",
        f"{s}&colon;{rest}",
        f"{s}&#x3a;{rest}",
        f"{s[:2]}**{s[2:]}**:{rest}",
    ]


# --- withdrawn and unavailable ----------------------------------------------------------------


def withdrawn_path(ctx: Ctx) -> list[Case]:
    out = []
    for rec in ctx.world.records.values():
        if not rec.withdrawn:
            for suffix in ("abstract.99", "body.p999", "trial.x.9", "label.none.1"):
                out.append(
                    Case(
                        "withdrawn_no_such_path",
                        (Cite(ctx.handle(rec.record_id, suffix, ctx.pin(rec))),),
                    )
                )
    return out


def withdrawn_record(ctx: Ctx) -> list[Case]:
    return [
        Case("withdrawn_record", (Cite(ctx.handle(r.record_id, p, ctx.pin(r, v))),))
        for r in ctx.world.records.values()
        if r.withdrawn
        for v, texts in r.versions.items()
        for p in texts
    ]


def withdrawn_version(ctx: Ctx) -> list[Case]:
    out = []
    for rec in ctx.world.records.values():
        if ctx.pin(rec) is None:
            continue
        gone = list(rec.gone_versions) or ["1999-01-01", "0"]
        for version in gone:
            for path in rec.paths():
                out.append(
                    Case(
                        "withdrawn_version_not_retained",
                        (Cite(ctx.handle(rec.record_id, path, version)),),
                    )
                )
    return out


def withdrawn_not_in_version(ctx: Ctx) -> list[Case]:
    """A pinned version retained, without the cited path (another version has it)."""
    out = []
    for rec in ctx.world.records.values():
        if ctx.pin(rec) is None or rec.withdrawn:
            continue
        for version, texts in rec.versions.items():
            for path in rec.paths():
                if path not in texts:
                    out.append(
                        Case(
                            "withdrawn_path_not_in_version",
                            (Cite(ctx.handle(rec.record_id, path, version)),),
                        )
                    )
    return out


_ABSENT = {
    "pmid": ("pmid:99199999", "abstract.1", None),
    "pmcid": ("pmcid:PMC99199999", "body.p1", None),
    "ppr": ("ppr:PPR991999", "abstract.1", "1"),
    "nct": ("nct:NCT99199999", "trial.brief_summary.1", "2025-01-01"),
    "setid": ("setid:5eed0099-0000-4000-8000-000000009999", "label.boxed_warning.1", "1"),
    "local": ("local:notes-2024.txt", "page.1", "3f9a0c1b2d4e"),
}


def unavailable(cat: str, statuses: tuple[str, ...]) -> Callable[[Ctx], list[Case]]:
    """Genuine handles of records the snapshot does not hold, from sources with a status."""

    def build(ctx: Ctx) -> list[Case]:
        out = []
        for scheme, (rid, path, version) in _ABSENT.items():
            status = ctx.world.sources.get(oracle.SCHEME_SOURCE[scheme], "not_harvested")
            if status in statuses and rid not in ctx.world.records:
                for n in range(3):
                    out.append(
                        Case(cat, (Cite(ctx.handle(rid, f"{path}{n}" if n else path, version)),))
                    )
        return out

    return build


# --- flags -------------------------------------------------------------------------------------


def flagged(cat: str, keep: Callable[[Rec], bool]) -> Callable[[Ctx], list[Case]]:
    def build(ctx: Ctx) -> list[Case]:
        out = []
        for rec, version, path, text in ctx.passages():
            if keep(rec):
                for quote in (None, text[: len(text) // 2].rsplit(" ", 1)[0]):
                    out.append(
                        Case(
                            cat,
                            (Cite(ctx.handle(rec.record_id, path, ctx.pin(rec, version)), quote),),
                        )
                    )
        ctx.rng.shuffle(out)
        return out

    return build


def version_changed(ctx: Ctx) -> list[Case]:
    """Pinned to a retained older version, quoting its text (checked as issued)."""
    return [
        quoted(
            ctx, rec, version, path, old[slice(*window(old, i, i + 1, ctx.rng))], "version_changed"
        )
        for rec, version, path, old, _ in pinned_pairs(ctx)
        for i in range(0, len(old), 9)
    ]


def current_only(ctx: Ctx) -> list[Case]:
    """Pinned to an older version, quoting what only the current text says."""
    return [
        quoted(ctx, rec, version, path, new[lo:hi], "quote_only_in_current")
        for rec, version, path, old, new in pinned_pairs(ctx)
        for lo, hi in windows_only_in(ctx, new, old, 5)
    ]


def unpinned_old(ctx: Ctx) -> list[Case]:
    """An unpinned handle quoting an older retained version: as issued, never version_changed."""
    out = []
    for rec in ctx.world.records.values():
        if ctx.pin(rec) is not None or rec.withdrawn:
            continue
        for version, texts in rec.versions.items():
            for path, old in texts.items():
                new = rec.text(rec.current, path)
                if version != rec.current and new is not None and new != old:
                    for i in range(0, len(old), 6):
                        lo, hi = window(old, i, i + 1, ctx.rng)
                        out.append(
                            Case(
                                "unpinned_older_version",
                                (Cite(ctx.handle(rec.record_id, path), old[lo:hi]),),
                            )
                        )
    return out
