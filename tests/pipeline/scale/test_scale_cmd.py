"""``citeseal scale`` commands: what a user sees on bad input (no Spark needed)."""

from __future__ import annotations

from pathlib import Path

from pipeline.scale.folder import MANIFEST_NAME
from pipeline.scale.generate import FIRST_PMID
from pipeline.sources.pubmed_files import input_files, load_file
from tests.cli import citeseal
from tests.conftest import TEST_KEY_HEX


def test_generate_writes_the_real_format_with_synthetic_ids(tmp_path: Path) -> None:
    done = citeseal("scale", "generate", str(tmp_path / "g"), "--records", "30", "--files", "2")
    assert done.returncode == 0, done.stderr
    assert "wrote 30 records in 2 files" in done.stdout
    files = input_files(tmp_path / "g" / "baseline", tmp_path / "g" / "updates")
    assert [f.name for f in files] == [
        "pubmed99n0001.xml.gz",
        "pubmed99n0002.xml.gz",
        "pubmed99n0003.xml.gz",
    ]
    pmids = [int(r.pmid or 0) for f in files for r in load_file(f.path).records]
    assert min(pmids) == FIRST_PMID and all(p > 99_000_000 for p in pmids)


def test_generate_refuses_an_existing_folder(tmp_path: Path) -> None:
    done = citeseal("scale", "generate", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: {tmp_path} exists: generate writes a new folder\n")


def test_ingest_of_a_missing_folder_is_one_line(tmp_path: Path) -> None:
    done = citeseal(
        "scale", "ingest", "--baseline", str(tmp_path / "nope"), "--out", str(tmp_path / "o")
    )
    assert done.returncode == 2
    assert done.stderr == f"error: the PubMed files folder {tmp_path / 'nope'} does not exist\n"
    assert not (tmp_path / "o").exists()


def test_ingest_never_writes_over_a_folder(tmp_path: Path) -> None:
    done = citeseal("scale", "ingest", "--baseline", str(tmp_path), "--out", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.startswith(
        f"error: {tmp_path} exists: a scale folder is written whole, never over another\n"
    )


def test_snapshot_of_a_folder_that_is_not_a_scale_folder(tmp_path: Path) -> None:
    env = {"CITESEAL_KEY": TEST_KEY_HEX, "CITESEAL_DATA_DIR": str(tmp_path / "data")}
    out = tmp_path / "s.duckdb"
    done = citeseal("scale", "snapshot", str(tmp_path), "--out", str(out), env=env)
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == (
        f"error: {tmp_path} holds no {MANIFEST_NAME}: not a complete scale folder"
    )
    assert not out.exists()


def test_snapshot_of_a_folder_whose_manifest_is_broken(tmp_path: Path) -> None:
    env = {"CITESEAL_KEY": TEST_KEY_HEX, "CITESEAL_DATA_DIR": str(tmp_path / "data")}
    (tmp_path / MANIFEST_NAME).write_text("{not json")
    done = citeseal(
        "scale", "snapshot", str(tmp_path), "--out", str(tmp_path / "s.duckdb"), env=env
    )
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: {tmp_path / MANIFEST_NAME} is not a scale manifest: ")


def test_ingest_without_a_java_says_so_in_one_line(tmp_path: Path) -> None:
    import os

    citeseal("scale", "generate", str(tmp_path / "g"), "--records", "3", "--files", "1")
    env = {**os.environ, "JAVA_HOME": str(tmp_path / "no-java")}
    args = ("--baseline", str(tmp_path / "g" / "baseline"), "--out", str(tmp_path / "o"))
    done = citeseal("scale", "ingest", *args, env=env)
    assert done.returncode == 2
    assert done.stderr == (
        f"error: citeseal scale cannot start Spark: JAVA_HOME={tmp_path / 'no-java'} holds no "
        "bin/java (unset it, or point it at a Java 17 or 21)\n"
    )
    assert not (tmp_path / "o").exists()
