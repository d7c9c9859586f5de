"""Write the demo corpus's registry exchanges and the registry test fixtures.

Everything here is invented: the drug "zentravir", the condition "Farrow syndrome", the
sponsor, the numbers. Identifiers sit outside the real ranges (NCT99xxxxxx, set ids starting
``5eed``). The bodies follow the exact ClinicalTrials.gov API v2, openFDA and DailyMed formats.

The replay files are produced by running citeseal's own harvest functions
(:func:`pipeline.sources.clinicaltrials.fetch_records`, :func:`pipeline.sources.openfda.
fetch_records`) against an in-process fake registry through
:class:`pipeline.replay.RecordingTransport`, so their URLs are exactly the ones a harvest asks
for and their file names follow the recorder's naming.

The content itself is in ``registry_content.py`` beside this script. Running it rewrites only
``snapshots/demo/replay{,-update}/{clinicaltrials,openfda}/`` and
``tests/fixtures/{clinicaltrials,openfda,history}/``::

    .venv/bin/python snapshots/demo/make_replay_registries.py

``tests/pipeline/sources/test_registry_fixtures.py`` checks the committed files are what this
script writes.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for _path in (ROOT, HERE):  # run as a script from anywhere; registry_content sits beside it
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from registry_content import (  # noqa: E402 — a sibling module of this script
    DEMO_NCT,
    DEMO_SETID,
    JSON,
    JSON_UTF8,
    NO_MATCH,
    label,
    label_meta,
    status_module,
    studies,
    trial_1,
    trial_2,
    trial_3,
)

from pipeline.http import HttpClient  # noqa: E402 — after the sys.path fix above
from pipeline.replay import RecordingTransport, make_wrapper, write_wrapper  # noqa: E402
from pipeline.settings import Settings  # noqa: E402
from pipeline.sources import clinicaltrials, openfda  # noqa: E402

# -- the fake registry -----------------------------------------------------------------------


def _dump(data: object) -> bytes:
    return json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8")


def fake_registry(update: bool) -> Callable[[httpx.Request], httpx.Response]:
    """An httpx handler answering the two registry APIs with the synthetic records."""
    trials = studies(update)
    labels = {DEMO_SETID: label(update)}

    def handle(request: httpx.Request) -> httpx.Response:
        params = request.url.params
        if request.url.host == "clinicaltrials.gov":
            ids = params.get("filter.ids", "").split(",")
            found = [trials[i] for i in ids if i in trials]
            return httpx.Response(
                200, headers={"content-type": JSON}, content=_dump({"studies": found})
            )
        if request.url.host == "api.fda.gov":
            wanted = re.findall(r'set_id:"([0-9a-f-]+)"', params.get("search", ""))
            found = [labels[s] for s in wanted if s in labels]
            if not found:
                return httpx.Response(
                    404, headers={"content-type": JSON_UTF8}, content=_dump(NO_MATCH)
                )
            body = {
                "meta": label_meta(
                    len(found),
                    int(params.get("limit", "1")),
                    "2025-06-03" if update else "2025-01-16",
                ),
                "results": found,
            }
            return httpx.Response(200, headers={"content-type": JSON_UTF8}, content=_dump(body))
        return httpx.Response(404, text="not a registry host")

    return handle


def record_replay(folder: Path, update: bool) -> list[Path]:
    """Run the real harvest functions against the fake registry, recording every exchange."""
    for source in ("clinicaltrials", "openfda"):
        shutil.rmtree(folder / source, ignore_errors=True)
    recorder = RecordingTransport(httpx.MockTransport(fake_registry(update)), folder)
    with HttpClient(Settings(), transport=recorder) as client:
        clinicaltrials.fetch_records(client, list(DEMO_NCT))
        openfda.fetch_records(client, [DEMO_SETID])
    return recorder.written


# -- test fixtures ---------------------------------------------------------------------------


def _wrapper(url: str, status: int, content_type: str, data: object) -> dict[str, object]:
    return make_wrapper("GET", url, status, content_type, _dump(data).decode("utf-8"))


def _study_url(nct: str) -> str:
    return f"{clinicaltrials.API}/studies/{nct}"


def _history(nct: str, changes: list[tuple[int, str, str]]) -> dict[str, Any]:
    return {
        "changes": [
            {"version": v, "date": d, "status": s, "moduleLabels": ["Study Status"]}
            for v, d, s in changes
        ]
    }


def write_fixtures(root: Path) -> list[Path]:
    """tests/fixtures/{clinicaltrials,openfda,history}: wrapper files of single exchanges."""
    written: list[Path] = []

    def put(rel: str, wrapper: dict[str, object]) -> None:
        path = root / rel
        write_wrapper(path, wrapper)
        written.append(path)

    for sub in ("clinicaltrials", "openfda", "history"):
        shutil.rmtree(root / sub, ignore_errors=True)
    v1, v2 = trial_1(False), trial_1(True)
    put("clinicaltrials/trial-v2025-01-15.json", _wrapper(_study_url("NCT99000001"), 200, JSON, v1))
    put("clinicaltrials/trial-v2025-06-02.json", _wrapper(_study_url("NCT99000001"), 200, JSON, v2))
    put(
        "clinicaltrials/trial-withdrawn.json",
        _wrapper(_study_url("NCT99000002"), 200, JSON, trial_2()),
    )
    put(
        "clinicaltrials/trial-results.json",
        _wrapper(_study_url("NCT99000003"), 200, JSON, trial_3()),
    )
    label_url = str(httpx.URL(openfda.API, params={"search": f'set_id:"{DEMO_SETID}"', "limit": 1}))
    for update, name in ((False, "label-v3.json"), (True, "label-v4.json")):
        body = {"meta": label_meta(1, 1, "2025-06-03"), "results": [label(update)]}
        put(f"openfda/{name}", _wrapper(label_url, 200, JSON_UTF8, body))
    put(
        "openfda/no-match.json",
        _wrapper(
            str(
                httpx.URL(
                    openfda.API,
                    params={"search": 'openfda.brand_name:"notazentravir"', "limit": 10},
                )
            ),
            404,
            JSON_UTF8,
            NO_MATCH,
        ),
    )
    # history: ClinicalTrials.gov (internal endpoints) and DailyMed, for replay in tests
    base = "https://clinicaltrials.gov/api/int/studies/NCT99000001/history"
    listing = _history(
        "NCT99000001",
        [
            (0, "2024-02-20", "NOT_YET_RECRUITING"),
            (1, "2025-01-15", "RECRUITING"),
            (2, "2025-06-02", "ACTIVE_NOT_RECRUITING"),
        ],
    )
    put("history/clinicaltrials/history-NCT99000001.json", _wrapper(base, 200, JSON, listing))
    first = copy.deepcopy(v1)
    first["protocolSection"]["statusModule"] = status_module(
        "NOT_YET_RECRUITING", "2024-02-20", first_posted="2024-02-20"
    )
    for number, study in ((0, first), (1, v1), (2, v2)):
        put(
            f"history/clinicaltrials/version-NCT99000001-{number}.json",
            _wrapper(f"{base}/{number}", 200, JSON, {"study": study}),
        )
    dailymed = {
        "metadata": {
            "db_published_date": "Jun 03, 2025 10:00:00AM EST",
            "elements_per_page": 100,
            "current_url": "synthetic",
            "total_elements": 3,
        },
        "data": {
            "spl": {
                "title": "ZENTRAVIR (ZENTRAVIR) TABLET [FARROW RESEARCH CONSORTIUM (FICTIONAL)]",
                "setid": DEMO_SETID,
            },
            "history": [
                {"spl_version": 4, "published_date": "May 20, 2025"},
                {"spl_version": 3, "published_date": "Nov 05, 2024"},
                {"spl_version": 1, "published_date": "Mar 14, 2023"},
            ],
        },
    }
    put(
        "history/dailymed/history-5eed0001.json",
        _wrapper(
            f"https://dailymed.nlm.nih.gov/dailymed/services/v2/spls/{DEMO_SETID}/history.json",
            200,
            JSON,
            dailymed,
        ),
    )
    return written


def main(root: Path = ROOT) -> list[Path]:
    """Write every registry exchange and fixture under ``root``; returns the files written."""
    written = record_replay(root / "snapshots/demo/replay", update=False)
    written += record_replay(root / "snapshots/demo/replay-update", update=True)
    written += write_fixtures(root / "tests/fixtures")
    return written


if __name__ == "__main__":
    for path in main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT):
        print(path)
