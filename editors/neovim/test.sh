#!/usr/bin/env bash
# Headless scenario test: Neovim's built-in LSP client (no plugin; the 0.7.2 API) drives
# `parlance --stdio` as a plain language server against the real model — code actions on a
# selection, codeAction/resolve → WorkspaceEdit, stale-edit refusal (-32801), UTF-16 positions
# on a multi-byte line, progress. Installs neovim if nvim is missing; exits non-zero on failure.
# PARLANCE_TEST_KEEP=1 keeps the work directory (documents, daemon log, Neovim's LSP log).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
if ! command -v nvim >/dev/null; then
  echo "neovim: installing neovim" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq neovim) >&2
fi
if [ -z "${PARLANCE_DEFAULT_MODEL:-}" ] && [ -z "${PARLANCE_MODEL:-}" ] && [ -x scripts/setup.sh ]; then
  eval "$(scripts/setup.sh)"
fi
bin=${PARLANCE_BIN:-$root/.build/release/parlance}
case $bin in /*) ;; *) bin=$root/$bin ;; esac
[ -x "$bin" ] || { echo "neovim: no daemon at $bin (run 'make build' or set PARLANCE_BIN)" >&2; exit 1; }
work=$(mktemp -d)
if [ -n "${PARLANCE_TEST_KEEP:-}" ]; then trap 'echo "neovim: kept $work" >&2' EXIT; else trap 'rm -rf "$work"' EXIT; fi
mkdir -p "$work/docs"
echo "neovim: $(nvim --version | head -1) — built-in LSP client against $bin"
start=$SECONDS
# the Lua loads and the 0.7 APIs it uses exist
PARLANCE_TEST_DRY=1 PARLANCE_TEST_OUT="$work/dry.txt" PARLANCE_TEST_LUA="$here/test.lua" XDG_CACHE_HOME="$work/nvim-cache" \
  timeout 60 nvim --headless --clean -c 'execute "luafile" fnameescape($PARLANCE_TEST_LUA)' </dev/null >"$work/dry.out" 2>&1 ||
  { echo "neovim: test.lua does not load:" >&2; cat "$work/dry.out" "$work/dry.txt" >&2 2>/dev/null; exit 1; }
# Neovim writes its LSP log (which holds the daemon's stderr) under XDG_CACHE_HOME; the daemon
# keeps finding its set-up model through PARLANCE_SETUP_CACHE.
export PARLANCE_SETUP_CACHE="${PARLANCE_SETUP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/parlance-setup}"
status=0
PARLANCE_CACHE_DIR=$work/cache PARLANCE_DATA_DIR=$work/data PARLANCE_BIN="$bin" PARLANCE_TEST_OUT="$work/result.txt" \
  PARLANCE_TEST_WORK="$work/docs" PARLANCE_TEST_LOG="$work/parlance.log" PARLANCE_TEST_LUA="$here/test.lua" \
  XDG_CACHE_HOME="$work/nvim-cache" \
  timeout --kill-after=10 900 nvim --headless --clean -c 'execute "luafile" fnameescape($PARLANCE_TEST_LUA)' \
  </dev/null >"$work/nvim.out" 2>&1 || status=$?
if [ -s "$work/result.txt" ]; then sed 's/^/neovim: /' "$work/result.txt"; fi
if [ "$status" -ne 0 ] || ! tail -1 "$work/result.txt" 2>/dev/null | grep -q ' 0 failed'; then
  echo "neovim: FAILED (exit $status$([ "$status" -eq 124 ] && echo ', timed out')) after $((SECONDS - start))s" >&2
  [ -s "$work/nvim.out" ] && tail -40 "$work/nvim.out" | sed 's/^/neovim(out): /' >&2
  lsplog="$work/nvim-cache/nvim/lsp.log"
  [ -s "$lsplog" ] && grep -E '\[(ERROR|WARN)\]' "$lsplog" | tail -20 | cut -c1-600 | sed 's/^/neovim(lsp.log): /' >&2
  [ -s "$work/parlance.log" ] && tail -40 "$work/parlance.log" | cut -c1-600 | sed 's/^/neovim(daemon log): /' >&2
  exit 1
fi
echo "neovim: passed in $((SECONDS - start))s"
