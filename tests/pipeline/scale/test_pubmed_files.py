"""PubMed baseline/update folders: which files, their checks, and ``snapshot build`` over them."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import duckdb
import pytest

from pipeline.errors import ParseError
from pipeline.scale.generate import Generated, article_xml, generate_baseline
from pipeline.sources.pubmed_files import input_files, load_file, read_file
from tests.pipeline.scale.conftest import build, write_spec


def _gz(path: Path, body: str) -> Path:
    path.write_bytes(gzip.compress(body.encode(), mtime=0))
    return path


def test_files_in_name_order_baseline_first(tmp_path: Path) -> None:
    made = generate_baseline(tmp_path, 6, files=2, updates=2)
    found = [(f.name, f.generation) for f in input_files(made.baseline, made.updates)]
    assert found == [
        ("pubmed99n0001.xml.gz", 0),
        ("pubmed99n0002.xml.gz", 0),
        ("pubmed99n0003.xml.gz", 1),
        ("pubmed99n0004.xml.gz", 2),
    ]


def test_a_stray_file_is_named_not_skipped(tmp_path: Path) -> None:
    made = generate_baseline(tmp_path, 4, files=1, updates=0)
    (made.baseline / "notes.txt").write_text("hello")
    with pytest.raises(ParseError) as error:
        input_files(made.baseline)
    assert error.value.message == (
        f"{made.baseline / 'notes.txt'}: not a PubMed baseline or update file (expected "
        "pubmedNNnNNNN.xml.gz, .xml, or its .md5)"
    )


def test_an_empty_folder_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ParseError) as error:
        input_files(tmp_path)
    assert (
        error.value.message == f"the PubMed files folder {tmp_path} holds no .xml.gz or .xml file"
    )


def test_the_md5_beside_a_file_is_checked(tmp_path: Path) -> None:
    path = _gz(
        tmp_path / "pubmed99n0001.xml.gz",
        f"<PubmedArticleSet>{article_xml(99_500_001)}</PubmedArticleSet>",
    )
    digest = hashlib.md5(path.read_bytes(), usedforsecurity=False).hexdigest()
    md5 = tmp_path / "pubmed99n0001.xml.gz.md5"
    md5.write_text(f"MD5(pubmed99n0001.xml.gz)= {digest}\n")
    assert [r.record_id for r in load_file(path).records] == ["pmid:99500001"]
    md5.write_text(f"MD5(pubmed99n0001.xml.gz)= {'0' * 32}\n")
    with pytest.raises(ParseError) as error:
        load_file(path)
    assert error.value.message == (
        f"pubmed99n0001.xml.gz: its md5 is {digest}, its .md5 file says {'0' * 32}"
    )


def test_not_a_pubmed_file_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(ParseError) as error:
        read_file("pubmed99n0001.xml", b"<eSearchResult/>")
    assert (
        error.value.message
        == "pubmed99n0001.xml: expected a PubmedArticleSet but got <eSearchResult>"
    )


def test_a_build_over_the_files_withdraws_what_an_update_deletes(generated: Generated) -> None:
    """The folder source in a lineage of two builds: the deletion is positive evidence."""
    folder = generated.baseline.parent.parent / "again"
    folder.mkdir()
    (folder / "in").symlink_to(generated.baseline.parent)
    build(write_spec(folder, "again", updates=False), parent=False)
    second = build(write_spec(folder, "again", updates=True), parent=True)
    con = duckdb.connect(str(second), read_only=True)
    try:
        withdrawn = con.execute("SELECT record_id FROM record_state WHERE withdrawn").fetchall()
        sources = con.execute(
            "SELECT source, status FROM sources WHERE source = 'pubmed'"
        ).fetchall()
    finally:
        con.close()
    assert withdrawn == [(generated.deleted[0],)]
    assert sources == [("pubmed", "ok")]


def test_baseline_cannot_be_combined_with_queries(tmp_path: Path) -> None:
    from pipeline.errors import SpecError
    from pipeline.snapshot.spec import load_spec

    spec = tmp_path / "x.toml"
    spec.write_text('name = "x"\n[pubmed]\nbaseline = "b"\nids = ["1"]\n')
    with pytest.raises(SpecError, match="baseline cannot be combined with queries or ids"):
        load_spec(spec)
