#!/usr/bin/env python3
"""Give the model tools: Python functions that read the clock and local files.

    python3 protocol/examples/tools_clock.py
    python3 protocol/examples/tools_clock.py "What time is it in Tokyo?" --timezone Asia/Tokyo
    python3 protocol/examples/tools_clock.py "What is this file about?" --tool read_file
    python3 protocol/examples/tools_clock.py "Anything you like" --tool none      # no forced call

The functions are registered with the client's @client.tool decorator, which derives each
tool's JSON Schema from the signature and its description from the docstring. The client
declares capabilities.tools in initialize, passes the tools to session/create, and answers
the daemon's tool/call requests by running the functions. Prints each call as it happens,
then `Tool calls: N` and `Answer: …`.

Uses the Python client in protocol/clients/python (standard library only) and the daemon
at $PARLANCE_BIN (default: `parlance` on PATH, else .build/release/parlance).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import sys
from typing import Any, Dict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clients", "python"))

from parlance_client import ParlanceClient, RPCError, ToolInvocation  # noqa: E402

MAX_FILE_CHARS = 4000


def current_time(timezone: str = "UTC") -> str:
    """The current date and time in a time zone.

    Args:
        timezone: An IANA time zone name such as "Europe/Paris" or "America/New_York", "UTC", or an offset like "UTC+2".
    """
    now = datetime.datetime.now(datetime.timezone.utc)
    offset = re.fullmatch(r"(?:UTC|GMT)?\s*([+-])(\d{1,2})(?::?(\d{2}))?", timezone.strip(), re.IGNORECASE)
    if offset:  # "UTC+2", "+05:30", "GMT-8"
        sign = 1 if offset.group(1) == "+" else -1
        delta = datetime.timedelta(hours=int(offset.group(2)), minutes=int(offset.group(3) or 0))
        if delta > datetime.timedelta(hours=14):
            raise ValueError(f"{timezone!r} is not a UTC offset (at most ±14:00)")
        now = now.astimezone(datetime.timezone(sign * delta))
    elif timezone.strip().upper() not in ("UTC", "GMT", "Z", ""):
        try:
            from zoneinfo import ZoneInfo
            now = now.astimezone(ZoneInfo(timezone.strip()))
        except Exception as e:  # unknown zone, no tz database: the model is told why
            raise ValueError(f"unknown time zone {timezone!r}; use an IANA name like Europe/Paris ({e})") from None
    return now.strftime("%A %d %B %Y, %H:%M:%S %Z (UTC%z)")


def read_file(path: str) -> str:
    """The text of a file in the current directory (the first 4000 characters).

    Args:
        path: The file's path, relative to the current directory.
    """
    base = os.path.realpath(os.getcwd())
    full = os.path.realpath(os.path.join(base, path))
    if os.path.commonpath([base, full]) != base:
        raise PermissionError(f"{path}: only files inside the current directory may be read")
    if not os.path.isfile(full):
        raise FileNotFoundError(f"{path}: no such file in the current directory")
    with open(full, encoding="utf-8", errors="replace") as f:
        text = f.read(MAX_FILE_CHARS + 1)
    if len(text) > MAX_FILE_CHARS:
        text = text[:MAX_FILE_CHARS] + "\n[… cut at 4000 characters]"
    return text


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("question", nargs="?", default=None,
                    help='what to ask (default: "What time is it now in <timezone>?")')
    ap.add_argument("--timezone", default="UTC", help="the zone of the default question (default UTC)")
    ap.add_argument("--tool", default="current_time",
                    help="the tool the model must call first: current_time (default), read_file, "
                         "required (any), or none (the model decides)")
    ap.add_argument("--quiet", action="store_true", help="do not stream the model's answer to stderr")
    args = ap.parse_args()
    question = args.question or f"What time is it now in {args.timezone}?"

    with ParlanceClient(stderr=sys.stderr) as client:
        client.tool(current_time)
        client.tool(read_file)

        # Each call, as the client runs it (on the call's own thread).
        def show(call: ToolInvocation) -> None:
            arguments = json.dumps(call.arguments, ensure_ascii=False)
            if call.state == "running":
                print(f"-> {call.name}({arguments})", flush=True)
            elif call.state == "finished":
                print(f"<- {call.name}: {json.dumps(call.output, ensure_ascii=False)[:200]}", flush=True)
            else:
                print(f"<- {call.name} failed: {(call.error or {}).get('message')}", flush=True)

        client.on_tool_call(show)

        init = client.initialize(client_name="tools_clock.py")  # declares capabilities.tools
        if init["model"]["availability"] != "available":
            print(f"model unavailable: {init['model'].get('reason')}: {init['model'].get('message')}", file=sys.stderr)
            return 1

        choice: Any = {"name": args.tool} if args.tool in client.registered_tools else \
            ("auto" if args.tool == "none" else args.tool)
        try:
            sid = client.request("session/create", {
                "instructions": "Answer briefly. Use the tools to learn the time or read files; never guess them.",
                "tools": client.tools, "toolChoice": choice, "maxToolCalls": 3,
            })["sessionId"]
        except RPCError as e:
            print(f"session/create: error {e.code} ({e.name}{', ' + e.kind if e.kind else ''}): {e.message}",
                  file=sys.stderr)
            return 1

        def progress(value: Dict[str, Any]) -> None:
            # The daemon's own report of each call (phase "toolCall"), and the answer's text.
            call = value.get("toolCall")
            if value.get("phase") == "toolCall" and isinstance(call, dict):
                ms = f", {call['ms']:.0f} ms" if isinstance(call.get("ms"), (int, float)) else ""
                print(f"   [daemon: {call.get('name')} {call.get('callId')} {call.get('state')}{ms}]", flush=True)
            elif value.get("delta") and not args.quiet:
                sys.stderr.write(value["delta"])
                sys.stderr.flush()

        print(f"Q: {question}")
        try:
            r = client.request("session/respond", {"sessionId": sid, "prompt": question}, on_progress=progress)
        except RPCError as e:
            print(f"\nsession/respond: error {e.code} ({e.name}{', ' + e.kind if e.kind else ''}): {e.message}",
                  file=sys.stderr)
            return 1
        if not args.quiet:
            print(file=sys.stderr)

    calls = r.get("toolCalls") or []
    print(f"Tool calls: {len(calls)}")
    for c in calls:
        outcome = (f"error {c['error']['code']}: {c['error']['message']}" if c.get("error")
                   else json.dumps(c.get("output"), ensure_ascii=False)[:200])
        ms = f" ({c['ms']:.0f} ms)" if isinstance(c.get("ms"), (int, float)) else ""
        print(f"  {c['name']}({json.dumps(c['arguments'], ensure_ascii=False)}) -> {outcome}{ms}")
    print(f"Answer: {(r.get('text') or '').strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
