"""Every method, called with valid params; params, result and progress validated against
the spec (rpc.discover); and a check that every method the daemon announces has a case."""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterator

import pytest

import support
from cases import CASES, CaseContext
from parlance_client import ParlanceClient, PendingRequest


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "method" in metafunc.fixturenames:
        names = list(support.methods_of(support.printed_spec()))
        names += [m for m in CASES if m not in names]
        metafunc.parametrize("method", names)


@pytest.fixture(scope="module")
def discovered(client: ParlanceClient) -> Dict[str, Any]:
    """The spec as the daemon itself answers it (rpc.discover): what results are checked against."""
    return client.request("rpc.discover")


@pytest.fixture(scope="module")
def case_cache() -> Dict[str, Any]:
    return {}


def test_every_capability_has_a_case(client: ParlanceClient) -> None:
    """The suite covers 100% of the methods listed in initialize's capabilities."""
    missing = [m for m in client.methods if m not in CASES]
    assert not missing, ("methods announced in initialize's capabilities without a conformance case "
                         f"(add them to protocol/conformance/cases.py): {', '.join(missing)}")


def test_capabilities_list_exactly_the_spec_methods(client: ParlanceClient, discovered: Dict[str, Any]) -> None:
    assert sorted(client.methods) == sorted(support.methods_of(discovered))
    assert sorted(client.capabilities["notifications"]) == sorted(support.notifications_of(discovered))  # type: ignore[index]


def check_progress(pending: PendingRequest, spec: Dict[str, Any]) -> None:
    """Every $/progress for the request validates; begin first, end last, reports between."""
    schema = support.params_schema(support.notifications_of(spec)["$/progress"])
    values = pending.progress
    assert values, f"{pending.method} with a workDoneToken sent no $/progress"
    for v in values:
        support.validate({"token": pending.token, "value": v}, schema, "$/progress params")
    kinds = [v["kind"] for v in values]
    assert kinds[0] == "begin", kinds
    assert kinds[-1] == "end", kinds
    assert all(k == "report" for k in kinds[1:-1]), kinds
    ok = "error" not in (pending.response or {})
    assert values[-1].get("message") == ("done" if ok else values[-1].get("message"))


def test_method(method: str, client: ParlanceClient, spawn: Callable[..., ParlanceClient],
                discovered: Dict[str, Any], case_cache: Dict[str, Any]) -> None:
    if method not in CASES:
        pytest.fail(f"no conformance case for {method}: add one to protocol/conformance/cases.py")
    if method not in client.methods:
        pytest.skip(f"{method} is not in this daemon's capabilities (a case written ahead of the method)")
    c = CASES[method]
    if c.daemon == "shared":
        target, cache = client, case_cache
    else:
        target, cache = spawn(*c.args, initialize=(c.daemon == "fresh")), {}
    ctx = CaseContext(target, discovered, cache)
    params = c.prepare(ctx)
    m = support.methods_of(discovered)[method]
    support.validate(params, support.params_schema(m), f"the conformance case's params for {method} (fix the case)")
    takes_token = any(p["name"] == "workDoneToken" for p in m["params"])
    pending = target.start(method, params, progress=takes_token)
    result = pending.result()
    support.validate(result, support.result_schema(m), f"the result of {method}")
    if takes_token:
        check_progress(pending, discovered)
    if c.check is not None:
        c.check(result, pending.params or {}, ctx)
