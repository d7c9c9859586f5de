"""audit.references: the public entry points, and the layering rule (audit never imports
pipeline; the optional parsers load only for their format)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from audit.references import read_document
from tests.audit.references.golden import DATA, extracted


def test_read_document_reads_the_file_and_names_it_as_given(tmp_path: Path) -> None:
    path = tmp_path / "copy.md"
    path.write_bytes((DATA / "article.md").read_bytes())
    document = read_document(path)
    assert document.file == str(path)
    assert document.references == tuple(
        r.model_copy(
            update={
                "span": r.span.model_copy(update={"file": str(path)}),
                "identifiers": tuple(
                    i.model_copy(update={"span": i.span.model_copy(update={"file": str(path)})})
                    for i in r.identifiers
                ),
            }
        )
        for r in extracted("article.md").references
    )


def test_extracting_prose_imports_neither_pipeline_nor_the_optional_parsers() -> None:
    code = (
        "import sys\n"
        "from audit.references import extract_bytes\n"
        "extract_bytes(b'doi:10.5555/x', 'a.md')\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('pipeline', 'bibtexparser', 'rispy', 'pypdf', 'pylatexenc'))\n"
        "print(bad)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "[]"


def test_read_document_reads_the_format_it_is_given_over_the_extension(tmp_path: Path) -> None:
    """``fmt`` overrides the name: a BibTeX file saved as ``.txt`` is read as BibTeX (by its
    extension alone it is prose, and its entries come out otherwise)."""
    path = tmp_path / "refs.txt"
    path.write_bytes((DATA / "refs.bib").read_bytes())
    as_given = read_document(path, "bibtex")
    by_name = read_document(path)
    assert [r.kind for r in as_given.references] == [
        r.kind for r in extracted("refs.bib").references
    ]
    assert [r.title for r in as_given.references] == [
        r.title for r in extracted("refs.bib").references
    ]
    assert [r.title for r in by_name.references] != [r.title for r in as_given.references]
