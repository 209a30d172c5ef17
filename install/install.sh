#!/bin/bash
# Builds and installs the distconv C++ library into a prefix, for programs
# built without Bazel (docs/install.md):
#   install/install.sh PREFIX
# PREFIX/lib/libdistconv.so, PREFIX/include/{distconv,halo,io,kernels,
# layers}/*.h, PREFIX/lib/cmake/distconv/ (find_package(distconv): the
# imported target distconv::distconv, carrying MPI and oneDNN) and
# PREFIX/lib/pkgconfig/distconv.pc. Run from a checkout it builds
# //install with Bazel, then installs from its runfiles; run from the
# runfiles (`bazel run //install -- PREFIX` or a test's data) it installs
# what was built.
set -euo pipefail
if (($# != 1)); then
  echo "usage: install/install.sh PREFIX" >&2
  exit 2
fi
prefix=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The files come from //install's runfiles: libdistconv.so, the package
# templates and exactly the public headers (install/BUILD lists them).
if [[ -n ${RUNFILES_DIR:-} && -f $RUNFILES_DIR/distconv/install/libdistconv.so ]]; then
  root=$RUNFILES_DIR/distconv
elif [[ -f $here/install/libdistconv.so && ! -f $here/WORKSPACE ]]; then
  root=$here  # a runfiles tree
else  # a checkout: build, then install from the runfiles
  (cd "$here" && bazel build //install)
  exec "$here/bazel-bin/install/install.runfiles/distconv/install/install.sh" \
    "$prefix"
fi

mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
mkdir -p "$prefix/lib/cmake/distconv" "$prefix/lib/pkgconfig" "$prefix/include"
install -m 0755 "$root/install/libdistconv.so" "$prefix/lib/libdistconv.so"
for floor in distconv halo io kernels layers; do
  mkdir -p "$prefix/include/$floor"
  install -m 0644 "$root/$floor"/*.h "$prefix/include/$floor/"
done
version=0.1.0
dnnl_prefix=/opt/distconv/onednn-3.2  # third_party/install_packages.sh's
for f in distconvConfig.cmake distconvConfigVersion.cmake; do
  sed "s|@VERSION@|$version|g; s|@DNNL_PREFIX@|$dnnl_prefix|g" \
    "$root/install/$f.in" > "$prefix/lib/cmake/distconv/$f"
done
sed "s|@PREFIX@|$prefix|g; s|@VERSION@|$version|g; s|@DNNL_PREFIX@|$dnnl_prefix|g" \
  "$root/install/distconv.pc.in" > "$prefix/lib/pkgconfig/distconv.pc"
echo "distconv $version installed in $prefix"
