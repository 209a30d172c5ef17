#!/bin/bash
# The installed library from outside Bazel: install/install.sh into a
# scratch prefix, then examples/cmake_consumer built twice against it, with
# CMake (find_package(distconv)) and with pkg-config, and run on 1 and 2
# ranks (a distributed convolution checked against one rank).
set -euo pipefail
source tests/mpi_env.sh
tmp=${TEST_TMPDIR:-$(mktemp -d)}
prefix=$tmp/prefix

install/install.sh "$prefix"
cmake -S examples/cmake_consumer -B "$tmp/build" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$tmp/build"
# shellcheck disable=SC2046
g++ -O2 -o "$tmp/conv_check_pc" examples/cmake_consumer/conv_check.cc \
  $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs distconv)

for binary in "$tmp/build/conv_check" "$tmp/conv_check_pc"; do
  for ranks in 1 2; do
    timeout 120 mpirun --allow-run-as-root --oversubscribe --bind-to none \
      -np "$ranks" "$binary"
  done
done
echo "cmake_consumer_test: ok"
