#!/usr/bin/env bash
# Scenario tests of the VS Code extension (node --test, a stand-in vscode module) against the
# real daemon and model. Needs Node 18+ (installs nodejs from Debian if node is missing).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
if ! command -v node >/dev/null; then
  echo "vscode: installing nodejs" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs) >&2
fi
if [ -z "${PARLANCE_DEFAULT_MODEL:-}" ] && [ -z "${PARLANCE_MODEL:-}" ] && [ -x scripts/setup.sh ]; then
  eval "$(scripts/setup.sh)"
fi
bin=${PARLANCE_BIN:-$root/.build/release/parlance}
case $bin in /*) ;; *) bin=$root/$bin ;; esac
[ -x "$bin" ] || { echo "vscode: no daemon at $bin (run 'make build' or set PARLANCE_BIN)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "vscode: node $(node --version) — extension tests against $bin"
start=$SECONDS
status=0
(cd "$here" && PARLANCE_CACHE_DIR=$work/cache PARLANCE_DATA_DIR=$work/data PARLANCE_BIN="$bin" \
  timeout 900 node --test --test-reporter=spec test/extension.test.js test/vsix.test.js) || status=$?
echo "vscode: $([ $status -eq 0 ] && echo passed || echo "FAILED (exit $status)") in $((SECONDS - start))s"
exit $status
