#!/usr/bin/env bash
# Fetch the Debian packages that bench/lists/train.txt allows into DEST:
#   DEST/src/PKG_VER.orig.tar.*   upstream sources of the listed source packages (apt-get source --download-only)
#   DEST/bin/python3-NAME_*.deb   the listed python3-* binary packages (their .py files feed the corpus)
# Never a dev repository (bench/lists/dev-*.txt): the script refuses to fetch one.
#   bash models/training/fetch_debian.sh [DEST] [TRAIN_TXT]
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
DEST="$(mkdir -p "${1:-$here/.work/debian}" && cd "${1:-$here/.work/debian}" && pwd)"
TRAIN="${2:-$here/../../bench/lists/train.txt}"
[ -f "$TRAIN" ] || { echo "fetch_debian: $TRAIN not found (pass the path of train.txt as the second argument)" >&2; exit 2; }
DEV="$(dirname "$TRAIN")"
C="$DEST/apt"
mkdir -p "$C/lists/partial" "$DEST/src" "$DEST/bin"
sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources > "$C/src.sources"
A=(-o "Dir::Etc::SourceList=$C/src.sources" -o Dir::Etc::SourceParts=/dev/null -o "Dir::State::Lists=$C/lists")
apt-get "${A[@]}" update >/dev/null 2>&1 || echo "fetch_debian: apt-get update of the source lists failed; trying what is cached" >&2
ok=0; failed=0
while read -r p; do
  if cat "$DEV"/dev-*.txt 2>/dev/null | grep -v '^#' | grep -qx "$p"; then
    echo "fetch_debian: $p is a dev repository; refused" >&2; failed=$((failed + 1)); continue
  fi
  case "$p" in
    python3-*) ls "$DEST/bin/${p}"_*.deb >/dev/null 2>&1 || (cd "$DEST/bin" && timeout 600 apt-get download "$p" >/dev/null 2>&1)
               ls "$DEST/bin/${p}"_*.deb >/dev/null 2>&1 ;;
    *)         ls "$DEST/src/${p}"_*.orig.tar.* >/dev/null 2>&1 || (cd "$DEST/src" && timeout 900 apt-get "${A[@]}" source --download-only "$p" >/dev/null 2>&1)
               # The Debian packaging tarball is sometimes missing from the mirror; the upstream one is what the corpus reads.
               ls "$DEST/src/${p}"_*.orig.tar.* >/dev/null 2>&1 ;;
  esac
  if [ $? = 0 ]; then ok=$((ok + 1)); else failed=$((failed + 1)); echo "fetch_debian: $p could not be fetched" >&2; fi
done < <(grep -v '^#' "$TRAIN" | grep .)
echo "fetch_debian: $ok packages in $DEST, $failed missing"
