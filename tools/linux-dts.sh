#!/usr/bin/env bash
# Fetch the kernel's own device trees for the real-board import tests, once per clone:
# Debian's linux-source-$VER .deb (from deb.debian.org, via apt-get download), of which only
# arch/{arm,arm64}/boot/dts, include/dt-bindings, the one uapi header dt-bindings links to,
# and scripts/dtc/include-prefixes are unpacked into .cache/linux-dts/ (git-ignored; no
# kernel file is ever committed). Installs device-tree-compiler and cpp when missing.
#
# Usage: tools/linux-dts.sh            (idempotent: does nothing once .cache/linux-dts/ok exists)
# Prints the tree's root on success; exits 0 with a message on stderr when the download is
# impossible (the real-board tests then skip saying why).
set -euo pipefail
VER="${LINUX_DTS_VERSION:-6.12}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="$ROOT/.cache/linux-dts"
OUT="$CACHE/linux-$VER"

need_tools() {
  local missing=()
  command -v dtc >/dev/null 2>&1 || missing+=(device-tree-compiler)
  command -v cpp >/dev/null 2>&1 || missing+=(cpp)
  if [ ${#missing[@]} -gt 0 ]; then
    local SUDO=""
    [ "$(id -u)" = 0 ] || { command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null && SUDO="sudo -n"; }
    if command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" = 0 ] || [ -n "$SUDO" ]; }; then
      echo "linux-dts: installing ${missing[*]} with apt-get" >&2
      $SUDO apt-get install -y -q "${missing[@]}" >/dev/null 2>&1 ||
        { $SUDO apt-get update -q >/dev/null 2>&1 && $SUDO apt-get install -y -q "${missing[@]}" >/dev/null; } || true
      command -v dtc >/dev/null 2>&1 && command -v cpp >/dev/null 2>&1 || return 1
    else
      echo "linux-dts: missing ${missing[*]}: install them (Debian: apt-get install ${missing[*]})" >&2
      return 1
    fi
  fi
}

need_tools || exit 0
if [ -f "$OUT/ok" ]; then echo "$OUT"; exit 0; fi

mkdir -p "$CACHE"
# Tests may run this from several threads at once: one fetches, the others wait.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$CACHE/.lock"
  flock 9
  if [ -f "$OUT/ok" ]; then echo "$OUT"; exit 0; fi
fi
TMP="$(mktemp -d "$CACHE/tmp.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
PKG="linux-source-$VER"
( cd "$TMP" && apt-get download -q "$PKG" >/dev/null 2>&1 ) || true
DEB="$(ls "$TMP"/"$PKG"_*.deb 2>/dev/null | head -n1 || true)"
if [ -z "$DEB" ] && [ "$(id -u)" = 0 ]; then
  # A clean machine may have stale package lists.
  apt-get update -q >/dev/null 2>&1 || true
  ( cd "$TMP" && apt-get download -q "$PKG" >/dev/null 2>&1 ) || true
  DEB="$(ls "$TMP"/"$PKG"_*.deb 2>/dev/null | head -n1 || true)"
fi
if [ -z "$DEB" ]; then
  # No apt source list for it: ask deb.debian.org's pool directly.
  FILE="$(apt-cache show "$PKG" 2>/dev/null | sed -n 's/^Filename: //p' | head -n1 || true)"
  for base in http://deb.debian.org/debian-security http://deb.debian.org/debian; do
    [ -n "$FILE" ] || break
    if curl -fsSL -o "$TMP/$PKG.deb" "$base/$FILE" 2>/dev/null; then DEB="$TMP/$PKG.deb"; break; fi
  done
fi
if [ -z "$DEB" ]; then
  echo "linux-dts: cannot download $PKG (no network or no Debian archive); real-board tests will skip" >&2
  exit 0
fi
echo "linux-dts: unpacking $(basename "$DEB") into $OUT" >&2
dpkg-deb --fsys-tarfile "$DEB" | tar -x -C "$TMP" "./usr/src/linux-source-$VER.tar.xz"
rm -f "$DEB"
mkdir -p "$OUT.part"
tar -xJf "$TMP/usr/src/linux-source-$VER.tar.xz" -C "$OUT.part" --strip-components=1 \
  --wildcards "linux-source-$VER/arch/arm/boot/dts/*" "linux-source-$VER/arch/arm64/boot/dts/*" \
  "linux-source-$VER/include/dt-bindings/*" "linux-source-$VER/include/uapi/linux/input-event-codes.h" \
  "linux-source-$VER/scripts/dtc/include-prefixes/*" "linux-source-$VER/Makefile"
rm -rf "$OUT"
mv "$OUT.part" "$OUT"
touch "$OUT/ok"
echo "$OUT"
