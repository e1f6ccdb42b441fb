"""Helpers shared by the conformance suite: the spec (OpenRPC), schema validation, and
daemon spawning with isolated cache and data directories."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional

HERE = Path(__file__).resolve().parent
PROTOCOL = HERE.parent
REPO = PROTOCOL.parent
sys.path.insert(0, str(PROTOCOL / "clients" / "python"))

from parlance_client import ParlanceClient, PendingRequest, RPCError  # noqa: E402

import jsonschema  # noqa: E402
from jsonschema import Draft202012Validator  # noqa: E402

#: Seconds to wait for one response. Generous: CI machines with 2 cores can be busy.
TIMEOUT = float(os.environ.get("PARLANCE_CONFORMANCE_TIMEOUT", "300"))

SAMPLE_SRT = """1
00:00:01,000 --> 00:00:04,000
ALICE: Welcome back. Today we talk about the product launch.

2
00:00:04,500 --> 00:00:09,000
BOB: The launch moves to March because the battery tests failed twice.

3
00:00:09,500 --> 00:00:13,000
ALICE: Then marketing needs the new date by Friday.

4
00:00:13,500 --> 00:00:17,000
BOB: I will send it today, and QA starts the new battery tests on Monday.
"""

SAMPLE_VTT = """WEBVTT

00:00:01.000 --> 00:00:04.000
<v Carol>The budget review is on Thursday.

00:00:04.500 --> 00:00:08.000
<v Dan>We should cut travel costs by ten percent.
"""

SAMPLE_TEXT = "Alice: the launch moves to March. Bob: then marketing needs the date by Friday."


def binary() -> str:
    """The daemon under test: $PARLANCE_BIN, else .build/release/parlance in the repo."""
    b = os.environ.get("PARLANCE_BIN") or str(REPO / ".build" / "release" / "parlance")
    if not os.access(b, os.X_OK):
        raise RuntimeError(f"parlance binary not found at {b}: build it (make build) or set PARLANCE_BIN")
    return b


def model_path() -> str:
    """The default model file (the set-up exports PARLANCE_DEFAULT_MODEL)."""
    p = os.environ.get("PARLANCE_MODEL") or os.environ.get("PARLANCE_DEFAULT_MODEL") or ""
    if not os.path.isfile(p):
        raise RuntimeError("no model file: set PARLANCE_DEFAULT_MODEL (eval \"$(scripts/setup.sh)\")")
    return p


def printed_spec() -> Dict[str, Any]:
    """`parlance --print-spec`, parsed."""
    out = subprocess.run([binary(), "--print-spec"], check=True, capture_output=True, timeout=60)
    return json.loads(out.stdout)


_log_dir: Optional[str] = None


def log_dir() -> str:
    """Where daemons' stderr logs go ($PARLANCE_CONFORMANCE_LOGS or a temp dir)."""
    global _log_dir
    if _log_dir is None:
        _log_dir = os.environ.get("PARLANCE_CONFORMANCE_LOGS") or tempfile.mkdtemp(prefix="parlance-conformance-logs-")
        os.makedirs(_log_dir, exist_ok=True)
    return _log_dir


_spawned = 0


def spawn(args: Iterable[str] = (), *, framing: str = "ndjson", initialize: bool = True,
          env: Optional[Dict[str, str]] = None, name: str = "daemon") -> ParlanceClient:
    """A daemon with fresh cache and data directories (so nothing is served from an
    earlier run's analysis cache), logging at info level to a file under log_dir()."""
    global _spawned
    _spawned += 1
    root = tempfile.mkdtemp(prefix="parlance-conformance-")
    e = {"PARLANCE_CACHE_DIR": os.path.join(root, "cache"), "PARLANCE_DATA_DIR": os.path.join(root, "data"),
         "PARLANCE_LOG_LEVEL": "info"}
    e.update(env or {})
    log = open(os.path.join(log_dir(), f"{_spawned:03d}-{name}.log"), "w")
    c = ParlanceClient(binary(), list(args), framing=framing, env=e, stderr=log, default_timeout=TIMEOUT)  # type: ignore[arg-type]
    c.log_path = log.name  # type: ignore[attr-defined]
    log.close()
    if initialize:
        c.initialize(client_name="parlance-conformance")
    return c


# -- spec access -------------------------------------------------------------------------

def methods_of(spec: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    """Request methods the daemon answers, by name (notifications and the requests the
    daemon sends to the client excluded)."""
    return {m["name"]: m for m in spec["methods"]
            if not m.get("x-notification") and m.get("x-direction") != "serverToClient"}


def client_methods_of(spec: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    """Requests the daemon sends and the client answers (LSP's workspace/applyEdit…)."""
    return {m["name"]: m for m in spec["methods"]
            if not m.get("x-notification") and m.get("x-direction") == "serverToClient"}


def notifications_of(spec: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    return {m["name"]: m for m in spec["methods"] if m.get("x-notification")}


def params_schema(method: Dict[str, Any], *, closed: bool = True) -> Dict[str, Any]:
    """The by-name params object schema rebuilt from an OpenRPC method's params list."""
    props = {p["name"]: p.get("schema", {}) for p in method.get("params", [])}
    s: Dict[str, Any] = {"type": "object", "properties": props,
                         "required": [p["name"] for p in method.get("params", []) if p.get("required")]}
    if closed:
        s["additionalProperties"] = False
    return s


def result_schema(method: Dict[str, Any]) -> Dict[str, Any]:
    return method["result"]["schema"]


def error_data_schema(spec: Dict[str, Any], code: int) -> Optional[Dict[str, Any]]:
    for e in spec.get("components", {}).get("errors", {}).values():
        if e.get("code") == code:
            return e.get("data")
    return None


def validate(instance: Any, schema: Dict[str, Any], what: str) -> None:
    """Validate with JSON Schema 2020-12; fail listing every violation."""
    v = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    errors = sorted(v.iter_errors(instance), key=lambda e: list(e.absolute_path))
    if errors:
        lines = [f"  at /{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}" for e in errors[:10]]
        raise AssertionError(f"{what} does not validate against its schema:\n" + "\n".join(lines)
                             + f"\ninstance: {json.dumps(instance)[:2000]}")


def check_error(spec: Dict[str, Any], err: RPCError, code: int, kind: Optional[str] = None) -> None:
    """An error response has the expected code, a message, and data matching the spec's
    data schema for that code (when the spec gives one)."""
    assert err.code == code, f"expected {code}, got {err.code}: {err.message} data={err.data}"
    assert isinstance(err.message, str) and err.message, "error.message must be a non-empty string"
    schema = error_data_schema(spec, code)
    if schema is not None:
        validate(err.data, schema, f"error {code} data")
    if kind is not None:
        assert isinstance(err.data, dict) and err.data.get("error") == kind, f"expected data.error {kind!r}, got {err.data}"


def error_of(pending: PendingRequest, timeout: float = TIMEOUT) -> RPCError:
    e = pending.error(timeout)
    assert e is not None, f"{pending.method} should have failed, got {json.dumps(pending.response)[:500]}"
    return e


def expect_error(client: ParlanceClient, method: str, params: Any, timeout: float = TIMEOUT) -> RPCError:
    return error_of(client.start(method, params), timeout)


def progress_values(pending: PendingRequest) -> List[Dict[str, Any]]:
    return list(pending.progress)
