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
