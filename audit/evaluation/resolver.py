"""Reference look-ups answered from a world's facts (the data layer of the reference check).

:class:`WorldResolver` is the generated world's :class:`~audit.references.resolve.Resolver`, as
the snapshot resolver is a snapshot's: a DOI is found case-folded among the works' DOIs, a PMID,
PMCID or NCT number as the record id (``pmid:N``, ``pmcid:PMCN``, ``nct:NCT…``) or, for PMIDs
and PMCIDs, in the work's own field (a PubMed record's PMCID); a title finds
the works whose title is the same once case, accents, punctuation and spacing are set aside
(an exact look-up: the check still applies its own title rule to what is found). Each record is
given as its current version says, with its tri-state flags. No rule of the check is here.

:class:`DownResolver` answers every look-up ``unreachable`` (an outage): what the check must
then say is ``unresolved``, never a fabrication.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING

from audit.references.resolve import Key, Lookup, WorkRecord

if TYPE_CHECKING:
    from audit.evaluation.world import Rec, World


def _same_title(title: str) -> str:
    decomposed = unicodedata.normalize("NFKD", title.casefold())
    kept = "".join(c if c.isalnum() else " " for c in decomposed if not unicodedata.combining(c))
    return " ".join(kept.split())


def work_of(rec: Rec) -> WorkRecord | None:
    """The record as a registry holds it (None when the world holds no metadata for it)."""
    if rec.bib is None:
        return None
    scheme, _, ident = rec.record_id.partition(":")
    return WorkRecord(
        record_id=rec.record_id,
        source=rec.source,
        title=rec.bib.title,
        authors=rec.bib.authors,
        year=rec.bib.year,
        venue=None,
        doi=rec.bib.doi,
        pmid=rec.bib.pmid or (ident if scheme == "pmid" else None),
        pmcid=rec.bib.pmcid or (ident if scheme == "pmcid" else None),
        publication_types=(),
        content_type=None,
        retracted=rec.retracted,
        expression_of_concern=rec.expression_of_concern,
        preprint=rec.preprint,
        withdrawn=rec.withdrawn,
    )


class WorldResolver:
    """Look-ups in a world's facts (module docstring)."""

    name = "snapshot"

    def __init__(self, world: World) -> None:
        self._works = [w for rec in world.records.values() if (w := work_of(rec)) is not None]

    def _holding(self, key: Key) -> tuple[WorkRecord, ...]:
        scheme, value = key
        if scheme == "doi":
            return tuple(w for w in self._works if w.doi and w.doi.lower() == value)
        if scheme in ("pmid", "pmcid", "nct"):
            own = f"{scheme}:{value}"
            return tuple(w for w in self._works if w.record_id == own or w.value(scheme) == value)
        return ()

    def by_identifiers(self, keys: Sequence[Key]) -> dict[Key, Lookup]:
        out = {}
        for key in keys:
            found = self._holding(key)
            status = "matched" if found else "unmatched"
            out[key] = Lookup(self.name, f"{key[0]}:{key[1]}", status, found)
        return out

    def by_title(self, title: str) -> Lookup:
        wanted = _same_title(title)
        found = tuple(w for w in self._works if w.title and _same_title(w.title) == wanted)
        return Lookup(self.name, f"title:{title}", "matched" if found else "unmatched", found)


class DownResolver:
    """Every look-up unreachable, as in an outage."""

    name = "snapshot"

    def by_identifiers(self, keys: Sequence[Key]) -> dict[Key, Lookup]:
        return {
            k: Lookup(self.name, f"{k[0]}:{k[1]}", "unreachable", detail="the resolver is down")
            for k in keys
        }

    def by_title(self, title: str) -> Lookup:
        return Lookup(self.name, f"title:{title}", "unreachable", detail="the resolver is down")
