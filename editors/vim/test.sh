#!/usr/bin/env bash
# Headless scenario test of the Vim plugin against the real daemon and model.
# Installs vim-nox if Vim (with +channel/+job) is missing; exits non-zero on failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
if ! command -v vim >/dev/null || ! vim --version | grep -q '+channel'; then
  echo "vim: installing vim-nox" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq vim-nox) >&2
fi
if [ -z "${PARLANCE_DEFAULT_MODEL:-}" ] && [ -z "${PARLANCE_MODEL:-}" ] && [ -x scripts/setup.sh ]; then
  eval "$(scripts/setup.sh)"
fi
bin=${PARLANCE_BIN:-$root/.build/release/parlance}
case $bin in /*) ;; *) bin=$root/$bin ;; esac
[ -x "$bin" ] || { echo "vim: no daemon at $bin (run 'make build' or set PARLANCE_BIN)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "vim: $(vim --version | head -1) — plugin tests against $bin"
start=$SECONDS
# the help file: its tags are well-formed and unique
cp -r "$here/doc" "$work/doc"
vim -N -u NONE -i NONE -es -c "try | helptags $work/doc | catch | cquit 1 | endtry" -c 'qall!' </dev/null ||
  { echo "vim: :helptags failed on doc/parlance.txt" >&2; exit 1; }
grep -q '^:ParlanceRewrite' "$work/doc/tags" || { echo "vim: doc/tags lacks :ParlanceRewrite" >&2; exit 1; }
status=0
PARLANCE_CACHE_DIR=$work/cache PARLANCE_DATA_DIR=$work/data PARLANCE_BIN="$bin" PARLANCE_TEST_OUT="$work/result.txt" \
  timeout 900 vim -N -u NONE -i NONE -es -S "$here/test/run.vim" </dev/null >"$work/vim.out" 2>&1 || status=$?
if [ -s "$work/result.txt" ]; then sed 's/^/vim: /' "$work/result.txt"; fi
if [ "$status" -ne 0 ] || ! tail -1 "$work/result.txt" 2>/dev/null | grep -q ' 0 failed'; then
  echo "vim: FAILED (exit $status) after $((SECONDS - start))s" >&2
  [ -s "$work/vim.out" ] && sed 's/^/vim(out): /' "$work/vim.out" | tail -40 >&2
  exit 1
fi
echo "vim: passed in $((SECONDS - start))s"
