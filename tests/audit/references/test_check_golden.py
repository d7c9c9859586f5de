"""The golden check reports (``make golden-references`` rewrites them) and SARIF validity.

The SARIF schema is the OASIS SARIF 2.1.0 JSON schema (its final text, 2.1.0-rtm.5) as shipped
in the npm package @microsoft/jest-sarif 1.0.0-beta.0 (MIT), kept as data/sarif-schema-2.1.0.json.
"""

from __future__ import annotations

import json

import jsonschema
import pytest

from audit.references.check import (
    CheckReport,
    DocumentCheck,
    Flags,
    ReferenceCheck,
    SnapshotRef,
    make_report,
)
from audit.references.model import Span
from audit.references.sarif import render_sarif
from tests.audit.fixture_scope import per_module
from tests.audit.references.check_golden import DATA, FORMATS, golden_path, outputs

SCHEMA = json.loads((DATA / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))


@pytest.fixture(scope=per_module)
def made() -> dict[str, str]:
    return outputs()


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_format_matches_its_golden_report(made: dict[str, str], fmt: str) -> None:
    assert made[fmt] == golden_path(fmt).read_text(encoding="utf-8")


def test_the_sarif_report_is_valid_sarif_2_1_0(made: dict[str, str]) -> None:
    log = json.loads(made["sarif"])
    jsonschema.Draft4Validator.check_schema(SCHEMA)
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    assert log["version"] == "2.1.0"


def test_the_schema_check_can_fail(made: dict[str, str]) -> None:
    log = json.loads(made["sarif"])
    log["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(SCHEMA).validate(log)


def test_sarif_levels_rules_and_regions_follow_the_tiers(made: dict[str, str]) -> None:
    run = json.loads(made["sarif"])["runs"][0]
    rules = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    assert rules == [
        "citeseal/reference/verified",
        "citeseal/reference/mismatch",
        "citeseal/reference/hallucinated",
        "citeseal/reference/needs_review",
        "citeseal/reference/unresolved",
    ]
    levels = {(r["ruleId"].rsplit("/", 1)[1], r["level"]) for r in run["results"]}
    assert levels == {
        ("verified", "warning"),  # a verified citation of a retracted paper is not silent
        ("mismatch", "warning"),
        ("hallucinated", "error"),
        ("needs_review", "note"),
        ("unresolved", "warning"),
    }
    for result in run["results"]:
        assert rules[result["ruleIndex"]] == result["ruleId"]
    hallucinated = next(r for r in run["results"] if r["level"] == "error")
    location = hallucinated["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "check.md"
    region = location["region"]
    text = (DATA / "check.md").read_text(encoding="utf-8").splitlines()[region["startLine"] - 1]
    assert text[region["startColumn"] - 1 : region["endColumn"] - 1] == "doi:10.5555/ref.0003"


def test_the_sarif_log_writes_non_ascii_text_as_itself_not_as_escapes() -> None:
    span = Span(file="müller.md", line=1, column=1, end_line=1, end_column=2)
    check = ReferenceCheck(
        label=None,
        kind="running_text",
        span=span,
        location=span,
        identifiers=(),
        title=None,
        tier="hallucinated",
        reason="Müller’s DOI is invalid",
        flags=Flags(),
    )
    document = DocumentCheck(
        file="müller.md", format="markdown", references=(check,), counts={"hallucinated": 1}
    )
    made: CheckReport = make_report(
        [document], SnapshotRef(name="w", sha256="0" * 64, snapshot_id="w-1"), "citeseal 0"
    )
    lines = render_sarif(made, "0").splitlines()
    assert '            "text": "hallucinated: Müller’s DOI is invalid"' in lines
    assert '                  "uri": "müller.md"' in lines
