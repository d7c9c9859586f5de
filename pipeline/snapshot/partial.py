"""When a build may seal a snapshot although requests failed (issue: an outage never
rewrites history).

* No request failed: seal.
* Some failed, and the build has no parent and harvested no record: nothing is written,
  even with ``allow_partial`` (an empty first snapshot would only start a lineage of
  nothing).
* Some failed, without ``allow_partial``: nothing is sealed (exit 3); the resume cache keeps
  the answers that did arrive, so the rerun asks only for what failed.
* Some failed, with ``allow_partial``: seal, marked partial (manifest ``partial``, each
  failed request listed, the sources' statuses); every record a failed request concerned
  keeps its parent state.

:func:`require_complete` is pure: it raises :class:`~pipeline.errors.PartialHarvestError`
or returns.
"""

from __future__ import annotations

from collections.abc import Sequence

from pipeline.errors import PartialHarvestError
from pipeline.snapshot.manifest import FailedRequest


def require_complete(
    failed: Sequence[FailedRequest],
    *,
    where: str,
    has_parent: bool,
    harvested: int,
    allow_partial: bool,
    resumable: bool,
) -> None:
    """Raise unless a build with these ``failed`` requests may be sealed (module docstring).

    ``where`` names the corpus folder, ``harvested`` counts the records the build received,
    ``resumable`` says whether a rerun reuses the answers already fetched.
    """
    if not failed:
        return
    n = len(failed)
    what = f"{n} request{'s' if n != 1 else ''} failed"
    if not has_parent and harvested == 0:
        raise PartialHarvestError(
            f"the first build of {where} harvested no record and {what}: nothing was written",
            advice="check the network (or the replay folders) and build again; "
            "--allow-partial never seals an empty first snapshot",
        )
    if allow_partial:
        return
    per_source: dict[str, int] = {}
    for f in failed:
        per_source[f.source] = per_source.get(f.source, 0) + 1
    counts = ", ".join(f"{source} {count}" for source, count in per_source.items())
    retry = (
        "build again to retry only those (the answers already fetched are reused)"
        if resumable
        else "build again to retry them"
    )
    raise PartialHarvestError(
        f"{what} ({counts}): no snapshot of {where} was sealed",
        advice=f"{retry}, or pass --allow-partial to seal a snapshot marked partial in which "
        "the records they concern keep their parent state",
    )
