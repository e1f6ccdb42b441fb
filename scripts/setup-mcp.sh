#!/usr/bin/env bash
# The MCP tests' Python environment, in the set-up cache: the official MCP SDK (client and
# server) and two real MCP servers nobody here wrote (mcp-server-time, mcp-server-git),
# with pytest and jsonschema, from PyPI at pinned versions. Idempotent; prints the
# environment's directory (its bin/ has python and the two servers).
set -euo pipefail
MCP_VERSION="${MCP_SDK_VERSION:-2.3.0}"
SERVERS_VERSION="${MCP_SERVERS_VERSION:-2026.10.19}"
CACHE_ROOT="${PARLANCE_SETUP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/parlance-setup}"
DEST="$CACHE_ROOT/mcp-$MCP_VERSION-servers-$SERVERS_VERSION"
if [ -f "$DEST/.complete" ] && [ -x "$DEST/bin/python" ]; then echo "$DEST"; exit 0; fi
echo "setup: installing mcp==$MCP_VERSION, mcp-server-time and mcp-server-git ==$SERVERS_VERSION (MCP tests)" >&2
# A venv's scripts name its own path, so it is built in place; .complete marks it whole.
rm -rf "$DEST"; mkdir -p "$CACHE_ROOT"
python3 -m venv "$DEST" >&2
"$DEST/bin/python" -m pip install --quiet --disable-pip-version-check \
  "mcp==$MCP_VERSION" "mcp-server-time==$SERVERS_VERSION" "mcp-server-git==$SERVERS_VERSION" pytest jsonschema >&2
"$DEST/bin/python" -c 'import mcp, mcp_server_time, mcp_server_git, pytest, jsonschema' >&2
touch "$DEST/.complete"
echo "$DEST"
