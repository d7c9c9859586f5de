"""Snapshot pages: a snapshot whose harvest had failed requests says it is partial."""

from __future__ import annotations

from pathlib import Path

import duckdb

from pipeline.site.build import build_site
from pipeline.snapshot.manifest import read_manifest, sealed_with, sha256_file, write_manifest
from tests.conftest import TEST_KEYRING, TRUST
from tests.pipeline.site.factory import make_inputs

EPOCH = {"SOURCE_DATE_EPOCH": "1750000000"}


def make_partial(path: Path) -> None:
    """Turn a factory snapshot into one whose clinicaltrials harvest failed once."""
    con = duckdb.connect(str(path))
    con.execute(
        "UPDATE sources SET status = 'partial', failed_requests = 1, "
        "detail = 'fetch: GET clinicaltrials.gov/api/v2/studies failed: HTTP 503' "
        "WHERE source = 'clinicaltrials'"
    )
    con.close()
    changed = {"sha256": sha256_file(path), "size": path.stat().st_size}
    manifest = read_manifest(path).model_copy(update={**changed, "partial": True, "carried": 2})
    write_manifest(path, sealed_with(manifest, TEST_KEYRING))  # as its build would have sealed it


def test_a_partial_snapshot_says_so_on_its_page_and_in_the_listing(tmp_path: Path) -> None:
    reports, snapshots = make_inputs(tmp_path / "in", reports=1, hostile=False)
    make_partial(snapshots / "demo" / "demo-20250602.duckdb")
    out = tmp_path / "public"
    build_site(reports, snapshots, out, env=EPOCH, trust=TRUST)
    page = (out / "snapshots" / "demo-20250602.html").read_text(encoding="utf-8")
    assert (
        '<p class="notice" role="note"><strong>Partial snapshot.</strong> Requests of its harvest '
        "failed: 1 failed request (clinicaltrials partial); 2 records kept their parent state. "
        "The records they concerned are as the parent snapshot had them (no new version, nothing "
        "withdrawn).</p>"
    ) in page
    complete = (out / "snapshots" / "demo-20250115.html").read_text(encoding="utf-8")
    assert "Partial snapshot." not in complete
    listing = (out / "snapshots.html").read_text(encoding="utf-8")
    assert listing.count("<strong>(partial)</strong>") == 1
    assert "demo/demo-20250602.duckdb</a> <strong>(newest)</strong> <strong>(partial)</strong>" in (
        listing
    )
