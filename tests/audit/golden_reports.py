"""Golden renderings of whole audit reports: text, Markdown and HTML of a few varied reports.

``python -m tests.audit.golden_reports`` rewrites them (``tests/audit/data/golden/``);
tests/audit/test_render_golden.py checks them. Review every changed line of ``git diff`` before
committing a rewrite: a golden file is a statement of what a user reads.

The reports are built in memory from the planted corpus (:mod:`tests.audit.planted`) at a
fixed time, so they are the same on every machine. Two things would make a golden change for
reasons that are not the renderer's and are written as placeholders: the tool's version
(``<version>``, in the text of every format) and, in HTML, the inlined stylesheet and its hash
in the Content Security Policy (``<site.css>``, ``<css-sha256>``; tests/audit/test_render_html.py
checks the real ones).

- ``ladder``: every verdict of the ladder, every flag, a record withdrawn upstream, an uncited
  sentence, a heading, a partial snapshot, hostile answer text (HTML, Markdown, terminal
  escapes) and a ``--fail-on`` policy beyond the default;
- ``support``: claim support judged (a judge whose text is hostile: every label, evidence
  spans), and the answer's ordinary references checked against the works snapshot;
- ``excerpt``: long passages under several licences (an excerpt cut on both sides, one of
  the beginning, a record without a public page, a misquote longer than the excerpt bound),
  its HTML rendered in each publishing mode.
"""

from __future__ import annotations

import base64
import hashlib
import re
import tempfile
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from itertools import cycle
from pathlib import Path

import audit
from audit.citations import parse_answer
from audit.corpus import InMemoryCorpus
from audit.engine import audit_answer
from audit.references.resolve import SnapshotResolver
from audit.render_html import render_report_html
from audit.render_text import render_markdown, render_text
from audit.report import Report
from audit.support.model import SUPPORT_LABELS, EvidenceSpan, SupportLabel, SupportResult
from audit.support.run import with_support
from tests.audit.planted import KEYRING, OTHER, SETID, h, stale_corpus
from tests.audit.references.works import write_works

DATA = Path(__file__).resolve().parent / "data" / "golden"
NOW = datetime(2099, 1, 2, 3, 4, 5, tzinfo=UTC)
VERSION = "<version>"

HOSTILE = 'A <script>alert("x")</script> claim *bold* [link](javascript:x) | pipe & `tick` #1'
"""Answer text that would be markup in HTML and Markdown (terminal escapes: test_render_text.py)."""


# --- the reports -------------------------------------------------------------------------------


def ladder_report() -> Report:
    corpus = stale_corpus({f"setid:{SETID}": "planted-0"}, openfda="failed", crossref="partial")
    good = h("pmid:99000001/abstract.3")
    answer = (
        "# Results & <b>findings</b>\n\n"
        f'Risk was low [{h("pmid:99000001/abstract.4")} "does not increase the risk"].\n\n'
        f'Follow-up was long [{good} "312 adults were diagnosed"].\n\n'
        f"{HOSTILE} [{good}].\n\n"
        "A made-up source [pmid:9x/abstract.3~zzzzz] "
        "and check [pmid:99000001/abstract.3~zzzzz].\n\n"
        f"A forged one [{h('pmid:99000001/abstract.3', OTHER)}].\n\n"
        f"Gone [{h('pmid:99000001/abstract.9')}]. Vanished [{h('pmid:99000010/abstract.1')}]. "
        f"Gone and retracted [{h('pmid:99000002/abstract.9')}].\n\n"
        f"Retracted [{h('pmid:99000002/abstract.1')}; {h('pmid:99000007/abstract.1')}].\n\n"
        f"Of concern [{h('pmid:99000004/abstract.1')}]. "
        f"A preprint [{h('ppr:PPR990001@1/abstract.1')}].\n\n"
        f"The trial changed [{h('nct:NCT99000001@2025-01-15/trial.brief_summary.1')}] "
        f"and now says so [{h('nct:NCT99000001@2025-01-15/trial.brief_summary.1')} "
        '"10 mg daily"].\n\n'
        f"The label [{h(f'setid:{SETID}@4/label.boxed_warning.1')}] and another "
        f"[{h('setid:5eed0001-0000-4000-8000-000000000999@1/label.boxed_warning.1')}].\n\n"
        "Nothing cites this sentence.\n"
    )
    return audit_answer(
        parse_answer(answer),
        corpus,
        KEYRING,
        fail_on=("retracted", "quote_mismatch"),
        source_label="answer <1>.md",
        now=NOW,
    )


class _HostileJudge:
    """A judge whose name, version and reasons are hostile text; its label cycles."""

    name = "<b>judge</b> | *x*"
    version = "1`0"

    def __init__(self) -> None:
        self.labels: Iterator[SupportLabel] = cycle(SUPPORT_LABELS)

    def judge(self, claim: str, evidence: object) -> SupportResult:
        label = next(self.labels)
        text = getattr(evidence, "text", "")
        span = None
        if label in ("supported", "contradicted") and len(text) > 20:
            span = EvidenceSpan(start=10, end=20, text=text[10:20])
        return SupportResult(
            label=label,
            reason=f"<i>{label}</i> because | *{claim[:12]}*",
            evidence=span,
            judge=self.name,
            judge_version=self.version,
        )


SUPPORT_ANSWER = (
    "Zentravir is safe, as the cohort doi:10.5555/ref.0001 agrees (see NCT9900001) "
    f"[{h('pmid:99000001/abstract.4')}].\n\n"
    f'Children were diagnosed [{h("pmid:99000001/abstract.3")} "312 children"].\n\n'
    f"Labels warn [{h(f'setid:{SETID}@4/label.boxed_warning.1')}]. "
    f"Trials compare [{h('nct:NCT99000001@2025-06-02/trial.conditions.1')}].\n\n"
    f"It shortened the course [{h('pmid:99000004/abstract.1')}] "
    f"[{h('pmid:99000001/abstract.3', OTHER)}].\n\n"
    "## References\n\n"
    f"1. {h('pmid:99000001/abstract.3')}\n"
    "2. Doe J, Roe R. Vitamin Y and sleep quality in older adults: a randomised trial. "
    "Synthetic Reviews in Geriatrics. 2015. PMID: 99100002\n"
    "3. Nobody N. Zentravir <dosing> in *neonates*. 2024. PMID: 99100777\n"
    "4. Selkirk J. The Farrow Syndrome Handbook. Demo Medical Press; 2021. "
    "ISBN 978-9-99999-001-1\n"
)


def support_report(works: Path) -> Report:
    corpus = stale_corpus({})
    resolver = SnapshotResolver.open(works)
    try:
        plain = audit_answer(
            parse_answer(SUPPORT_ANSWER),
            corpus,
            KEYRING,
            source_label="support.md",
            now=NOW,
            text=SUPPORT_ANSWER,
            references=resolver,
        )
    finally:
        resolver.close()
    return with_support(plain, corpus, _HostileJudge())


FILLER = "Invented context sentence number {} about zentravir and Farrow syndrome. "
QUOTE = "312 invented children were diagnosed with Farrow syndrome"
MIDDLE = (
    "".join(FILLER.format(n) for n in range(6))
    + f"During follow-up, {QUOTE}. "
    + "".join(FILLER.format(n) for n in range(6, 12))
)
OPENING = "".join(FILLER.format(n) for n in range(12, 20)) + "The passage ends here."
LONG_QUOTE = " ".join(f"word{n}" for n in range(60))


def excerpt_corpus() -> InMemoryCorpus:
    corpus = InMemoryCorpus(sources={"pubmed": "ok", "europepmc": "ok"}, name="excerpts")
    corpus.add_record(
        "pmid:99000011",
        "pubmed",
        {"1": {"abstract.1": MIDDLE}, "2": {"abstract.1": MIDDLE + "Added later."}},
        title="A closed <record> & co",
        journal="Journal of Invented Results",
        year=2024,
        doi="10.5555/closed.1",
        licence="CC-BY-NC-4.0",
        retracted=False,
        expression_of_concern=False,
        preprint=False,
    )
    corpus.add_record("pmid:99000012", "pubmed", {"1": {"abstract.1": OPENING}})
    corpus.add_record(
        "pmcid:PMC99000013", "europepmc", {"1": {"body.main.p1": OPENING}}, licence="CC-BY-4.0"
    )
    corpus.add_record("local:notes-1", "local", {"1": {"body": MIDDLE}})
    corpus.add_record("pmid:99000014", "pubmed", {"1": {"abstract.1": LONG_QUOTE + " end."}})
    return corpus


def excerpt_report() -> Report:
    answer = (
        f'Closed middle [{h("pmid:99000011@1/abstract.1")} "{QUOTE}"].\n\n'
        f"Closed opening [{h('pmid:99000012/abstract.1')}].\n\n"
        f"Open [{h('pmcid:PMC99000013/body.main.p1')}].\n\n"
        f'Local [{h("local:notes-1@1/body")} "{QUOTE}"].\n\n'
        f'Misquoted [{h("pmid:99000014/abstract.1")} "{LONG_QUOTE.replace("word7 ", "")}"].\n'
    )
    return audit_answer(
        parse_answer(answer), excerpt_corpus(), KEYRING, source_label="excerpt.md", now=NOW
    )


# --- rendering and normalising -----------------------------------------------------------------

_STYLE = re.compile(r"<style>.*?</style>", re.S)


def normalised(text: str) -> str:
    """``text`` with the tool's version and the inlined stylesheet as placeholders."""
    style = _STYLE.search(text)
    if style is not None:
        css = style.group(0).removeprefix("<style>").removesuffix("</style>")
        digest = base64.b64encode(hashlib.sha256(css.encode()).digest()).decode()
        text = text[: style.start()] + "<style><site.css></style>" + text[style.end() :]
        text = text.replace(digest, "<css-sha256>")
    return text.replace(audit.__version__, VERSION)


RENDERERS: dict[str, Callable[[Report], str]] = {
    "txt": render_text,
    "md": render_markdown,
    "html": render_report_html,
    "excerpt.html": lambda r: render_report_html(r, publish="excerpt"),
    "full.html": lambda r: render_report_html(r, publish="full"),
}
GOLDENS: dict[str, tuple[str, ...]] = {
    "ladder": ("txt", "md", "html"),
    "support": ("txt", "md", "html"),
    "excerpt": ("txt", "md", "html", "excerpt.html", "full.html"),
}
"""Each report and the renderings of it that have a golden file."""


def golden_path(report: str, fmt: str) -> Path:
    return DATA / f"{report}.{fmt}"


def build(report: str, works: Path | None) -> Report:
    """The report named ``report`` (``works``: the works snapshot, for the references of
    ``support``)."""
    if report == "support":
        assert works is not None
        return support_report(works)
    return ladder_report() if report == "ladder" else excerpt_report()


def rendered(made: Report, fmt: str) -> str:
    return normalised(RENDERERS[fmt](made))


if __name__ == "__main__":
    DATA.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        works = write_works(Path(folder) / "works.duckdb")
        for name, formats in GOLDENS.items():
            made = build(name, works)
            for fmt in formats:
                golden_path(name, fmt).write_text(rendered(made, fmt), encoding="utf-8")
                print(f"wrote {golden_path(name, fmt).relative_to(Path.cwd())}")
