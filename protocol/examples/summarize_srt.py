#!/usr/bin/env python3
"""Summarize an SRT (or WebVTT, or plain text) file with Parlance, streaming the model's
output while it writes.

    python3 protocol/examples/summarize_srt.py Samples/podcast-sample.srt
    python3 protocol/examples/summarize_srt.py talk.srt --json      # the raw result

Uses the Python client in protocol/clients/python (standard library only) and the daemon
at $PARLANCE_BIN (default: `parlance` on PATH, else .build/release/parlance).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clients", "python"))

from parlance_client import ParlanceClient, RPCError  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", help="an .srt, .vtt or text file")
    ap.add_argument("--language", help="output language (BCP-47), default: detected")
    ap.add_argument("--json", action="store_true", help="print the result as JSON instead of text")
    ap.add_argument("--quiet", action="store_true", help="do not stream the model's output")
    args = ap.parse_args()

    with open(args.file, encoding="utf-8") as f:
        text = f.read()

    with ParlanceClient(stderr=sys.stderr) as client:
        init = client.initialize(client_name="summarize_srt.py")
        if init["model"]["availability"] != "available":
            print(f"model unavailable: {init['model'].get('reason')}: {init['model'].get('message')}", file=sys.stderr)
            return 1

        # Open the transcript as a document, then summarize it by uri (a second analysis of
        # the same document would reuse its cached prompt prefix).
        uri = "file://" + os.path.abspath(args.file)
        doc = client.request("document/open", {"uri": uri, "text": text})
        print(f"{os.path.basename(args.file)}: {doc['format']}, {doc['segments']} segments, "
              f"{doc.get('durationSeconds') or 0:.0f} s, speakers: {', '.join(doc['speakers']) or '-'}", file=sys.stderr)

        def stream(value: dict) -> None:
            if not args.quiet and value.get("delta"):
                sys.stderr.write(value["delta"])
                sys.stderr.flush()
            elif value.get("phase") == "map" and value.get("message"):
                print(f"[{value['message']}]", file=sys.stderr)

        params = {"uri": uri}
        if args.language:
            params["language"] = args.language
        try:
            s = client.request("analysis/summarize", params, on_progress=stream)
        except RPCError as e:
            print(f"\nerror {e.code} ({e.name}{', ' + e.kind if e.kind else ''}): {e.message}", file=sys.stderr)
            return 1
        print("\n", file=sys.stderr)

    if args.json:
        print(json.dumps(s, indent=2, ensure_ascii=False))
        return 0
    print("Summary:       ", s["summary"])
    print("Main topics:   ", "; ".join(s["mainTopics"]))
    print("Key takeaways:")
    for t in s["keyTakeaways"]:
        print("  -", t)
    print("Audience:      ", s["targetAudience"], "· engagement:", s["engagementLevel"], "· language:", s["language"])
    u = s["usage"]
    print(f"({u['promptTokens']} prompt tokens, {u['generatedTokens']} generated, {u['totalMs'] / 1000:.1f} s"
          f"{', from cache' if s['cached'] else ''})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
