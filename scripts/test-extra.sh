#!/usr/bin/env bash
# The test suites `make test` runs after `swift test`, against the real daemon and model:
#   1. the protocol conformance suite (protocol/conformance, pytest + jsonschema), then the
#      tests under tests/ (pytest: lifecycle over pipes, README examples, …), then the MCP
#      tests (tests/mcp, with the official MCP SDK and real MCP servers),
#   2. the protocol examples (protocol/examples: shell/NDJSON, Python, Node, Python tools),
#      and the Python client's own tests against the package pip installs,
#   3. the editors' tests (every executable editors/*/test.sh),
#   4. each libFuzzer target for FUZZ_SECONDS (default 30; `make fuzz` runs 300).
# Uses $PARLANCE_BIN, else .build/release/parlance. Runs every step, then exits non-zero
# if any failed. Extra arguments are passed to pytest (e.g. -k compose, -x).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PARLANCE_BIN="${PARLANCE_BIN:-$ROOT/.build/release/parlance}"
if [ ! -x "$PARLANCE_BIN" ]; then
  echo "test-extra: no daemon at $PARLANCE_BIN (run make build, or set PARLANCE_BIN)" >&2
  exit 1
fi
if ! python3 -c 'import pytest, jsonschema' 2>/dev/null; then
  echo "test-extra: installing pytest and jsonschema" >&2
  python3 -m pip install --quiet pytest jsonschema || { echo "test-extra: pip install failed" >&2; exit 1; }
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/parlance-test-extra.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# Examples and editors use a throwaway analysis cache and compose history.
export PARLANCE_CACHE_DIR="$TMP/cache" PARLANCE_DATA_DIR="$TMP/data"
# Never the user's config file ($XDG_CONFIG_HOME/parlance/config.json): tests configure their models.
export XDG_CONFIG_HOME="$TMP/config"
export PARLANCE_CONFORMANCE_LOGS="${PARLANCE_CONFORMANCE_LOGS:-$TMP/conformance-logs}"

# Each pytest suite prints its slowest tests: CI time is a budget, and the log says where it goes.
DURATIONS="--durations=8 --durations-min=5"
failed=()
step() {  # step NAME TIMEOUT_SECONDS COMMAND...
  local name=$1 limit=$2; shift 2
  echo "── $name"
  local t0=$SECONDS
  if timeout --kill-after=30 "$limit" "$@"; then
    echo "── $name: ok ($((SECONDS - t0)) s)"
  else
    echo "── $name: FAILED (exit $?, $((SECONDS - t0)) s)"
    failed+=("$name")
  fi
}

# 1. Conformance suite.
step "conformance suite" 5400 python3 -m pytest "$ROOT/protocol/conformance" -q $DURATIONS "$@"
if [ ${#failed[@]} -gt 0 ] && [ -d "$PARLANCE_CONFORMANCE_LOGS" ]; then
  echo "   daemon logs: $PARLANCE_CONFORMANCE_LOGS (kept)"; trap - EXIT
fi

# 1b. tests/ (pytest): the daemon's lifecycle over pipes, the README's shell examples run as
#     written, and the other tests kept there. Each test uses its own throwaway directories.
step "tests/ (pytest)" 1800 python3 -m pytest "$ROOT/tests" -q $DURATIONS -p no:cacheprovider --ignore="$ROOT/tests/mcp"

# 1c. MCP both ways (tests/mcp), in the MCP environment (scripts/setup-mcp.sh: the official
#     SDK, mcp-server-time, mcp-server-git): `parlance mcp` driven by the SDK's client, and
#     sessions calling real MCP servers and a stand-in that fails on purpose.
if MCP_ENV=$("$ROOT/scripts/setup-mcp.sh"); then
  step "MCP (tests/mcp)" 1800 "$MCP_ENV/bin/python" -m pytest "$ROOT/tests/mcp" -q $DURATIONS -p no:cacheprovider --rootdir "$ROOT/tests"
else
  echo "── MCP (tests/mcp): FAILED (scripts/setup-mcp.sh)"; failed+=("MCP setup")
fi

# 2. Examples: each must run to the end and print what it promises.
example_ndjson() {
  "$ROOT/protocol/examples/ndjson.sh" > "$TMP/ndjson.out" || return 1
  grep -q '"id":2,"result":{.*"summary"' "$TMP/ndjson.out" || { echo "no summary in:"; cat "$TMP/ndjson.out"; return 1; }
}
example_summarize() {
  python3 "$ROOT/protocol/examples/summarize_srt.py" "$ROOT/Samples/podcast-sample.srt" > "$TMP/summarize.out" || return 1
  cat "$TMP/summarize.out"
  grep -q '^Summary: ' "$TMP/summarize.out" && grep -q '^Key takeaways:' "$TMP/summarize.out"
}
example_node() {
  command -v node >/dev/null || { echo "node is not installed"; return 1; }
  node "$ROOT/protocol/examples/ask_stream.mjs" "$ROOT/Samples/podcast-sample.srt" "What is this episode about?" > "$TMP/ask.out" || return 1
  cat "$TMP/ask.out"
  grep -q '^A: ' "$TMP/ask.out" && grep -q '^confidence: ' "$TMP/ask.out"
}
step "example: ndjson.sh" 900 bash -c "$(declare -f example_ndjson); ROOT='$ROOT' TMP='$TMP' example_ndjson"
step "example: summarize_srt.py" 900 bash -c "$(declare -f example_summarize); ROOT='$ROOT' TMP='$TMP' example_summarize"
step "example: ask_stream.mjs" 900 bash -c "$(declare -f example_node); ROOT='$ROOT' TMP='$TMP' example_node"
# Tools: the model calls Python functions (the clock) through the Python client.
example_tools() {
  python3 "$ROOT/protocol/examples/tools_clock.py" > "$TMP/tools.out" || { cat "$TMP/tools.out"; return 1; }
  cat "$TMP/tools.out"
  grep -q '^Tool calls: [1-9]' "$TMP/tools.out" && grep -q '^Answer: ' "$TMP/tools.out"
}
step "example: tools_clock.py" 900 bash -c "$(declare -f example_tools); ROOT='$ROOT' TMP='$TMP' example_tools"
# The Python client's own tests (unit + real daemon), run against the package as pip
# installs it from its pyproject.toml (built from a copy, so the tree stays clean). An
# isolated build fetches setuptools; offline, the installed setuptools builds it instead.
python_client() {
  rm -rf "$TMP/pyclient-src" "$TMP/pyclient" && cp -R "$ROOT/protocol/clients/python" "$TMP/pyclient-src" || return 1
  rm -rf "$TMP/pyclient-src/build" "$TMP/pyclient-src"/*.egg-info
  export PIP_ROOT_USER_ACTION=ignore
  python3 -m pip install --quiet --no-deps --target "$TMP/pyclient" "$TMP/pyclient-src" \
    || { echo "isolated build failed; retrying with --no-build-isolation"; rm -rf "$TMP/pyclient"
         python3 -m pip install --quiet --no-deps --no-build-isolation --target "$TMP/pyclient" "$TMP/pyclient-src"; } \
    || return 1
  PYTHONPATH="$TMP/pyclient" PARLANCE_CLIENT_INSTALLED_IN="$TMP/pyclient" \
    python3 -m pytest "$ROOT/protocol/clients/python/tests" -q
}
step "python client: pip install + pytest" 900 bash -c "$(declare -f python_client); ROOT='$ROOT' TMP='$TMP' python_client"

# 3. ── Editors' tests ──────────────────────────────────────────────────────────────────
# Owned by the editors work: every executable editors/<name>/test.sh runs here, from the
# repository root, with PARLANCE_BIN set. Add an editor by adding its test.sh.
for t in "$ROOT"/editors/*/test.sh; do
  [ -x "$t" ] || continue
  step "editor: $(basename "$(dirname "$t")")" 1800 "$t"
done
# ── end of editors' tests ─────────────────────────────────────────────────────────────

# 4. Fuzzing: the framing/JSON-RPC decoder, the transcript parsers and the schema→grammar
# converter, each for FUZZ_SECONDS under ASan; any crash fails the step.
step "fuzz (${FUZZ_SECONDS:-30} s per target)" 1800 "$ROOT/scripts/fuzz.sh" "${FUZZ_SECONDS:-30}"

if [ ${#failed[@]} -gt 0 ]; then
  echo "test-extra: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "test-extra: all passed"
