#!/usr/bin/env bash
# Build llama.cpp (via the llama-cpp-python sdist on PyPI) into a cache outside the repo.
# Idempotent: keyed by version + CMake flags; a second run only prints the prefix.
set -euo pipefail
. "$(dirname "$0")/llama-build-settings.sh"
key=$(printf '%s|%s' "$LLAMA_PY_VERSION" "$LLAMA_CMAKE_ARGS" | sha256 | cut -c1-16)
PREFIX="$CACHE_ROOT/llama-$LLAMA_PY_VERSION-$key"
if [ -f "$PREFIX/.complete" ]; then echo "$PREFIX"; exit 0; fi
command -v pkg-config >/dev/null || { echo "setup: installing pkg-config" >&2; "$(dirname "$0")/install-packages.sh" pkg-config >&2; }
echo "setup: building llama.cpp $LLAMA_PY_VERSION into $PREFIX (about 5 minutes)" >&2
rm -rf "$PREFIX.tmp"; mkdir -p "$CACHE_ROOT"
CMAKE_ARGS="$LLAMA_CMAKE_ARGS" python3 -m pip install --quiet --disable-pip-version-check --no-deps \
  --target "$PREFIX.tmp" "llama-cpp-python==$LLAMA_PY_VERSION" >&2
# The installed llama.pc names pip's deleted temp prefix: point it at the cache.
pc=$(find "$PREFIX.tmp" -name llama.pc | head -1)
[ -n "$pc" ] || { echo "setup: llama.pc not found after build" >&2; exit 1; }
# (No sed -i: BSD sed on macOS reads its argument differently.)
sed -E "s|^prefix=.*|prefix=$PREFIX|; s|^exec_prefix=.*|exec_prefix=\${prefix}|; s|^libdir=.*|libdir=\${prefix}/lib|; s|^includedir=.*|includedir=\${prefix}/include|" "$pc" > "$pc.new"
mv "$pc.new" "$pc"
rm -rf "$PREFIX"; mv "$PREFIX.tmp" "$PREFIX"
touch "$PREFIX/.complete"
echo "$PREFIX"
