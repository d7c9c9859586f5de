"""Find identifiers in text and normalise them (pure: text in, :class:`Found` out).

Schemes and grammars (case-insensitive unless stated; docs/references.md has examples):

- **DOI** ``10.<registrant>/<suffix>``: registrant ``\\d{4,9}(\\.\\d+)*``; the ``/`` may be
  written ``%2F``; the suffix runs to whitespace or ``" < >`` (in a URL also to ``? # &``).
  Prefixes kept in ``raw``: ``doi:``, ``DOI``, ``https://doi.org/``, ``dx.doi.org/``, or any
  publisher landing URL that embeds the DOI (``https://host/doi/full/10.…``), whose trailing
  page segment (``/full``, ``/abstract``, ``/pdf``, ``/epdf``, ``/fulltext``, ``/html``) is
  dropped. Trailing ``. , ; : ! * ' "`` and unbalanced closing brackets are not part of it.
  Normalised: percent-decoded, then lower case (DOIs compare case-insensitively). A version
  suffix ``vN`` on an arXiv DataCite DOI (``10.48550/arXiv.2099.01234v2``) or a bioRxiv/medRxiv
  DOI (``10.1101/…v2``) goes to ``version``; an arXiv DataCite DOI also yields its arXiv id.
- **PMID**: ``PMID[:] N``, ``pubmed.ncbi.nlm.nih.gov/N``, ``ncbi.nlm.nih.gov/pubmed/N``,
  ``europepmc.org/(abstract|article)/MED/N``. A bare number is never a PMID. Normalised: the
  digits without leading zeros. Zero, or more than 8 digits, is reported invalid.
- **PMCID**: ``PMC N`` (optionally ``PMCID:``), in ``ncbi.nlm.nih.gov/pmc/articles/``,
  ``pmc.ncbi.nlm.nih.gov/articles/`` or ``europepmc.org/(article|abstract)/PMC/`` URLs.
  Normalised: ``PMC`` + digits without leading zeros.
- **arXiv**: new ``\\d{4}\\.\\d{4,5}`` or old ``archive[.XX]/\\d{7}``, optional ``vN``; after
  ``arXiv:`` or ``arXiv`` and a space, or in an ``arxiv.org/abs|pdf|html/`` URL; an old-style
  id of a known archive also bare (``hep-th/9901001``). The month is not checked (our
  synthetic ids are ``2099.*``).
  Normalised: archive lower case, subject class upper case; ``vN`` goes to ``version``.
- **NCT**: ``NCT`` + digits (upper-cased); anything but 8 digits is reported invalid.
- **ISBN**: after ``ISBN``/``ISBN-10``/``ISBN-13``[``:``]: digit groups split by ``-`` or a
  space; the first 13 digits starting 978/979, else the first 10 (``X`` last), ending at a group
  boundary. The check digit is verified: a wrong one is reported invalid (``problem`` names the
  digit seen and the one expected), never dropped. Normalised: a valid ISBN as its ISBN-13.

A prefix and its identifier stand on one line (``PMID:`` at a line's end does not take a
number from the next line). Where two matches overlap, the earlier scheme in the list above
wins (a DOI holding ``NCT99000001`` is one DOI).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from urllib.parse import unquote

from audit.references.model import Scheme

__all__ = [
    "Found",
    "find_identifiers",
    "identifiers_in_field",
    "isbn_check_digit",
    "normalise_doi",
]


@dataclass(frozen=True)
class Found:
    """One identifier found in a text: ``text[start:end] == raw``."""

    scheme: Scheme
    value: str
    raw: str
    start: int
    end: int
    version: str | None = None
    valid: bool = True
    problem: str | None = None


def _starting_with(first: str, pattern: str, flags: int) -> re.Pattern[str]:
    """``pattern`` behind a look-ahead for the characters a match can start with (``first``;
    ``tests/audit/references/test_identifiers.py`` holds the two to the same matches). The
    regex engine then leaves most positions after one character test instead of entering the
    pattern's optional groups (the DOI finder ran 3–6 times faster on prose, all of
    :func:`find_identifiers` 2.9 times: docs/audit.md#speed)."""
    return re.compile(f"(?=[{first}])(?:{pattern})", flags)


_DOI = _starting_with(
    "hdw1",  # https://…, dx.doi.org, doi…, www.…, 10.…
    r"""(?P<prefix>
        (?:https?://)?(?:dx\.|www\.)?doi\.org/
      | (?P<landing>https?://[^\s"<>]*?/)
      | \bdoi:[^\S\n]?
      | \bdoi[^\S\n]
    )?
    (?P<doi>10\.\d{4,9}(?:\.\d+)*(?:/|%2F)[^\s"<>]*)""",
    re.IGNORECASE | re.VERBOSE,
)
_TRAILING = ".,;:!*'\"`"
_CLOSERS = {")": "(", "]": "[", "}": "{"}
_LANDING_TAIL = re.compile(r"/(?:full|abstract|pdf|epdf|fulltext|html)/?$", re.IGNORECASE)
_VERSIONED_DOI = re.compile(r"^(10\.48550/arxiv\.\S+?|10\.1101/\S+?)(v\d+)$")
_ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(.+)$")

_PMID = _starting_with(
    "ph",  # PMID…, https://…
    r"""(?:\bPMID:?[^\S\n]*
      | https?://(?:www\.)?(?:pubmed\.ncbi\.nlm\.nih\.gov/|ncbi\.nlm\.nih\.gov/pubmed/)
      | https?://(?:www\.)?europepmc\.org/(?:abstract|article)/MED/
    )(?P<n>\d+)\b""",
    re.IGNORECASE | re.VERBOSE,
)
_PMCID = _starting_with(
    "ph",  # PMCID…, PMC…, https://…
    r"""(?:\bPMCID:?[^\S\n]*
      | https?://(?:www\.)?(?:ncbi\.nlm\.nih\.gov/pmc/articles/|pmc\.ncbi\.nlm\.nih\.gov/articles/)
      | https?://(?:www\.)?europepmc\.org/(?:abstract|article)/PMC/
    )?\bPMC(?P<n>\d+)\b""",
    re.IGNORECASE | re.VERBOSE,
)
_ARXIV_ID = r"(?P<id>\d{4}\.\d{4,5}|[a-z]+(?:-[a-z]+)*(?:\.[a-z]{2})?/\d{7})(?P<v>v\d+)?"
_ARXIV_ANON = _ARXIV_ID.replace("?P<id>", "").replace("?P<v>", "")
_ARCHIVES = (
    "astro-ph|cond-mat|gr-qc|hep-ex|hep-lat|hep-ph|hep-th|math-ph|nlin|nucl-ex|nucl-th|physics"
    "|quant-ph|math|cs|q-bio|q-fin|stat"
)
_ARXIV = _starting_with(
    "".join(sorted({"a", "h"} | {archive[0] for archive in _ARCHIVES.split("|")})),
    rf"""(?:\barXiv(?::[^\S\n]?|[^\S\n]){_ARXIV_ANON}
      | https?://(?:www\.|export\.)?arxiv\.org/(?:abs|pdf|html)/{_ARXIV_ANON}(?:\.pdf)?
      | \b(?=(?:{_ARCHIVES})(?:\.[a-z]{{2}})?/\d{{7}}){_ARXIV_ANON}
    )(?![\w.]*\d)""",
    re.IGNORECASE | re.VERBOSE,
)
_NCT = _starting_with("n", r"\bNCT(?P<n>\d+)\b", re.IGNORECASE)
_ISBN = _starting_with(
    "i", r"\bISBN(?:-?1[03])?:?[^\S\n]*(?P<n>\d[\d -]{0,20}[\dX]?)", re.IGNORECASE
)


def find_identifiers(text: str) -> list[Found]:
    """Every identifier in ``text``, in order of position; overlaps resolved by scheme order."""
    found: list[Found] = []
    taken = _Intervals()
    for finder in (_dois, _pmcids, _pmids, _arxivs, _ncts, _isbns):
        for item in finder(text):
            derived = item.scheme == "arxiv" and found and found[-1].scheme == "doi"
            if derived and (found[-1].start, found[-1].end) == (item.start, item.end):
                found.append(item)  # the arXiv id an arXiv DataCite DOI stands for
            elif not taken.overlaps(item.start, item.end):
                taken.add(item.start, item.end)
                found.append(item)
    return sorted(found, key=lambda f: (f.start, f.scheme != "doi"))


class _Intervals:
    """Disjoint [start, end) spans, sorted, with an overlap test in O(log n)."""

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []

    def overlaps(self, start: int, end: int) -> bool:
        index = bisect_right(self._starts, start)
        before = index > 0 and self._ends[index - 1] > start
        after = index < len(self._starts) and self._starts[index] < end
        return before or after

    def add(self, start: int, end: int) -> None:
        index = bisect_right(self._starts, start)
        self._starts.insert(index, start)
        self._ends.insert(index, end)


def normalise_doi(doi: str) -> str:
    """A DOI (without prefix) percent-decoded and lower-cased: the form DOIs compare in."""
    return unquote(doi).strip().lower()


def _dois(text: str) -> list[Found]:
    out: list[Found] = []
    for m in _DOI.finditer(text):
        doi = m.group("doi")
        in_url = m.group("prefix") is not None and "/" in m.group("prefix")
        if in_url:
            doi = re.split(r"[?#&]", doi, maxsplit=1)[0]
        doi = _trim(doi)
        if m.group("landing"):  # a publisher's page: its path's trailing slash is no part
            doi = _LANDING_TAIL.sub("", doi).rstrip("/")
        start, end = m.start(), m.start("doi") + len(doi)
        if unquote(doi).partition("/")[2] == "":
            if m.group("prefix") and not m.group("landing"):  # written as a DOI: say so
                raw = text[start:end]
                problem = "a DOI has a suffix after the '/' of its prefix"
                out.append(Found("doi", normalise_doi(doi), raw, start, end, None, False, problem))
            continue
        value, version = normalise_doi(doi), None
        versioned = _VERSIONED_DOI.match(value)
        if versioned:
            value, version = versioned.group(1), versioned.group(2)
        raw = text[start:end]
        out.append(Found("doi", value, raw, start, end, version))
        arxiv = _ARXIV_DOI.match(value)
        if arxiv:
            out.append(Found("arxiv", _arxiv_value(arxiv.group(1)), raw, start, end, version))
    return out


def _trim(doi: str) -> str:
    """Drop trailing punctuation and closing brackets that do not close one in the DOI."""
    while doi:
        last = doi[-1]
        if last in _TRAILING or (last in _CLOSERS and doi.count(last) > doi.count(_CLOSERS[last])):
            doi = doi[:-1]
        else:
            break
    return doi


def _pmids(text: str) -> list[Found]:
    out = []
    for m in _PMID.finditer(text):
        value = str(int(m.group("n")))
        problem = None
        if len(value) > 8:
            problem = f"a PMID has 1 to 8 digits, got {len(value)}"
        elif value == "0":
            problem = "a PMID is a positive number, got 0"
        out.append(Found("pmid", value, m.group(0), m.start(), m.end(), None, not problem, problem))
    return out


def _pmcids(text: str) -> list[Found]:
    return [
        Found("pmcid", f"PMC{int(m.group('n'))}", m.group(0), m.start(), m.end())
        for m in _PMCID.finditer(text)
    ]


def _arxiv_value(identifier: str) -> str:
    if "/" not in identifier:
        return identifier
    archive, number = identifier.split("/", 1)
    name, _, subject = archive.partition(".")
    return f"{name.lower()}.{subject.upper()}/{number}" if subject else f"{name.lower()}/{number}"


def _arxivs(text: str) -> list[Found]:
    out = []
    for m in _ARXIV.finditer(text):
        groups = [g for g in m.groups() if g is not None]
        identifier = groups[0]
        version = groups[1].lower() if len(groups) > 1 else None
        out.append(
            Found("arxiv", _arxiv_value(identifier), m.group(0), m.start(), m.end(), version)
        )
    return out


def _ncts(text: str) -> list[Found]:
    out = []
    for m in _NCT.finditer(text):
        digits = m.group("n")
        problem = None if len(digits) == 8 else f"an NCT number has 8 digits, got {len(digits)}"
        value = f"NCT{digits}"
        out.append(Found("nct", value, m.group(0), m.start(), m.end(), None, not problem, problem))
    return out


def isbn_check_digit(body: str) -> str:
    """The check digit of an ISBN body: 9 digits (ISBN-10, may be ``X``) or 12 (ISBN-13)."""
    digits = [int(c) for c in body]
    if len(digits) == 9:
        check = (11 - sum((10 - i) * d for i, d in enumerate(digits)) % 11) % 11
        return "X" if check == 10 else str(check)
    if len(digits) == 12:
        return str((10 - sum(d * (3 if i % 2 else 1) for i, d in enumerate(digits)) % 10) % 10)
    raise ValueError(f"an ISBN body has 9 or 12 digits, got {len(digits)}")


def _isbn_cut(run: str) -> int:
    """The length of the ISBN at the start of ``run``: 13 or 10 digits at a group boundary."""
    cuts: dict[int, int] = {}
    count = 0
    for i, char in enumerate(run):
        if char.isdigit() or (char in "Xx" and count == 9):
            count += 1
            following = run[i + 1 : i + 2]
            if count in (10, 13) and following in ("", " ", "-"):
                cuts[count] = i + 1
            if char in "Xx":
                break
    digits = re.sub(r"[^\dXx]", "", run)
    if 13 in cuts and digits[:3] in ("978", "979"):
        return cuts[13]
    if 10 in cuts:
        return cuts[10]
    return len(run.split(" ", 1)[0])


def _isbns(text: str) -> list[Found]:
    out = []
    for m in _ISBN.finditer(text):
        run = m.group("n")
        end = m.start("n") + _isbn_cut(run)
        raw = text[m.start() : end]
        out.append(_isbn(raw, text[m.start("n") : end], m.start(), end))
    return out


def _isbn(raw: str, number: str, start: int, end: int) -> Found:
    compact = re.sub(r"[\s-]", "", number).upper()
    if len(compact) not in (10, 13) or not compact[:-1].isdigit():
        problem = f"an ISBN has 10 or 13 digits, got {compact!r}"
        return Found("isbn", compact, raw, start, end, None, False, problem)
    expected = isbn_check_digit(compact[:-1])
    if compact[-1] != expected:
        problem = f"ISBN check digit is {compact[-1]}, expected {expected}"
        return Found("isbn", compact, raw, start, end, None, False, problem)
    if len(compact) == 10:
        body = "978" + compact[:9]
        compact = body + isbn_check_digit(body)
    return Found("isbn", compact, raw, start, end)


_BARE = {
    "pmid": re.compile(r"(?P<n>\d+)"),
    "pmcid": re.compile(r"(?:PMC)?(?P<n>\d+)", re.IGNORECASE),
    "arxiv": re.compile(_ARXIV_ID, re.IGNORECASE),
    "nct": re.compile(r"NCT(?P<n>\d+)", re.IGNORECASE),
    "isbn": re.compile(r"(?P<n>[\dXx][\dXx -]*)"),
    "doi": re.compile(r"(?P<n>10\.\S+)"),
}


def identifiers_in_field(scheme: Scheme, value: str) -> list[Found]:
    """The identifiers of a structured field meant to hold one of ``scheme`` (BibTeX ``doi``,
    RIS ``DO``, CSL ``PMID``…): any identifier written in full, else the scheme's bare form
    (``99000001`` in a PMID field). A non-empty field that holds none is one invalid Found."""
    found = find_identifiers(value)
    if found:
        return found
    text = value.strip()
    offset = value.find(text)
    if not text:
        return []
    m = _BARE[scheme].fullmatch(text)
    if m:
        prefix = "" if scheme == "pmcid" and text[:3].upper() == "PMC" else _PREFIX[scheme]
        for item in find_identifiers(prefix + text):
            if item.scheme == scheme:
                shift = offset - len(prefix)
                return [_shifted(item, text, offset, shift)]
    problem = f"the {scheme} field holds no {scheme.upper()}: got {text[:80]!r}"
    return [Found(scheme, text, text, offset, offset + len(text), None, False, problem)]


_PREFIX: dict[Scheme, str] = {
    "pmid": "PMID ",
    "pmcid": "PMC",
    "arxiv": "arXiv:",
    "nct": "",
    "isbn": "ISBN ",
    "doi": "doi:",
}


def _shifted(item: Found, text: str, offset: int, shift: int) -> Found:
    start = max(item.start + shift, offset)
    end = item.end + shift
    return Found(
        item.scheme,
        item.value,
        text[start - offset : end - offset],
        start,
        end,
        item.version,
        item.valid,
        item.problem,
    )
