"""citeseal's judging half: the citation contract, the audit engine, report models and rendering.

Nothing here imports :mod:`pipeline`; snapshots are read through :mod:`audit.corpus`.
"""

__version__ = "0.1.0"
CONTRACT_VERSION = "0.4.0"
