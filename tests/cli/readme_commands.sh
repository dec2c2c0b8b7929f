#!/usr/bin/env bash
# readme_commands.sh ROOFLAB README: the README stays a short user's guide (<= 12 KB) whose
# command table names every command `rooflab --help` lists, so a new command cannot go
# undocumented and the guide cannot grow back into a lab notebook.
set -euo pipefail
rl=$1 readme=$2
size=$(wc -c <"$readme")
[ "$size" -le 12288 ] || { echo "README.md is $size bytes, more than 12 KB"; exit 1; }
cmds=$("$rl" --help | awk '/^commands:/{on=1; next} on && /^  [a-z]/{print $1} on && /^$/{exit}')
[ -n "$cmds" ] || { echo "no commands parsed from rooflab --help"; exit 1; }
missing=0
for c in $cmds; do
  grep -q "^| \`rooflab $c\b" "$readme" || { echo "README's command table lacks 'rooflab $c'"; missing=1; }
done
exit $missing
