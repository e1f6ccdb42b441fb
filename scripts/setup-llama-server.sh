#!/usr/bin/env bash
# Print the path of llama.cpp's own `llama-server` (the remote-engine and pool tests, the
# eval's peer column and the benchmark talk to it). setup-llama.sh builds it, with
# `ggml-rpc-server` beside it, in the same build as libllama.
set -euo pipefail
PREFIX=$("$(dirname "$0")/setup-llama.sh")
[ -x "$PREFIX/bin/llama-server" ] || { echo "setup: $PREFIX/bin/llama-server is missing (remove $PREFIX to rebuild)" >&2; exit 1; }
echo "$PREFIX/bin/llama-server"
