"""Every category of the evaluation, and the planter that draws cases from them.

Groups: ``genuine`` (quotes the folding must accept), ``misquote`` (one detail changed),
``forged``, ``malformed``, ``withdrawn``, ``unavailable``, ``flags``, ``markup`` (where and how
a citation is written), ``beside`` (an invalid citation beside a valid one in one sentence),
``references`` and ``support`` (:mod:`audit.evaluation.claim_cases`).
Whole answers (mixed, clean, paired) are composed from the planted cases by
:mod:`audit.evaluation.scoring`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from audit.evaluation import categories as c
from audit.evaluation import claim_cases as cc
from audit.evaluation import handle_cases as hc
from audit.evaluation import oracle
from audit.evaluation.categories import Case, Category, Cite, Ctx
from audit.evaluation.claim_cases import with_claims
from audit.evaluation.planting import DELIMITERS, FOOTNOTE, delimit
from audit.evaluation.world import DASHES, DOUBLES, NO_BREAKS, SINGLES, TRIPLES

_PROSE = "Zentravir changed the outcome in this cohort"


def _pick(ctx: Ctx, pool: list[Cite]) -> Cite:
    return pool[ctx.rng.randrange(len(pool))]


def _markup(
    name: str,
    write: Callable[[Ctx, Cite, Cite], tuple[str, tuple[Cite, ...]]],
    *,
    alone: bool = False,
) -> Callable[[Ctx], list[Case]]:
    def build(ctx: Ctx) -> list[Case]:
        pool = cc.genuine_pool(ctx)
        if not pool:
            return []
        out = []
        for _ in range(60):
            one, two = _pick(ctx, pool), _pick(ctx, pool)
            text, cites = write(ctx, one, two)
            out.append(Case(name, cites, literal=text, claims=False, alone=alone))
        return out

    return build


def _q(cite: Cite) -> str:
    return f' "{cite.quote}"' if cite.quote and '"' not in cite.quote else ""


def _plain(cite: Cite) -> Cite:
    return Cite(cite.handle, cite.quote if _q(cite) else None)


def _footnote(ctx: Ctx, one: Cite, two: Cite) -> tuple[str, tuple[Cite, ...]]:
    label = ("{n}", "^{n}", "^note{n}")[ctx.rng.randrange(3)].format(n=FOOTNOTE)
    return f"{_PROSE} [{label}].\n\n[{label}]: {one.handle}{_q(one)}", (_plain(one),)


def _footnote_in_group(ctx: Ctx, one: Cite, two: Cite) -> tuple[str, tuple[Cite, ...]]:
    del ctx
    text = f"{_PROSE} ({one.handle}; see also [{FOOTNOTE}]).\n\n[{FOOTNOTE}]: {two.handle}"
    return text, (Cite(one.handle), Cite(two.handle))


def _link(ctx: Ctx, one: Cite, two: Cite) -> tuple[str, tuple[Cite, ...]]:
    if ctx.rng.randrange(2) and _q(one) and delimit(one.quote or "") is not None:
        return f'{_PROSE} ["{one.quote}"]({one.handle}).', (one,)
    return f"[{_PROSE}]({one.handle}).", (Cite(one.handle),)


def _code(ctx: Ctx, one: Cite, two: Cite) -> tuple[str, tuple[Cite, ...]]:
    if ctx.rng.randrange(2):
        return f"{_PROSE} `{one.handle}`.", (Cite(one.handle),)
    return f"{_PROSE} [`{one.handle}`; `{two.handle}`].", (Cite(one.handle), Cite(two.handle))


def _bold(ctx: Ctx, one: Cite, two: Cite) -> tuple[str, tuple[Cite, ...]]:
    del ctx, two
    return f"{_PROSE} **{one.handle}**.", (Cite(one.handle),)


def _plain_number(ctx: Ctx, one: Cite, two: Cite) -> tuple[str, tuple[Cite, ...]]:
    """A bracketed number in an answer without a reference list is text, not a citation."""
    del two
    n = ctx.rng.choice(("1", "2", "1, 2", "3-4"))
    return f"{_PROSE} [{n}] [{one.handle}].", (Cite(one.handle),)


def _unclosed(ctx: Ctx) -> list[Case]:
    """A forged handle hidden in a quote that never closes (also written in a claim's
    sentence, where the audit must find it as one more citation)."""
    out = []
    for case in hc.forged_check(ctx)[:40]:
        h = case.cites[0].handle
        opener = ctx.rng.choice(['"', "\u201c", "\u00ab"])
        text = f"Zentravir was called {opener}safe and effective as shown by {h} in children."
        out.append(Case("hidden_in_unclosed_quote", (Cite(h),), literal=text, claims=True))
    return out


def _bracketed(name: str, changed: bool) -> Callable[[Ctx], list[Case]]:
    """Quotes holding the closing bracket of the group they are written in: ``[h «… ] …»]``,
    ``(h "… ) …")``; ``changed``: one digit changed (a misquote the audit would miss if it
    cut the quote at the bracket)."""

    def build(ctx: Ctx) -> list[Case]:
        out = []
        for rec, version, path, text in ctx.passages():
            for at in (i for i, ch in enumerate(text) if ch in "])"):
                lo, hi = c.window(text, at, at + 1, ctx.rng)
                quote = text[lo:hi]
                digits = [i for i, ch in enumerate(quote) if ch.isascii() and ch.isdigit()]
                if changed and not digits:
                    continue
                if changed:
                    i = ctx.rng.choice(digits)
                    quote = f"{quote[:i]}{(int(quote[i]) + 1) % 10}{quote[i + 1 :]}"
                written = delimit(quote)
                if written is None:
                    continue
                h = ctx.handle(rec.record_id, path, ctx.pin(rec, version))
                shape = "[{} {}]" if text[at] == "]" else "({} {})"  # the group's own closer
                group = shape.format(h, written)
                literal = f"{_PROSE} {group}."
                out.append(Case(name, (Cite(h, quote),), literal=literal, claims=False))
        ctx.rng.shuffle(out)
        return out

    return build


def _straight_in_curly(ctx: Ctx) -> list[Case]:
    """A genuine quote with ASCII quote marks put around one of its words, delimited by
    ``“…”`` or ``„…“``: a misquote from the mark on (the audit would miss it if the ``"``
    closed the quote)."""
    out = []
    for cite in cc.genuine_pool(ctx):
        words = (cite.quote or "").split(" ")
        if len(words) < 3:
            continue
        k = ctx.rng.randrange(1, len(words))
        quote = " ".join([*words[:k], f'"{words[k]}"', *words[k + 1 :]])
        opener, closer, holds = ctx.rng.choice([d for d in DELIMITERS if d[0] in "\u201c\u201e"])
        if any(mark in quote for mark in holds):
            continue
        literal = f"{_PROSE} [{cite.handle} {opener}{quote}{closer}]."
        cites = (Cite(cite.handle, quote),)
        out.append(Case("straight_quote_in_curly", cites, literal=literal, claims=False))
    return out


def _lead_in(ctx: Ctx) -> list[Case]:
    pool = cc.genuine_pool(ctx)
    words = ("Safety", "Dose", "Efficacy", "Outcome")
    return [Case("bold_lead_in", (cite,), lead_in=words[n % 4]) for n, cite in enumerate(pool)]


def _beside(name: str, bad: Callable[[Ctx], Iterable[Case]]) -> Callable[[Ctx], Iterator[Case]]:
    def build(ctx: Ctx) -> Iterator[Case]:
        pool = cc.genuine_pool(ctx)
        if not pool:
            return
        for case in bad(ctx):
            yield Case(name, (_pick(ctx, pool), *case.cites))

    return build


def _cat(
    name: str,
    group: str,
    intent: str | tuple[str, ...],
    build: Callable[[Ctx], Iterable[Case]],
    **kw: Any,  # Category's optional fields: flag, against, about, support, tier, ref_flag
) -> Category:
    verdicts = (intent,) if isinstance(intent, str) else intent
    return Category(name, group, verdicts, build, **kw)


_QUOTE_IN = "a typographic variant in the quote, where the passage has another member of its class"
_IN_PASSAGE = "the passage has the typographic character, the quote its plain form"

CATEGORIES: tuple[Category, ...] = (
    _cat("verbatim", "genuine", "ok", c.verbatim),
    _cat(
        "dash_in_quote",
        "genuine",
        "ok",
        c.variant("dash_in_quote", DASHES, "-", in_quote=True),
        about=_QUOTE_IN,
    ),
    _cat(
        "dash_in_passage",
        "genuine",
        "ok",
        c.variant("dash_in_passage", DASHES, "-", in_quote=False),
        about=_IN_PASSAGE,
    ),
    _cat(
        "single_quote_in_quote",
        "genuine",
        "ok",
        c.variant("single_quote_in_quote", SINGLES, "'", in_quote=True),
        about=_QUOTE_IN,
    ),
    _cat(
        "single_quote_in_passage",
        "genuine",
        "ok",
        c.variant("single_quote_in_passage", SINGLES, "'", in_quote=False),
        about=_IN_PASSAGE,
    ),
    _cat(
        "double_quote_in_quote",
        "genuine",
        "ok",
        c.variant("double_quote_in_quote", DOUBLES, '"', in_quote=True),
        about=_QUOTE_IN,
    ),
    _cat(
        "double_quote_in_passage",
        "genuine",
        "ok",
        c.variant("double_quote_in_passage", DOUBLES, '"', in_quote=False),
        about=_IN_PASSAGE,
    ),
    _cat(
        "triple_prime_in_quote",
        "genuine",
        "ok",
        c.variant("triple_prime_in_quote", TRIPLES, "'''", in_quote=True),
    ),
    _cat(
        "triple_prime_in_passage",
        "genuine",
        "ok",
        c.variant("triple_prime_in_passage", TRIPLES, "'''", in_quote=False),
    ),
    _cat("unicode_space_in_quote", "genuine", "ok", c.spaces_in_quote),
    _cat(
        "no_break_space_in_passage",
        "genuine",
        "ok",
        c.variant("no_break_space_in_passage", NO_BREAKS, " ", in_quote=False),
    ),
    _cat("ellipsis", "genuine", "ok", c.ellipsis),
    _cat("invisible_in_quote", "genuine", "ok", c.invisible_in_quote),
    _cat("invisible_in_passage", "genuine", "ok", c.invisible_in_passage),
    _cat("decomposed_accent", "genuine", "ok", c.decomposed),
    _cat("whitespace_run", "genuine", "ok", c.whitespace_runs),
    _cat("digit", "misquote", "quote_mismatch", c.misquote("digit", c._digits)),
    _cat("decimal_point", "misquote", "quote_mismatch", c.misquote("decimal_point", c._decimals)),
    _cat(
        "comparison_sign",
        "misquote",
        "quote_mismatch",
        c.misquote("comparison_sign", c._comparisons),
    ),
    _cat("unit", "misquote", "quote_mismatch", c.misquote("unit", c._units)),
    _cat("minus_sign", "misquote", "quote_mismatch", c.misquote("minus_sign", c._minus)),
    _cat("letter_case", "misquote", "quote_mismatch", c.misquote("letter_case", c._case)),
    _cat("added_accent", "misquote", "quote_mismatch", c.misquote("added_accent", c._added_accent)),
    _cat(
        "superscript_flattened",
        "misquote",
        "quote_mismatch",
        c.misquote("superscript_flattened", c._flattened),
    ),
    _cat(
        "removed_space", "misquote", "quote_mismatch", c.misquote("removed_space", c._removed_space)
    ),
    _cat("inserted_not", "misquote", "quote_mismatch", c.misquote("inserted_not", c._inserted_not)),
    _cat("swapped_words", "misquote", "quote_mismatch", c.misquote("swapped_words", c._swapped)),
    _cat("empty_quote", "misquote", "quote_mismatch", c.empty_quote),
    _cat("quote_from_other_passage", "misquote", "quote_mismatch", c.other_passage),
    _cat("quote_of_another_version", "misquote", "quote_mismatch", c.other_version_quote),
    _cat("forged_check_code", "forged", "forged", hc.forged_check),
    _cat("forged_path", "forged", "forged", lambda ctx: hc.swap_part(ctx, "forged_path", "path")),
    _cat(
        "forged_record",
        "forged",
        "forged",
        lambda ctx: hc.swap_part(ctx, "forged_record", "record"),
    ),
    _cat(
        "forged_version",
        "forged",
        "forged",
        lambda ctx: hc.swap_part(ctx, "forged_version", "version"),
    ),
    _cat("other_installation_key", "forged", "forged", hc.foreign_key),
    _cat(
        "malformed_scheme",
        "malformed",
        "malformed",
        hc.broken("malformed_scheme", hc.scheme_breaks),
    ),
    _cat("malformed_id", "malformed", "malformed", hc.broken("malformed_id", hc.id_breaks)),
    _cat(
        "malformed_version",
        "malformed",
        "malformed",
        hc.broken("malformed_version", hc.version_breaks),
    ),
    _cat("malformed_path", "malformed", "malformed", hc.broken("malformed_path", hc.path_breaks)),
    _cat(
        "malformed_check_code",
        "malformed",
        "malformed",
        hc.broken("malformed_check_code", hc.check_breaks),
    ),
    _cat(
        "lookalike_characters",
        "malformed",
        "malformed",
        hc.broken("lookalike_characters", hc.lookalike_breaks),
    ),
    _cat(
        "invisible_in_handle",
        "malformed",
        "malformed",
        hc.broken("invisible_in_handle", hc.invisible_breaks),
    ),
    _cat(
        "markup_in_handle",
        "malformed",
        "malformed",
        hc.broken("markup_in_handle", hc.markup_breaks),
    ),
    _cat("withdrawn_no_such_path", "withdrawn", "withdrawn", hc.withdrawn_path),
    _cat("withdrawn_record", "withdrawn", "withdrawn", hc.withdrawn_record),
    _cat("withdrawn_version_not_retained", "withdrawn", "withdrawn", hc.withdrawn_version),
    _cat("withdrawn_path_not_in_version", "withdrawn", "withdrawn", hc.withdrawn_not_in_version),
    _cat(
        "unavailable_record",
        "unavailable",
        "unavailable",
        hc.unavailable("unavailable_record", ("ok", "partial")),
    ),
    _cat(
        "unavailable_source_failed",
        "unavailable",
        "unavailable",
        hc.unavailable("unavailable_source_failed", ("failed",)),
    ),
    _cat(
        "unavailable_not_harvested",
        "unavailable",
        "unavailable",
        hc.unavailable("unavailable_not_harvested", ("not_harvested",)),
    ),
    _cat(
        "retracted",
        "flags",
        "ok",
        hc.flagged("retracted", lambda r: r.retracted is True),
        flag="retracted",
    ),
    _cat(
        "retraction_notice",
        "flags",
        "ok",
        hc.flagged(
            "retraction_notice",
            lambda r: r.retracted is not True and any(k == "retraction_in" for k, _ in r.notices),
        ),
        flag="retracted",
    ),
    _cat(
        "expression_of_concern",
        "flags",
        "ok",
        hc.flagged("expression_of_concern", lambda r: r.expression_of_concern is True),
        flag="expression_of_concern",
    ),
    _cat(
        "expression_of_concern_notice",
        "flags",
        "ok",
        hc.flagged(
            "expression_of_concern_notice",
            lambda r: (
                r.expression_of_concern is not True
                and any(k == "expression_of_concern_in" for k, _ in r.notices)
            ),
        ),
        flag="expression_of_concern",
    ),
    _cat(
        "preprint",
        "flags",
        "ok",
        hc.flagged("preprint", lambda r: r.preprint is True or r.scheme == "ppr"),
        flag="preprint",
    ),
    _cat(
        "not_refreshed",
        "flags",
        "ok",
        hc.flagged("not_refreshed", lambda r: not r.refreshed),
        flag="not_refreshed",
    ),
    _cat(
        "version_changed",
        "flags",
        "ok",
        hc.version_changed,
        flag="version_changed",
        against="issued",
    ),
    _cat(
        "quote_only_in_current",
        "flags",
        "ok",
        hc.current_only,
        flag="version_changed",
        against="current",
    ),
    _cat("unpinned_older_version", "flags", "ok", hc.unpinned_old, against="issued"),
    _cat("hidden_in_unclosed_quote", "markup", "forged", _unclosed),
    _cat(
        "quote_with_bracket_in_group",
        "markup",
        "ok",
        _bracketed("quote_with_bracket_in_group", changed=False),
    ),
    _cat(
        "misquote_with_bracket_in_group",
        "markup",
        "quote_mismatch",
        _bracketed("misquote_with_bracket_in_group", changed=True),
    ),
    _cat("straight_quote_in_curly", "markup", "quote_mismatch", _straight_in_curly),
    _cat("footnote", "markup", "ok", _markup("footnote", _footnote)),
    _cat(
        "footnote_marker_in_group",
        "markup",
        ("ok", "ok"),
        _markup("footnote_marker_in_group", _footnote_in_group),
    ),
    _cat("markdown_link", "markup", "ok", _markup("markdown_link", _link)),
    _cat("code_span", "markup", "ok", _markup("code_span", _code)),
    _cat("bold_handle", "markup", "ok", _markup("bold_handle", _bold)),
    _cat("bold_lead_in", "markup", "ok", _lead_in),
    _cat(
        "number_in_brackets_without_list",
        "markup",
        "ok",
        _markup("number_in_brackets_without_list", _plain_number, alone=True),
    ),
    _cat(
        "misquote_beside_valid",
        "beside",
        ("ok", "quote_mismatch"),
        _beside("misquote_beside_valid", c.misquote("digit", c._digits)),
    ),
    _cat(
        "withdrawn_beside_valid",
        "beside",
        ("ok", "withdrawn"),
        _beside("withdrawn_beside_valid", hc.withdrawn_path),
    ),
    _cat(
        "forged_beside_valid",
        "beside",
        ("ok", "forged"),
        _beside("forged_beside_valid", hc.forged_check),
    ),
    _cat(
        "malformed_beside_valid",
        "beside",
        ("ok", "malformed"),
        _beside("malformed_beside_valid", hc.broken("m", hc.path_breaks)),
    ),
    _cat(
        "unavailable_beside_valid",
        "beside",
        ("ok", "unavailable"),
        _beside(
            "unavailable_beside_valid",
            hc.unavailable("u", ("ok", "partial", "failed", "not_harvested")),
        ),
    ),
)


CATEGORIES += cc.reference_categories(_cat) + cc.support_categories(_cat)


@dataclass(frozen=True)
class Planted:
    """The cases drawn for one category in one world, with their oracle outcomes."""

    category: Category
    world: str
    cases: tuple[tuple[Case, tuple[oracle.Expected, ...]], ...]
    distinct: int


def fits(category: Category, outcomes: tuple[oracle.Expected, ...]) -> bool:
    """Whether the oracle's outcomes are what the category means to plant."""
    if tuple(e.verdict for e in outcomes) != category.intent:
        return False
    first = outcomes[0]
    if category.flag is not None and category.flag not in first.flags:
        return False
    if category.against is not None and first.checked_against != category.against:
        return False
    unflagged = category.flag is None and category.group == "flags"
    if unflagged and "version_changed" in first.flags:
        return False
    if first.support != category.support:
        return False
    if category.tier is None:
        return not first.references
    if len(first.references) != 1 or first.references[0].tier != category.tier:
        return False
    flags = first.references[0].flags
    return all((flags[i] is True) == (i == category.ref_flag) for i in range(3))


def plant(category: Category, ctx: Ctx, per_category: int, scan: int = 4000) -> Planted:
    """Up to ``per_category`` cases the oracle agrees with (drawn again from a small pool)."""
    kept: list[tuple[Case, tuple[oracle.Expected, ...]]] = []
    for n, case in enumerate(category.build(ctx)):
        if n >= scan or len(kept) >= per_category:
            break
        if case.key in {k.key for k, _ in kept}:
            continue
        outcomes = tuple(oracle.judge(x.handle, x.quote, ctx.world, ctx.key) for x in case.cites)
        outcomes = with_claims(case, outcomes, ctx.world)
        if outcomes is not None and fits(category, outcomes):
            kept.append((case, outcomes))
    distinct = len(kept)
    while kept and len(kept) < per_category:
        kept.append(kept[len(kept) % distinct])
    return Planted(category, ctx.world.name, tuple(kept), distinct)
