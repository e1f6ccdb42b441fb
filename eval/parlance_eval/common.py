"""What every part of the eval shares: the repository's paths, the settings every column
sends (seed, tones, methods), logging, the metric helpers, and the processes running now (a
stop signal closes them all)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "protocol", "clients", "python"))

if TYPE_CHECKING:
    import subprocess

    from parlance_client import ParlanceClient

SEED = 42  # the first run's seed; run k of --repeat uses SEED + k (`seed()`)
_RUN = {"seed": SEED}


def seed() -> int:
    """The seed every request of this run sends."""
    return _RUN["seed"]


def set_seed(value: int) -> None:
    _RUN["seed"] = value
TONES = ["formal", "casual", "diplomatic", "empathetic"]
LIST_DOCS = ["Samples/podcast-sample.srt", "transcripts/clinic.txt"]  # from the repository root / the data dir
ANALYSES = ["analysis/summarize", "analysis/highlights"]
REFUSAL_CODES = {-32010}  # generationFailed: documented refusals, counted, not fatal
METHODS = ["ask/stream", "compose/variations"] + ANALYSES


def log(msg: str) -> None:
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def rate(n: int, d: int) -> Optional[float]:
    return round(n / d, 3) if d else None


def mean(xs: Sequence[float], nd: int = 3) -> Optional[float]:
    xs = [x for x in xs if x is not None]
    return round(sum(xs) / len(xs), nd) if xs else None


def verification_of(obj: Any) -> Optional[Dict[str, Any]]:
    v = obj.get("verification") if isinstance(obj, dict) else None
    return v if isinstance(v, dict) else None


# ---------------------------------------------------------------------------------------
# The processes running now, and the signal that stops the run
# ---------------------------------------------------------------------------------------

ACTIVE: List[ParlanceClient] = []  # daemons running now
STOPPING: List[int] = []  # the signal that stops the run
PEER_PROCS: List[subprocess.Popen] = []  # llama-server running now


def on_signal(signum: int, frame: Any) -> None:
    """SIGTERM/SIGINT: close every daemon's input (it cancels its work and exits, so every
    request in flight answers at once), then let the run unwind and remove its files."""
    if not STOPPING:
        log(f"eval: signal {signum}: stopping")
    STOPPING.append(signum)
    for c in list(ACTIVE):
        c.close_input()
    for p in list(PEER_PROCS):
        if p.poll() is None:
            p.terminate()
