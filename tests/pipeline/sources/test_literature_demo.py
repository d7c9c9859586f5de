"""The demo literature exchanges: committed files are what the generator writes, and a
replayed harvest gives the demo records INTERFACES.md promises."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from pipeline.http import HttpClient
from pipeline.records import Flags, Record
from pipeline.replay import ReplayTransport
from pipeline.settings import Settings
from pipeline.sources import crossref, europepmc, pubmed, pubtator3
from tests.conftest import ROOT

DEMO = ROOT / "snapshots" / "demo"
SOURCES = ("pubmed", "pubtator3", "europepmc", "crossref")


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "make_replay_literature", DEMO / "make_replay_literature.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_committed_exchanges_are_what_the_generator_writes(tmp_path: Path) -> None:
    generator().record_replay(tmp_path)
    for source in SOURCES:
        fresh = {p.name: p.read_bytes() for p in (tmp_path / source).glob("*.json")}
        committed = {p.name: p.read_bytes() for p in (DEMO / "replay" / source).glob("*.json")}
        assert fresh == committed, f"re-run snapshots/demo/make_replay_literature.py ({source})"


@pytest.fixture(scope="module")
def harvest() -> dict[str, Record]:
    settings = Settings(email="demo@example.org", ncbi_api_key="not-a-real-key-0000000000")
    records: dict[str, Record] = {}
    with HttpClient(settings, transport=ReplayTransport([DEMO / "replay"])) as http:
        hits = pubmed.search_ids(http, "zentravir", limit=10)
        assert hits == ["99000001", "99000002", "99000004", "99000006"]
        for record in pubmed.fetch_records(http, [*hits, "99000005", "99000003"]):
            doi = record.doi or ""
            notices = crossref.fetch_update_notices(http, [doi])[doi.lower()]
            record = crossref.apply_relations(record, notices)
            records[record.record_id] = record
        annotations = pubtator3.fetch_annotations(http, [r.pmid or "" for r in records.values()])
        for key, found in annotations.items():
            records[key] = records[key].model_copy(update={"annotations": found})
        for record in europepmc.search_records(http, "zentravir AND SRC:PPR", limit=10):
            records[record.record_id] = record
        full = europepmc.fetch_full_text(http, "PMC99000001")
        assert full is not None
        records[full.record_id] = full
    return records


def test_demo_flags_and_relations(harvest: dict[str, Record]) -> None:
    def links(record_id: str) -> list[tuple[str, str]]:
        return [(r.kind, r.target) for r in harvest[record_id].relations]

    assert harvest["pmid:99000002"].flags == Flags(
        retracted=True, expression_of_concern=False, preprint=False
    )
    # PubMed's RetractionIn (RefSource "… doi: 10.5555/demo.0003") and Crossref's notice
    # 10.5555/demo.0003 are one retraction: one relation
    assert links("pmid:99000002") == [("retraction_in", "pmid:99000003")]
    assert harvest["pmid:99000003"].flags.retracted is False  # the notice is not retracted
    assert links("pmid:99000003") == [("retraction_of", "pmid:99000002")]
    assert harvest["pmid:99000004"].flags.expression_of_concern is True
    # the same for the expression of concern 10.5555/demo.0005 (PubMed: pmid:99000005)
    assert links("pmid:99000004") == [("expression_of_concern_in", "pmid:99000005")]
    assert harvest["pmid:99000001"].flags == Flags(
        retracted=False, expression_of_concern=False, preprint=False
    )
    preprint = harvest["ppr:PPR990001"]
    assert (preprint.version, preprint.flags.preprint) == ("1", True)
    assert links("ppr:PPR990001") == [("preprint_of", "pmid:99000006")]


def test_demo_passages(harvest: dict[str, Record]) -> None:
    cohort = {p.path: p for p in harvest["pmid:99000001"].passages}
    assert [cohort[f"abstract.{n}"].section for n in range(1, 5)] == [
        "BACKGROUND",
        "METHODS",
        "RESULTS",
        "CONCLUSIONS",
    ]
    assert "During 48\u00a0210 person-years of follow-up, 312 children were diagnosed" in (
        cohort["abstract.3"].text
    )
    assert cohort["abstract.4"].text.startswith(
        "Zentravir exposure does not increase the risk of Farrow syndrome."
    )
    methods = cohort["abstract.2"].text
    for typographic in ("\u2013", "\u201c", "\u201d", "\u00a0", "\u2026"):
        assert typographic in methods
    [markup] = [p.text for p in harvest["pmid:99000006"].passages if p.path == "abstract.1"]
    assert markup.startswith("In vitro, zentravir inhibited the Farrow-associated protease")
    # <sub>50</sub> and <sup>3</sup> are kept as Unicode scripts, never flattened
    assert "IC\u2085\u2080 of 12 nM" in markup and "10\u00b3-fold" in markup
    assert "IC50" not in markup and "103-fold" not in markup
    body = [p.path for p in harvest["pmcid:PMC99000001"].passages if p.path.startswith("body.")]
    assert {path.split(".")[1] for path in body} == {
        "introduction",
        "methods_study_population",
        "methods_exposure_and_outcome",
        "results",
        "discussion",
    }
    [results] = [p for p in harvest["pmcid:PMC99000001"].passages if "sibling" in p.text]
    assert results.text.endswith("sibling comparisons gave similar estimates [1].")


def test_no_demo_passage_holds_markup_or_an_entity(harvest: dict[str, Record]) -> None:
    """The fixtures write inline tags (emphasis, scripts, reference markers) as markup, so a
    passage holds their text, never a literal tag or an escaped entity."""
    leaks = [
        (record.record_id, p.path, p.text)
        for record in harvest.values()
        for p in record.passages
        if re.search(r"</?[a-z][\w-]*[\s>/]|&(?:[a-z]+|#x?[0-9a-f]+);", p.text, re.I)
    ]
    assert leaks == []


def test_demo_annotations_sit_on_their_passage_text(harvest: dict[str, Record]) -> None:
    for pmid in ("99000001", "99000002", "99000004", "99000006"):
        record = harvest[f"pmid:{pmid}"]
        texts = {p.path: p.text for p in record.passages}
        assert record.annotations, pmid
        for annotation in record.annotations:
            assert texts[annotation.path][annotation.start : annotation.end] == annotation.text
    types = {a.type for a in harvest["pmid:99000001"].annotations}
    assert types == {"Chemical", "Disease"}
