"""Functions the writer-process tests send to the child (it imports them by name)."""

from __future__ import annotations

import duckdb

from audit.errors import InputError


def create_numbers(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("CREATE TABLE numbers (n INTEGER)")


def add_number(con: duckdb.DuckDBPyConnection, n: int) -> None:
    con.execute("INSERT INTO numbers VALUES (?)", [n])


def numbers(con: duckdb.DuckDBPyConnection) -> list[int]:
    return [int(row[0]) for row in con.execute("SELECT n FROM numbers ORDER BY n").fetchall()]


def long_statement(con: duckdb.DuckDBPyConnection) -> int:
    """A statement that runs for minutes (the tests kill the process long before)."""
    row = con.execute(
        "SELECT count(*) FROM range(1000000000000) a WHERE a.range % 7 = 3"
    ).fetchone()
    return int(row[0]) if row else 0


def set_threads(con: duckdb.DuckDBPyConnection, n: int) -> None:
    con.execute(f"SET threads = {int(n)}")


def threads(con: duckdb.DuckDBPyConnection) -> int:
    row = con.execute("SELECT current_setting('threads')").fetchone()
    return int(row[0]) if row else 0


def refuse(con: duckdb.DuckDBPyConnection, value: str) -> None:
    """Raise a project error (with advice) the way a writer function refuses its input."""
    del con
    raise InputError(f"cannot use {value!r}", advice="pass another value")


def setting(con: duckdb.DuckDBPyConnection, name: str) -> str:
    row = con.execute("SELECT current_setting(?)", [name]).fetchone()
    return str(row[0]) if row else ""
