#!/usr/bin/env bash
# Installs what `make install`, `make dist` and `make deb` need, only what is missing
# (Debian package names, through scripts/install-packages.sh; sudo when not root):
#   scripts/packaging-deps.sh stage   patchelf (the installed copies' rpath)
#   scripts/packaging-deps.sh deb     dpkg-dev (dpkg-shlibdeps) and lintian
set -euo pipefail
cd "$(dirname "$0")/.."
need=()
for what in "$@"; do
  case $what in
    stage) command -v patchelf >/dev/null || need+=(patchelf) ;;
    deb)
      command -v dpkg-shlibdeps >/dev/null || need+=(dpkg-dev)
      command -v lintian >/dev/null || need+=(lintian) ;;
    *) echo "packaging-deps: unknown step '$what' (stage or deb)" >&2; exit 2 ;;
  esac
done
[ ${#need[@]} -gt 0 ] || exit 0
echo "packaging: installing ${need[*]}" >&2
if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null; then
  sudo scripts/install-packages.sh "${need[@]}" >&2
else
  scripts/install-packages.sh "${need[@]}" >&2
fi
