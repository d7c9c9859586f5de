"""The reference oracle: what the audit must say, written from the spec alone.

It reads docs/contract.md (handle grammar, check code, folding table), docs/audit.md (the
verdict ladder, flags, sentence statuses, metrics, the overall verdict) and DESIGN.md §3, and
imports nothing of the audit's rules: no ``audit.folding``, ``audit.handles``, ``audit.keys``,
``audit.verdicts``, ``audit.overall``, ``audit.citations`` (a test holds it to that). It judges
planted citations against a :class:`~audit.evaluation.world.World`'s facts, which are plain
values. The same author wrote it and the audit, so it is a second reading of the spec, not an
independent one.

Scope: the default fail-on policy; ``local`` ids are checked for their character set and
length only (the planter writes plain ones). Claim support and ordinary references are read
by :mod:`~audit.evaluation.oracle_support` and :mod:`~audit.evaluation.oracle_references`;
here they only feed the reasons and the overall verdict.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from audit.evaluation.oracle_references import RefExpected
from audit.evaluation.world import Rec, World

# --- the handle grammar (docs/contract.md, "Handles") ----------------------------------------

_IDS = {
    "pmid": r"[1-9][0-9]{0,9}",
    "pmcid": r"PMC[1-9][0-9]{0,9}",
    "ppr": r"PPR[1-9][0-9]{0,9}",
    "nct": r"NCT[0-9]{8}",
    "setid": r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    "local": r"(?:[A-Za-z0-9._-]|%[0-9A-F]{2}){1,90}",
}
_PINNED = frozenset({"nct", "setid", "ppr", "local"})
_VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z.-]{0,39}")
_PATH = re.compile(r"[a-z0-9_]+(?:\.[a-z0-9_]+)*")
CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"
_CHECK = re.compile(f"[{CROCKFORD}]{{5}}")
_SHAPE = re.compile(r"([a-z]+):([^@/~]+)(?:@([^/~]*))?/([^~]*)~(.*)", re.DOTALL)
SCHEME_SOURCE = {
    "pmid": "pubmed",
    "pmcid": "europepmc",
    "ppr": "europepmc",
    "nct": "clinicaltrials",
    "setid": "openfda",
    "local": "local",
}


@dataclass(frozen=True)
class Parsed:
    scheme: str
    id: str
    version: str | None
    path: str
    check: str

    @property
    def record_id(self) -> str:
        return f"{self.scheme}:{self.id}"

    @property
    def locator(self) -> str:
        pin = f"@{self.version}" if self.version is not None else ""
        return f"{self.scheme}:{self.id}{pin}/{self.path}"


def parse(text: str) -> Parsed | None:
    """The handle's parts, or None when it breaks the grammar (plain ASCII, one spelling)."""
    if not text.isascii():
        return None
    m = _SHAPE.fullmatch(text)
    if m is None:
        return None
    scheme, ident, version, path, check = m.groups()
    if scheme not in _IDS or not re.fullmatch(_IDS[scheme], ident):
        return None
    if version is None and scheme in _PINNED:
        return None
    if version is not None and not _VERSION.fullmatch(version):
        return None
    if not _PATH.fullmatch(path) or len(path) > 200 or not _CHECK.fullmatch(check):
        return None
    return Parsed(scheme, ident, version, path, check)


def check_code(key: bytes, locator: str) -> str:
    """The first 25 bits of HMAC-SHA256(key, locator), 5 Crockford base32 characters."""
    bits = int.from_bytes(hmac.new(key, locator.encode(), hashlib.sha256).digest()[:4]) >> 7
    return "".join(CROCKFORD[(bits >> shift) & 31] for shift in (20, 15, 10, 5, 0))


# --- folding (docs/contract.md, "Text folding for quotes") -----------------------------------


def _chars(spec: str) -> list[int]:
    """Code points from 'XXXX' and 'XXXX-YYYY' items separated by spaces."""
    out: list[int] = []
    for item in spec.split():
        lo, _, hi = item.partition("-")
        out.extend(range(int(lo, 16), int(hi or lo, 16) + 1))
    return out


_TABLE: dict[int, str] = {}
for _spec, _to in (
    ("2010-2015 2212 2E3A 2E3B FE31 FE32 FE58 FE63 FF0D", "-"),
    ("2018-201B 2039 203A 2032 2035 02B9 02BC 275B 275C FF07", "'"),
    ("201C-201F 00AB 00BB 2033 2036 02BA 275D 275E 2E42 301D-301F FF02", '"'),
    ("2034 2037", "'''"),
    ("00A0 2007 202F", " "),
    ("2026", "..."),
    ("00AD 200B-200D 2060-2064 FEFF", ""),
):
    _TABLE.update(dict.fromkeys(_chars(_spec), _to))


@functools.lru_cache(maxsize=4096)
def fold(text: str) -> str:
    """NFC; the table; whitespace runs (``str.isspace``) to one space, trimmed; NFC again."""
    text = unicodedata.normalize("NFC", text)
    text = "".join(_TABLE.get(ord(c), c) for c in text)
    words: list[str] = []
    word: list[str] = []
    for c in text:
        if c.isspace():
            if word:
                words.append("".join(word))
                word = []
        else:
            word.append(c)
    if word:
        words.append("".join(word))
    return unicodedata.normalize("NFC", " ".join(words))


# --- the verdict ladder and flags (docs/audit.md) --------------------------------------------


@dataclass(frozen=True)
class Expected:
    """The planted outcome of one citation."""

    verdict: str
    flags: tuple[str, ...] = ()
    checked_against: str | None = None
    support: str | None = None  # the support label, when the case is judged for support
    references: tuple[RefExpected, ...] = ()  # the answer's ordinary references, if any


FLAG_ORDER = ("retracted", "expression_of_concern", "preprint", "version_changed", "not_refreshed")


def _partial(world: World) -> bool:
    return any(s in ("partial", "failed") for s in world.sources.values())


def _flags(rec: Rec, h: Parsed, world: World) -> tuple[str, ...]:
    kinds = {kind for kind, _ in rec.notices}
    on = {
        "retracted": rec.retracted is True
        or bool(kinds & {"retraction_in", "retracted_and_republished_in"}),
        "expression_of_concern": rec.expression_of_concern is True
        or "expression_of_concern_in" in kinds,
        "preprint": rec.preprint is True or h.scheme == "ppr",
        "version_changed": h.version is not None and h.version != rec.current,
        "not_refreshed": world.sources.get(rec.source, "not_harvested") == "not_harvested"
        or (not rec.refreshed and _partial(world)),
    }
    return tuple(name for name in FLAG_ORDER if on[name])


def judge(handle_text: str, quote: str | None, world: World, key: bytes) -> Expected:
    """The first rule of the ladder that applies, then the quote, then the flags."""
    h = parse(handle_text)
    if h is None:
        return Expected("malformed")
    if not hmac.compare_digest(check_code(key, h.locator), h.check):
        return Expected("forged")
    rec = world.records.get(h.record_id)
    if rec is None:
        return Expected("unavailable")
    if rec.withdrawn:
        return Expected("withdrawn")
    if h.version is not None:
        if h.version not in rec.versions or rec.text(h.version, h.path) is None:
            return Expected("withdrawn")
        issued = [rec.text(h.version, h.path)]
    else:
        issued = [rec.text(v, h.path) for v in rec.versions]
        if all(t is None for t in issued):
            return Expected("withdrawn")
    now = rec.text(rec.current, h.path)
    where = None
    if quote is not None:
        q = fold(quote)
        if q and any(t is not None and q in fold(t) for t in issued):
            where = "issued"
        elif q and now is not None and q in fold(now):
            where = "current"
        else:
            return Expected("quote_mismatch")
    return Expected("ok", _flags(rec, h, world), where)


# --- sentences, metrics, the overall verdict --------------------------------------------------


@dataclass(frozen=True)
class SentencePlan:
    """A planted sentence: its kind and each citation's handle text, quote and outcome."""

    kind: str
    citations: tuple[tuple[str, str | None, Expected], ...]

    @property
    def status(self) -> str:
        if not self.citations:
            return "uncited"
        return "cited" if any(e.verdict == "ok" for _, _, e in self.citations) else "invalid_only"

    @property
    def claim(self) -> bool:
        return self.kind in ("sentence", "list_item") or bool(self.citations)

    @property
    def references(self) -> tuple[RefExpected, ...]:
        return tuple(r for _, _, e in self.citations for r in e.references)


VERDICTS = ("malformed", "forged", "unavailable", "withdrawn", "quote_mismatch", "ok")


def metrics(plan: Sequence[SentencePlan]) -> dict[str, object]:
    """The report's metrics, as docs/audit.md "Metrics" defines them."""
    cites = [c for s in plan for c in s.citations]
    by_verdict = {v: sum(e.verdict == v for _, _, e in cites) for v in VERDICTS}
    claims = [s for s in plan if s.claim]
    by_status = {
        st: sum(s.status == st for s in claims) for st in ("cited", "uncited", "invalid_only")
    }
    checkable = len(cites) - by_verdict["unavailable"]
    return {
        "fabricated": by_verdict["malformed"] + by_verdict["forged"],
        "retracted_cited": sum(e.verdict == "ok" and "retracted" in e.flags for _, _, e in cites),
        "sentences": len(claims),
        "cited_sentences": by_status["cited"],
        "quotes": sum(q is not None for _, q, _ in cites),
        "verbatim_quotes": sum(
            q is not None and e.checked_against is not None for _, q, e in cites
        ),
        "citations": len(cites),
        "checkable_citations": checkable,
        "valid_citations": by_verdict["ok"],
        "citation_validity": round(by_verdict["ok"] / checkable, 4) if checkable else None,
        "by_verdict": by_verdict,
        "by_status": by_status,
    }


def reasons(plan: Sequence[SentencePlan]) -> list[tuple[str, int]]:
    """The rules that fire, as (level, how many), one per rule, sorted: every verdict below
    ok, sentence status and warning flag that occurs is one reason of docs/audit.md."""
    cites = [e for s in plan for _, _, e in s.citations]
    count = Counter(e.verdict for e in cites if e.verdict != "ok")
    count.update(f for e in cites if e.verdict == "ok" for f in e.flags)
    count.update(s.status for s in plan if s.claim and s.status != "cited")
    count.update(e.support for e in cites if e.support == "contradicted")
    level = {"malformed": "fail", "forged": "fail", "unavailable": "incomplete"}
    warns = (
        "withdrawn",
        "quote_mismatch",
        "invalid_only",
        "retracted",
        "uncited",
        "not_refreshed",
        "contradicted",
    )
    refs = [r for s in plan for r in s.references]
    by_ref = Counter(r.tier for r in refs)
    by_ref.update("retracted" for r in refs if r.flags[0] is True)
    ref_level = {"hallucinated": "fail", "unresolved": "incomplete", "mismatch": "warn"}
    ref_level["retracted"] = "warn"
    return sorted(
        [
            (level.get(item, "warn"), n)
            for item, n in count.items()
            if n and (item in level or item in warns)
        ]
        + [(ref_level[item], n) for item, n in by_ref.items() if item in ref_level]
    )


def overall(plan: Sequence[SentencePlan]) -> str:
    """fail > incomplete > warn > pass, as the table of docs/audit.md "Overall verdict"."""
    cites = [e for s in plan for _, _, e in s.citations]
    verdicts = {e.verdict for e in cites}
    tiers = {r.tier for s in plan for r in s.references}
    if verdicts & {"malformed", "forged"} or "hallucinated" in tiers:
        return "fail"
    if "unavailable" in verdicts or "unresolved" in tiers:
        return "incomplete"
    flagged = {f for e in cites if e.verdict == "ok" for f in e.flags}
    statuses = {s.status for s in plan if s.claim}
    if (
        verdicts & {"withdrawn", "quote_mismatch"}
        or statuses & {"invalid_only", "uncited"}
        or flagged & {"retracted", "not_refreshed"}
        or any(e.support == "contradicted" for e in cites)
        or "mismatch" in tiers
        or any(r.flags[0] is True for s in plan for r in s.references)
    ):
        return "warn"
    return "pass"
