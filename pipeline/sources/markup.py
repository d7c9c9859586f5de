"""Markup inside JSON strings: Europe PMC ``abstractText`` (HTML: ``<h4>``, ``<i>``…) and
Crossref ``abstract`` (JATS: ``<jats:title>``, ``<jats:p>``…).

These strings are not well-formed markup — Europe PMC abstracts contain bare ``<`` as in
"p<0.05" — so they are not parsed as XML: only *known* tag names are removed, block tags
become a space, inline tags disappear, entities are unescaped, and ``<0.05`` stays text.

Superscripts and subscripts (``<sup>``, ``<sub>``, ``<jats:sup>``, ``<jats:sub>``) are kept,
by the rule of XML text (:func:`pipeline.xmlsafe.script`): ``10<sup>3</sup>`` → ``10³``,
``CYP<sub>3A4</sub>`` → ``CYP_(3A4)``. Nested scripts are written innermost first.
"""

from __future__ import annotations

import html
import re

from pipeline.xmlsafe import clean, script

_BLOCK = (
    "p|br|div|li|ul|ol|list|list-item|sec|table|tr|td|th|caption|blockquote|abstract|title"
    "|h[1-6]|label"
)
_INLINE = (
    "i|b|u|em|strong|sup|sub|span|a|sc|italic|bold|underline|monospace|small|font"
    "|inline-formula|named-content|styled-content|xref|ext-link"
)
_NS = r"[A-Za-z][A-Za-z0-9]*:[A-Za-z][A-Za-z0-9.-]*"  # jats:p, mml:mi …
_BLOCK_TAG = re.compile(rf"</?(?:{_BLOCK}|jats:(?:{_BLOCK}))(?:\s[^<>]*)?/?>", re.I)
_ANY_TAG = re.compile(rf"</?(?:{_INLINE}|{_BLOCK}|{_NS}|math)(?:\s[^<>]*)?/?>", re.I)
_HEADING = re.compile(
    r"<(?P<tag>h[1-6]|title|jats:title)\b[^<>]*>(?P<label>.*?)</(?P=tag)\s*>", re.I | re.S
)


_SCRIPT = re.compile(  # an innermost <sup>/<sub> element: no other one opens inside it
    r"<(?P<ns>(?:jats:)?)(?P<kind>sup|sub)(?:\s[^<>]*)?>"
    r"(?P<content>(?:(?!<(?:jats:)?su[pb][\s>]).)*?)</(?P=ns)(?P=kind)\s*>",
    re.I | re.S,
)


def _scripted(match: re.Match[str]) -> str:
    """One ``<sup>``/``<sub>`` element as its stored text, escaped again so that the final
    unescape of :func:`strip_markup` leaves it as it is."""
    content = html.unescape(_ANY_TAG.sub("", _BLOCK_TAG.sub(" ", match.group("content"))))
    return html.escape(script(content, match.group("kind").lower()), quote=False)


def _keep_scripts(text: str) -> str:
    while True:
        written = _SCRIPT.sub(_scripted, text)
        if written == text:
            return text
        text = written


def strip_markup(text: str | None) -> str:
    """Plain text of a markup-bearing string: known tags removed, scripts kept, entities
    unescaped."""
    if not text:
        return ""
    if "<" in text:
        text = _keep_scripts(text)
    spaced = _BLOCK_TAG.sub(" ", text)
    return clean(html.unescape(_ANY_TAG.sub("", spaced)))


def sections(text: str | None, *, default_label: str = "Abstract") -> list[tuple[str, str]]:
    """Split an abstract at its headings: ``[(label, text), …]``, empty sections dropped.

    Text before the first heading gets ``default_label``; a heading with no text after it
    (e.g. a lone "Abstract" title followed by a headed section) is dropped.
    """
    if not text:
        return []
    found: list[tuple[str, str]] = []
    label = default_label
    position = 0
    for match in _HEADING.finditer(text):
        body = strip_markup(text[position : match.start()])
        if body:
            found.append((label, body))
        label = strip_markup(match.group("label")) or default_label
        position = match.end()
    body = strip_markup(text[position:])
    if body:
        found.append((label, body))
    return found
