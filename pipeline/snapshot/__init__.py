"""Versioned, immutable DuckDB snapshots: schema, build, lineage, verify, diff, export."""
