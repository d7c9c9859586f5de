"""Settings: one object passed in, read from the environment once at the edge.

Every field has a safe default; nothing here is a module-level mutable global.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP_NAME = "citeseal"


@dataclass(frozen=True)
class Settings:
    """Runtime configuration (see README, "Configuration")."""

    email: str | None = None  # NCBI `email`, Crossref `mailto`
    tool: str = "citeseal"  # NCBI `tool`
    ncbi_api_key: str | None = None  # NCBI_API_KEY: 10 req/s instead of 3
    openfda_api_key: str | None = None  # OPENFDA_API_KEY
    data_dir: Path = Path(platformdirs.user_data_dir(APP_NAME))
    key_file: Path | None = None  # CITESEAL_KEY_FILE
    demo_key: bool = False  # CITESEAL_DEMO_KEY
    history_backfill: bool = False  # CITESEAL_HISTORY_BACKFILL: use unofficial history services
    timeout: float = 30.0  # seconds per read (and to connect)
    max_attempts: int = 6  # per request, under the retry policy
    deadline: float = 120.0  # CITESEAL_DEADLINE: seconds per attempt, redirects and reads included
    max_response_bytes: int = 64 * 1024 * 1024  # CITESEAL_MAX_RESPONSE_BYTES (decoded body)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Read the settings from environment variables (``CITESEAL_*`` and API keys)."""
        env = os.environ if env is None else env

        def flag(name: str) -> bool:
            return env.get(name, "").strip().lower() in {"1", "true", "yes", "on"}

        data_dir = env.get("CITESEAL_DATA_DIR")
        key_file = env.get("CITESEAL_KEY_FILE")
        return cls(
            email=env.get("CITESEAL_EMAIL") or None,
            tool=env.get("CITESEAL_TOOL") or "citeseal",
            ncbi_api_key=env.get("NCBI_API_KEY") or None,
            openfda_api_key=env.get("OPENFDA_API_KEY") or None,
            data_dir=Path(data_dir) if data_dir else Path(platformdirs.user_data_dir(APP_NAME)),
            key_file=Path(key_file) if key_file else None,
            demo_key=flag("CITESEAL_DEMO_KEY"),
            history_backfill=flag("CITESEAL_HISTORY_BACKFILL"),
            timeout=float(env.get("CITESEAL_TIMEOUT", "30")),
            max_attempts=int(env.get("CITESEAL_MAX_ATTEMPTS", "6")),
            deadline=float(env.get("CITESEAL_DEADLINE", "120")),
            max_response_bytes=int(env.get("CITESEAL_MAX_RESPONSE_BYTES", str(64 * 1024 * 1024))),
        )

    def secrets(self) -> list[str]:
        """Values that must never reach a log line, an error, a snapshot or the site."""
        return [s for s in (self.ncbi_api_key, self.openfda_api_key) if s]
