#!/usr/bin/env bash
# Ensure everything Parlance needs is installed (idempotent, cached outside the repo) and
# print the environment for building and running it, as shell `export` lines.
#   eval "$(scripts/setup.sh)"
set -euo pipefail
cd "$(dirname "$0")/.."
need_apt=()
command -v pkg-config >/dev/null || need_apt+=(pkg-config)
command -v cmake >/dev/null || true   # pip brings its own cmake for the llama.cpp build
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing ${need_apt[*]}" >&2
  scripts/install-packages.sh "${need_apt[@]}" >&2
fi
command -v swift >/dev/null || [ -x /opt/swift/usr/bin/swift ] || { echo "setup: Swift 6 toolchain not found (expected swift on PATH or /opt/swift)" >&2; exit 1; }
LLAMA_PREFIX=$(scripts/setup-llama.sh)
MODEL=$(scripts/setup-model.sh)
TEST_MODEL=$(scripts/setup-test-models.sh smollm2-135m)
cat <<EOT
export PKG_CONFIG_PATH="$LLAMA_PREFIX/lib/pkgconfig\${PKG_CONFIG_PATH:+:\$PKG_CONFIG_PATH}"
export PARLANCE_LLAMA_LIBDIR="$LLAMA_PREFIX/lib"
export PARLANCE_DEFAULT_MODEL="$MODEL"
export PARLANCE_TEST_MODEL="$TEST_MODEL"
export PATH="/opt/swift/usr/bin:\$PATH"
EOT
