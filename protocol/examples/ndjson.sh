#!/usr/bin/env bash
# Parlance from the shell: NDJSON in, NDJSON out, one JSON object per line.
#   protocol/examples/ndjson.sh [TEXT]
# Uses $PARLANCE_BIN (default: parlance on PATH, else .build/release/parlance).
# Prints the daemon's replies as they arrive; exits with the daemon's exit code (0).
set -euo pipefail
BIN="${PARLANCE_BIN:-$(command -v parlance || echo "$(dirname "$0")/../../.build/release/parlance")}"
TEXT="${1:-Alice: the launch moves to March. Bob: then marketing needs the date by Friday.}"
TEXT_JSON=$(printf '%s' "$TEXT" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/\t/\\t/g' | awk 'NR>1{printf "\\n"} {printf "%s", $0}')

# Requests that do not generate (initialize, document/*, model/status, rpc.discover) can
# simply be piped in, shutdown and exit included:
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}' '{"jsonrpc":"2.0","id":2,"method":"document/open","params":{"uri":"file:///note.txt","text":"Alice: hello."}}' '{"jsonrpc":"2.0","id":3,"method":"shutdown"}' '{"jsonrpc":"2.0","method":"exit"}' | "$BIN" --stdio | grep '"id":2'

# A generating request must be answered before shutdown (shutdown, and end of input, cancel
# work in flight), so keep stdin open until its reply arrives — one line with a coprocess:
coproc P { "$BIN" --stdio; }; printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}' "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"analysis/summarize\",\"params\":{\"text\":\"$TEXT_JSON\"}}" >&"${P[1]}"; while IFS= read -r line <&"${P[0]}"; do printf '%s\n' "$line"; [[ $line == *'"id":2,'* ]] && break; done; printf '%s\n' '{"jsonrpc":"2.0","id":3,"method":"shutdown"}' '{"jsonrpc":"2.0","method":"exit"}' >&"${P[1]}"; wait "$P_PID"
