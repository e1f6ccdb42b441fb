#!/usr/bin/env bash
# Parlance as a plain LSP server in a real client, no plugin: Debian's Emacs 28 (emacs-nox)
# with Debian's eglot 1.9 (elpa-eglot) runs test.el in emacs --batch against the real daemon
# and model: select a region, M-x eglot-code-actions, pick "Rewrite: formal", the server's
# workspace/applyEdit replaces exactly the region; and the stale case (the buffer is edited
# while the model works: no edit, a window/showMessage instead). Installs the packages if
# missing; exits non-zero on failure, keeping the eglot events log and the daemon's debug log.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
elpa=/usr/share/emacs/site-lisp/elpa
if ! command -v emacs >/dev/null || ! compgen -G "$elpa/eglot-*/eglot.el" >/dev/null; then
  echo "eglot: installing emacs-nox elpa-eglot" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq emacs-nox elpa-eglot) >&2
fi
if [ -z "${PARLANCE_DEFAULT_MODEL:-}" ] && [ -z "${PARLANCE_MODEL:-}" ] && [ -x scripts/setup.sh ]; then
  eval "$(scripts/setup.sh)"
fi
bin=${PARLANCE_BIN:-$root/.build/release/parlance}
case $bin in /*) ;; *) bin=$root/$bin ;; esac
[ -x "$bin" ] || { echo "eglot: no daemon at $bin (run 'make build' or set PARLANCE_BIN)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/parlance-eglot-test.XXXXXX")
keep=${PARLANCE_EGLOT_KEEP:-0}   # 1: keep the work dir (eglot events log, daemon debug log) even on success
trap '[ "$keep" = 1 ] || rm -rf "$work"' EXIT
# Debian's elpa packages (eglot and its newer xref) through package.el, as a user's init would.
init="(progn (require 'package)
  (setq package-directory-list (list \"$elpa\") package-user-dir \"$work/elpa\")
  (package-initialize))"
eglot_dir=$(emacs -Q --batch --eval "$init" --eval "(princ (file-name-directory (locate-library \"eglot\")))")
echo "eglot: $(emacs --version | head -1), eglot from $eglot_dir — eglot tests against $bin"
start=$SECONDS
# 1. test.el byte-compiles without warnings against this eglot
cp "$here/test.el" "$work/test.el"
emacs -Q --batch --eval "$init" --eval '(setq byte-compile-error-on-warn t)' -f batch-byte-compile "$work/test.el"
# 2. the scenarios
mkdir -p "$work/logs"
status=0
(cd "$work" && PARLANCE_CACHE_DIR=$work/cache PARLANCE_DATA_DIR=$work/data PARLANCE_BIN="$bin" \
  PARLANCE_EGLOT_ARTIFACTS=$work/logs PARLANCE_EGLOT_DAEMON_LOG=$work/logs/daemon.log \
  timeout 900 emacs -Q --batch --eval "$init" -l "$work/test.elc" -f parlance-eglot-test-run) \
  2>"$work/logs/emacs-stderr.log" | sed 's/^/eglot: /' || status=$?
if [ "$status" -ne 0 ]; then
  keep=1
  echo "eglot: FAILED (exit $status) in $((SECONDS - start))s; logs kept in $work/logs" >&2
  echo "eglot: emacs stderr (tail):" >&2
  tail -20 "$work/logs/emacs-stderr.log" | sed 's/^/eglot(stderr): /' >&2
  exit "$status"
fi
[ "$keep" != 1 ] || echo "eglot: logs kept in $work/logs"
echo "eglot: passed in $((SECONDS - start))s"
