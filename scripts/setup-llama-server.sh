#!/usr/bin/env bash
# Build llama.cpp's own `llama-server` (the remote-engine tests and benchmark talk to it)
# from the same llama-cpp-python sdist on PyPI that gives us libllama, into a cache outside
# the repo. Idempotent: keyed by version + CMake flags; a second run only prints the path.
#   scripts/setup-llama-server.sh   → prints the path of the llama-server executable
set -euo pipefail
. "$(dirname "$0")/llama-build-settings.sh"
SERVER_ARGS="-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON -DGGML_RPC=ON"
key=$(printf '%s|%s|%s' "$LLAMA_PY_VERSION" "$LLAMA_CMAKE_ARGS" "$SERVER_ARGS" | sha256 | cut -c1-16)
PREFIX="$CACHE_ROOT/llama-server-$LLAMA_PY_VERSION-$key"
if [ -f "$PREFIX/.complete" ]; then echo "$PREFIX/bin/llama-server"; exit 0; fi
mkdir -p "$CACHE_ROOT"
# CMake: the system's when there is one, else PyPI's (pip-installed into the cache).
CMAKE=$(command -v cmake || true)
if [ -z "$CMAKE" ]; then
  if [ ! -x "$CACHE_ROOT/cmake-tool/bin/cmake" ]; then
    echo "setup: installing cmake from PyPI into $CACHE_ROOT/cmake-tool" >&2
    rm -rf "$CACHE_ROOT/cmake-tool"
    python3 -m pip install --quiet --disable-pip-version-check --target "$CACHE_ROOT/cmake-tool" cmake >&2
  fi
  CMAKE="$CACHE_ROOT/cmake-tool/bin/cmake"
  export PYTHONPATH="$CACHE_ROOT/cmake-tool${PYTHONPATH:+:$PYTHONPATH}"
fi
echo "setup: building llama-server (llama.cpp from llama-cpp-python $LLAMA_PY_VERSION) into $PREFIX (about 10 minutes)" >&2
WORK="$PREFIX.tmp"; rm -rf "$WORK"; mkdir -p "$WORK"
# The sdist itself, found in PyPI's simple index (pip download would build its build
# dependencies from source), checked against the index's SHA-256.
python3 - "$LLAMA_PY_VERSION" "$WORK" <<'PY' >&2
import hashlib, re, sys, urllib.request
version, dest = sys.argv[1], sys.argv[2]
index = urllib.request.urlopen("https://pypi.org/simple/llama-cpp-python/", timeout=60).read().decode()
m = re.search(r'href="([^"]*/(llama_cpp_python-%s\.tar\.gz))#sha256=([0-9a-f]{64})"' % re.escape(version), index)
if not m:
    sys.exit(f"setup: llama-cpp-python {version} sdist not found on PyPI")
data = urllib.request.urlopen(m.group(1), timeout=600).read()
if hashlib.sha256(data).hexdigest() != m.group(3):
    sys.exit("setup: the llama-cpp-python sdist's SHA-256 does not match PyPI's")
open(f"{dest}/{m.group(2)}", "wb").write(data)
PY
tar -xzf "$WORK"/llama_cpp_python-*.tar.gz -C "$WORK"
SRC=$(echo "$WORK"/llama_cpp_python-*/vendor/llama.cpp)
[ -f "$SRC/tools/server/server.cpp" ] || { echo "setup: llama.cpp server source not found in the sdist" >&2; exit 1; }
# shellcheck disable=SC2086
"$CMAKE" -S "$SRC" -B "$WORK/build" $LLAMA_CMAKE_ARGS $SERVER_ARGS >&2
"$CMAKE" --build "$WORK/build" --target llama-server ggml-rpc-server -j "$(nproc 2>/dev/null || sysctl -n hw.ncpu)" >&2
mkdir -p "$WORK/bin"
cp "$WORK/build/bin/llama-server" "$WORK/build/bin/ggml-rpc-server" "$WORK/bin/"
rm -rf "$WORK/build" "$WORK"/llama_cpp_python-* "$WORK"/*.tar.gz
rm -rf "$PREFIX"; mv "$WORK" "$PREFIX"
touch "$PREFIX/.complete"
echo "$PREFIX/bin/llama-server"
