"""Formality: the daemon's own scorer (`parlance --print-formality`, Formality.score), so the
peer's rewrites are scored exactly as the daemon scores a variation's `formalityScore`. One
process per eval run, a line in and a line out per text; there is no copy of its word lists here."""

from __future__ import annotations

import json
import subprocess
import threading
from typing import Optional


class DaemonFormality:
    """Scores text with `binary --print-formality`, started on first use."""

    def __init__(self, binary: str) -> None:
        self.binary = binary
        self.proc: Optional[subprocess.Popen] = None
        self.lock = threading.Lock()

    def __call__(self, text: str, language: str = "en") -> float:
        with self.lock:
            if self.proc is None:
                self.proc = subprocess.Popen([self.binary, "--print-formality"], stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE, text=True, encoding="utf-8", bufsize=1)
            assert self.proc.stdin and self.proc.stdout
            self.proc.stdin.write(json.dumps({"text": text, "language": language or "en"}) + "\n")
            self.proc.stdin.flush()
            reply = self.proc.stdout.readline().strip()
        if not reply or reply.startswith("error"):
            raise RuntimeError(f"{self.binary} --print-formality: {reply or 'no reply (exited)'}")
        return float(reply)

    def close(self) -> None:
        if self.proc is not None:
            self.proc.stdin.close()  # type: ignore[union-attr]
            self.proc.wait(timeout=30)
            self.proc = None
