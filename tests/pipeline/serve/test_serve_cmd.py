"""``citeseal serve`` launched the way hosts launch it: a subprocess speaking stdio."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import LATEST_PROTOCOL_VERSION

from audit.handles import mint, parse_handle, parse_locator, verify
from audit.keys import Keyring, create_key_file, read_key_file
from pipeline.snapshot.manifest import manifest_path
from tests.audit.planted import make_corpus, write_snapshot
from tests.conftest import TEST_KEY_HEX
from tests.pipeline.serve.conftest import DEMO
from tests.sealing import seal_snapshot

CITESEAL = [sys.executable, "-c", "from pipeline.cli import main; main()"]


def env(data_dir: Path) -> dict[str, str]:
    """The test key (it sealed the demo pair) and a private data dir; handles: --demo-key."""
    return {**os.environ, "CITESEAL_KEY": TEST_KEY_HEX, "CITESEAL_DATA_DIR": str(data_dir)}


@pytest.mark.anyio
async def test_stdio_server_lists_tools_and_answers_calls(
    demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    errlog = (tmp_path / "stderr.txt").open("w+", encoding="utf-8")
    params = StdioServerParameters(
        command=CITESEAL[0],
        args=[*CITESEAL[1:], "serve", "--snapshot", str(demo_pair[1].parent), "--demo-key"],
        env=env(tmp_path),
        cwd=str(tmp_path),
    )
    with errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            found = await client.call_tool("search_literature", {"query": "zentravir", "limit": 2})
            info = await client.call_tool("snapshot_info", {})
        errlog.seek(0)
        stderr = errlog.read()
    assert {"search_literature", "fetch_passages", "resolve_handles", "audit_answer"} <= tools
    assert not found.is_error and isinstance(found.structured_content, dict)
    hits = found.structured_content["results"]
    assert len(hits) == 2 and all(verify(DEMO, parse_handle(h["handle"])) for h in hits)
    assert not info.is_error and isinstance(info.structured_content, dict)
    assert info.structured_content["identity"]["file"] == demo_pair[1].name
    manifest_id = info.structured_content["identity"]["snapshot_id"]
    assert stderr.startswith(
        f"citeseal serve: demo {manifest_id} on stdio (handles minted with the PUBLIC demo key)\n"
    )


def test_a_tampered_snapshot_is_refused_before_the_server_starts(
    demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    path = tmp_path / demo_pair[1].name
    shutil.copyfile(demo_pair[1], path)
    shutil.copyfile(manifest_path(demo_pair[1]), manifest_path(path))
    with path.open("ab") as stream:
        stream.write(b"\0")
    done = subprocess.run(
        [*CITESEAL, "serve", "--snapshot", str(path), "--demo-key"],
        capture_output=True,
        text=True,
        check=False,
        env=env(tmp_path),
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    size = path.stat().st_size
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"error: snapshot {path} failed its digest check: the file is {size:,} bytes, its "
        f"manifest says {size - 1:,}\n"
        "hint: the file was changed after it was built; restore a copy or rebuild it\n"
    )


def test_a_snapshot_sealed_with_a_key_not_held_here_is_refused(
    demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    """Without a key that sealed it, the snapshot is refused; nothing is served."""
    done = subprocess.run(
        [*CITESEAL, "serve", "--snapshot", str(demo_pair[1])],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "CITESEAL_DATA_DIR": str(tmp_path)},
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (1, "")
    [note, error, hint] = done.stderr.splitlines()  # a fresh machine: serve made its own key
    assert note.startswith(f"note: created key file {tmp_path / 'key.json'} (key id ")
    assert error.startswith(
        f"error: snapshot {demo_pair[1]} failed its seal check: its manifest is sealed with key "
    )
    assert hint == "hint: set CITESEAL_KEY (or CITESEAL_KEY_FILE) to the key that built it"


def _serve(snapshot: Path, data_dir: Path) -> subprocess.CompletedProcess[str]:
    """``citeseal serve`` on a machine with no key configured (no CITESEAL_KEY, no demo)."""
    bare = {k: v for k, v in os.environ.items() if not k.startswith("CITESEAL_")}
    return subprocess.run(
        [*CITESEAL, "serve", "--snapshot", str(snapshot)],
        capture_output=True,
        text=True,
        check=False,
        env={**bare, "CITESEAL_DATA_DIR": str(data_dir)},
        stdin=subprocess.DEVNULL,
        timeout=60,
    )


def test_the_first_serve_on_a_fresh_machine_creates_a_private_key_and_says_where(
    tmp_path: Path,
) -> None:
    key_file = tmp_path / "data" / "key.json"
    snapshot = tmp_path / "planted.duckdb"
    write_snapshot(make_corpus(), snapshot)  # sealed with a key this machine does not hold
    first = _serve(snapshot, tmp_path / "data")
    created = read_key_file(key_file)
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert created.fingerprint != Keyring.demo_keyring().fingerprint  # never the demo key
    [note, error, _hint] = first.stderr.splitlines()
    assert note == f"note: created key file {key_file} (key id {created.fingerprint})"
    assert error.startswith(f"error: snapshot {snapshot} failed its seal check: ")
    again = _serve(snapshot, tmp_path / "data")
    assert (again.returncode, again.stderr.splitlines()[0]) == (1, error)  # no second note
    assert read_key_file(key_file).fingerprint == created.fingerprint


@pytest.mark.anyio
async def test_serve_mints_with_the_key_it_created(
    demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    data = tmp_path / "data"
    key_file = data / "key.json"
    create_key_file(key_file)  # what the first serve made (the test above)
    keyring = read_key_file(key_file)
    snapshot = tmp_path / "demo" / demo_pair[0].name
    snapshot.parent.mkdir()
    shutil.copyfile(demo_pair[0], snapshot)
    seal_snapshot(snapshot, keyring, name="demo")  # a snapshot this installation built
    bare = {k: v for k, v in os.environ.items() if not k.startswith("CITESEAL_")}
    params = StdioServerParameters(
        command=CITESEAL[0],
        args=[*CITESEAL[1:], "serve", "--snapshot", str(snapshot)],
        env={**bare, "CITESEAL_DATA_DIR": str(data)},
        cwd=str(tmp_path),
    )
    errlog = (tmp_path / "stderr.txt").open("w+", encoding="utf-8")
    with errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            found = await client.call_tool("search_literature", {"query": "zentravir", "limit": 1})
        errlog.seek(0)
        stderr = errlog.read()
    assert not found.is_error and isinstance(found.structured_content, dict)
    [hit] = found.structured_content["results"]
    assert verify(keyring, parse_handle(hit["handle"]))
    assert not verify(Keyring.demo_keyring(), parse_handle(hit["handle"]))
    assert stderr == f"citeseal serve: demo {snapshot.stem} on stdio\n"


def test_serve_is_a_registered_command() -> None:
    assert shutil.which(CITESEAL[0])
    done = subprocess.run(
        [*CITESEAL, "serve", "--help"], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "--snapshot" in done.stdout and "--demo-key" in done.stdout


def test_every_request_read_before_eof_is_answered_before_a_clean_exit(
    demo_pair: tuple[Path, Path], tmp_path: Path
) -> None:
    handle = mint(DEMO, parse_locator("pmid:99000001/abstract.1"))
    opening = [
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": LATEST_PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "probe", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    calls = [
        {
            "jsonrpc": "2.0",
            "id": number,
            "method": "tools/call",
            "params": {
                "name": "audit_answer",
                "arguments": {"answer": f"Claim {number} [{handle}]."},
            },
        }
        for number in range(1, 7)
    ]
    done = subprocess.run(
        [*CITESEAL, "serve", "--snapshot", str(demo_pair[1]), "--demo-key"],
        input="".join(json.dumps(message) + "\n" for message in [*opening, *calls]),
        env=env(tmp_path),
        cwd=str(tmp_path),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    answers = {message["id"]: message for message in map(json.loads, done.stdout.splitlines())}
    assert done.returncode == 0, done.stderr
    assert sorted(answers) == [0, 1, 2, 3, 4, 5, 6]
    for number in range(1, 7):
        result = answers[number]["result"]
        assert result["isError"] is False
        assert result["structuredContent"]["verdict"] == "pass"
