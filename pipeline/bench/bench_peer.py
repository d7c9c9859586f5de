"""The peer side of ``make bench``'s side-by-side handle figures (Tekmeria 0.1.1, when installed).

The peer is never imported into this venv: it runs in its own interpreter, named by the
environment variable :data:`PEER_PYTHON_ENV` (e.g. ``/tmp/tek-venv/bin/python``, a scratch
venv outside the repository with ``tekmeria==0.1.1`` installed). :class:`Peer` starts
:data:`PEER_SCRIPT` there once, hands it the key and the handle strings (a file), and asks it
for one round at a time (one line on stdin), so the caller interleaves the peer's rounds with
its own. Each round answers one JSON line of rates per second: ``parse`` (its
``parse_handle`` of a string), ``verify`` (``HandleCodec.verify`` of a string: parse + HMAC)
and ``mint`` (``HandleCodec.issue`` of a parsed locator: its own API, locator in, string out).
The peer's check code is the same function (25 bits of HMAC-SHA256 of the locator text), so
both sides time the very same strings.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from types import TracebackType

PEER_PYTHON_ENV = "CITESEAL_BENCH_PEER_PYTHON"
PEER_NAME = "Tekmeria 0.1.1"

PEER_SCRIPT = """
import json, sys, time
from tekmeria.contract.handles import HandleCodec, parse_handle
codec = HandleCodec(bytes.fromhex(sys.argv[1]))
with open(sys.argv[2], encoding="utf-8") as lines:
    texts = [line.rstrip("\\n") for line in lines]
locators = [parse_handle(t)[0] for t in texts]
assert all(codec.verify(t) == l for t, l in zip(texts, locators))  # the same check codes
assert [codec.issue(l) for l in locators] == texts
def rate(step):
    start = time.perf_counter()
    step()
    return len(texts) / (time.perf_counter() - start)
print(json.dumps({"ready": len(texts)}), flush=True)
for _ in sys.stdin:
    print(json.dumps({
        "parse": rate(lambda: [parse_handle(t) for t in texts]),
        "verify": rate(lambda: [codec.verify(t) for t in texts]),
        "mint": rate(lambda: [codec.issue(l) for l in locators]),
    }), flush=True)
"""


class PeerUnavailable(Exception):
    """The peer is not configured or does not run (the bench prints the note and goes on)."""


def peer_python(environ: dict[str, str] | None = None) -> Path:
    """The peer's interpreter from :data:`PEER_PYTHON_ENV`; :class:`PeerUnavailable` when it
    is unset or names no file."""
    value = (os.environ if environ is None else environ).get(PEER_PYTHON_ENV, "").strip()
    if not value:
        raise PeerUnavailable(f"side by side skipped: set {PEER_PYTHON_ENV} to the peer's python")
    path = Path(value)
    if not path.is_file():
        raise PeerUnavailable(f"side by side skipped: {PEER_PYTHON_ENV}={value} is not a file")
    return path


class Peer:
    """The peer's timing script running in its own interpreter (close it, or use ``with``)."""

    def __init__(self, python: Path, key: bytes, handles_file: Path) -> None:
        self._process = subprocess.Popen(  # noqa: S603 (the configured interpreter, no shell)
            [str(python), "-c", PEER_SCRIPT, key.hex(), str(handles_file)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            self._answer()  # {"ready": n}: imported, and the check codes agree
        except PeerUnavailable:
            self.close()  # its pipes too
            raise

    def _answer(self) -> dict[str, float]:
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if not line:
            self._process.wait()
            error = self._process.stderr.read() if self._process.stderr else ""
            last = error.strip().splitlines()[-1] if error.strip() else "no output"
            raise PeerUnavailable(f"side by side skipped: the peer did not run ({last})")
        return json.loads(line)

    def round(self) -> dict[str, float]:
        """One round of the peer's rates (parse, verify, mint per second)."""
        assert self._process.stdin is not None
        self._process.stdin.write("\n")
        self._process.stdin.flush()
        return self._answer()

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        self._process.wait()
        for stream in (self._process.stdout, self._process.stderr):
            if stream is not None:
                stream.close()

    def __enter__(self) -> Peer:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
