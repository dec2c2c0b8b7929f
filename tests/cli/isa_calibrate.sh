#!/usr/bin/env bash
# isa_calibrate.sh ROOFLAB FIXTURE_MACHINE TMP: `rooflab isa-calibrate` end to end on one small
# calibration case: every ISA this CPU runs verified and timed, the choice stored as machine.json's
# "isa_choice" section, and `rooflab list --machine` then naming the chosen ISA in the profile's
# default-ISA cases (and a tuning knob likewise); a section from another CPU is refused with a
# warning.
set -euo pipefail
rl=$1 fixture=$2 tmp=$3
rm -rf "$tmp"; mkdir -p "$tmp"; cp "$fixture" "$tmp/machine.json"
"$rl" isa-calibrate --machine "$tmp/machine.json" --filter '^floyd_warshall/simd/f32/' --reps 1 --min-time 0 >"$tmp/out.txt"
grep -q '^floyd_warshall/simd/f32 .* -> ' "$tmp/out.txt" || { echo "no choice line:"; cat "$tmp/out.txt"; exit 1; }
best=$("$rl" info | sed -n 's/^best ISA on this CPU: \([a-z0-9]*\).*/\1/p')
chosen=$(python3 - "$tmp/machine.isa_choice.json" "$best" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); v = d["value"]; best = sys.argv[2]
assert d["section"] == "isa_choice" and len(v["entries"]) == 1 and v["failed"] == [], v
e = v["entries"][0]
assert (e["family"], e["variant"], e["dtype"]) == ("floyd_warshall", "simd", "f32"), e
assert e["widest"] == best, (e["widest"], best)
assert best in e["isas"] and "scalar" in e["isas"], e["isas"]
assert all(t["median_s"] > 0 and t["case"].startswith(f"floyd_warshall/simd/{i}/f32/") for i, t in e["isas"].items())
assert e["chosen"] in e["isas"], e
assert abs(e["widest_over_chosen"] - e["isas"][e["widest"]]["median_s"] / e["isas"][e["chosen"]]["median_s"]) < 1e-9
print(e["chosen"])
PY
)
# The paper profile's N = 4096 SIMD cases run the default ISA: the chosen one.
names=$("$rl" list --profile paper --machine "$tmp/machine.json" --filter '^floyd_warshall/simd/.*/f32/4096x4096' 2>/dev/null)
[ -n "$names" ] && ! echo "$names" | grep -qv "/simd/$chosen/" || { echo "list does not follow the choice ($chosen):"; echo "$names"; exit 1; }
# A tuning knob (sinkhorn fused_uv's prefetch target, pf:) is timed at each SIMD ISA with it,
# each ISA's chosen value stored with its time, and the quick profile's default-ISA case names
# pf:l1 exactly when l1 won at the chosen ISA.
mkdir -p "$tmp/k"; cp "$fixture" "$tmp/k/machine.json"
"$rl" isa-calibrate --machine "$tmp/k/machine.json" --filter '^sinkhorn/fused_uv/f32/' --reps 1 --min-time 0 >"$tmp/k/out.txt"
# (a sample taken under load is marked "(disturbed)" after its time)
grep -Eq '^sinkhorn/fused_uv/f32 .*avx2 [0-9.]+ ms( \(disturbed\))? with pf:l[12] \(pf:l[12] [0-9.]+ ms.* -> ' "$tmp/k/out.txt" \
  || { echo "no choice line with the knob:"; cat "$tmp/k/out.txt"; exit 1; }
read -r kisa kpf < <(python3 - "$tmp/k/machine.isa_choice.json" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))["value"]["entries"][0]
assert "knobs" not in e["isas"]["scalar"] and "settings" not in e["isas"]["scalar"], e["isas"]["scalar"]
for isa, t in e["isas"].items():
    if isa == "scalar":
        continue
    s = {x["knobs"]["pf"]: x for x in t["settings"]}
    assert set(s) == {"l1", "l2"}, t
    assert s["l1"]["case"] == f"sinkhorn/fused_uv/{isa}/f32/4096x4096/pf:l1/threads:1", s
    assert s["l2"]["case"] == f"sinkhorn/fused_uv/{isa}/f32/4096x4096/threads:1", s
    pick = t["knobs"]["pf"]
    assert t["median_s"] == s[pick]["median_s"] and t["case"] == s[pick]["case"], t
    assert pick == "l2" or s["l1"]["median_s"] < s["l2"]["median_s"] * (1 - 0.03), t  # the tie margin
print(e["chosen"], e["isas"][e["chosen"]].get("knobs", {}).get("pf", "l2"))
PY
)
want="sinkhorn/fused_uv/$kisa/f32/4096x4096/threads:1"; [ "$kpf" = l1 ] && want="sinkhorn/fused_uv/$kisa/f32/4096x4096/pf:l1/threads:1"
knames=$("$rl" list --profile quick --machine "$tmp/k/machine.json" --filter '^sinkhorn/fused_uv/.*/f32/4096x4096' 2>/dev/null)
[ "$knames" = "$want" ] || { echo "list does not follow the knob ($kisa $kpf): want $want, got:"; echo "$knames"; exit 1; }
"$rl" list --verbose --profile smoke --machine "$tmp/k/machine.json" >"$tmp/k/verbose.txt" 2>/dev/null
grep -q "pf f32 at $kisa: $kpf (measured, --machine)" "$tmp/k/verbose.txt" || { echo "list --verbose names no knob choice"; exit 1; }
# A calibration measured on another CPU is refused (warning), the defaults are the widest.
python3 - "$tmp/machine.isa_choice.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["value"]["cpu"] = "SomeoneElse family 1 model 1 stepping 1"
json.dump(d, open(sys.argv[1], "w"))
PY
"$rl" list --profile paper --machine "$tmp/machine.json" --filter '^floyd_warshall/simd/.*/f32/4096x4096' >"$tmp/names2.txt" 2>"$tmp/err2.txt"
grep -q "never carried to another CPU" "$tmp/err2.txt" || { echo "no refusal warning:"; cat "$tmp/err2.txt"; exit 1; }
! grep -qv "/simd/$best/" "$tmp/names2.txt" || { echo "refused choice still used:"; cat "$tmp/names2.txt"; exit 1; }
# machine.json's host.cpu_signature is the one record of the CPU: another CPU's refuses the choice
# (whatever the section says) and isa-calibrate beside it (exit 1, one line, nothing written).
python3 - "$tmp/machine.json" "$tmp/machine.isa_choice.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); m.setdefault("host", {})["cpu_signature"] = "SomeoneElse family 2 model 2 stepping 2"
json.dump(m, open(sys.argv[1], "w"))
d = json.load(open(sys.argv[2])); d["value"].pop("cpu", None); json.dump(d, open(sys.argv[2], "w"))
PY
"$rl" list --profile paper --machine "$tmp/machine.json" --filter '^floyd_warshall/simd/.*/f32/4096x4096' >"$tmp/names3.txt" 2>"$tmp/err3.txt"
grep -q 'measured on "SomeoneElse family 2 model 2 stepping 2".*never carried to another CPU' "$tmp/err3.txt" || { echo "no refusal by host.cpu_signature:"; cat "$tmp/err3.txt"; exit 1; }
! grep -qv "/simd/$best/" "$tmp/names3.txt" || { echo "refused choice still used:"; cat "$tmp/names3.txt"; exit 1; }
cp "$tmp/machine.isa_choice.json" "$tmp/choice.before"
rc=0; "$rl" isa-calibrate --machine "$tmp/machine.json" --filter '^floyd_warshall/simd/f32/' --reps 1 --min-time 0 >"$tmp/out4.txt" 2>"$tmp/err4.txt" || rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$tmp/err4.txt")" = 1 ] && [ ! -s "$tmp/out4.txt" ] && cmp -s "$tmp/machine.isa_choice.json" "$tmp/choice.before" \
  || { echo "isa-calibrate beside another CPU's machine.json: exit $rc"; cat "$tmp/err4.txt"; exit 1; }
echo "ok: chose $chosen (widest $best); pf at $kisa: $kpf"
