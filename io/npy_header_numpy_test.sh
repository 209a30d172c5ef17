#!/bin/bash
# io/npy_header_numpy_test.py with Debian's Python (python3-numpy).
#   npy_header_numpy_test.sh TOOL SCRIPT
exec /usr/bin/python3 "$2" "$1"
