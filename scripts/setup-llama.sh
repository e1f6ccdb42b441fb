#!/usr/bin/env bash
# Build llama.cpp once, from the llama-cpp-python sdist on PyPI, into a cache outside the
# repo, and print its prefix:
#   lib/         libllama and libggml* (shared), lib/pkgconfig/llama.pc  (the daemon links these)
#   include/     llama.h, ggml*.h
#   bin/         llama-server, ggml-rpc-server  (the peer, remote engines and pools in tests,
#                the benchmark; RPATH $ORIGIN/../lib, so they use the libraries above)
#   src/         llama-arch.cpp  (the architecture list KnownArchitectures.swift is checked against)
# One CMake build gives all of it: building the library through pip and the servers again
# from the same sources took twice as long on a cold cache.
# Idempotent: keyed by version + CMake flags; a second run only prints the prefix.
set -euo pipefail
. "$(dirname "$0")/llama-build-settings.sh"
BUILD_ARGS="-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON -DLLAMA_CURL=OFF -DLLAMA_BUILD_COMMON=ON -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DGGML_RPC=ON"
key=$(printf 'cmake|%s|%s|%s' "$LLAMA_PY_VERSION" "$LLAMA_CMAKE_ARGS" "$BUILD_ARGS" | sha256 | cut -c1-16)
PREFIX="$CACHE_ROOT/llama-$LLAMA_PY_VERSION-$key"
if [ -f "$PREFIX/.complete" ]; then echo "$PREFIX"; exit 0; fi
command -v pkg-config >/dev/null || { echo "setup: installing pkg-config" >&2; "$(dirname "$0")/install-packages.sh" pkg-config >&2; }
find_cmake
echo "setup: building llama.cpp (llama-cpp-python $LLAMA_PY_VERSION) into $PREFIX (about 8 minutes)" >&2
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
[ -f "$SRC/tools/server/server.cpp" ] || { echo "setup: llama.cpp's server source not found in the sdist" >&2; exit 1; }
# The servers find the libraries beside them through their RPATH, wherever the cache is.
# shellcheck disable=SC2016  # $ORIGIN is for the dynamic loader, not the shell
case "$(uname -s)" in
  Darwin) origin='@loader_path/../lib' ;;
  *) origin='$ORIGIN/../lib' ;;
esac
B="$WORK/build"
# shellcheck disable=SC2086
"$CMAKE" -S "$SRC" -B "$B" $LLAMA_CMAKE_ARGS $BUILD_ARGS \
  -DCMAKE_BUILD_WITH_INSTALL_RPATH=ON "-DCMAKE_INSTALL_RPATH=$origin" >&2
"$CMAKE" --build "$B" --target llama llama-server ggml-rpc-server -j "$(nproc 2>/dev/null || sysctl -n hw.ncpu)" >&2
# Staged by hand: `cmake --install` wants every tool configured above built, not these three.
mkdir -p "$WORK/lib/pkgconfig" "$WORK/include" "$WORK/bin" "$WORK/src"
cp -P "$B"/bin/lib*.so* "$B"/bin/lib*.dylib "$WORK/lib/" 2>/dev/null || true
ls "$WORK"/lib/libllama.* >/dev/null 2>&1 || { echo "setup: libllama not found in $B/bin after the build" >&2; exit 1; }
cp "$SRC"/include/llama.h "$SRC"/include/llama-cpp.h "$SRC"/ggml/include/*.h "$WORK/include/"
cp "$B/bin/llama-server" "$B/bin/ggml-rpc-server" "$WORK/bin/"
cp "$SRC/src/llama-arch.cpp" "$WORK/src/"
# llama.pc as configured names the build's install prefix: point it at the cache.
[ -f "$B/llama.pc" ] || { echo "setup: llama.pc not found after the build" >&2; exit 1; }
# (No sed -i: BSD sed on macOS reads its argument differently.)
sed -E "s|^prefix=.*|prefix=$PREFIX|; s|^exec_prefix=.*|exec_prefix=\${prefix}|; s|^libdir=.*|libdir=\${prefix}/lib|; s|^includedir=.*|includedir=\${prefix}/include|" \
  "$B/llama.pc" > "$WORK/lib/pkgconfig/llama.pc"
rm -rf "$B" "$WORK"/llama_cpp_python-*
rm -rf "$PREFIX"; mv "$WORK" "$PREFIX"
touch "$PREFIX/.complete"
echo "$PREFIX"
