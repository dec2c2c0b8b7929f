#!/bin/sh
# calibration_stale.sh ROOFLAB FIXTURE_MACHINE_JSON DIR: the rtamm calibration is its own section
# (machine.rtamm_calibration.json) tied to the units it was fitted on. calibrate without units:
# exit 1, one line; units -> calibrate -> evaluate: applied; units again -> evaluate: stale, not
# applied, one warning naming both files and `rooflab rtamm calibrate`; a truncated calibration
# file: exit 1, one line naming it. Units and calibration of another CPU (machine.json's
# host.cpu_signature): evaluate and units refuse, exit 1, one line, nothing written; a machine.json
# naming no CPU (older): used with one warning. Tiny pool and shapes, no quiet waits.
RL=$1; FIX=$2; D=$3
fail() { echo "FAIL: $*"; exit 1; }
set -- $("$(dirname "$0")/ukernel.sh" "$RL" "$FIX") || fail "ukernel.sh"
POOL=$((2 * $1))x$((2 * $2))x64
rm -rf "$D" && mkdir -p "$D" && cp "$FIX" "$D/machine.json" || fail "setup"
M=$D/machine.json; C=$D/machine.rtamm_calibration.json; U=$D/machine.rtamm.json
# host.cpu_signature := $2 ("" removes it), in place.
set_cpu() { python3 - "$M" "$1" <<'PY' || fail "set_cpu"
import json, sys
d = json.load(open(sys.argv[1]))
if sys.argv[2]: d["host"]["cpu_signature"] = sys.argv[2]
else: d["host"].pop("cpu_signature", None)
json.dump(d, open(sys.argv[1], "w"))
PY
}
set_cpu "$("$RL" info | sed -n 's/^cpu signature: //p')"
QUICK="--threads 1 --profile smoke --quiet-budget 0"
CAL="$QUICK --shapes 6 --samples 1 --base 8,16,24"
EVAL="$QUICK --shapes 2 --samples 1 --base 8,16,24 --out $D"

"$RL" rtamm calibrate --machine "$M" $CAL >"$D/out" 2>"$D/err"; rc=$?
[ $rc = 1 ] || fail "calibrate without units: exit $rc, expected 1"
[ "$(wc -l <"$D/err")" = 1 ] || fail "calibrate without units: not one line: $(cat "$D/err")"
grep -q 'no "rtamm" unit costs: run `rooflab rtamm units --machine' "$D/err" || fail "calibrate without units: $(cat "$D/err")"
[ ! -s "$D/out" ] && [ ! -e "$C" ] || fail "calibrate without units wrote something"

"$RL" rtamm units --machine "$M" $QUICK --pool "$POOL" >/dev/null 2>&1 || fail "units"
"$RL" rtamm calibrate --machine "$M" $CAL >/dev/null 2>&1 || fail "calibrate"
grep -q '"section": "rtamm_calibration"' "$C" && grep -q '"fitted_on"' "$C" && grep -q '"training_seed"' "$C" \
  || fail "no calibration section in $C"
grep -q '"calibration"' "$U" && fail "the units section $U carries a calibration"
"$RL" rtamm evaluate --machine "$M" $EVAL >/dev/null 2>"$D/err" || fail "evaluate: $(cat "$D/err")"
grep -q '"calibrated": true' "$D/rtamm.json" || fail "fresh calibration not applied"
grep -q "warning: the calibration" "$D/err" && fail "fresh calibration warned: $(cat "$D/err")"

"$RL" rtamm units --machine "$M" $QUICK --pool "$POOL" >/dev/null 2>"$D/err" || fail "units again"
grep -q "$C was fitted on the units replaced now.*re-run \`rooflab rtamm calibrate" "$D/err" || fail "units again: $(cat "$D/err")"
"$RL" rtamm evaluate --machine "$M" $EVAL >/dev/null 2>"$D/err" || fail "evaluate on stale: $(cat "$D/err")"
grep -q '"calibrated": false' "$D/rtamm.json" || fail "stale calibration applied"
[ "$(grep -c "warning: the calibration in $C does not belong to the unit costs in $U .*not applied: re-run \`rooflab rtamm calibrate --machine $M --threads 1\`" "$D/err")" = 1 ] \
  || fail "stale calibration: not one warning naming both files: $(cat "$D/err")"

printf '{"schema": ' >"$C"
"$RL" rtamm evaluate --machine "$M" $EVAL >"$D/out" 2>"$D/err"; rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$D/err")" = 1 ] && grep -q "$C is not valid JSON" "$D/err" && [ ! -s "$D/out" ] \
  || fail "truncated calibration: exit $rc: $(cat "$D/err")"
rm -f "$C"
OTHER="SomeoneElse family 1 model 1 stepping 1"
set_cpu "$OTHER"
cp "$U" "$D/units.before"
"$RL" rtamm evaluate --machine "$M" $EVAL >"$D/out" 2>"$D/err"; rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$D/err")" = 1 ] && grep -q "measured on \"$OTHER\".*never carried to another CPU" "$D/err" \
  && [ ! -s "$D/out" ] || fail "evaluate with another CPU's units: exit $rc: $(cat "$D/err")"
"$RL" rtamm units --machine "$M" $QUICK --pool "$POOL" >"$D/out" 2>"$D/err"; rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$D/err")" = 1 ] && grep -q "measured on \"$OTHER\"" "$D/err" && [ ! -s "$D/out" ] \
  && cmp -s "$U" "$D/units.before" || fail "units beside another CPU's machine.json: exit $rc: $(cat "$D/err")"
set_cpu ""
"$RL" rtamm evaluate --machine "$M" $EVAL >/dev/null 2>"$D/err" || fail "evaluate, no CPU recorded: $(cat "$D/err")"
[ "$(grep -c "names no CPU" "$D/err")" = 1 ] && grep -q "warning: $M names no CPU" "$D/err" \
  || fail "no CPU recorded: not one warning: $(cat "$D/err")"
echo "ok: calibration tied to its units and its CPU"
