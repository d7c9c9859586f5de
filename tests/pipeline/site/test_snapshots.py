"""Snapshot pages: a snapshot whose harvest had failed requests says it is partial."""

from __future__ import annotations

from pathlib import Path

import duckdb

from pipeline.site.build import build_site
from pipeline.snapshot.manifest import read_manifest, sealed_with, sha256_file, write_manifest
from tests.conftest import TEST_KEYRING, TRUST
from tests.pipeline.site.factory import make_inputs

EPOCH = {"SOURCE_DATE_EPOCH": "1750000000"}


def make_partial(path: Path, *, carried: int = 2) -> None:
    """Turn a factory snapshot into one whose clinicaltrials harvest failed once (``carried``:
    the records that kept their parent state)."""
    con = duckdb.connect(str(path))
    con.execute(
        "UPDATE sources SET status = 'partial', failed_requests = 1, "
        "detail = 'fetch: GET clinicaltrials.gov/api/v2/studies failed: HTTP 503' "
        "WHERE source = 'clinicaltrials'"
    )
    con.close()
    changed = {"sha256": sha256_file(path), "size": path.stat().st_size}
    update = {**changed, "partial": True, "carried": carried}
    manifest = read_manifest(path).model_copy(update=update)
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
        "A record of the parent snapshot that a failed request concerned is as the parent had it "
        "(no new version, not withdrawn); a new record it concerned is missing, or lacks what "
        "that request would have added (its retraction flags are unknown, or it has no "
        "annotations). Records whose requests were answered were harvested as usual, new "
        "versions and withdrawals on positive evidence included.</p>"
    ) in page
    complete = (out / "snapshots" / "demo-20250115.html").read_text(encoding="utf-8")
    assert "Partial snapshot." not in complete
    listing = (out / "snapshots.html").read_text(encoding="utf-8")
    assert listing.count("<strong>(partial)</strong>") == 1
    assert "demo/demo-20250602.duckdb</a> <strong>(newest)</strong> <strong>(partial)</strong>" in (
        listing
    )


def test_a_partial_first_snapshot_says_it_had_no_parent_state_to_keep(tmp_path: Path) -> None:
    reports, snapshots = make_inputs(tmp_path / "in", reports=1, hostile=False)
    make_partial(snapshots / "demo" / "demo-20250115.duckdb", carried=0)  # no parent
    out = tmp_path / "public"
    build_site(reports, snapshots, out, env=EPOCH, trust=TRUST)
    page = (out / "snapshots" / "demo-20250115.html").read_text(encoding="utf-8")
    assert (
        '<p class="notice" role="note"><strong>Partial snapshot.</strong> Requests of its harvest '
        "failed: 1 failed request (clinicaltrials partial). As the first snapshot of its "
        "lineage it has no earlier state to keep: a record a failed request concerned is missing "
        "from it, or lacks what that request would have added (its retraction flags are unknown, "
        "or it has no annotations).</p>"
    ) in page
    assert "as the parent had it" not in page
