"""A scale folder: the Hive-partitioned Parquet ``scale ingest`` writes, and its manifest.

Layout (the same as ``snapshot export --parquet``, :mod:`pipeline.snapshot.export`: a folder
per table, partitioned by ``source``)::

    OUT/records/source=pubmed/part-….parquet     one row per record version
    OUT/passages/source=pubmed/…                 one row per passage of a version
    OUT/versions/source=pubmed/…                 the lineage of each version (record_versions)
    OUT/state/source=pubmed/…                    each record's current version, withdrawn or not
    OUT/relations/source=pubmed/…                retraction and correction links per record
    OUT/citeseal-scale.json                      this module's :class:`ScaleManifest`

Every table has a ``record_id`` column; the columns are those of the snapshot tables they fill
(:data:`pipeline.scale.history.TABLES`). The manifest names the input files (name,
generation, sha256, bytes), the generation ids, the tool, schema and segmentation versions and
the rows of each table; ``scale snapshot`` refuses a folder without it, or whose tables do
not hold the rows it counts. It holds no path of the machine (file names only), no key.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from pipeline.errors import ScaleError
from pipeline.scale.history import TABLES

MANIFEST_NAME = "citeseal-scale.json"
FORMAT = "citeseal-scale-folder"
FORMAT_VERSION = 1


class InputSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    generation: int
    sha256: str
    bytes: int
    records: int
    deleted: int
    refused: dict[str, int] = Field(default_factory=dict)


class ScaleManifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: str = FORMAT
    format_version: int = FORMAT_VERSION
    name: str  # the corpus name: generation ids and the snapshot are called after it
    created_at: str
    tool_version: str
    schema_version: int
    segmentation_version: str | None
    generations: list[str]  # generation ids, oldest first; the last is the snapshot's id
    files: list[InputSummary]
    rows: dict[str, int]  # rows of each table
    warnings: list[str] = Field(default_factory=list)


def write_manifest(folder: Path, manifest: ScaleManifest) -> None:
    path = folder / MANIFEST_NAME
    with path.open("w", encoding="utf-8") as out:
        out.write(manifest.model_dump_json(indent=2))
        out.flush()
        os.fsync(out.fileno())


def read_manifest(folder: Path) -> ScaleManifest:
    """The manifest of the scale folder ``folder``; :class:`ScaleError` when it is not one."""
    path = folder / MANIFEST_NAME
    if not folder.is_dir():
        raise ScaleError(f"{folder} is not a folder (expected what scale ingest wrote)")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        raise ScaleError(
            f"{folder} holds no {MANIFEST_NAME}: not a complete scale folder",
            advice="give the folder scale ingest --out wrote",
        ) from None
    try:
        manifest = ScaleManifest.model_validate(json.loads(text))
    except (ValueError, ValidationError) as error:
        first = str(error).splitlines()[0]
        raise ScaleError(f"{path} is not a scale manifest: {first}") from None
    if manifest.format != FORMAT or manifest.format_version != FORMAT_VERSION:
        raise ScaleError(
            f"{path} is a {manifest.format} v{manifest.format_version} manifest; this citeseal "
            f"reads {FORMAT} v{FORMAT_VERSION}"
        )
    missing = [t for t in TABLES if not (folder / t).is_dir()]
    if missing:
        raise ScaleError(f"{folder} has no {missing[0]}/ table: not a complete scale folder")
    if not manifest.generations:
        raise ScaleError(f"{path} names no generation")
    return manifest
