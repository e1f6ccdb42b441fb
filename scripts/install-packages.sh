#!/usr/bin/env bash
# Installs system packages by their Debian names with the platform's package manager:
# apt-get (Debian/Ubuntu, the tested path) or Homebrew (macOS). Fails with a message
# naming the packages when neither is there.
set -euo pipefail
[ $# -gt 0 ] || exit 0
if command -v apt-get >/dev/null; then
  apt-get update -qq && apt-get install -y -qq "$@"
elif command -v brew >/dev/null; then
  brew install "$@"
else
  echo "setup: install these packages, then run again: $*" >&2
  exit 1
fi
