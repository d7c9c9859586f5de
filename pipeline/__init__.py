"""citeseal's data-moving half: HTTP, sources, harvest, snapshots, CLI, site."""

from audit import __version__

__all__ = ["__version__"]
