#!/usr/bin/env bash
# Remove what `make install` put under DESTDIR/PREFIX, exactly: the files its manifest
# (share/parlance/install-manifest.txt) lists, then the directories it lists (the ones that
# install created) when they are empty. Nothing else is touched.
#   scripts/uninstall.sh [--prefix PREFIX] [--destdir DIR]
set -euo pipefail
PREFIX=/usr/local DESTDIR=""
while [ $# -gt 0 ]; do
  case $1 in
    --prefix) PREFIX=$2; shift 2 ;;
    --destdir) DESTDIR=$2; shift 2 ;;
    *) echo "uninstall: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
case $PREFIX in /*) ;; *) echo "uninstall: PREFIX must be an absolute path, got '$PREFIX'" >&2; exit 2 ;; esac
PREFIX=${PREFIX%/}
D="$DESTDIR$PREFIX"
MANIFEST="$D/share/parlance/install-manifest.txt"
if [ ! -f "$MANIFEST" ]; then
  echo "uninstall: nothing to do: no Parlance install under ${D:-/} ($MANIFEST is missing)" >&2
  exit 0
fi
# Read it whole first: it lists itself.
files=$(sed -n 's/^f //p' "$MANIFEST")
dirs=$(sed -n 's/^d //p' "$MANIFEST")
n=0
while IFS= read -r f; do
  case $f in ""|/*|*..*) continue ;; esac         # only paths inside the prefix
  if [ -e "$D/$f" ] || [ -L "$D/$f" ]; then rm -f "$D/$f"; n=$((n + 1)); fi
done <<<"$files"
# Deepest first, so a directory's subdirectories are gone before it is tried.
while IFS= read -r d; do
  case $d in ""|/*|*..*) continue ;; esac
  if [ -d "$D/$d" ]; then rmdir "$D/$d" 2>/dev/null || true; fi   # kept when something else is in it
done < <(awk -F/ '{ print NF "\t" $0 }' <<<"$dirs" | sort -rn | cut -f2-)
echo "uninstall: removed $n files from ${D:-/}" >&2
