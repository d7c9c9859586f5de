"""The golden extraction outputs: ``python -m tests.audit.references.golden`` rewrites them
(``make golden-references``); tests/audit/references/test_golden.py checks them."""

from __future__ import annotations

import json
from pathlib import Path

from audit.references import ExtractedDocument, extract_bytes
from tests.audit.references.pdfs import text_pdf

DATA = Path(__file__).resolve().parent / "data"
INPUTS = ("article.md", "article.txt", "article.html", "hostile.html", "refs.bib", "refs.ris")
INPUTS += ("refs.json", "article.pdf")

PDF_PAGES = [
    ["Synthetic report on vitamin X", "It was registered as NCT99000005."],
    [
        "References",
        "1. Smith AB. A synthetic trial of vitamin X. J Synth Med. 2099;1:2.",
        "   doi:10.5555/pdf.2099.1",
        "2. Roe R. A second entry. Synth Rev. 2098;7:1. PMID: 99000010",
    ],
]


def input_bytes(name: str) -> bytes:
    """The bytes of one golden input (the PDF is written by :func:`text_pdf`)."""
    return text_pdf(PDF_PAGES) if name == "article.pdf" else (DATA / name).read_bytes()


def extracted(name: str) -> ExtractedDocument:
    return extract_bytes(input_bytes(name), name)


def golden_path(name: str) -> Path:
    return DATA / f"{name}.golden.json"


def render(document: ExtractedDocument) -> str:
    return json.dumps(document.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    for name in INPUTS:
        golden_path(name).write_text(render(extracted(name)), encoding="utf-8")
        print(f"wrote {golden_path(name).relative_to(Path.cwd())}")
