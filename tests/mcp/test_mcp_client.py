"""MCP servers as tool sources for Parlance's sessions (Parlance as an MCP client), through
the daemon (`parlance --stdio --mcp-server …`, NDJSON), against real MCP servers from PyPI
that nobody here wrote (mcp-server-time, mcp-server-git on a temporary repository) and a
small stand-in whose tools misbehave on purpose (tests/fixtures/mcp_standin.py).

The default model (SmolLM2-135M) does not call tools on its own reliably, so each turn
forces the call with `toolChoice: {"name": …}`; the arguments are the model's, constrained
by the server's own input schema.

One daemon serves every test of this file (module scope). Waits are on messages only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import GENERATION_TIMEOUT, QUICK_TIMEOUT, ROOT, Daemon, binary_path, request

VENV_BIN = Path(sys.executable).parent
STANDIN = ROOT / "tests" / "fixtures" / "mcp_standin.py"


class Session:
    """A daemon and a counter of request ids."""

    def __init__(self, d: Daemon) -> None:
        self.d = d
        self.next = 100

    def call(self, method: str, params: dict | None = None, timeout: float = GENERATION_TIMEOUT) -> dict:
        self.next += 1
        self.d.send(request(self.next, method, params))
        return self.d.response(self.next, timeout)

    def result(self, method: str, params: dict | None = None) -> dict:
        r = self.call(method, params)
        assert "result" in r, f"{method} failed: {r}\n{self.d.diagnostics()}"
        return r["result"]


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("mcp-client")
    # A short path: the model copies it into the call's arguments.
    repo = Path(tempfile.mkdtemp(prefix="notes-", dir="/tmp"))
    git = ["git", "-C", str(repo), "-c", "user.name=Hannah", "-c", "user.email=hannah@example.org"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "hives.md").write_text("Two hives on the print shop roof.\n")
    subprocess.run(git + ["add", "hives.md"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "Add the rooftop hive notes"], check=True)
    e = dict(os.environ)
    e.update({"PARLANCE_CACHE_DIR": str(tmp / "cache"), "PARLANCE_DATA_DIR": str(tmp / "data"),
              "XDG_CONFIG_HOME": str(tmp / "config"), "PARLANCE_LOG_LEVEL": "info", "STANDIN_LOG": str(tmp / "standin.log")})
    e.pop("PARLANCE_LOG_FILE", None)
    yield {"env": e, "tmp": tmp, "repo": repo}
    shutil.rmtree(repo, ignore_errors=True)


@pytest.fixture(scope="module")
def s(env):
    # The time server and the stand-in from --mcp-server; git from the config file's mcpServers.
    config = env["tmp"] / "parlance.json"
    config.write_text(json.dumps({"mcpServers": {"git": {"command": str(VENV_BIN / "mcp-server-git"), "args": []}}}))
    d = Daemon(binary_path(), [
        "--config", str(config),
        "--mcp-server", f"time={VENV_BIN / 'mcp-server-time'} --local-timezone=UTC",
        "--mcp-server", f"standin={sys.executable} {STANDIN}",
        "--mcp-server", "missing=parlance-no-such-mcp-server --stdio",
    ], env["env"], env["tmp"] / "daemon.log")
    session = Session(d)
    session.result("initialize", {"capabilities": {}})
    yield session
    d.stop()


def create(s: Session, **params) -> str:
    return s.result("session/create", params)["sessionId"]


def respond(s: Session, sid: str, prompt: str, max_tokens: int = 48, **extra) -> dict:
    return s.call("session/respond", {"sessionId": sid, "prompt": prompt,
                                      "options": {"maxTokens": max_tokens, "temperature": 0, "seed": 7}, **extra})


def test_mcp_list_shows_each_server_and_its_tools(s):
    before = {x["name"]: x for x in s.result("mcp/list")["servers"]}
    assert set(before) == {"git", "time", "standin", "missing"}
    assert before["time"]["command"].endswith("mcp-server-time") and before["time"]["args"] == ["--local-timezone=UTC"]
    listed = {x["name"]: x for x in s.result("mcp/list", {"start": True})["servers"]}
    assert listed["time"]["state"] == "running" and listed["time"]["protocolVersion"]
    assert "time/get_current_time" in [t["name"] for t in listed["time"]["tools"]]
    assert "git/git_log" in [t["name"] for t in listed["git"]["tools"]]
    assert listed["missing"]["state"] == "failed" and listed["missing"]["reason"] == "notFound", listed["missing"]


def test_time_in_tokyo_through_mcp_server_time(s):
    sid = create(s, instructions="Answer with the tool's output.", mcpServers=["time"])
    # The 135M model needs the IANA name spelled out to write it as the argument.
    r = respond(s, sid, 'What time is it in Tokyo? Call the tool with timezone "Asia/Tokyo".', toolChoice={"name": "time/get_current_time"})
    assert "result" in r, r
    call = r["result"]["toolCalls"][0]
    assert call["name"] == "time/get_current_time"
    assert call["arguments"] == {"timezone": "Asia/Tokyo"}, call
    assert "error" not in call, call
    out = json.loads(call["output"])
    assert out["timezone"] == "Asia/Tokyo" and out["datetime"], out
    assert r["result"]["text"], r
    # The answer is the model's, after the tool's output: it quotes the date or the time.
    day, clock = out["datetime"][:10], out["datetime"][11:16]
    assert day in r["result"]["text"] and clock in r["result"]["text"], r["result"]["text"]


def test_tokyo_without_the_argument_spelled_out_does_not_loop(s):
    """The 135M model is not told the IANA name. It used to write {"timezone": ""}, make the
    same failing call five times and answer with an imitation of a call. Now: a required
    string is never empty, no call is made twice in a turn, and no answer looks like a call."""
    sid = create(s, instructions="Answer with the tool's output.", mcpServers=["time"])
    r = respond(s, sid, "What time is it in Tokyo?", toolChoice="required")
    calls = (r.get("result") or r["error"]["data"])["toolCalls"]
    assert calls, r
    # Every argument the tools require is a string here, and none is empty.
    assert all(v != "" for c in calls for v in c["arguments"].values()), calls
    made = [json.dumps(c["arguments"], sort_keys=True) for c in calls if c.get("ms", 1) != 0]
    assert len(made) == len(set(made)), f"a call was made twice: {calls}"
    if "error" in r:
        # A failing call made again ends the turn with that failure, named.
        assert r["error"]["code"] == -32010 and r["error"]["data"]["reason"] == "repeatedFailure", r
        assert r["error"]["data"]["toolError"]["message"], r
    else:
        text = r["result"]["text"]
        assert text and "<tool" not in text.lower() and "tool_call" not in text.lower(), text


def test_last_commit_message_through_mcp_server_git(s, env):
    sid = create(s, instructions="Answer with the commit message.", tools=[{"name": "git/git_log"}])
    r = respond(s, sid, f'What is the last commit\'s message? Call the tool with repo_path "{env["repo"]}".', toolChoice={"name": "git/git_log"})
    assert "result" in r, r
    call = r["result"]["toolCalls"][0]
    assert call["arguments"]["repo_path"] == str(env["repo"]), call
    assert "Add the rooftop hive notes" in call["output"], call
    # The 135M model's answer copies the log's first lines (commit, author, date) and stops
    # before the message: the message is asserted in the call's output, which the session shows.
    assert "Commit" in r["result"]["text"], r["result"]["text"]


def test_faults_are_typed_and_the_session_goes_on(s, env):
    sid = create(s, mcpServers=["standin"])

    def works(n_expected_prefix="standin echo"):
        ok = respond(s, sid, "Echo.", toolChoice={"name": "standin/echo"})
        assert "result" in ok, ok
        assert ok["result"]["toolCalls"][0]["output"].startswith(n_expected_prefix), ok

    works()
    # The tool reports an error: the model is told; the turn succeeds.
    failed = respond(s, sid, "Fail.", toolChoice={"name": "standin/fail"})
    assert "result" in failed, failed
    assert failed["result"]["toolCalls"][0]["error"] == {"code": -32000, "message": "the stand-in's disk is full"}
    works()
    # The server crashes mid-call: toolCallFailed / serverExited; the next use starts it again.
    crash = respond(s, sid, "Crash.", toolChoice={"name": "standin/crash"})
    assert crash["error"]["code"] == -32010, crash
    assert crash["error"]["data"]["reason"] == "serverExited" and crash["error"]["data"]["server"] == "standin", crash
    assert "exit code 3" in crash["error"]["message"], crash
    works("standin echo 1")
    # Malformed output: malformedOutput; the server is stopped and started again on next use.
    garbage = respond(s, sid, "Garbage.", toolChoice={"name": "standin/garbage"})
    assert garbage["error"]["data"]["reason"] == "malformedOutput", garbage
    works("standin echo 1")
    # Silence: timedOut after toolTimeoutMs, and the server is told the call is cancelled.
    silent = respond(s, sid, "Wait.", toolChoice={"name": "standin/silent"}, toolTimeoutMs=1500)
    assert silent["error"]["data"]["reason"] == "timedOut" and silent["error"]["data"]["timeoutMs"] == 1500, silent
    works()
    log = [json.loads(l) for l in (env["tmp"] / "standin.log").read_text().splitlines()]
    silent_ids = [e["id"] for e in log if e["method"] == "tools/call" and e["params"]["name"] == "silent"]
    cancels = [e["params"]["requestId"] for e in log if e["method"] == "notifications/cancelled"]
    assert silent_ids and silent_ids[-1] in cancels, (silent_ids, cancels)
    # A server whose command does not exist: session/create fails with mcpServerFailed / notFound.
    missing = s.call("session/create", {"mcpServers": ["missing"]})
    assert missing["error"]["code"] == -32012 and missing["error"]["data"]["reason"] == "notFound", missing
    assert "parlance-no-such-mcp-server" in missing["error"]["message"]
    # Unknown names are invalid params.
    unknown = s.call("session/create", {"mcpServers": ["nope"]})
    assert unknown["error"]["code"] == -32602 and unknown["error"]["data"]["error"] == "unknownMCPServer", unknown
    notool = s.call("session/create", {"tools": [{"name": "standin/nope"}]})
    assert notool["error"]["data"]["error"] == "unknownTool" and "standin/echo" in notool["error"]["data"]["tools"], notool
    # The session is still usable, and so is the daemon.
    works()
    assert s.result("mcp/list")["servers"]
