"""The site swap: a ``citeseal site build`` killed with SIGKILL at any point — while writing
pages, just before the swap, just after it, between the two renames of the fallback, at
random moments — leaves a complete site at ``--out`` (or, in the fallback, the previous one
beside it), and the rerun converges to the new site and removes every leftover."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from audit.errors import InputError
from pipeline.site import swap
from pipeline.site.build import build_site
from tests.conftest import ROOT, TEST_KEY_HEX, TRUST
from tests.pipeline.site.factory import make_inputs

OLD = {"SOURCE_DATE_EPOCH": "1750000000"}  # the previous site
NEW = {"SOURCE_DATE_EPOCH": "1760000000"}  # the build that is killed: every page differs

# Runs the real CLI entry point; the named step pauses (after writing a "ready" file) so the
# test can kill the process exactly there. The steps are the swap module's own functions.
DRIVER = """
import os, sys, time
from pathlib import Path
from pipeline.site import swap

point, ready = os.environ["PAUSE_AT"], Path(os.environ["PAUSE_READY"])

def pause(name):
    if name == point:
        ready.write_text(name)
        time.sleep(120)

real_exchange, real_install, real_retire = swap.exchange, swap._install, swap._retire

def exchange(first, second):
    pause("before-swap")
    done = False if os.environ.get("NO_EXCHANGE") else real_exchange(first, second)
    if done:
        pause("after-swap")
    return done

def retire(out):
    retired = real_retire(out)
    pause("between-renames")
    return retired

real_write = Path.write_text
written = []

def write_text(self, *args, **kwargs):
    if ".build-" in str(self):  # a page of the new site, in its staging folder
        written.append(self)
        if len(written) == 3:
            pause("while-writing")
    return real_write(self, *args, **kwargs)

swap.exchange, swap._retire, Path.write_text = exchange, retire, write_text
from pipeline.cli import main
sys.argv = ["citeseal", *sys.argv[1:]]
main()
"""


def tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def leftovers(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict, dict]:
    """Inputs, and the previous and the new site as built undisturbed (byte for byte)."""
    root = tmp_path_factory.mktemp("swap")
    reports, snapshots = make_inputs(root / "in", reports=1, hostile=False)
    build_site(reports, snapshots, root / "old", env=OLD, trust=TRUST)
    build_site(reports, snapshots, root / "new", env=NEW, trust=TRUST)
    return reports, snapshots, tree(root / "old"), tree(root / "new")


CLI = (sys.executable, "-c", "from pipeline.cli import main; main()")


def command(reports: Path, snapshots: Path, out: Path) -> list[str]:
    folders = ("--reports", str(reports), "--snapshots", str(snapshots), "--out", str(out))
    return ["site", "build", *folders]


def environment(extra: dict[str, str]) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "CITESEAL_KEY": TEST_KEY_HEX, **extra}


def rebuild(reports: Path, snapshots: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *command(reports, snapshots, out)],
        capture_output=True,
        text=True,
        check=False,
        env=environment(NEW),
    )


def start_paused(
    tmp_path: Path, reports: Path, snapshots: Path, out: Path, point: str, **extra: str
) -> subprocess.Popen[str]:
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER, encoding="utf-8")
    ready = tmp_path / f"ready-{point}"
    process = subprocess.Popen(
        [sys.executable, str(driver), *command(reports, snapshots, out)],
        env=environment({**NEW, "PAUSE_AT": point, "PAUSE_READY": str(ready), **extra}),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not ready.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"the build never reached {point}: {process.communicate()[1]}")
        time.sleep(0.02)
    return process


def kill(process: subprocess.Popen[str]) -> None:
    os.kill(process.pid, signal.SIGKILL)
    process.communicate(timeout=30)  # reaps it and closes its pipe
    assert process.returncode == -signal.SIGKILL


@pytest.fixture
def previous(tmp_path: Path, sites: tuple[Path, Path, dict, dict]) -> Path:
    """``tmp_path/site/public`` holding the previous site."""
    reports, snapshots, _, _ = sites
    out = tmp_path / "site" / "public"
    build_site(reports, snapshots, out, env=OLD, trust=TRUST)
    return out


@pytest.mark.parametrize(
    ("point", "after"),
    [
        ("while-writing", "old"),  # two pages of the new site written
        ("before-swap", "old"),  # every page written, nothing swapped yet
        ("after-swap", "new"),  # swapped in one step; the previous site not yet deleted
    ],
)
def test_a_build_killed_at_the_swap_leaves_a_complete_site_and_the_rerun_cleans_up(
    tmp_path: Path,
    sites: tuple[Path, Path, dict, dict],
    previous: Path,
    point: str,
    after: str,
) -> None:
    reports, snapshots, old, new = sites
    if point == "after-swap" and not exchange_works(tmp_path):
        pytest.skip("this system or filesystem cannot exchange two folders")
    kill(start_paused(tmp_path, reports, snapshots, previous, point))
    assert tree(previous) == (old if after == "old" else new)
    assert leftovers(previous) != []  # the killed build's staging (or the previous site)
    done = rebuild(reports, snapshots, previous)
    assert done.returncode == 0, done.stderr
    assert tree(previous) == new
    assert leftovers(previous) == []


def test_a_build_killed_between_the_fallback_renames_is_put_back_by_the_next_build(
    tmp_path: Path, sites: tuple[Path, Path, dict, dict], previous: Path
) -> None:
    """Where the system cannot exchange two folders, the fallback's two renames leave a moment
    without ``--out``; the previous site is then complete beside it and is put back first."""
    reports, snapshots, old, new = sites
    kill(start_paused(tmp_path, reports, snapshots, previous, "between-renames", NO_EXCHANGE="1"))
    assert not previous.exists()
    (kept,) = [p for p in previous.parent.iterdir() if p.name.startswith(".public.old-")]
    assert tree(kept) == old
    swap.recover(previous)  # what the next build does first
    assert tree(previous) == old
    assert [p for p in leftovers(previous) if p.startswith(".public.old-")] == []
    done = rebuild(reports, snapshots, previous)
    assert done.returncode == 0, done.stderr
    assert (tree(previous), leftovers(previous)) == (new, [])


def test_a_build_killed_at_random_moments_always_leaves_a_complete_site(
    tmp_path: Path, sites: tuple[Path, Path, dict, dict], previous: Path
) -> None:
    reports, snapshots, old, new = sites
    started = time.monotonic()
    done = rebuild(reports, snapshots, tmp_path / "timing" / "public")
    duration = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    seed = random.randrange(1 << 30)
    chance = random.Random(seed)
    outcomes = []
    for _ in range(5):
        process = subprocess.Popen(
            [*CLI, *command(reports, snapshots, previous)],
            env=environment(NEW),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        # most of a build is starting Python and reading inputs: aim at its second half
        time.sleep(chance.uniform(duration * 0.3, duration * 1.1))
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        current = tree(previous)
        assert current in (old, new), f"seed {seed}: an incomplete site after a kill"
        outcomes.append("old" if current == old else "new")
        if current == new:  # start the next round from the previous site again
            build_site(reports, snapshots, previous, env=OLD, trust=TRUST)
    done = rebuild(reports, snapshots, previous)
    assert done.returncode == 0, done.stderr
    assert (tree(previous), leftovers(previous)) == (new, []), f"seed {seed}, {outcomes}"


def test_a_second_build_waits_for_no_one_and_says_another_is_running(
    tmp_path: Path, sites: tuple[Path, Path, dict, dict], previous: Path
) -> None:
    reports, snapshots, old, _ = sites
    paused = start_paused(tmp_path, reports, snapshots, previous, "before-swap")
    try:
        done = rebuild(reports, snapshots, previous)
    finally:
        kill(paused)
    assert done.returncode == 2
    assert done.stderr == (
        f"error: another citeseal site build is writing into {previous.parent}\n"
        "hint: wait for it to end, then build again\n"
    )
    assert tree(previous) == old


def exchange_works(folder: Path) -> bool:
    """Whether two folders in ``folder`` can be exchanged (checked on two of them)."""
    first, second = folder / "probe-a", folder / "probe-b"
    first.mkdir()
    second.mkdir()
    (first / "x").write_text("first", encoding="utf-8")
    (second / "x").write_text("second", encoding="utf-8")
    done = swap.exchange(first, second)
    if done:
        assert (first / "x").read_text(encoding="utf-8") == "second"
        assert (second / "x").read_text(encoding="utf-8") == "first"
    for probe in (first, second):
        shutil.rmtree(probe)
    return done


def test_exchange_swaps_two_folders_in_one_step(tmp_path: Path) -> None:
    if sys.platform == "linux":  # glibc's renameat2 on the filesystems tests run on
        assert exchange_works(tmp_path)
    else:
        pytest.skip("RENAME_EXCHANGE is Linux's")


def test_the_fallback_replaces_the_folder_with_two_renames(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(swap, "exchange", lambda first, second: False)
    out, staging = tmp_path / "public", tmp_path / ".public.build-x"
    out.mkdir()
    staging.mkdir()
    (staging / "index.html").write_text("new", encoding="utf-8")
    swap.replace_folder(staging, out)
    assert (out / "index.html").read_text(encoding="utf-8") == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["public"]


def test_recover_leaves_other_folders_alone(tmp_path: Path) -> None:
    out = tmp_path / "public"
    out.mkdir()
    for name in (".public.build-1", ".public.old-2", ".other.build-3", "public-copy"):
        (tmp_path / name).mkdir()
    swap.recover(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.build-3", "public", "public-copy"]


def test_a_failed_write_removes_its_staging(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sites: tuple[Path, Path, dict, dict]
) -> None:
    reports, snapshots, _, _ = sites
    out = tmp_path / "public"

    def broken(staging: Path, out: Path) -> None:
        raise InputError("disk full (simulated)")

    monkeypatch.setattr(swap, "replace_folder", broken)
    monkeypatch.setattr("pipeline.site.build.replace_folder", broken)
    with pytest.raises(InputError):
        build_site(reports, snapshots, out, env=NEW, trust=TRUST)
    assert list(tmp_path.iterdir()) == []


def test_a_symbolic_link_as_out_is_refused_and_breaks_nothing(
    tmp_path: Path, sites: tuple[Path, Path, dict, dict]
) -> None:
    reports, snapshots, _, _ = sites
    real = tmp_path / "real-site"
    build_site(reports, snapshots, real, env=OLD, trust=TRUST)
    link = tmp_path / "public"
    link.symlink_to(real)
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(InputError) as caught:
        build_site(reports, snapshots, link, env=NEW, trust=TRUST)
    assert caught.value.message == f"--out {link} is a symbolic link"
    assert caught.value.advice == f"give the folder it points to: --out {real}"
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    build_site(reports, snapshots, real, env=NEW, trust=TRUST)  # the real folder still builds
    assert link.resolve() == real and (real / "index.html").is_file()


def test_a_link_named_like_a_leftover_is_unlinked_never_followed(tmp_path: Path) -> None:
    out = tmp_path / "public"
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "keep.txt").write_text("not ours", encoding="utf-8")
    (tmp_path / f"{swap.staging_prefix(out)}x").symlink_to(precious)
    swap.recover(out)
    assert (precious / "keep.txt").read_text(encoding="utf-8") == "not ours"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["precious"]  # the link is gone
