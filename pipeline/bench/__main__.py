"""Run the benchmarks: ``python -m pipeline.bench [NAME ...]`` (names: :data:`BENCHES`)."""

from __future__ import annotations

import importlib
import sys
import tempfile
from pathlib import Path

BENCHES = ("snapshot", "audit", "site", "live", "mcp", "support", "references", "search")
ON_REQUEST = ("scale", "answer")  # named only: scale needs Spark (make bench-scale); answer
# is the one-answer part of audit alone


def main(argv: list[str]) -> int:
    names = argv or list(BENCHES)
    for name in names:
        if name not in BENCHES + ON_REQUEST:
            known = ", ".join(BENCHES + ON_REQUEST)
            print(f"error: unknown bench {name!r}; expected one of {known}")
            return 2
    for name in names:
        try:
            module = importlib.import_module(f"pipeline.bench.bench_{name}")
        except ModuleNotFoundError:
            print(f"[{name}] not built yet")
            continue
        print(f"[{name}]", flush=True)
        with tempfile.TemporaryDirectory(prefix=f"citeseal-bench-{name}-") as tmp:
            for figure in module.run(Path(tmp)):
                print("  " + figure.line(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
