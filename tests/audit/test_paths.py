"""Public file names in reports: relative paths kept, anything local reduced to its name."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.paths import UNNAMED, public_path, public_report
from tests.audit.planted import KEYRING, make_corpus


@pytest.mark.parametrize(
    ("given_text", "public"),
    [
        ("answer.md", "answer.md"),
        ("answers/a.md", "answers/a.md"),
        ("-", "-"),
        ("memory:demo", "memory:demo"),
        ("/home/me/secret/answer.md", "answer.md"),
        ("/tmp/x/", "x"),
        ("~/answers/a.md", "a.md"),
        ("../other/a.md", "a.md"),
        ("answers/../../a.md", "a.md"),
        ("C:\\Users\\me\\a.md", "a.md"),
        ("c:/Users/me/a.md", "a.md"),
        ("\\\\server\\share\\a.md", "a.md"),
        ("file:///home/me/a.md", "a.md"),
        ("/", UNNAMED),
        ("~", UNNAMED),
    ],
)
def test_public_path(given_text: str, public: str) -> None:
    assert public_path(given_text) == public


def test_an_absolute_path_inside_the_working_folder_becomes_relative_to_it() -> None:
    assert public_path("/work/proj/answers/a.md", cwd="/work/proj") == "answers/a.md"
    assert public_path("/work/other/a.md", cwd="/work/proj") == "a.md"
    assert public_path("/work/proj", cwd="/work/proj") == "proj"


@pytest.mark.parametrize(
    ("given_text", "public"),
    [
        ("/tmp/answers/.", "answers"),
        ("/tmp/answers/..", "answers"),
        ("C:\\answers\\.\\", "answers"),
        ("file:.", UNNAMED),
        ("/tmp/~.", UNNAMED),
        ("/tmp/~..", UNNAMED),
    ],
)
def test_a_dot_or_dot_dot_part_is_never_the_name(given_text: str, public: str) -> None:
    assert public_path(given_text) == public


def test_the_working_folder_changes_only_the_names_of_paths_inside_it() -> None:
    # a path that climbs out of the working folder is named as if no folder were given
    for text in ("/work/proj/..", "/work/proj/answers/../..", "/work/proj/../a.md"):
        assert public_path(text, cwd="/work/proj") == public_path(text)
    assert public_path("/work/proj/..", cwd="/work/proj") == "proj"


LOCALISH = st.lists(
    st.sampled_from(["/", "\\", "..", ".", "~", "C:", "home", "me", "a.md", "file:", " "]),
    max_size=8,
).map("".join) | st.text(max_size=40)


@settings(max_examples=500, deadline=None)
@given(LOCALISH)
def test_a_public_name_never_points_into_the_machine(text: str) -> None:
    name = public_path(text)
    assert not name.startswith(("/", "\\", "~")) and not name.lower().startswith("file:")
    assert ".." not in re.split(r"[\\/]+", name)
    assert not re.match(r"[A-Za-z]:[\\/]", name)
    assert public_path(name) == name  # idempotent


def test_public_report_reduces_an_older_report_and_leaves_a_new_one_alone() -> None:
    from audit.citations import parse_answer
    from audit.engine import audit_answer

    report = audit_answer(parse_answer("Nothing."), make_corpus(), KEYRING, source_label="/a/b.md")
    assert report.source == "b.md"  # the engine applies the rule itself
    assert public_report(report) is report
    older = report.model_copy(
        update={
            "source": "/home/me/answer.md",
            "snapshot": report.snapshot.model_copy(update={"path": "/home/me/s.duckdb"}),
        }
    )
    fixed = public_report(older)
    assert (fixed.source, fixed.snapshot.path) == ("answer.md", "s.duckdb")
