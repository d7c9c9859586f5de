"""The GitHub Releases archive against a loopback stand-in of GitHub's REST API."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pipeline.archive.releases import MAX_ASSET_BYTES, ReleasesArchive, download_urls, tag_of
from pipeline.archive.transfer import choose, pull, push
from pipeline.errors import ArchiveError, TamperedSnapshotError
from pipeline.http import HttpClient
from pipeline.settings import Settings
from pipeline.snapshot.manifest import sha256_file
from tests.conftest import ROOT, TEST_KEY_HEX, TRUST
from tests.pipeline.archive.github_standin import TOKEN, GitHub, github_standin

REPO = "octo/evidence"


@pytest.fixture
def hub() -> Iterator[GitHub]:
    with github_standin() as hub:
        yield hub


def archive_of(hub: GitHub, *, token: str = TOKEN, attempts: int = 2) -> ReleasesArchive:
    """The archive with an unpaced client (the stand-in is local) and quick retries."""
    client = HttpClient(
        Settings(max_attempts=attempts), rates={"127.0.0.1": 0.0}, sleep=lambda _: None
    )
    return ReleasesArchive(REPO, client, token=token, api=hub.api)


def files_of(hub: GitHub) -> dict[str, list[str]]:
    return {r.tag_name: sorted(a.name for a in r.assets) for r in hub.releases if not r.draft}


def test_a_push_is_one_published_release_with_three_assets_and_pulls_back_checked(
    hub: GitHub, demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    archive = archive_of(hub)
    second = demo_pair[1]
    done = push(second, archive, TRUST)
    assert done.status == "pushed"
    assert files_of(hub) == {
        tag_of(second.stem): [
            f"{second.stem}.duckdb",
            f"{second.stem}.manifest.json",
            f"{second.stem}.sha256",
        ]
    }
    assert push(second, archive, TRUST).status == "already archived"
    assert len(hub.releases) == 1
    [latest] = choose(archive, "demo", "latest")
    pulled = pull(latest, archive, tmp_path / "runner" / "demo", TRUST)
    assert sha256_file(pulled.path) == sha256_file(second)
    storage = [seen for seen in hub.seen if seen[1].startswith("/storage/")]
    assert len(storage) == 4  # the checksum (push, again), then the three assets of the pull
    assert not any(had_token for _, _, had_token in storage)  # never sent to another origin


def test_the_listing_follows_every_page_and_skips_drafts_and_other_corpora(
    hub: GitHub, demo_pair: tuple[Path, Path]
) -> None:
    hub.page_size = 1
    archive = archive_of(hub)
    for snapshot in demo_pair:
        push(snapshot, archive, TRUST)
    hub.releases[0].draft = True  # a push that never finished
    assert [i.snapshot_id for i in archive.list("demo")] == [demo_pair[1].stem]
    hub.releases[0].draft = False
    assert [i.snapshot_id for i in archive.list("demo")] == [p.stem for p in demo_pair]
    assert archive.list("trials") == []


def test_a_failed_upload_publishes_nothing_and_the_next_push_succeeds(
    hub: GitHub, demo_pair: tuple[Path, Path]
) -> None:
    archive = archive_of(hub, attempts=2)
    hub.faults[r"POST /uploads/.*"] = [502, 502]  # both attempts of the first upload
    with pytest.raises(ArchiveError) as caught:
        push(demo_pair[1], archive, TRUST)
    assert caught.value.message.startswith(
        f"cannot upload {demo_pair[1].stem}.sha256 to github:{REPO}: POST 127.0.0.1:"
    )
    assert hub.releases == []  # the draft was deleted: nothing half-published
    assert push(demo_pair[1], archive, TRUST).status == "pushed"
    assert list(files_of(hub)) == [tag_of(demo_pair[1].stem)]


def test_a_draft_left_by_an_interrupted_push_is_replaced(
    hub: GitHub, demo_pair: tuple[Path, Path]
) -> None:
    archive = archive_of(hub)
    hub.faults[r"PATCH /repos/octo/evidence/releases/\d+"] = [500, 500]  # publishing fails
    hub.faults[r"DELETE /repos/octo/evidence/releases/\d+"] = [500, 500]  # so does the cleanup
    with pytest.raises(ArchiveError):
        push(demo_pair[1], archive, TRUST)
    assert [r.draft for r in hub.releases] == [True]  # left behind, unlisted
    assert archive.list("demo") == []
    assert push(demo_pair[1], archive, TRUST).status == "pushed"
    assert [r.draft for r in hub.releases] == [False]


def test_a_corrupted_asset_is_refused_on_the_way_in(
    hub: GitHub, demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    archive = archive_of(hub)
    push(demo_pair[1], archive, TRUST)
    hub.corrupt.add(f"{demo_pair[1].stem}.duckdb")
    [latest] = choose(archive, "demo", "latest")
    runner = tmp_path / "runner" / "demo"
    with pytest.raises(TamperedSnapshotError) as caught:
        pull(latest, archive, runner, TRUST)
    assert caught.value.message.startswith(
        f"{latest.snapshot_id} from github:{REPO} failed its digest check: "
    )
    assert sorted(p.name for p in runner.iterdir()) == []


def test_an_archive_without_the_lineage_is_refused(hub: GitHub) -> None:
    with pytest.raises(ArchiveError) as caught:
        choose(archive_of(hub), "demo", "latest")
    assert caught.value.message == f"github:{REPO} holds no snapshot of corpus 'demo'"


def test_a_bad_token_is_a_one_line_error_that_does_not_quote_it(hub: GitHub) -> None:
    wrong = "ghs_not-the-right-token-0000"
    with pytest.raises(ArchiveError) as caught:
        archive_of(hub, token=wrong).list("demo")
    assert "HTTP 401" in caught.value.message and "Bad credentials" in caught.value.message
    assert wrong not in caught.value.message and "\n" not in caught.value.message


def test_a_snapshot_too_large_for_a_release_asset_is_refused_before_any_upload(
    hub: GitHub, demo_pair: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ReleasesArchive, "max_file_bytes", 1024)
    with pytest.raises(ArchiveError) as caught:
        push(demo_pair[1], archive_of(hub), TRUST)
    assert caught.value.message.endswith(f"github:{REPO} holds files of at most 0 GiB")
    assert caught.value.advice == (
        "archive it in a folder (--to PATH), or export it for Spark: "
        "citeseal snapshot export PATH --parquet DIR"
    )
    assert hub.releases == [] and not any(m == "POST" for m, _, _ in hub.seen)
    assert MAX_ASSET_BYTES == 2 * 1024**3  # GitHub's limit on one release asset


def test_the_public_download_addresses_of_a_snapshot() -> None:
    urls = download_urls(REPO, "demo-20250602T100000Z")
    base = f"https://github.com/{REPO}/releases"
    assert urls == {
        "release": f"{base}/tag/snapshot-demo-20250602T100000Z",
        "demo-20250602T100000Z.duckdb": f"{base}/download/snapshot-demo-20250602T100000Z/"
        "demo-20250602T100000Z.duckdb",
        "demo-20250602T100000Z.manifest.json": f"{base}/download/snapshot-demo-20250602T100000Z"
        "/demo-20250602T100000Z.manifest.json",
        "demo-20250602T100000Z.sha256": f"{base}/download/snapshot-demo-20250602T100000Z/"
        "demo-20250602T100000Z.sha256",
    }


def test_the_cli_pushes_to_and_pulls_from_github_without_printing_the_token(
    hub: GitHub, demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    env = {
        **os.environ,
        "CITESEAL_KEY": TEST_KEY_HEX,
        "GITHUB_TOKEN": TOKEN,
        "CITESEAL_GITHUB_API": hub.api,
    }

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", "from pipeline.cli import main; main()", *args],
            capture_output=True,
            text=True,
            check=False,
            env=env,
            cwd=ROOT,
        )

    pushed = cli("snapshot", "push", str(demo_pair[1]), "--to", f"github:{REPO}")
    assert pushed.returncode == 0, pushed.stderr
    assert pushed.stdout.startswith(f"pushed: {demo_pair[1].stem} → https://github.invalid/")
    pulled = cli("snapshot", "pull", "demo", "--from", f"github:{REPO}", "--into", str(tmp_path))
    assert pulled.returncode == 0, pulled.stderr
    assert (tmp_path / "demo" / demo_pair[1].name).is_file()
    hub.faults[r"GET /repos/octo/evidence/releases"] = [401] * 6
    refused = cli("snapshot", "pull", "demo", "--from", f"github:{REPO}", "--into", str(tmp_path))
    assert refused.returncode == 3
    for done in (pushed, pulled, refused):
        assert TOKEN not in done.stdout + done.stderr
    no_token = {k: v for k, v in env.items() if k not in ("GITHUB_TOKEN", "GH_TOKEN")}
    env.clear()
    env.update(no_token)
    missing = cli("snapshot", "pull", "demo", "--from", f"github:{REPO}")
    assert (missing.returncode, missing.stderr.splitlines()[0]) == (
        3,
        f"error: github:{REPO} needs a token",
    )
