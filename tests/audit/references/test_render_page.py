"""The standalone check page in detail: an online check, and a stylesheet that cannot be
inlined (the whole page: test_render_golden.py; hostile text: test_render.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

import audit.references.render_html as check_page
import audit.render_html as render_html
from audit.references.check import CheckReport, SnapshotRef, make_report
from audit.references.render_html import render_check_html
from audit.render_html import TemplatesMissingError


def _report(online: bool) -> CheckReport:
    ref = SnapshotRef(name="works", sha256="0" * 64, snapshot_id=None)
    return make_report([], ref, "citeseal test", online=online)


def test_the_page_says_whether_the_check_was_online() -> None:
    assert "<dt>Resolution</dt><dd>online</dd>" in render_check_html(_report(True))
    assert (
        "<dt>Resolution</dt><dd>offline: an identifier missing from the snapshot is unresolved, "
        "never evidence of fabrication</dd>"
    ) in render_check_html(_report(False))


def test_a_stylesheet_that_could_close_the_style_element_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(render_html, "STATIC_DIR", tmp_path)
    monkeypatch.setattr(check_page, "STATIC_DIR", tmp_path)
    (tmp_path / "site.css").write_text("p { color: red }\n", encoding="utf-8")
    assert "<style>p { color: red }\n</style>" in render_check_html(_report(False))
    (tmp_path / "site.css").write_text("p { color: red }</style><script>x</script>", "utf-8")
    with pytest.raises(TemplatesMissingError) as caught:
        render_check_html(_report(False))
    assert caught.value.message == f"{tmp_path / 'site.css'} cannot be inlined (contains '</')"
