"""Deterministic sentence splitting and chunking of record text.

Passage paths such as ``label.boxed_warning.2`` count chunks, so the chunker must give the
same chunks for the same text on every machine and every run: no model, no locale, no
randomness — a few explicit rules, versioned by :data:`SEGMENTATION_VERSION` (recorded in every
snapshot; change the number whenever a rule changes, because paths may move).

Rules (``split_sentences``):

* whitespace runs become one space; the sentences of a text joined with one space give back
  the normalised text exactly (nothing is dropped or rewritten);
* a sentence ends after ``.``, ``!`` or ``?`` (plus any closing quotes or brackets) when a
  space follows and the next character starts a sentence: an upper-case letter, a digit, an
  opening quote or bracket, or a bullet (``•``, ``▪``, ``–``);
* a full stop does not end a sentence after a known abbreviation (``e.g.``, ``i.e.``,
  ``et al.``, ``vs.``, ``No.``, ``Fig.``, ``Dr.`` …), after a single letter (an initial, or a
  list label like ``a.``) or after dotted initialisms (``U.S.``, ``p.o.``); a stop after a
  digit or a bracket (``… 5%.``, ``… (5.1).``) does end one;
* decimals (``2.5``), versions (``5.1``) and ellipses inside a word never split, because a
  boundary needs a space after the punctuation.

``chunk_text`` packs whole sentences greedily into chunks of at most ``max_chars``; a sentence
longer than that is cut at spaces (and a word longer than that, hard) so no chunk exceeds the
bound.
"""

from __future__ import annotations

import re

SEGMENTATION_VERSION = "1"
"""Version of the rules in this module; bump when any rule changes (paths may move)."""

DEFAULT_MAX_CHARS = 1200

_ABBREVIATIONS = frozenset(
    {
        "e.g",
        "i.e",
        "etc",
        "vs",
        "cf",
        "al",  # et al.
        "approx",
        "ca",
        "no",
        "nos",
        "fig",
        "figs",
        "dr",
        "mr",
        "mrs",
        "ms",
        "prof",
        "st",
        "jr",
        "sr",
        "inc",
        "ltd",
        "co",
        "corp",
        "dept",
        "univ",
        "vol",
        "p",
        "pp",
        "ref",
        "refs",
        "resp",
        "incl",
        "excl",
        "ed",
        "eds",
        "sect",
        "ch",
        "chap",
        "eq",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
    }
)
_WS = re.compile(r"\s+")
# terminal punctuation, optional closing quotes/brackets, then a space
_CANDIDATE = re.compile(r"[.!?]+[\"'”’)\]]*(?= )")
_SENTENCE_START = re.compile(r"[A-Z0-9\"'“‘(\[•▪–]")
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)\.$")


def normalize_space(text: str) -> str:
    """Whitespace runs to one space, trimmed."""
    return _WS.sub(" ", text).strip()


def _is_boundary(text: str, end: int, match: re.Match[str]) -> bool:
    """Does the punctuation matched at ``match`` (ending at ``end``) end a sentence?"""
    nxt = text[end + 2 : end + 3]  # after the punctuation and its space
    if not nxt or not _SENTENCE_START.match(nxt):
        return False
    punct = match.group(0)
    if not punct.startswith(".") or punct.startswith(".."):
        return True  # ! ? and ellipses followed by a capital end a sentence
    before = text[: match.start() + 1]
    word = _WORD_BEFORE.search(before)
    if word is None:
        return True  # "… 5 mg/kg." or "… (2.1)." — digits or a bracket before the stop
    token = word.group(1)
    if len(token) == 1:
        return False  # an initial or a list label: "J. Smith", "a. Adults"
    if "." in token:
        return False  # dotted initialism: "U.S.", "e.g.", "p.o."
    return token.lower() not in _ABBREVIATIONS


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences by the rules in the module docstring.

    ``" ".join(split_sentences(t)) == normalize_space(t)`` always holds.
    """
    norm = normalize_space(text)
    if not norm:
        return []
    sentences: list[str] = []
    start = 0
    for match in _CANDIDATE.finditer(norm):
        end = match.end() - 1  # index of the last punctuation character
        if _is_boundary(norm, end, match):
            sentences.append(norm[start : end + 1])
            start = end + 2  # skip the single space
    if start < len(norm):
        sentences.append(norm[start:])
    return sentences


def _split_long(sentence: str, max_chars: int) -> list[str]:
    """Cut one over-long sentence at spaces (a word longer than ``max_chars`` is cut hard)."""
    pieces: list[str] = []
    current = ""
    for word in sentence.split(" "):
        while len(word) > max_chars:
            if current:
                pieces.append(current)
                current = ""
            pieces.append(word[:max_chars])
            word = word[max_chars:]
        if not word:
            continue
        candidate = f"{current} {word}" if current else word
        if len(candidate) <= max_chars:
            current = candidate
        else:
            pieces.append(current)
            current = word
    if current:
        pieces.append(current)
    return pieces


def chunk_text(text: str, max_chars: int = DEFAULT_MAX_CHARS) -> list[str]:
    """Whole sentences packed greedily into chunks of at most ``max_chars`` characters.

    Every chunk is a substring of ``normalize_space(text)``; joined with one space the chunks
    give it back (unless a single word longer than ``max_chars`` had to be cut). Empty or blank
    text gives no chunks.
    """
    if max_chars < 1:
        raise ValueError("max_chars must be at least 1")
    chunks: list[str] = []
    current = ""
    for sentence in split_sentences(text):
        for piece in _split_long(sentence, max_chars) if len(sentence) > max_chars else [sentence]:
            candidate = f"{current} {piece}" if current else piece
            if len(candidate) <= max_chars:
                current = candidate
            else:
                chunks.append(current)
                current = piece
    if current:
        chunks.append(current)
    return chunks


def split_paragraphs(text: str) -> list[str]:
    """Paragraphs separated by blank lines, each whitespace-normalised; empty ones dropped."""
    return [p for p in (normalize_space(b) for b in re.split(r"\n\s*\n", text)) if p]
