"""The files a release carries beside the code: LICENSE, NOTICE, CITATION.cff, CONTRIBUTING.md,
SECURITY.md, kept consistent with pyproject.toml and with what the README promises."""

from __future__ import annotations

import hashlib
import re
import tomllib
from datetime import date
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
APACHE_2_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"
"""sha256 of the Apache License 2.0 as the ASF publishes it (LICENSE-2.0.txt)."""
CFF_REQUIRED = {"cff-version", "message", "title", "authors"}
"""The keys CFF 1.2.0 requires of every CITATION.cff."""


def read(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


def test_the_licence_file_is_the_apache_licence_that_pyproject_declares() -> None:
    assert PYPROJECT["license"] == {"text": "Apache-2.0"}
    assert hashlib.sha256((ROOT / "LICENSE").read_bytes()).hexdigest() == APACHE_2_SHA256


def test_notice_disclaims_affiliation_with_every_data_provider() -> None:
    text = " ".join(read("NOTICE").split())
    assert "not affiliated with or endorsed by" in text
    for provider in ("(NLM)", "(EMBL-EBI)", "(FDA)", "Crossref"):
        assert provider in text, provider
    items = list(read("NOTICE").split("\n- ")[1:])
    for source in (
        "PubMed",
        "PubTator3",
        "ClinicalTrials.gov",
        "Europe PMC",
        "Crossref",
        "openFDA",
    ):
        # each source's terms are in an item of their own list, with a link to them
        [item] = [i for i in items if i.startswith((source, f"PubMed and {source}"))]
        assert "https://" in item, source
    assert "Apache License, Version 2.0" in text


def test_citation_cff_is_valid_cff_1_2_0_and_matches_pyproject() -> None:
    cff = yaml.safe_load(read("CITATION.cff"))
    assert isinstance(cff, dict) and set(cff) >= CFF_REQUIRED
    assert cff["cff-version"] == "1.2.0"
    assert cff["type"] in {"software", "dataset"}
    assert cff["authors"] and all(
        isinstance(a, dict) and ({"name"} <= set(a) or {"family-names"} <= set(a))
        for a in cff["authors"]
    )
    assert str(cff["version"]) == PYPROJECT["version"]
    assert cff["license"] == PYPROJECT["license"]["text"]
    assert all(isinstance(v, str) and v.strip() for v in (cff["message"], cff["title"]))


def test_the_copyright_year_is_not_in_the_future() -> None:
    [year] = re.findall(r"Copyright (\d{4}) ", read("NOTICE"))
    assert 2025 <= int(year) <= date.today().year


def test_contributing_names_the_checks_a_change_needs() -> None:
    text = read("CONTRIBUTING.md")
    assert "`make lint`" in text and "`make test`" in text
    assert "## A change to what the audit decides needs an evaluation case" in text
    for path in (
        "tests/audit/test_verdicts.py",
        "tests/audit/test_overall.py",
        "tests/audit/planted.py",
        "SECURITY.md",
    ):
        assert path in text and (ROOT / path).exists(), path


def test_security_asks_for_private_reports_through_github_advisories() -> None:
    text = " ".join(read("SECURITY.md").split())
    assert "privately" in text and "Report a vulnerability" in text
    assert "security advisory" in text
    assert "Do not open a public issue" in text


def test_the_readme_states_its_audience_and_points_to_the_release_files() -> None:
    text = read("README.md")
    assert "## Who it is for" in text
    assert "## Data and licences" in text
    for name in ("LICENSE", "NOTICE", "CITATION.cff", "CONTRIBUTING.md", "SECURITY.md"):
        assert f"]({name})" in text, name
