"""The static audit site: load and check reports and snapshots, render pages, swap them in.

Entry point: :func:`pipeline.site.build.build_site` (``citeseal site build``).
"""
