"""Fixtures for the Parlance conformance suite.

One daemon per test module (module-scoped ``client``), started with isolated cache and
data directories; ``spawn`` starts extra daemons that are stopped when the module ends.
Every daemon a module started is checked at the end: no response may have carried
-32603 (internal error, a bug by definition) and no frame may have been undecodable.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterator, List

import pytest

import support
from parlance_client import ParlanceClient


@pytest.fixture(scope="session")
def spec() -> Dict[str, Any]:
    """The OpenRPC document the binary prints (rpc.discover is checked against it)."""
    return support.printed_spec()


class Spawner:
    def __init__(self, module: str) -> None:
        self.module = module
        self.clients: List[ParlanceClient] = []

    def __call__(self, *args: str, framing: str = "ndjson", initialize: bool = True, **kw: Any) -> ParlanceClient:
        c = support.spawn(args, framing=framing, initialize=initialize, name=self.module, **kw)
        self.clients.append(c)
        return c

    def close(self) -> None:
        problems = []
        for c in self.clients:
            if c.running:
                try:
                    c.close(timeout=30)
                except Exception as e:  # noqa: BLE001
                    problems.append(f"closing {c.log_path}: {e}")  # type: ignore[attr-defined]
            if c.error_codes.get(-32603):
                problems.append(f"{c.error_codes[-32603]} internal error(s) (-32603); log: {c.log_path}")  # type: ignore[attr-defined]
            if c.undecodable:
                problems.append(f"undecodable frames from the daemon: {c.undecodable[:3]}")
        assert not problems, "\n".join(problems)


@pytest.fixture(scope="module")
def spawn(request: pytest.FixtureRequest) -> Iterator[Callable[..., ParlanceClient]]:
    """Start a daemon (initialized unless initialize=False); stopped at module end."""
    s = Spawner(request.module.__name__)
    yield s
    s.close()


@pytest.fixture(scope="module")
def client(spawn: Callable[..., ParlanceClient]) -> ParlanceClient:
    """The module's shared, initialized daemon (NDJSON framing)."""
    return spawn()
