"""The user's own documents → passages: Markdown, plain text and PDF pages (pure functions).

Passage paths (derived only from the document's text, so the same file gives the same paths
on every rebuild; the rules of ``LOCAL_SEGMENTATION``):

* **PDF** — ``page.N``: the text layer of page ``N`` (1-based, physical pages). A page
  without text has no passage; the pages after it keep their numbers.
* **Markdown** — ``title``: the first heading, when it is a level-1 heading before any
  paragraph; ``body.<slug>.pN``: paragraph ``N`` (1-based) under a heading. ``slug`` is the
  heading folded as in JATS full text (:func:`pipeline.sources.jats.slugify`: ASCII, lower
  case, non-alphanumerics → ``_``, at most 40 characters); a heading nested under another
  (a higher ``#`` count, or ``-`` setext under ``=``) gets its parent's slug + ``_`` + its
  own; a slug met twice gets ``_2``, ``_3``…; paragraphs before any heading but the title use
  ``main``. Headings are ATX (``#`` to ``######``) and setext (a one-line paragraph underlined
  with ``===`` or ``---``). A paragraph is a run of non-blank lines; a fenced code block
  (```` ``` ```` or ``~~~``) is one paragraph, blank lines and all; a line of ``---``,
  ``***`` or ``___`` alone separates paragraphs. The text is kept as written (Markdown
  markup included), whitespace runs → one space.
* **Plain text** — ``body.main.pN``: paragraphs separated by blank lines.

The section of a passage is its heading (``A / B`` when nested), ``Page N`` or ``Text``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.records import Passage
from pipeline.sources.jats import slugify, unique_slug

LOCAL_SEGMENTATION = "1"
"""Version of these rules (recorded in every local record's metadata); bump on any change."""

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_BREAK = re.compile(r"^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
_SPACES = re.compile(r"\s+")


def squeeze(text: str) -> str:
    """Whitespace runs → one space, trimmed."""
    return _SPACES.sub(" ", text).strip()


def pdf_passages(pages: Sequence[str]) -> list[Passage]:
    """One ``page.N`` passage per page with text."""
    passages = []
    for number, page in enumerate(pages, start=1):
        text = squeeze(page)
        if text:
            passages.append(Passage(path=f"page.{number}", section=f"Page {number}", text=text))
    return passages


def text_passages(text: str) -> list[Passage]:
    """Plain text: one ``body.main.pN`` passage per blank-line-separated paragraph."""
    paragraphs = [squeeze(block) for block in re.split(r"\n[ \t]*\n", _lines(text))]
    return [
        Passage(path=f"body.main.p{n}", section="Text", text=paragraph)
        for n, paragraph in enumerate((p for p in paragraphs if p), start=1)
    ]


def _lines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


@dataclass
class _Block:
    kind: str  # "heading" | "paragraph"
    text: str
    level: int = 0


def _blocks(text: str) -> list[_Block]:
    """The headings and paragraphs of a Markdown text, in order (module docstring)."""
    blocks: list[_Block] = []
    lines: list[str] = []  # the paragraph being read
    fence: str | None = None

    def close() -> None:
        if lines:
            blocks.append(_Block("paragraph", "\n".join(lines)))
            lines.clear()

    for line in _lines(text).split("\n"):
        if fence is not None:
            lines.append(line)
            if line.strip().startswith(fence) and set(line.strip()) == {fence[0]}:
                fence = None
                close()
            continue
        if (opened := _FENCE.match(line)) is not None:
            close()
            fence = opened.group(1)
            lines.append(line)
            continue
        if (heading := _ATX.match(line)) is not None:
            close()
            blocks.append(_Block("heading", heading.group(2) or "", len(heading.group(1))))
        elif len(lines) == 1 and (underline := _SETEXT.match(line)) is not None:
            blocks.append(_Block("heading", lines.pop(), 1 if underline.group(1)[0] == "=" else 2))
        elif not line.strip() or _BREAK.match(line):
            close()
        else:
            lines.append(line)
    close()
    return blocks


def markdown_passages(text: str) -> tuple[str | None, list[Passage]]:
    """A Markdown document's title (None: it has none) and its passages (module docstring)."""
    blocks = _blocks(text)
    title: str | None = None
    if blocks and blocks[0].kind == "heading" and blocks[0].level == 1:
        title = squeeze(blocks.pop(0).text) or None
    passages = [Passage(path="title", section="Title", text=title)] if title else []
    used: set[str] = set()
    stack: list[tuple[int, str, str]] = []  # (level, slug, label) of the open headings
    here, label, count = "", "Main", 0
    for block in blocks:
        if block.kind == "heading":
            while stack and stack[-1][0] >= block.level:
                stack.pop()
            name = squeeze(block.text)
            own = slugify(name)
            slug = f"{stack[-1][1]}_{own}" if stack else own
            label = f"{stack[-1][2]} / {name}" if stack and name else (name or "Untitled section")
            stack.append((block.level, slug, label))
            here, count = "", 0
            continue
        paragraph = squeeze(block.text)
        if not paragraph:
            continue
        if not here:
            here = unique_slug(stack[-1][1] if stack else "main", used)
            label = stack[-1][2] if stack else "Main"
        count += 1
        passages.append(Passage(path=f"body.{here}.p{count}", section=label, text=paragraph))
    return title, passages
