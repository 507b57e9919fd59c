#!/usr/bin/env bash
# Builds the AArch64 forwarding entry of interpose/wrapper_support.hpp with a
# cross compiler and runs it under qemu-aarch64 (README.md of the parent folder).
# usage: run.sh [OUT_DIR]   needs g++-aarch64-linux-gnu and qemu-user
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
out=${1:-$(mktemp -d)}
mkdir -p "$out"
# The AArch64 definition, as it is in the library's header.
sed -n '/^#elif defined(__aarch64__)/,/^#else/p' "$top/interpose/wrapper_support.hpp" | sed '1d;$d' \
  > "$out/forwarding_entry.hpp"
grep -q 'define TREMOR_FORWARDING_ENTRY' "$out/forwarding_entry.hpp"
cxx=aarch64-linux-gnu-g++
$cxx -std=c++20 -O2 -fPIC -shared -o "$out/libfakempi.so" "$here/fake_mpi.cpp"
$cxx -std=c++20 -O2 -fPIC -shared -I"$out" -o "$out/libentries.so" "$here/entries.cpp"
$cxx -std=c++20 -O2 -o "$out/main" "$here/main.cpp" -L"$out" -Wl,--no-as-needed -lentries -lfakempi -ldl -Wl,-rpath,'$ORIGIN'
aarch64-linux-gnu-objdump -d --no-show-raw-insn --disassemble=MPI_Send "$out/libentries.so" | sed -n '/<MPI_Send>:/,/^$/p'
qemu-aarch64 -L /usr/aarch64-linux-gnu "$out/main"
