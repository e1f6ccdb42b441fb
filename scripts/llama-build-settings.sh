# Sourced by setup-llama.sh (the one llama.cpp build), setup-llama-server.sh and
# setup-test-models.sh: one place for the llama-cpp-python version, the CPU flags, the
# cache root and the CMake to build with.
LLAMA_PY_VERSION="${LLAMA_PY_VERSION:-0.3.36}"
# x86-64: portable AVX2 (a native build may emit AMX code that dies with SIGILL on other
# CPUs). Elsewhere (Apple Silicon, ARM Linux) llama.cpp's portable defaults; on macOS they
# include Metal. GPU builds: LLAMA_CMAKE_ARGS="-DGGML_CUDA=ON" (or -DGGML_VULKAN=ON), see README.
case "$(uname -m)" in
  x86_64|amd64) default_args="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON" ;;
  *) default_args="-DGGML_NATIVE=OFF" ;;
esac
LLAMA_CMAKE_ARGS="${LLAMA_CMAKE_ARGS:-$default_args}"
CACHE_ROOT="${PARLANCE_SETUP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/parlance-setup}"
sha256() { if command -v sha256sum >/dev/null; then sha256sum; else shasum -a 256; fi; }

# The CMake to build with: the system's when there is one, else PyPI's, pip-installed into
# the cache once. Sets CMAKE.
find_cmake() {
  CMAKE=$(command -v cmake || true)
  [ -n "$CMAKE" ] && return 0
  if [ ! -x "$CACHE_ROOT/cmake-tool/bin/cmake" ]; then
    echo "setup: installing cmake from PyPI into $CACHE_ROOT/cmake-tool" >&2
    rm -rf "$CACHE_ROOT/cmake-tool"; mkdir -p "$CACHE_ROOT"
    python3 -m pip install --quiet --disable-pip-version-check --target "$CACHE_ROOT/cmake-tool" cmake >&2
  fi
  CMAKE="$CACHE_ROOT/cmake-tool/bin/cmake"
  export PYTHONPATH="$CACHE_ROOT/cmake-tool${PYTHONPATH:+:$PYTHONPATH}"
}
