#!/usr/bin/env bash
# Parlance from the shell: NDJSON in, NDJSON out, one JSON object per line.
#   protocol/examples/ndjson.sh [TEXT]
# Uses $PARLANCE_BIN (default: parlance on PATH, else .build/release/parlance).
# Prints the daemon's replies as they arrive; exits with the daemon's exit code (0).
set -euo pipefail
BIN="${PARLANCE_BIN:-$(command -v parlance || echo "$(dirname "$0")/../../.build/release/parlance")}"
TEXT="${1:-Alice: the launch moves to March. Bob: then marketing needs the date by Friday.}"
TEXT_JSON=$(printf '%s' "$TEXT" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/\t/\\t/g' | awk 'NR>1{printf "\\n"} {printf "%s", $0}')

# Every request piped in is answered, generating ones included: `shutdown` (and end of
# input) wait for the work in flight, write its answers, then the daemon exits 0.
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}' \
  "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"analysis/summarize\",\"params\":{\"text\":\"$TEXT_JSON\"}}" \
  '{"jsonrpc":"2.0","id":3,"method":"shutdown"}' '{"jsonrpc":"2.0","method":"exit"}' | "$BIN" --stdio
