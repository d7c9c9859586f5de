"""audit.resources: one layout for every data file, a checkout first, else the packaged copies."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import audit
from audit.render_html import STATIC_DIR, TEMPLATES_DIR, make_environment, stylesheet_text
from audit.resources import (
    PACKAGED,
    checkout_resources,
    is_checkout,
    locate,
    packaged_resources,
    resources,
)

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(audit.__file__).resolve().parent


def _checkout(root: Path) -> Path:
    """A minimal checkout layout under ``root``; returns its ``audit`` package folder."""
    (root / "audit").mkdir(parents=True)
    (root / "site" / "templates").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\n", encoding="utf-8")
    return root / "audit"


def test_the_tests_run_in_a_checkout_and_its_files_are_used() -> None:
    found = resources()
    assert found == checkout_resources(ROOT)
    assert found.checkout is True
    assert (TEMPLATES_DIR, STATIC_DIR) == (ROOT / "site" / "templates", ROOT / "site" / "static")
    assert found.demo_out == ROOT / "site" / "demo"


def test_every_checkout_resource_exists() -> None:
    found = resources()
    for folder in (found.templates, found.static, found.demo_replay, found.demo_replay_update):
        assert folder.is_dir(), folder
    for file in (found.demo_spec, found.report_schema, found.templates / "base.html.j2"):
        assert file.is_file(), file


def test_a_folder_holding_audit_with_pyproject_and_site_templates_is_a_checkout(
    tmp_path: Path,
) -> None:
    package = _checkout(tmp_path)
    assert is_checkout(tmp_path)
    assert locate(package) == checkout_resources(tmp_path)


def test_an_installed_package_uses_its_packaged_copies(tmp_path: Path) -> None:
    package = tmp_path / "site-packages" / "audit"
    package.mkdir(parents=True)
    found = locate(package)
    data = package / PACKAGED
    assert found.checkout is False
    assert found.templates == data / "templates"
    assert found.static == data / "static"
    assert found.demo_spec == data / "demo" / "demo.toml"
    assert found.demo_replay == data / "demo" / "replay"
    assert found.demo_replay_update == data / "demo" / "replay-update"
    assert found.report_schema == package / "schemas" / "report.schema.json"
    assert found.demo_out == Path("citeseal-demo")  # never inside site-packages


def test_a_site_packages_without_pyproject_is_not_a_checkout(tmp_path: Path) -> None:
    (tmp_path / "site" / "templates").mkdir(parents=True)  # a stray package named "site"
    (tmp_path / "audit").mkdir()
    assert not is_checkout(tmp_path)
    assert locate(tmp_path / "audit") == packaged_resources(tmp_path / "audit")


def test_the_packaged_layout_renders_from_copied_files(tmp_path: Path) -> None:
    found = packaged_resources(tmp_path / "audit")
    found.templates.parent.mkdir(parents=True)
    shutil.copytree(ROOT / "site" / "templates", found.templates)
    shutil.copytree(ROOT / "site" / "static", found.static)
    env = make_environment(found.templates)
    assert env.get_template("base.html.j2") is not None
    assert stylesheet_text(found.static) == (ROOT / "site" / "static" / "site.css").read_text(
        encoding="utf-8"
    )


def test_the_wheel_maps_each_checkout_resource_to_its_packaged_place() -> None:
    """pyproject's force-include table and packaged_resources() name the same places."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mapping = pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    here, wheel = checkout_resources(ROOT), packaged_resources(Path("audit"))
    expected = {
        here.templates: wheel.templates,
        here.static: wheel.static,
        here.demo_spec: wheel.demo_spec,
        here.demo_replay: wheel.demo_replay,
        here.demo_replay_update: wheel.demo_replay_update,
    }
    assert {ROOT / source: Path(target) for source, target in mapping.items()} == expected
    # the schema is inside the audit package already, so the wheel carries it as it is
    assert here.report_schema.relative_to(ROOT) == wheel.report_schema
    assert PACKAGE == ROOT / "audit"
