"""Handle figures of ``make bench`` (run by :mod:`pipeline.bench.bench_audit`).

Handle parse from a string, verify from a string (parse + HMAC) and mint (a locator in, the
string out), per second, medians of interleaved rounds, beside raw ``hmac.digest`` of the same
messages (the physical reference: how loaded the shared machine was) and, when the peer is
installed (:mod:`pipeline.bench.bench_peer`), the peer's figures and our ratios to them from
the same rounds (:func:`handle_figures`); in the same rounds, parse with the locator built (the
peer's parse builds its own), verify and mint with the plain HMAC (:func:`plain_check_code`),
which the keyring's hand-built pads must beat by 10 % to stay.
"""

from __future__ import annotations

import hashlib
import hmac
import statistics
from collections.abc import Callable
from pathlib import Path

from audit.handles import Handle, mint, parse_handle, parse_locator, verify
from audit.keys import DEMO_KEY, Keyring, _encode_check
from pipeline.bench import Figure, rate
from pipeline.bench.bench_peer import PEER_NAME, Peer, PeerUnavailable, peer_python

FIRST_PMID = 99_000_000  # the bench's invented PMIDs: these handles, bench_audit's records
HANDLES = 50_000
HANDLE_ROUNDS = 7
PEER_HANDLES = {"parse": 239_000.0, "verify": 131_000.0, "mint": 176_000.0}
"""The peer's handle figures on these machines (issue 17), the goals' base without the peer."""


def plain_check_code(key: bytes) -> Callable[[str], str]:
    """The check code with the plain HMAC, ``hmac.new(key, digestmod=sha256).copy()`` per
    message: what the keyring's hand-built key pads (:mod:`audit.keys`) are kept against."""
    template = hmac.new(key, digestmod=hashlib.sha256)

    def check_code(message: str) -> str:
        mac = template.copy()
        mac.update(message.encode("utf-8"))
        return _encode_check(mac.digest())

    return check_code


def _handle_rounds(keyring: Keyring, texts: list[str], peer: Peer | None) -> dict[str, list[float]]:
    """HANDLE_ROUNDS interleaved rounds: ours (parse, parse with the locator built, verify,
    verify and mint with the plain HMAC, mint), the HMAC reference and, when present, the peer's
    round, each a rate per second over the same handle strings."""
    locators = [parse_handle(t).locator for t in texts]
    messages = [locator.text.encode() for locator in locators]
    code = plain_check_code(DEMO_KEY)

    def plain_verify(handle: Handle) -> bool:
        locator_text, _, check = handle.text.partition("~")
        return hmac.compare_digest(code(locator_text), check)

    rounds: dict[str, list[float]] = {}
    steps: dict[str, Callable[[], object]] = {
        "parse": lambda: [parse_handle(t) for t in texts],
        "parse+locator": lambda: [parse_handle(t).locator for t in texts],
        "verify": lambda: [verify(keyring, parse_handle(t)) for t in texts],
        "verify plain hmac": lambda: [plain_verify(parse_handle(t)) for t in texts],
        "mint": lambda: [mint(keyring, locator) for locator in locators],
        "mint plain hmac": lambda: [f"{loc.text}~{code(loc.text)}" for loc in locators],
        "hmac": lambda: [hmac.digest(DEMO_KEY, m, "sha256") for m in messages],
    }
    for _ in range(HANDLE_ROUNDS):
        for name, step in steps.items():
            rounds.setdefault(name, []).append(rate(len(texts), step))
        if peer is not None:
            for name, value in peer.round().items():
                rounds.setdefault(f"peer {name}", []).append(value)
    return rounds


def handle_figures(
    workdir: Path, keyring: Keyring, *, count: int = HANDLES, environ: dict[str, str] | None = None
) -> list[Figure]:
    """Handle parse from a string, verify from a string (parse + HMAC) and mint (a locator in,
    the string out): medians of interleaved rounds, beside raw ``hmac.digest`` of the same
    messages (the physical reference) and, when :data:`~pipeline.bench.bench_peer.
    PEER_PYTHON_ENV` names the peer's interpreter, the peer's figures and our ratios to them
    from the same rounds (goals: 2× the peer's; without the peer, 2× its figures measured on
    these machines, :data:`PEER_HANDLES`)."""
    texts = [
        mint(keyring, parse_locator(f"pmid:{FIRST_PMID + i}/abstract.{i % 10 + 1}"))
        for i in range(count)
    ]
    handles_file = workdir / "handles.txt"
    handles_file.write_text("".join(f"{t}\n" for t in texts), encoding="utf-8")
    try:
        with Peer(peer_python(environ), DEMO_KEY, handles_file) as peer:
            rounds = _handle_rounds(keyring, texts, peer)
        note = None
    except PeerUnavailable as unavailable:
        rounds, note = _handle_rounds(keyring, texts, None), str(unavailable)
    median = {name: statistics.median(values) for name, values in rounds.items()}
    figures = []
    for name, label in (
        ("parse", "handle parse from a string"),
        ("verify", "handle verify from a string (parse + HMAC)"),
        ("mint", "handle mint (a locator in, the string out)"),
    ):
        peer_rate = median.get(f"peer {name}")
        goal = 2 * (peer_rate if peer_rate is not None else PEER_HANDLES[name])
        figures.append(Figure(label, median[name], "/s", goal))
        if peer_rate is not None:
            figures += [
                Figure(f"  peer ({PEER_NAME}): {name}", peer_rate, "/s"),
                Figure(f"  ratio to the peer: {name}", median[name] / peer_rate, "×", 2),
            ]
        if name == "parse":  # the peer's parse builds its locator; ours on first use
            figures.append(Figure("  parse + its locator built", median["parse+locator"], "/s"))
        if name in ("verify", "mint"):  # the hand-built HMAC pads stay while they pay 10 %
            plain = median[f"{name} plain hmac"]
            figures += [
                Figure(f"  {name} with hmac.new(key).copy() per message", plain, "/s"),
                Figure("  hand-built HMAC pads over it", median[name] / plain, "×", 1.1),
            ]
    figures.append(Figure("reference: hmac.digest, same messages", median["hmac"], "/s"))
    rounds_note = f"{HANDLE_ROUNDS} rounds of {count:,} handles"
    figures.append(Figure(f"  ({rounds_note}; slowest verify round)", min(rounds["verify"]), "/s"))
    if note is not None:
        figures.append(Figure(f"  {note}", 0, "", note=True))
    return figures
