"""audit.references.model: the extraction result is frozen and round-trips through JSON."""

from __future__ import annotations

import pydantic
import pytest

from audit.references.model import ExtractedDocument
from tests.audit.references.golden import INPUTS, extracted


@pytest.mark.parametrize("name", INPUTS)
def test_an_extracted_document_round_trips_through_json(name: str) -> None:
    document = extracted(name)
    assert ExtractedDocument.model_validate_json(document.model_dump_json()) == document


def test_references_are_frozen_and_refuse_unknown_fields() -> None:
    document = extracted("article.md")
    with pytest.raises(pydantic.ValidationError):
        document.references[0].title = "changed"  # type: ignore[misc]
    data = document.model_dump(mode="json")
    data["references"][0]["unknown"] = 1
    with pytest.raises(pydantic.ValidationError):
        ExtractedDocument.model_validate(data)
