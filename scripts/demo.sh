#!/usr/bin/env bash
# The main job: summarize the bundled sample transcript with the real default model,
# through the daemon (NDJSON over a pipe), streaming the model's output as it arrives.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${PARLANCE_BIN:-.build/release/parlance}"
SAMPLE="${1:-Samples/podcast-sample.srt}"
python3 - "$BIN" "$SAMPLE" <<'PY'
import json, subprocess, sys, time
bin_, sample = sys.argv[1], sys.argv[2]
text = open(sample, encoding="utf-8").read()
t0 = time.time()
p = subprocess.Popen([bin_, "--stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
def send(msg):
    p.stdin.write(json.dumps(msg) + "\n"); p.stdin.flush()
# The model's draft streams as it is written, but a draft is not the summary: verification
# may generate again or replace it. So the demo shows the work as it goes (one line, redrawn
# on a terminal) and what verification said, then the verified result: what a person should read.
tty = sys.stdout.isatty()
state = {"chars": 0, "attempt": 1, "shown": ""}
def progress(v):
    if v.get("restart"):
        state["chars"] = 0
        state["attempt"] = v.get("attempt") or state["attempt"] + 1
    if v.get("delta"):
        state["chars"] += len(v["delta"])
    msg = v.get("message") or ""
    if v.get("kind") == "report" and msg and "fail" in msg:
        # A verdict on a draft: said once, on its own line.
        if tty: sys.stdout.write("\r\033[K")
        print(f"  verification: {msg}")
    # A report without a percentage (the last one, "done") keeps the last one given.
    state["pct"] = v.get("percentage", state.get("pct", 0))
    line = f"  {state['pct']:>3}%  {msg[:60]:<60}  draft {state['attempt']}: {state['chars']} chars"
    if tty:
        sys.stdout.write("\r\033[K" + line); sys.stdout.flush()
    elif msg and msg != state["shown"]:
        print(f"  {state['pct']:>3}%  {msg}")
        state["shown"] = msg
def read_until(id_):
    for line in p.stdout:
        msg = json.loads(line)
        if msg.get("method") == "$/progress":
            progress(msg["params"]["value"])
            continue
        if msg.get("id") == id_:
            return msg
    raise SystemExit("parlance exited before answering")
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"clientInfo": {"name": "demo"}}})
init = read_until(1)
send({"jsonrpc": "2.0", "id": 9, "method": "model/load", "params": {}})
m = read_until(9)["result"]
if m["availability"] != "available":
    raise SystemExit(f"model unavailable: {m.get('reason')}: {m.get('message')}")
print(f"Parlance {init['result']['serverInfo']['version']} · model {m['model']['name'] or m['model']['path']} "
      f"({m['model']['parameters']/1e6:.0f}M params, ctx {m['model']['contextSize']})")
print(f"Summarizing {sample} …\n")
send({"jsonrpc": "2.0", "id": 2, "method": "analysis/summarize", "params": {"text": text, "workDoneToken": "demo"}})
r = read_until(2)
print("\n")
if "error" in r:
    raise SystemExit(f"error {r['error']['code']}: {r['error']['message']}")
s = r["result"]
print("Summary:        ", s["summary"])
print("Main topics:    ", "; ".join(s["mainTopics"]))
print("Key takeaways:")
for t in s["keyTakeaways"]: print("  -", t)
print("Audience:       ", s["targetAudience"], "· engagement:", s["engagementLevel"], "· language:", s["language"])
v = s["verification"]
how = {"extractive": "the model's summary failed its checks on every attempt: an outline of the transcript stands in",
       "repaired": "repaired where the checks found a problem"}.get(v.get("fallback"), "the model's own result")
print(f"Verified:        {'passed' if v['passed'] else 'NOT passed'} after {v['attempts']} attempt(s); {how}")
for i in v["issues"]:
    print(f"  - {i['message']}{' (repaired)' if i.get('repaired') else ''}")
u = s["usage"]
print(f"\n{u['promptTokens']} prompt tokens ({u['cachedPromptTokens']} cached), {u['generatedTokens']} generated, "
      f"first token {u['firstTokenMs']:.0f} ms, total {u['totalMs']:.0f} ms{' (from cache)' if s['cached'] else ''}")
send({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}); read_until(3)
send({"jsonrpc": "2.0", "method": "exit"})
p.stdin.close()
sys.exit(p.wait())
PY
