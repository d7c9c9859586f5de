"""``citeseal check --online``: what the snapshot cannot place, looked up live and kept.

1. The snapshot answers first (offline, as without ``--online``).
2. What it did not place — identifiers it does not hold, titles of references it left
   unsettled — is asked of the registries (:mod:`pipeline.check_online.plan` has the chain)
   by building a *lookup snapshot* (:mod:`pipeline.check_online.lookup`): paced, retried,
   redacted, sealed and fingerprinted like every snapshot.
3. The check then runs on the chain snapshot → lookup snapshot
   (:class:`~audit.references.resolve.ChainResolver`), reading the lookup snapshot from its
   file, so ``citeseal check … --lookup FILE`` re-runs it offline with the same result.

A lookup that failed is ``unreachable`` (the reference ``unresolved``), never evidence; an
identifier is evidence of fabrication only when every registry asked answered without it and
no work of the reference's title exists (the check's rules, docs/references.md). URL inputs
are read by :mod:`pipeline.check_online.fetch`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from audit.keys import Keyring
from audit.references.check import LookupRef, check_document
from audit.references.model import ExtractedDocument
from audit.references.resolve import ChainResolver, Resolver, SnapshotResolver
from pipeline.check_online.lookup import FailedLookup, build_lookup, lookup_name, open_lookup
from pipeline.check_online.plan import plan
from pipeline.settings import Settings
from pipeline.snapshot.digests import DigestCache
from pipeline.snapshot.trust import SealPolicy


@dataclass
class Online:
    """The chain an online check (or its re-run) resolves through, and the lookup snapshot."""

    resolver: Resolver
    lookup: LookupRef | None = None
    failure: str | None = None  # why no lookup snapshot was written
    closers: list[object] = field(default_factory=list)

    def close(self) -> None:
        for closer in self.closers:
            closer.close()  # type: ignore[attr-defined]


def with_lookup(
    base: SnapshotResolver,
    path: Path,
    policy: SealPolicy,
    digests: DigestCache | None,
    shown: Callable[[Path], str] = str,
) -> Online:
    """The chain of an offline re-run: the snapshot, then the lookup snapshot at ``path``
    (``shown``: how the report names a path)."""
    opened = open_lookup(path, policy, digests, shown(path))
    return Online(ChainResolver([base, opened.resolver]), opened.ref, closers=[opened.resolver])


def go_online(
    documents: Sequence[ExtractedDocument],
    base: SnapshotResolver,
    *,
    folder: Path,
    keyring: Keyring,
    policy: SealPolicy,
    digests: DigestCache | None,
    settings: Settings,
    transport: httpx.BaseTransport | None = None,
    shown: Callable[[Path], str] = str,
) -> Online:
    """Look up what ``base`` cannot place (module docstring); ``folder``: the lookup
    snapshots' corpus folder."""
    first = []
    placed: set[tuple[str, str]] = set()
    for document in documents:
        keys = sorted({(i.scheme, i.value) for i in document.identifiers if i.valid})
        found = base.by_identifiers(keys) if keys else {}
        placed.update(k for k, lookup in found.items() if lookup.status == "matched")
        first.append((document, check_document(document, base).references))
    wanted = plan(first, placed)
    if not wanted:
        return Online(base)
    built = build_lookup(wanted, lookup_name(base.label), folder, keyring, settings, transport)
    if built.path is None:
        failed = FailedLookup(wanted, built.failure or "the lookup failed")
        return Online(ChainResolver([base, failed]), None, built.failure)
    return with_lookup(base, built.path, policy, digests, shown)
