"""Trust before use: a snapshot is read only once its file and its manifest check out.

Every command that reads a snapshot — ``audit``, ``search``, ``cite``, ``snapshot info | diff |
export | rebuild | backfill``, a build's parent, ``site build`` — goes through
:func:`trust_snapshot`, which runs these checks in order (each a small function that says what
it saw and what it expected)::

    manifest   the manifest beside the file exists and is valid
    file       the file is the one the manifest names
    digest     the file's sha256 and size are those the manifest records
    seal       the manifest's HMAC seal verifies under a key of the policy's keyrings

The first failure raises :class:`~pipeline.errors.TamperedSnapshotError` (exit 1), one line
naming the file and the check; ``snapshot verify`` runs them all and shows each
(:func:`run_checks`). The digest binds the file to the manifest; the seal binds the manifest
to the key, so replacing both the file and its manifest is detected by whoever holds the key.

A seal verifies as

* ``sealed`` — under a key of the installation's keyring (current or retired);
* ``demo`` — under the public demo key, accepted only in demo mode (``--demo-key``): anyone
  can make such a seal, so it proves nothing and every output made with it says so;
* ``unchecked`` — there is no key here to check it with: allowed only by a policy that does
  not require the seal (the read-only inspection commands ``snapshot info | list | diff |
  export``, which say so on stderr); every command that issues or judges citations requires it.

Digests come from the verified-digest cache when one is given
(:mod:`pipeline.snapshot.digests`, which documents what it trusts).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from audit.keys import DEMO_FINGERPRINT, Keyring
from pipeline.errors import SnapshotError, TamperedSnapshotError
from pipeline.snapshot.digests import DigestCache, Identity, file_identity
from pipeline.snapshot.locate import build_hint
from pipeline.snapshot.manifest import Manifest, manifest_path, read_sealed_manifest, sha256_file

if TYPE_CHECKING:
    import duckdb

    from audit.duckdb_corpus import DuckDBCorpus

SealStatus = Literal["sealed", "demo", "unchecked"]
CHECKS = ("manifest", "file", "digest", "seal")


@dataclass(frozen=True)
class SealPolicy:
    """Whose seals a command accepts, and whether it may go on without checking one.

    ``keyrings``: the installation's keyring (when there is a key here) and, in demo mode, the
    public demo keyring. ``required``: refuse a snapshot whose seal cannot be checked.
    """

    keyrings: tuple[Keyring, ...] = ()
    required: bool = True

    @classmethod
    def of(cls, *keyrings: Keyring | None, required: bool = True) -> SealPolicy:
        return cls(tuple(k for k in keyrings if k is not None), required)

    @property
    def accepts_demo(self) -> bool:
        return any(k.demo for k in self.keyrings)


@dataclass(frozen=True)
class Check:
    """The outcome of one check: passed (True), failed (False) or not run (None)."""

    name: str
    ok: bool | None
    detail: str
    advice: str | None = None


@dataclass(frozen=True)
class TrustedSnapshot:
    """A snapshot whose checks passed: what was checked, and the file's identity then."""

    path: Path
    manifest: Manifest
    sha256: str
    seal: SealStatus
    seal_key: str | None  # fingerprint of the key that sealed the manifest
    identity: Identity

    def corpus(self) -> DuckDBCorpus:
        """The audit's read-only corpus over this snapshot (its digest is not computed again)."""
        from audit.duckdb_corpus import DuckDBCorpus

        corpus = DuckDBCorpus(self.path, sha256=self.sha256)
        try:
            self.still_unchanged()
        except TamperedSnapshotError:
            corpus.close()
            raise
        return corpus

    def search_connection(self) -> duckdb.DuckDBPyConnection:
        """A read-only connection for search and cite (``search.open_snapshot``)."""
        from pipeline.snapshot.search import open_snapshot

        con = open_snapshot(self.path)
        try:
            self.still_unchanged()
        except TamperedSnapshotError:
            con.close()
            raise
        return con

    def still_unchanged(
        self,
        *,
        since: str = "while it was being opened",
        advice: str = "run the command again once nothing is writing the file",
    ) -> None:
        """Refuse a file that changed since it was checked (call after opening it).

        The default wording fits a one-shot command, which checks right after opening; a
        long-running caller (``citeseal serve``) says when it trusted the file and what helps
        instead (``since``, ``advice``): there, running the call again never does."""
        try:
            now = file_identity(self.path)
        except OSError:
            now = None
        if now != self.identity:
            raise TamperedSnapshotError(
                f"snapshot {self.path.name} changed {since}",  # a name: an MCP server
                # sends this message to the model, which has no business with local paths
                advice=advice,
            )


@dataclass
class _State:
    """What the checks learned so far (each check reads what the ones before it found)."""

    path: Path
    policy: SealPolicy
    digest_of: Callable[[Path], str]
    manifest: Manifest | None = None
    message: bytes = b""
    sha256: str = ""
    identity: Identity | None = None
    seal: SealStatus = "unchecked"


def _check_manifest(state: _State) -> Check:
    advice = "restore the manifest from where the snapshot came from, or rebuild it"
    expected = manifest_path(state.path)
    if not expected.is_file():
        return Check("manifest", False, f"its manifest {expected.name} is missing", advice)
    try:
        state.manifest, state.message = read_sealed_manifest(state.path)
    except SnapshotError as error:
        return Check("manifest", False, error.message, advice)
    return Check("manifest", True, expected.name)


def _check_file(state: _State) -> Check:
    assert state.manifest is not None
    if state.path.name != state.manifest.file:
        return Check(
            "file",
            False,
            f"the file is named {state.path.name}, its manifest is for {state.manifest.file}",
            "a snapshot keeps the name it was built with",
        )
    return Check("file", True, f"the manifest is for {state.manifest.file}")


def _check_digest(state: _State) -> Check:
    manifest = state.manifest
    assert manifest is not None
    state.identity = file_identity(state.path)
    size = state.identity[2]
    if size != manifest.size:
        return Check(
            "digest",
            False,
            f"the file is {size:,} bytes, its manifest says {manifest.size:,}",
            "the file was changed after it was built; restore a copy or rebuild it",
        )
    state.sha256 = state.digest_of(state.path)
    if state.sha256 != manifest.sha256:
        return Check(
            "digest",
            False,
            f"the file's sha256 is {state.sha256}, its manifest says {manifest.sha256}",
            "the file was changed after it was built; restore a copy or rebuild it",
        )
    return Check("digest", True, f"sha256 {state.sha256} ({size:,} bytes) as in the manifest")


def _check_seal(state: _State) -> Check:
    manifest, policy = state.manifest, state.policy
    assert manifest is not None
    seal = manifest.seal
    if seal is None:
        return Check(
            "seal",
            False,
            "its manifest carries no seal (written before citeseal sealed manifests, or the "
            "seal was removed)",
            "if you trust this file, seal it with your key: citeseal snapshot seal PATH",
        )
    for keyring in policy.keyrings:
        if keyring.seal_verifies(state.message, seal.key, seal.mac):
            state.seal = "demo" if keyring.demo else "sealed"
            what = "the public demo key (demo mode: proves nothing)" if keyring.demo else "key"
            return Check("seal", True, f"sealed with {what} {seal.key}")
    if seal.key == DEMO_FINGERPRINT and not policy.accepts_demo:
        return Check(
            "seal",
            False,
            f"its manifest is sealed with the public demo key {seal.key}, which anyone can use",
            "demo snapshots are read only in demo mode (--demo-key)",
        )
    if any(k.holds(seal.key) for k in policy.keyrings):
        return Check(
            "seal",
            False,
            f"its manifest was changed after it was sealed (the seal under key {seal.key} "
            "does not verify)",
            "restore the manifest from where the snapshot came from, or rebuild the snapshot",
        )
    if not policy.keyrings:
        detail = f"no key here to check its seal (sealed with key {seal.key})"
        if not policy.required:
            return Check("seal", None, f"not checked: {detail}")
        return Check(
            "seal",
            False,
            detail,
            "set CITESEAL_KEY (or CITESEAL_KEY_FILE) to the key that built it",
        )
    held = ", ".join(k.fingerprint for k in policy.keyrings)
    return Check(
        "seal",
        False,
        f"its manifest is sealed with key {seal.key}, which this installation does not hold "
        f"(keys here: {held})",
        "set CITESEAL_KEY (or CITESEAL_KEY_FILE) to the key that built it",
    )


_STEPS: tuple[Callable[[_State], Check], ...] = (
    _check_manifest,
    _check_file,
    _check_digest,
    _check_seal,
)


def _run(
    path: Path, policy: SealPolicy, digests: DigestCache | None, *, stop: bool
) -> tuple[list[Check], _State]:
    if not path.is_file():
        raise SnapshotError(
            f"snapshot {path} does not exist",
            advice=build_hint(),
        )
    state = _State(path, policy, digests.digest if digests is not None else sha256_file)
    checks: list[Check] = []
    for step in _STEPS:
        if state.manifest is None and step is not _check_manifest:
            checks.append(Check(_name(step), None, "not run: there is no valid manifest"))
            continue
        check = step(state)
        checks.append(check)
        if stop and check.ok is False:
            break
    return checks, state


def _name(step: Callable[[_State], Check]) -> str:
    return step.__name__.removeprefix("_check_")


def run_checks(
    path: Path, policy: SealPolicy, digests: DigestCache | None = None
) -> tuple[list[Check], Manifest | None]:
    """Every check of ``path`` (see the module docstring), failed or not, in order, and the
    manifest when it could be read.

    The seal is checked even when the digest failed, so ``snapshot verify`` tells an edited
    file (digest fails, seal holds) from a replaced manifest (the seal fails)."""
    checks, state = _run(path, policy, digests, stop=False)
    return checks, state.manifest


def trust_snapshot(
    path: Path,
    policy: SealPolicy,
    digests: DigestCache | None = None,
    *,
    what: str = "snapshot",
) -> TrustedSnapshot:
    """``path`` checked against its manifest and the manifest against its seal; raises
    :class:`~pipeline.errors.TamperedSnapshotError` on the first check that fails (its message
    calls the file ``what``: "parent snapshot" for a build's parent)."""
    checks, state = _run(path, policy, digests, stop=True)
    refuse(path, checks, what=what)
    assert state.manifest is not None and state.identity is not None
    seal = state.manifest.seal
    return TrustedSnapshot(
        path=path,
        manifest=state.manifest,
        sha256=state.sha256,
        seal=state.seal,
        seal_key=seal.key if seal is not None else None,
        identity=state.identity,
    )


def refuse(path: Path, checks: Sequence[Check], *, what: str = "snapshot") -> None:
    """Raise for the first failed check, naming the file and the check."""
    for check in checks:
        if check.ok is False:
            raise TamperedSnapshotError(
                f"{what} {path} failed its {check.name} check: {check.detail}",
                advice=check.advice,
            )
