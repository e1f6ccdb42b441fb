#!/usr/bin/env bash
# Byte-compiles parlance.el (warnings are errors), then runs the ERT scenario tests in
# emacs --batch against the real daemon and model. Installs emacs-nox if Emacs is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
if ! command -v emacs >/dev/null; then
  echo "emacs: installing emacs-nox" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq emacs-nox) >&2
fi
if [ -z "${PARLANCE_DEFAULT_MODEL:-}" ] && [ -z "${PARLANCE_MODEL:-}" ] && [ -x scripts/setup.sh ]; then
  eval "$(scripts/setup.sh)"
fi
bin=${PARLANCE_BIN:-$root/.build/release/parlance}
case $bin in /*) ;; *) bin=$root/$bin ;; esac
[ -x "$bin" ] || { echo "emacs: no daemon at $bin (run 'make build' or set PARLANCE_BIN)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "emacs: $(emacs --version | head -1) — parlance.el tests against $bin"
start=$SECONDS
cp "$here/parlance.el" "$here/parlance-test.el" "$work/"
# 1. byte-compiles without warnings
emacs -Q --batch --eval '(setq byte-compile-error-on-warn t)' -f batch-byte-compile "$work/parlance.el"
echo "emacs: parlance.el byte-compiles without warnings"
# package headers (as package.el reads them) and docstrings (checkdoc) are clean
emacs -Q --batch --eval "(progn (require 'package)
  (with-temp-buffer (insert-file-contents \"$work/parlance.el\")
    (let ((desc (package-buffer-info)))
      (princ (format \"emacs: package %s %s, requires %S\n\" (package-desc-name desc)
                     (package-version-join (package-desc-version desc)) (package-desc-reqs desc))))))"
doc=$(emacs -Q --batch --eval "(progn (require 'checkdoc) (setq checkdoc-spellcheck-documentation-flag nil)
  (checkdoc-file \"$work/parlance.el\"))" 2>&1)
[ -z "$doc" ] || { echo "emacs: checkdoc warnings:" >&2; echo "$doc" >&2; exit 1; }
# 2. the scenario tests, with the compiled file
status=0
(cd "$work" && PARLANCE_CACHE_DIR=$work/cache PARLANCE_DATA_DIR=$work/data PARLANCE_BIN="$bin" \
  timeout 900 emacs -Q --batch -L "$work" -l parlance -l parlance-test.el -f parlance-test-run) || status=$?
echo "emacs: $([ $status -eq 0 ] && echo passed || echo "FAILED (exit $status)") in $((SECONDS - start))s"
exit $status
