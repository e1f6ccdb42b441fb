#!/usr/bin/env bash
# The relocatable archive: the installed tree (scripts/stage-install.sh, PREFIX /) as
# .build/dist/parlance-VERSION-linux-ARCH.tar.gz. Unpacked anywhere, parlance-VERSION-linux-ARCH/bin/parlance
# runs from there: its libraries are found through $ORIGIN, its model beside it.
# Reproducible: sorted names, owner 0, mtime of the last commit (SOURCE_DATE_EPOCH), gzip -n.
#   scripts/make-dist.sh [--bin PATH]     prints the archive's path
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.build/release/parlance
[ "${1:-}" = --bin ] && BIN=$2
OUT=.build/dist
version=$("$BIN" --version | awk '{print $2}')
[ -n "$version" ] || { echo "make-dist: $BIN --version printed nothing" >&2; exit 1; }
name="parlance-$version-linux-$(uname -m)"
stage="$OUT/dist-root"
rm -rf "$stage"
mkdir -p "$stage/$name"
scripts/stage-install.sh --bin "$BIN" --prefix / --destdir "$stage/$name"
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
    --mode='u+w,go-w' -C "$stage" -cf - "$name" | gzip -9n > "$OUT/$name.tar.gz.tmp"
mv "$OUT/$name.tar.gz.tmp" "$OUT/$name.tar.gz"
rm -rf "$stage"
echo "make-dist: $OUT/$name.tar.gz ($(du -h "$OUT/$name.tar.gz" | cut -f1))" >&2
echo "$OUT/$name.tar.gz"
