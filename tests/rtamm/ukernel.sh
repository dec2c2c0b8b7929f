#!/bin/sh
# ukernel.sh ROOFLAB MACHINE_JSON [f64|f32]: prints "MR NR", the register tile of the micro-kernel
# rtamm uses on this CPU (its best ISA), as `rooflab rtamm pool` reports it. The CLI tests build
# their blocking factors from it (multiples of MR / NR), so they are valid on an AVX2-only CPU
# (4 x 12 f64), an AVX-512 one (12 x 16) or without SIMD (4 x 4) alike.
out=$("$1" rtamm pool --machine "$2" --dtype "${3:-f64}") || { echo "ukernel.sh: rooflab rtamm pool failed" >&2; exit 1; }
tile=$(printf '%s\n' "$out" | sed -n 's/.*; MR \([0-9][0-9]*\), NR \([0-9][0-9]*\)$/\1 \2/p')
[ -n "$tile" ] || { echo "ukernel.sh: no 'MR m, NR n' in: $out" >&2; exit 1; }
echo "$tile"
