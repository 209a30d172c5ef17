#!/bin/bash
# Builds and installs the distconv C++ library into a prefix, for programs
# built without Bazel (docs/install.md):
#   install/install.sh PREFIX
# PREFIX/lib/libdistconv.so, PREFIX/include/{distconv,halo,io,kernels,
# layers}/*.h, PREFIX/lib/cmake/distconv/ (find_package(distconv): the
# imported target distconv::distconv, carrying MPI and oneDNN) and
# PREFIX/lib/pkgconfig/distconv.pc. Run from a checkout it builds with
# Bazel first; run from Bazel's runfiles (`bazel run //install -- PREFIX`
# or a test's data) it installs what was built.
set -euo pipefail
if (($# != 1)); then
  echo "usage: install/install.sh PREFIX" >&2
  exit 2
fi
prefix=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ -n ${RUNFILES_DIR:-} && -f $RUNFILES_DIR/distconv/install/libdistconv.so ]]; then
  root=$RUNFILES_DIR/distconv lib=$root/install/libdistconv.so
elif [[ -f $here/install/libdistconv.so && ! -f $here/WORKSPACE ]]; then
  root=$here lib=$here/install/libdistconv.so  # a runfiles tree
else
  root=$here
  (cd "$root" && bazel build //install:libdistconv.so)
  lib=$root/bazel-bin/install/libdistconv.so
fi

mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
mkdir -p "$prefix/lib/cmake/distconv" "$prefix/lib/pkgconfig" "$prefix/include"
install -m 0755 "$lib" "$prefix/lib/libdistconv.so"
for floor in distconv halo io kernels layers; do
  mkdir -p "$prefix/include/$floor"
  for h in "$root/$floor"/*.h; do
    case $(basename "$h") in
      *_testing.h | device_*.h) continue ;;
    esac
    install -m 0644 "$h" "$prefix/include/$floor/"
  done
done
version=0.1.0
for f in distconvConfig.cmake distconvConfigVersion.cmake; do
  sed "s|@VERSION@|$version|g" "$root/install/$f.in" \
    > "$prefix/lib/cmake/distconv/$f"
done
sed "s|@PREFIX@|$prefix|g; s|@VERSION@|$version|g" \
  "$root/install/distconv.pc.in" > "$prefix/lib/pkgconfig/distconv.pc"
echo "distconv $version installed in $prefix"
