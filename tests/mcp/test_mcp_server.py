"""`parlance mcp` driven by the official MCP Python SDK (PyPI `mcp`), as a host drives a
server: over stdio, through the SDK's own client (`mcp.Client`), which probes
`server/discover` first and falls back to the `initialize` handshake.

Run with the MCP environment's python (scripts/setup-mcp.sh; scripts/test-extra.sh does).
Every wait is on an observable event (a result, a notification); timeouts only bound a
hung test.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import anyio
import jsonschema
import pytest
from mcp import Client, StdioServerParameters

from conftest import ROOT, binary_path

SRT = ROOT / "eval" / "data" / "transcripts" / "beekeeping.srt"
LONG = ROOT / "eval" / "data" / "transcripts" / "council.srt"
HUNG = 300  # seconds: bounds a hung test only


def server(env: dict) -> StdioServerParameters:
    return StdioServerParameters(command=str(binary_path()), args=["mcp"], env=env)


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def run(coro_fn, *args):
    async def bounded():
        with anyio.fail_after(HUNG):
            return await coro_fn(*args)
    return anyio.run(bounded)


def test_handshake_negotiates_the_revision(daemon_env):
    """The SDK connects (its discover probe is refused, it falls back to initialize);
    a raw initialize offering an older known revision gets it, an unknown one the newest."""
    async def main():
        async with Client(server(daemon_env)) as c:
            assert c.protocol_version == "2025-11-25"
            assert c.server_info.name == "parlance"
            caps = c.server_capabilities
            assert caps.tools is not None and caps.resources is not None and caps.prompts is not None and caps.logging is not None
            await c.send_ping()
    run(main)

    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    out = subprocess.run([str(binary_path()), "mcp"], input="".join(json.dumps(m) + "\n" for m in lines), capture_output=True,
                         text=True, env=daemon_env, timeout=HUNG)
    answers = {m["id"]: m for m in map(json.loads, out.stdout.splitlines())}
    assert answers[1]["result"]["protocolVersion"] == "2024-11-05"
    # 2024-11-05 has no output schemas: none are listed.
    assert all("outputSchema" not in t for t in answers[2]["result"]["tools"])
    lines[0]["params"]["protocolVersion"] = "1999-01-01"
    out = subprocess.run([str(binary_path()), "mcp"], input=json.dumps(lines[0]) + "\n", capture_output=True, text=True, env=daemon_env, timeout=HUNG)
    assert json.loads(out.stdout.splitlines()[0])["result"]["protocolVersion"] == "2025-11-25"


def test_tools_list_schemas_are_json_schema(daemon_env):
    async def main():
        async with Client(server(daemon_env)) as c:
            tools = (await c.list_tools()).tools
            assert sorted(t.name for t in tools) == ["analyze", "ask", "compare", "rewrite", "segments", "summarize"]
            for t in tools:
                jsonschema.Draft202012Validator.check_schema(t.input_schema)
                assert t.input_schema["type"] == "object"
                assert "workDoneToken" not in t.input_schema["properties"], t.name
                assert t.output_schema is not None, t.name
                jsonschema.Draft202012Validator.check_schema(t.output_schema)
                assert t.description and len(t.description) > 40
            ask = next(t for t in tools if t.name == "ask")
            assert {"path", "uri", "text", "question", "paths", "uris"} <= set(ask.input_schema["properties"])
            assert ask.input_schema["properties"]["uris"]["maxItems"] == ask.input_schema["properties"]["paths"]["maxItems"] == 16
            assert ask.input_schema["required"] == ["question"]
    run(main)


def test_summarize_ask_rewrite_resources_and_prompts(daemon_env):
    """summarize on a sample SRT with progress; ask with citations and timestamps; rewrite in
    two tones; the document and the composition are resources; prompts; logging."""
    async def main():
        logs = []

        async def on_log(params):
            logs.append(params)

        async with Client(server(daemon_env), logging_callback=on_log) as c:
            await c.set_logging_level("info")
            progress = []

            async def on_progress(p, total, message):
                progress.append((p, total, message))

            s = await c.call_tool("summarize", {"path": str(SRT), "maxTokens": 160, "seed": 1}, progress_callback=on_progress)
            assert not s.is_error, text_of(s)
            assert s.structured_content["summary"] and s.structured_content["keyTakeaways"]
            assert s.structured_content["summary"].split()[0] in text_of(s)
            assert progress, "no notifications/progress during summarize"
            assert [p for p, _, _ in progress] == sorted(p for p, _, _ in progress), progress
            assert any(l.data and "summarize" in str(l.data) for l in logs), logs

            a = await c.call_tool("ask", {"path": str(SRT), "question": "In which year did Tomasz start keeping bees?", "maxTokens": 64, "seed": 2})
            assert not a.is_error, text_of(a)
            cites = a.structured_content["citations"]
            assert cites and all(x["start"] is not None for x in cites), a.structured_content
            assert "Sources:" in text_of(a) and "[00:" in text_of(a)

            r = await c.call_tool("rewrite", {"text": "hey, the review moved to thursday 3pm, bring the £1,150 budget sheet",
                                              "tones": ["formal", "casual"], "maxTokens": 64, "seed": 3})
            assert not r.is_error, text_of(r)
            variations = r.structured_content["variations"]
            assert [v["tone"] for v in variations] == ["formal", "casual"]
            assert "[formal" in text_of(r) and "[casual" in text_of(r)

            resources = (await c.list_resources()).resources
            uris = [str(x.uri) for x in resources]
            assert SRT.resolve().as_uri() in uris, uris
            body = await c.read_resource(SRT.resolve().as_uri())
            assert body.contents[0].text == SRT.read_text()
            history = [u for u in uris if u.startswith("parlance://compose/")]
            assert history, uris
            entry = json.loads((await c.read_resource(history[0])).contents[0].text)
            assert entry["variations"], entry

            prompts = (await c.list_prompts()).prompts
            assert sorted(p.name for p in prompts) == ["rewrite", "summary"]
            got = await c.get_prompt("rewrite", {"text": "see you at 5", "tone": "formal"})
            assert "formal" in got.messages[0].content.text and "see you at 5" in got.messages[0].content.text
            summary = await c.get_prompt("summary", {"path": str(SRT)})
            assert "Tomasz" in summary.messages[0].content.text
    run(main)


def test_ask_across_several_files(daemon_env):
    """ask over several files (paths): each becomes an open document, and every citation
    names the file it comes from, in the structured result and in the text."""
    async def main():
        async with Client(server(daemon_env)) as c:
            a = await c.call_tool("ask", {"paths": [str(LONG), str(SRT)], "question": "In which year did Tomasz start keeping bees?",
                                          "maxTokens": 64, "seed": 2})
            assert not a.is_error, text_of(a)
            r = a.structured_content
            assert [d["uri"] for d in r["retrieval"]["documents"]] == [LONG.resolve().as_uri(), SRT.resolve().as_uri()], r["retrieval"]
            assert r["citations"], r
            for cite in r["citations"]:
                assert cite["uri"] in (LONG.resolve().as_uri(), SRT.resolve().as_uri()), cite
                name = cite["uri"].rsplit("/", 1)[1]
                assert f"  {name} [" in text_of(a), text_of(a)
            assert any(cite["uri"] == SRT.resolve().as_uri() for cite in r["citations"]), r["citations"]
            # Both files are open documents now (resources).
            uris = [str(x.uri) for x in (await c.list_resources()).resources]
            assert LONG.resolve().as_uri() in uris and SRT.resolve().as_uri() in uris, uris
            both = await c.call_tool("ask", {"paths": [str(SRT), str(LONG)], "path": str(SRT), "question": "Who?"})
            assert both.is_error and "paths" in text_of(both), text_of(both)
            twice = await c.call_tool("ask", {"paths": [str(SRT), str(SRT)], "question": "Who?"})
            assert twice.is_error and "uris[1]" in text_of(twice), text_of(twice)
    run(main)


def test_bad_arguments_are_tool_errors_and_unknown_tools_protocol_errors(daemon_env):
    async def main():
        async with Client(server(daemon_env)) as c:
            bad = await c.call_tool("ask", {"question": 5, "path": str(SRT)})
            assert bad.is_error and "question" in text_of(bad), text_of(bad)
            missing = await c.call_tool("summarize", {"path": "/nonexistent/episode.srt"})
            assert missing.is_error and "/nonexistent/episode.srt" in text_of(missing)
            nothing = await c.call_tool("ask", {"question": "Who?"})
            assert nothing.is_error and "path" in text_of(nothing)
            # The method's own refusal (a tone that does not exist) comes back as a tool error with its message.
            tone = await c.call_tool("rewrite", {"text": "hello", "tones": ["sarcastic"]})
            assert tone.is_error and "sarcastic" in text_of(tone), text_of(tone)
            with pytest.raises(Exception) as e:
                await c.call_tool("nonexistent", {})
            assert "unknown tool" in str(e.value)
            await c.send_ping()
    run(main)


def test_a_cancelled_call_stops_and_the_server_goes_on(daemon_env):
    """A long summarize is cancelled once its first progress arrives (the SDK sends
    notifications/cancelled); the server then answers the next call."""
    async def main():
        async with Client(server(daemon_env)) as c:
            started = anyio.Event()

            async def on_progress(p, total, message):
                started.set()

            async with anyio.create_task_group() as tg:
                async def long_call():
                    await c.call_tool("summarize", {"path": str(LONG), "maxTokens": 400}, progress_callback=on_progress)
                    raise AssertionError("the long call finished before it was cancelled")
                tg.start_soon(long_call)
                await started.wait()
                tg.cancel_scope.cancel()
            again = await c.call_tool("ask", {"path": str(SRT), "question": "Where are the hives?", "maxTokens": 64, "seed": 4})
            assert not again.is_error, text_of(again)
    run(main)
