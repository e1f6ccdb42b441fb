#!/usr/bin/env bash
# The Debian package: the installed tree (scripts/stage-install.sh, PREFIX /usr) plus what a
# .deb carries besides: DEBIAN/control (Depends from dpkg-shlibdeps), DEBIAN/md5sums,
# /usr/share/doc/parlance/changelog.gz and the lintian overrides (packaging/lintian-overrides,
# each with its reason). The install manifest is left out: dpkg keeps its own file list.
# Builds .build/dist/parlance_VERSION_ARCH.deb, runs lintian on it (errors fail the build;
# PARLANCE_LINTIAN=0 skips it) and prints the package's path.
#   scripts/make-deb.sh [--bin PATH]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=.build/release/parlance
[ "${1:-}" = --bin ] && BIN=$2
scripts/packaging-deps.sh deb
OUT=.build/dist
WORK="$OUT/deb"                  # dpkg-shlibdeps wants debian/control and debian/<package>/
PKG="$WORK/debian/parlance"
version=$("$BIN" --version | awk '{print $2}')
[ -n "$version" ] || { echo "make-deb: $BIN --version printed nothing" >&2; exit 1; }
arch=$(dpkg --print-architecture)
deb="$OUT/parlance_${version}_${arch}.deb"
maintainer=${DEBFULLNAME:+$DEBFULLNAME <${DEBEMAIL:-}>}
[ -n "$maintainer" ] || maintainer=$(git log -1 --format='%an <%ae>' 2>/dev/null || true)
[ -n "$maintainer" ] || { echo "make-deb: set DEBFULLNAME and DEBEMAIL (the package's Maintainer)" >&2; exit 1; }
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
export SOURCE_DATE_EPOCH=$epoch

rm -rf "$WORK"
mkdir -p "$PKG"
scripts/stage-install.sh --bin "$BIN" --prefix /usr --destdir "$PKG"
rm "$PKG/usr/share/parlance/install-manifest.txt"

doc="$PKG/usr/share/doc/parlance"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
{
  echo "parlance ($version) unstable; urgency=medium"
  echo
  echo "  * Parlance $version, built from git commit $commit."
  echo
  echo " -- $maintainer  $(LC_ALL=C date -u -R -d "@$epoch")"
} | gzip -9n > "$doc/changelog.gz"
chmod 0644 "$doc/changelog.gz"
install -d -m 0755 "$PKG/usr/share/lintian/overrides"
install -m 0644 packaging/lintian-overrides "$PKG/usr/share/lintian/overrides/parlance"   # comments are the reasons

# Depends: what the binary and the private llama.cpp libraries link from the system. (DEBIAN/
# first: dpkg-shlibdeps finds the package root, and so $ORIGIN, by it.)
install -d -m 0755 "$PKG/DEBIAN"
printf 'Source: parlance\nMaintainer: %s\n\nPackage: parlance\nArchitecture: any\n' "$maintainer" > "$WORK/debian/control"
mapfile -t elves < <(cd "$WORK" && find debian/parlance/usr/bin debian/parlance/usr/lib/parlance -type f | LC_ALL=C sort)
# (The Swift runtime's libraries have unversioned SONAMEs, as the toolchain ships them; they
# are private to the package, so dpkg-shlibdeps' note that it cannot name them is dropped.)
depends=$(cd "$WORK" && dpkg-shlibdeps -O -ldebian/parlance/usr/lib/parlance "${elves[@]}" \
            2> >(grep -v "can't extract name and version from library name" >&2) | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "make-deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }

size=$(du -sk --apparent-size --exclude=DEBIAN "$PKG" | cut -f1)
sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" -e "s|@MAINTAINER@|$maintainer|" \
    -e "s|@INSTALLED_SIZE@|$size|" -e "s|@DEPENDS@|$depends|" packaging/control.in > "$PKG/DEBIAN/control"
(cd "$PKG" && find usr -type f | LC_ALL=C sort | xargs md5sum) > "$PKG/DEBIAN/md5sums"
chmod 0644 "$PKG/DEBIAN/control" "$PKG/DEBIAN/md5sums"
find "$PKG" -exec touch -h -d "@$epoch" {} +
# gzip, not dpkg-deb's default xz: the model's quantized weights hardly compress, and xz -6
# took 94 s here for a 10% smaller package (104 MiB against 115 MiB); gzip -9 takes 11 s.
dpkg-deb --root-owner-group -Zgzip -z9 --build "$PKG" "$deb.tmp" >/dev/null
mv "$deb.tmp" "$deb"
rm -rf "$WORK"
echo "make-deb: $deb ($(du -h "$deb" | cut -f1)); Depends: $depends" >&2

if [ "${PARLANCE_LINTIAN:-1}" != 0 ]; then
  # --fail-on error: warnings are fixed or overridden (with a reason) in packaging/lintian-overrides.
  echo "make-deb: lintian $deb" >&2
  lintian --fail-on error --info --display-info "$deb" >&2
fi
echo "$ROOT/$deb"
