"""The spec itself: rpc.discover = `parlance --print-spec` = the committed
protocol/parlance.openrpc.json; a well-formed OpenRPC 1.x document whose schemas are valid
JSON Schema and whose examples validate against them."""

from __future__ import annotations

import json
from typing import Any, Dict

import pytest
from jsonschema import Draft202012Validator

import support
from parlance_client import ERROR_NAMES, ParlanceClient

COMMITTED = support.PROTOCOL / "parlance.openrpc.json"


def test_discover_equals_print_spec(client: ParlanceClient, spec: Dict[str, Any]) -> None:
    assert client.request("rpc.discover") == spec


def test_committed_spec_is_current(spec: Dict[str, Any]) -> None:
    if not COMMITTED.exists():
        pytest.fail(f"{COMMITTED} is missing: run `make spec` and commit it")
    committed = json.loads(COMMITTED.read_text(encoding="utf-8"))
    assert committed == spec, "protocol/parlance.openrpc.json is stale: run `make spec` and commit it"


def test_openrpc_shape(spec: Dict[str, Any], client: ParlanceClient) -> None:
    assert spec["openrpc"].startswith("1."), spec["openrpc"]
    assert spec["info"]["title"] == "Parlance"
    assert spec["info"]["version"] == client.server_info["protocolVersion"]  # type: ignore[index]
    names = [m["name"] for m in spec["methods"]]
    assert len(names) == len(set(names)), "method names are unique"
    for m in spec["methods"]:
        assert isinstance(m["summary"], str) and m["summary"], m["name"]
        assert m.get("paramStructure") == "by-name", m["name"]
        assert isinstance(m["params"], list)
        for p in m["params"]:
            assert set(p) <= {"name", "description", "required", "schema"}, p
            assert isinstance(p["name"], str) and isinstance(p["schema"], dict) and isinstance(p["required"], bool)
        if m.get("x-notification"):
            assert m.get("x-direction") in ("clientToServer", "serverToClient"), m["name"]
            assert "result" not in m
        else:
            assert m["result"]["name"] and isinstance(m["result"]["schema"], dict), m["name"]


def test_every_schema_is_valid_json_schema(spec: Dict[str, Any]) -> None:
    for m in spec["methods"]:
        for p in m["params"]:
            Draft202012Validator.check_schema(p["schema"])
        if "result" in m:
            Draft202012Validator.check_schema(m["result"]["schema"])
        for e in m.get("errors", []):
            Draft202012Validator.check_schema(e["data"])
    for e in spec["components"]["errors"].values():
        if "data" in e:
            Draft202012Validator.check_schema(e["data"])


def test_error_codes_are_documented(spec: Dict[str, Any]) -> None:
    comp = spec["components"]["errors"]
    by_code = {e["code"]: (name, e) for name, e in comp.items()}
    assert set(by_code) == set(ERROR_NAMES), "the client's error table and the spec agree"
    for code, (name, e) in by_code.items():
        assert ERROR_NAMES[code] == name
        assert e["message"]
    for m in spec["methods"]:
        for e in m.get("errors", []):
            name, c = by_code[e["code"]]
            assert e["message"] == name and e["data"] == c["data"], (m["name"], e)


def test_examples_validate(spec: Dict[str, Any]) -> None:
    for m in support.methods_of(spec).values():
        for ex in m.get("examples", []):
            params = {p["name"]: p["value"] for p in ex["params"]}
            support.validate(params, support.params_schema(m), f"{m['name']} example params")
            support.validate(ex["result"]["value"], support.result_schema(m), f"{m['name']} example result")


def test_notifications(spec: Dict[str, Any], client: ParlanceClient) -> None:
    notes = support.notifications_of(spec)
    assert {"initialized", "exit", "$/cancelRequest", "$/progress"} <= set(notes)
    assert notes["$/progress"]["x-direction"] == "serverToClient"
    assert notes["$/cancelRequest"]["x-direction"] == "clientToServer"
    value = {p["name"]: p for p in notes["$/progress"]["params"]}["value"]["schema"]
    assert value["properties"]["kind"]["enum"] == ["begin", "report", "end"]
    assert set(value["properties"]["phase"]["enum"]) >= {"queued", "prompt", "generating", "done"}
