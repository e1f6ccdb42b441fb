#!/usr/bin/env bash
# Stage Parlance's installed tree under DESTDIR/PREFIX: the one place that decides what
# `make install`, `make dist` (PREFIX /) and `make deb` (PREFIX /usr) ship.
#   scripts/stage-install.sh [--prefix PREFIX] [--destdir DIR] [--bin PATH]
#
#   bin/parlance                          `make build`'s binary, stripped, RUNPATH
#                                         $ORIGIN/../lib/parlance (never the build tree or cache)
#   lib/parlance/lib*.so*                 the libraries it links from the llama.cpp build and
#                                         from the Swift toolchain's runtime directory (Swift
#                                         runtime, Foundation, Dispatch, ICU), RUNPATH $ORIGIN
#   share/parlance/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf   the default model (found beside the binary)
#   share/parlance/editors/<editor>/...   editor integrations (their tests left out)
#   share/parlance/install-manifest.txt   what was installed, for `make uninstall`
#   share/man/man1/parlance.1.gz          from `parlance --print-man`
#   share/bash-completion/completions/parlance, share/fish/vendor_completions.d/parlance.fish,
#   share/zsh/vendor-completions/_parlance (PREFIX /usr: Debian's directory for packages) or
#   share/zsh/site-functions/_parlance (any other prefix: zsh's own default $fpath entry, and
#                                         the one Debian's zsh reads under /usr/local)
#   share/doc/parlance/                   README.md, copyright, licenses/
#
# Inputs: the binary (default .build/release/parlance, made by `make build`; a build with
# --static-swift-stdlib works too, and then no Swift library is copied), $PARLANCE_LLAMA_LIBDIR
# and $PARLANCE_DEFAULT_MODEL (from the environment, else from the .build/stage-inputs.sh that
# `make install-build` writes).
# Re-installing over an earlier install removes files the new one no longer has.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PREFIX=/usr/local DESTDIR="" BIN="$ROOT/.build/release/parlance"
while [ $# -gt 0 ]; do
  case $1 in
    --prefix) PREFIX=$2; shift 2 ;;
    --destdir) DESTDIR=$2; shift 2 ;;
    --bin) BIN=$2; shift 2 ;;
    *) echo "stage-install: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
die() { echo "stage-install: $*" >&2; exit 1; }

[ "$(uname -s)" = Linux ] || die "installing is supported on Linux (ELF, patchelf) only; on $(uname -s) run .build/release/parlance in place"
case $PREFIX in /*) ;; *) die "PREFIX must be an absolute path, got '$PREFIX'" ;; esac
PREFIX=${PREFIX%/}                       # "/" (the relocatable archive) becomes ""
[ -x "$BIN" ] || die "no binary at $BIN (run 'make build')"
if [ -z "${PARLANCE_LLAMA_LIBDIR:-}" ] || [ -z "${PARLANCE_DEFAULT_MODEL:-}" ]; then
  inputs="$ROOT/.build/stage-inputs.sh"
  [ -f "$inputs" ] || die "PARLANCE_LLAMA_LIBDIR/PARLANCE_DEFAULT_MODEL unset and no $inputs (run 'make install-build')"
  # shellcheck disable=SC1090
  . "$inputs"
fi
LIBDIR=$(cd "$PARLANCE_LLAMA_LIBDIR" && pwd -P) || die "llama.cpp library directory $PARLANCE_LLAMA_LIBDIR is missing"
MODEL=$PARLANCE_DEFAULT_MODEL
MODEL_NAME=$(basename "$MODEL")   # the default's file name, which the binary looks for beside itself
[ -f "$MODEL" ] || die "default model $MODEL is missing (run 'make setup')"
"$ROOT/scripts/packaging-deps.sh" stage
# The man page and completions come from the binary itself (one flag table for --help too).
"$BIN" --print-man >/dev/null 2>&1 || die "$BIN has no --print-man: the man page is generated from it; build a parlance that has it"
"$BIN" --print-completion bash >/dev/null 2>&1 || die "$BIN has no --print-completion: build a parlance that has it"

D="$DESTDIR$PREFIX"
MANIFEST_REL=share/parlance/install-manifest.txt
TMP=$(mktemp -d "${TMPDIR:-/tmp}/parlance-stage.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$D"
# An earlier install's manifest: its directories stay "ours" (this run finds them existing),
# its files that this run does not install again are removed at the end.
touch "$TMP/old-files" "$TMP/dirs" "$TMP/files"
if [ -f "$D/$MANIFEST_REL" ]; then
  sed -n 's/^f //p' "$D/$MANIFEST_REL" > "$TMP/old-files"
  sed -n 's/^d //p' "$D/$MANIFEST_REL" > "$TMP/dirs"
fi

mkd() {  # mkd REL: create $D/REL and its parents, noting each one this install created
  local rel=$1 part="" comp
  local IFS=/
  for comp in $rel; do
    part=${part:+$part/}$comp
    if [ ! -d "$D/$part" ]; then
      mkdir -m 0755 "$D/$part"
      echo "$part" >> "$TMP/dirs"
    fi
  done
}
put() {  # put MODE SRC REL: install SRC as $D/REL
  mkd "$(dirname "$3")"
  install -m "$1" "$2" "$D/$3"
  echo "$3" >> "$TMP/files"
}

# ── the binary and the libraries it links from the llama.cpp build and the Swift toolchain ─
ldd_out=$(ldd "$BIN") || die "ldd $BIN failed"
if grep -q 'not found' <<<"$ldd_out"; then die "$BIN has unresolved libraries:"$'\n'"$ldd_out"; fi
# The toolchain's runtime directory is where the binary's libswiftCore resolves (none when the
# runtime is linked in statically). Every library ldd resolves there or in LIBDIR is shipped;
# the rest (libc, libstdc++, libcurl, ...) comes from the system, as the .deb's Depends say.
SWIFTLIBDIR=""
core=$(awk '$1 ~ /^libswiftCore\.so/ && $3 ~ /^\// {print $3}' <<<"$ldd_out")
[ -n "$core" ] && SWIFTLIBDIR=$(cd "$(dirname "$core")" && pwd -P)
libs=() llama=0
while read -r name _ path _; do
  if [ -z "$path" ] || [ ! -f "$path" ]; then continue; fi
  real=$(cd "$(dirname "$path")" && pwd -P)
  if [ "$real" = "$LIBDIR" ]; then libs+=("$path"); llama=$((llama + 1))
  elif [ -n "$SWIFTLIBDIR" ] && [ "$real" = "$SWIFTLIBDIR" ]; then libs+=("$path"); fi
done <<<"$ldd_out"
[ "$llama" -gt 0 ] || die "$BIN links no library from $LIBDIR (is PARLANCE_LLAMA_LIBDIR the one it was built with?)"
put 0755 "$BIN" bin/parlance
# strip before patchelf (strip after patchelf can mangle the moved sections); .comment and
# .note as dh_strip removes them. Swift's reflection metadata is in sections strip keeps.
strip --remove-section=.comment --remove-section=.note "$D/bin/parlance"
# shellcheck disable=SC2016  # $ORIGIN is for the dynamic loader, not the shell
patchelf --set-rpath '$ORIGIN/../lib/parlance' "$D/bin/parlance"
for path in "${libs[@]}"; do
  # One file per SONAME (what the loader looks for), copied through the build's symlinks.
  lib=$(basename "$path")
  put 0644 "$path" "lib/parlance/$lib"
  strip --remove-section=.comment --remove-section=.note --strip-unneeded "$D/lib/parlance/$lib"
  # shellcheck disable=SC2016
  patchelf --set-rpath '$ORIGIN' "$D/lib/parlance/$lib"
done

# ── the default model ──────────────────────────────────────────────────────────────────────
put 0644 "$MODEL" "share/parlance/models/$MODEL_NAME"

# ── generated from the installed binary: version, man page, completions ─────────────────────
version=$("$D/bin/parlance" --version | awk '{print $2}')
[ -n "$version" ] || die "the installed binary does not run: $D/bin/parlance --version"
"$D/bin/parlance" --print-man > "$TMP/parlance.1"
grep -q '^\.TH ' "$TMP/parlance.1" || die "parlance --print-man printed no .TH header"
gzip -9n < "$TMP/parlance.1" > "$TMP/parlance.1.gz"
put 0644 "$TMP/parlance.1.gz" share/man/man1/parlance.1.gz
for shell in bash zsh fish; do "$D/bin/parlance" --print-completion "$shell" > "$TMP/completion.$shell"; done
put 0644 "$TMP/completion.bash" share/bash-completion/completions/parlance
if [ "$PREFIX" = /usr ]; then zsh_dir=share/zsh/vendor-completions; else zsh_dir=share/zsh/site-functions; fi
put 0644 "$TMP/completion.zsh" "$zsh_dir/_parlance"
put 0644 "$TMP/completion.fish" share/fish/vendor_completions.d/parlance.fish

# ── editor integrations, without their tests ────────────────────────────────────────────────
(cd "$ROOT/editors" && find . -type f | sed 's|^\./||' | LC_ALL=C sort) | while read -r f; do
  case "/$f" in
    */test.sh|*/test.el|*/test.lua|*-test.el|*/test/*|*/tests/*|*/.*|*/doc/tags|*.vsix|*/node_modules/*) continue ;;
  esac
  mode=0644                              # the repository's mode (its scripts are run with node etc.)
  [ -x "$ROOT/editors/$f" ] && mode=0755
  put "$mode" "$ROOT/editors/$f" "share/parlance/editors/$f"
done
# Vim's help tags, so :help parlance works from a read-only install (what :helptags writes).
vimdoc="$D/share/parlance/editors/vim/doc"
if [ -d "$vimdoc" ]; then
  (cd "$vimdoc" && for t in *.txt; do
     grep -o '\*[^*[:space:]|]\+\*' "$t" | sed 's/^\*//; s/\*$//' | while read -r tag; do
       printf '%s\t%s\t/*%s*\n' "$tag" "$t" "$(printf '%s' "$tag" | sed 's/[\\/]/\\&/g')"
     done
   done) | LC_ALL=C sort -u > "$TMP/tags"
  put 0644 "$TMP/tags" share/parlance/editors/vim/doc/tags
fi

# ── documentation and licenses ─────────────────────────────────────────────────────────────
put 0644 "$ROOT/README.md" share/doc/parlance/README.md
put 0644 "$ROOT/packaging/copyright" share/doc/parlance/copyright
for l in "$ROOT"/packaging/licenses/*; do
  put 0644 "$l" "share/doc/parlance/licenses/$(basename "$l")"
done

# ── the manifest (listing itself), then what an earlier install had and this one has not ────
echo "$MANIFEST_REL" >> "$TMP/files"
{
  echo "# Parlance $version: the files \`make install\` put under its PREFIX (paths relative to it),"
  echo "# then the directories it created. \`make uninstall\` removes the files, then those"
  echo "# directories when they are empty."
  LC_ALL=C sort -u "$TMP/files" | sed 's/^/f /'
  LC_ALL=C sort -u "$TMP/dirs" | sed 's/^/d /'
} > "$TMP/manifest"
put 0644 "$TMP/manifest" "$MANIFEST_REL"
LC_ALL=C sort -u "$TMP/files" > "$TMP/new-files"
LC_ALL=C sort -u "$TMP/old-files" | LC_ALL=C comm -23 - "$TMP/new-files" | while read -r stale; do
  rm -f "$D/$stale"
done
echo "stage-install: parlance $version installed under ${D:-/} ($(wc -l < "$TMP/new-files") files)" >&2
