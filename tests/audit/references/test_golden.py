"""Golden extraction output per input format (``make golden-references`` rewrites them)."""

from __future__ import annotations

import pytest

from tests.audit.references.golden import INPUTS, extracted, golden_path, render


@pytest.mark.parametrize("name", INPUTS)
def test_extraction_matches_the_golden_output(name: str) -> None:
    assert render(extracted(name)) == golden_path(name).read_text(encoding="utf-8")


def test_every_input_format_has_a_golden_fixture() -> None:
    from audit.references.inputs import FORMATS

    formats = {extracted(name).format for name in INPUTS}
    assert formats == set(FORMATS)


def test_hostile_html_yields_only_its_visible_text() -> None:
    document = extracted("hostile.html")
    values = [i.value for i in document.identifiers]
    assert values == ["10.5555/visible.2099.1", "99000009", "NCT99000003"]
    assert not any("never" in r.raw or "99999999" in r.raw for r in document.references)
