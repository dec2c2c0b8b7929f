#!/usr/bin/env bash
# expect.sh CODE REGEX -- command...   : the command exits with CODE and its stderr+stdout
# matches REGEX (grep -E). Used for the CLI's bad-input messages.
code=$1; regex=$2; shift 3
out=$("$@" 2>&1); rc=$?
if [ "$rc" != "$code" ]; then echo "expected exit $code, got $rc; output:"; echo "$out"; exit 1; fi
if ! grep -qE -- "$regex" <<<"$out"; then echo "output does not match /$regex/:"; echo "$out"; exit 1; fi
echo "ok: exit $rc, matched /$regex/"
