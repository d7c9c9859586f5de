"""The ``cite_by_handle`` prompt: how to cite with handles and quotes, in the model's words.

Rule: the rendered prompt holds **no handle a model could copy as if genuine**. Every
handle-looking span in it is one of two kinds (tests/pipeline/serve/test_surface.py proves it
with :func:`audit.citations.parse_answer` and the audit engine):

* the live example: minted now, with the served key, from a real passage of the served
  snapshot (:func:`example_passage`), with a quote taken verbatim from that passage, so it
  verifies and its quote matches;
* the grammar written with upper-case placeholders (``SCHEME:ID[@VERSION]/PATH~CHECK``), which
  the grammar rejects.

No altered or invented handle is ever shown, not even to illustrate a forgery: forged and
stale handles are described in words. A snapshot without a citable passage gets the prompt
without an example, and says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from audit.citation_scan import find_candidates
from audit.report import FLAG_NAMES, VERDICTS
from audit.terminal import one_line
from pipeline.serve.describe import CITING_RULES, VERDICT_MEANINGS, identity
from pipeline.serve.served import Served
from pipeline.snapshot.search import PassageView, record_passages

QUOTE_WORDS = 6
"""The example quote: the passage's first words, at most this many."""
SHOWN_CHARS = 400
"""The example passage is shown up to about this many characters."""
_QUOTE_BREAKERS = re.compile('["“”„«»\\[\\]()]')  # would end the quote or the citation early
_EXAMPLE_CANDIDATES = 20
_EXAMPLE_SQL = (
    "SELECT s.record_id FROM record_state s JOIN records r "
    "ON r.record_id = s.record_id AND r.version = s.current_version "
    "WHERE NOT s.withdrawn AND NOT coalesce(r.retracted, false) "
    "AND NOT coalesce(r.expression_of_concern, false) ORDER BY s.record_id LIMIT ?"
)


@dataclass(frozen=True)
class Example:
    passage: PassageView
    handle: str
    quote: str


def quote_of(text: str) -> str | None:
    """The first words of ``text`` up to a character that would break ``[H "quote"]``."""
    words: list[str] = []
    for word in text.split():
        if _QUOTE_BREAKERS.search(word) or len(words) == QUOTE_WORDS:
            break
        words.append(word)
    return " ".join(words) if len(words) >= 3 else None


def _shown(text: str) -> str:
    line = one_line(text)
    if len(line) <= SHOWN_CHARS:
        return line
    return line[:SHOWN_CHARS].rsplit(" ", 1)[0] + " …"


def example_passage(served: Served) -> Example | None:
    """A citable passage of the served snapshot, its freshly minted handle and a verbatim
    quote of its first words; or None.

    Only a record that is not withdrawn, retracted or under an expression of concern, and
    only a passage of more than twice the quote's words whose text holds nothing handle-shaped
    (a passage is untrusted text: a handle written in it would reach the prompt unverified)."""
    with served.cursor() as con:
        ids = [row[0] for row in con.execute(_EXAMPLE_SQL, [_EXAMPLE_CANDIDATES]).fetchall()]
        for record_id in ids:
            for passage in record_passages(con, record_id, served.keyring).passages:
                quote = quote_of(passage.text)
                if (
                    passage.handle is not None
                    and quote is not None
                    and len(passage.text.split()) > 2 * QUOTE_WORDS
                    and not find_candidates(_shown(passage.text))
                ):
                    return Example(passage, passage.handle, quote)
    return None


def _example_text(example: Example | None) -> list[str]:
    if example is None:
        return [
            "This snapshot holds no passage that can serve as an example here; search it to "
            "get real handles.",
        ]
    p = example.passage
    return [
        f"Here is a real one, minted just now for the passage {p.path} of {p.record_id} "
        f"(version {p.version}) in this snapshot, cited with a quote of its first words:",
        "",
        f'    [{example.handle} "{example.quote}"]',
        "",
        f"The passage reads: {_shown(p.text)}",
    ]


def cite_by_handle(served: Served) -> str:
    """The prompt text for the served snapshot (an example minted now, with its key)."""
    ident = identity(served)
    demo = (
        [
            "",
            "Note: this server mints handles with the PUBLIC demo key. They show how citing "
            "works; they prove nothing, since anyone can mint them.",
        ]
        if ident.demo_key
        else []
    )
    ladder = [f"- {v}: {VERDICT_MEANINGS[v]}." for v in VERDICTS]
    lines = [
        f"# Citing evidence from the citeseal snapshot {ident.name} ({ident.snapshot_id})",
        "",
        "Every claim you take from this snapshot must carry a handle: the address of one "
        "passage, signed by this server. Anyone can later check, offline, that the passage "
        "exists in the snapshot and says what you quote.",
        *demo,
        "",
        "## What a handle looks like",
        "",
        "    SCHEME:ID[@VERSION]/PATH~CHECK",
        "",
        "- SCHEME is pmid, pmcid, ppr (preprint), nct (trial), setid (drug label) or local (a "
        "document of the corpus's own folder); ID is the record's identifier in it.",
        "- @VERSION pins the record version the passage was issued from. Trial, label, "
        "preprint and local handles always carry it.",
        "- PATH names the passage: title, abstract.2, trial.brief_summary.1, "
        "label.boxed_warning.2 and so on.",
        "- CHECK is five characters the server computes from everything before the ~ with a "
        "secret key. You cannot compute it; never guess it.",
        "",
        *_example_text(example_passage(served)),
        "",
        "## How to cite",
        "",
        *[f"{n}. {rule}" for n, rule in enumerate(CITING_RULES, start=1)],
        "",
        "## What the audit says (the first that applies)",
        "",
        *ladder,
        f"- ok carries flags: {', '.join(FLAG_NAMES)}.",
        "",
        "A handle is forged when its check does not verify under this server's key: it was "
        "invented, altered by even one character, or minted under another key. A handle is "
        "stale, not forged, when the record moved on after it was issued: it is still ok with "
        "the flag version_changed (the quote is checked against the passage as issued and as "
        "it is now), or withdrawn when the record or passage is gone. Handles do not expire; "
        "resolve_handles tells you where a handle stands now.",
        "",
        "Call describe_contract for the full grammar and the limits.",
    ]
    return "\n".join(lines) + "\n"
