#!/bin/bash
# Every installed header compiles on its own against the install prefix:
# install/install.sh into a scratch prefix, then one translation unit per
# header, `#include "floor/header.h"` and nothing else, with only the
# flags pkg-config gives a user (the prefix's include directory and MPI's).
# A header that includes one not installed, or leans on an include its
# users happen to make first, fails, naming it. A probe that includes an
# internal header (not installed) must fail, or the check proves nothing.
set -euo pipefail
tmp=${TEST_TMPDIR:-$(mktemp -d)}
prefix=$tmp/prefix
install/install.sh "$prefix" >/dev/null
cflags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags distconv)
# An empty working directory: quoted includes find nothing beside the TU.
mkdir -p "$tmp/empty"
cd "$tmp/empty"
compiles() {  # compiles HEADER LOG
  # shellcheck disable=SC2086  # cflags is a list of flags
  printf '#include "%s"\n' "$1" |
    g++ -fsyntax-only -x c++ $cflags - >"$2" 2>&1
}
export -f compiles
export cflags
if compiles distconv/internal/host_device.h "$tmp/probe.log"; then
  echo "FAIL: a header that is not installed compiled; the check is void" >&2
  exit 1
fi
mapfile -t headers < <(cd "$prefix/include" && find . -name '*.h' |
  sed 's|^\./||' | sort)
if ((${#headers[@]} < 50)); then
  echo "FAIL: only ${#headers[@]} headers installed" >&2
  exit 1
fi
export tmp
# shellcheck disable=SC2016  # expanded by the inner bash
failed=$(printf '%s\n' "${headers[@]}" | xargs -P "$(nproc)" -I{} bash -c \
  'compiles "$1" "$tmp/$(echo "$1" | tr / _).log" || echo "$1"' _ {})
if [[ -n $failed ]]; then
  for h in $failed; do
    echo "FAIL: $h does not compile on its own against the prefix:" >&2
    head -20 "$tmp/$(echo "$h" | tr / _).log" >&2
  done
  exit 1
fi
echo "installed_headers_test: all ${#headers[@]} installed headers compile" \
  "on their own"
