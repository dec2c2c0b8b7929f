"""rooflab_data: loading the documented JSON files and refusing bad ones clearly."""
from __future__ import annotations

import re

import pytest
from conftest import load, save

from rooflab.data.run import FILES, RooflabDataError, load_run
from rooflab.figures import roofline


def test_fixture_loads_into_frames(run_small):
    run = load_run(run_small, required=tuple(FILES))
    assert run.missing == {}
    model = run.model_df
    raw = load(run_small, "model.json")["rows"]
    assert list(model.name) == [r["name"] for r in raw]
    assert model.status.value_counts().to_dict() == {"ok": 7, "failed": 1, "skipped": 1}
    failed = model[model.status == "failed"].iloc[0]
    assert failed.message.startswith("verification failed")
    assert failed.median_s != failed.median_s  # NaN: a failed row has no time, not a zero

    levels = run.machine_df["levels"]
    dram = levels[(levels.level == "DRAM") & (levels.kernel == "read") & (levels.threads == 2)]
    assert dram.gbps.tolist() == [load(run_small, "machine.json")["bandwidth"]["levels"]["DRAM"]["read"]["2"]]
    assert set(run.machine_df["compute"].key) == {"fma_f64", "fma_f32", "add_f64", "add_f32",
                                                   "addmin_f32", "addmin_f64"}
    caches = run.machine_df["caches"].set_index("level")
    assert caches.loc["L3", "reported"] == 256 * 2**20 and caches.loc["L3", "measured"] == 32 * 2**20

    counters = run.counters_df
    assert counters["backends"].available.tolist() == [False, False, True]
    assert len(counters["rows"]) == 5 and set(counters["rows"].backend) == {"cachegrind"}
    assert ("events", "D1mr") in counters["rows"].columns
    assert (run.bench_df.error_occurred).sum() == 1


@pytest.mark.parametrize("kind", list(FILES))
def test_missing_file_names_the_command(run_copy, kind):
    fname, _, _, command = FILES[kind]
    (run_copy / fname).unlink()
    run = load_run(run_copy)  # optional: loads without it
    assert command in run.missing[kind]
    with pytest.raises(RooflabDataError, match=f"{fname} not found: run `{command}`"):
        load_run(run_copy, required=(kind,))


def test_missing_directory(tmp_path):
    with pytest.raises(RooflabDataError, match="does not exist"):
        load_run(tmp_path / "nope")


@pytest.mark.parametrize("schema,pattern", [
    ("rooflab.model/2", "unsupported schema version \"rooflab.model/2\""),
    ("rooflab.bench/1", "expected \"rooflab.model/1\""),
])
def test_wrong_schema_is_refused(run_copy, schema, pattern):
    doc = load(run_copy, "model.json")
    doc["schema"] = schema
    save(run_copy, "model.json", doc)
    with pytest.raises(RooflabDataError, match=pattern):
        load_run(run_copy)


def test_minor_version_and_extra_keys_are_accepted(run_copy):
    doc = load(run_copy, "machine.json")
    doc["schema"] = "rooflab.machine/1.3"
    doc["future_field"] = {"x": 1}
    save(run_copy, "machine.json", doc)
    assert load_run(run_copy).machine_df is not None


def test_missing_schema_and_bad_json(run_copy):
    doc = load(run_copy, "counters.json")
    del doc["schema"]
    save(run_copy, "counters.json", doc)
    with pytest.raises(RooflabDataError, match="no \"schema\" key"):
        load_run(run_copy)
    (run_copy / "counters.json").write_text("{ not json")
    with pytest.raises(RooflabDataError, match="not valid JSON"):
        load_run(run_copy)


def test_ok_row_without_time_names_the_key(run_copy):
    doc = load(run_copy, "model.json")
    del doc["rows"][2]["median_s"]
    save(run_copy, "model.json", doc)
    with pytest.raises(RooflabDataError, match=r"\$\.rows\[2\]: missing key \"median_s\""):
        load_run(run_copy)


def test_wrong_type_is_refused(run_copy):
    doc = load(run_copy, "machine.json")
    doc["bandwidth"]["levels"]["DRAM"]["read"]["2"] = "fast"
    save(run_copy, "machine.json", doc)
    with pytest.raises(RooflabDataError, match=r"levels\.DRAM\.read\.2.*expected a number"):
        load_run(run_copy)


def test_unknown_status_is_refused(run_copy):
    doc = load(run_copy, "model.json")
    doc["rows"][0]["status"] = "great"
    save(run_copy, "model.json", doc)
    with pytest.raises(RooflabDataError, match="not one of ok, failed, skipped"):
        load_run(run_copy)


def test_rows_from_an_unavailable_backend_are_refused(run_copy):
    # An unavailable back end contributes no rows: numbers from it would be fake zeros.
    doc = load(run_copy, "counters.json")
    doc["rows"][0]["backend"] = "papi"
    save(run_copy, "counters.json", doc)
    with pytest.raises(RooflabDataError, match="not listed as available"):
        load_run(run_copy)


def test_prediction_may_be_null(run_copy):
    doc = load(run_copy, "model.json")
    for k in ("predicted_s", "ceiling_gflops", "ceiling_gbps", "efficiency", "bound", "level"):
        doc["rows"][0][k] = None
    save(run_copy, "model.json", doc)
    model = load_run(run_copy).model_df
    assert model.predicted_s.isna().tolist() == [True] + [False] * (len(model) - 1)
    assert model.efficiency.isna()[0] and model.bound[0] is None


def test_intensity_is_null_only_where_a_row_moves_no_bytes(run_copy, tmp_path):
    # A peak row (register loops, no traffic) has no arithmetic intensity, and the roofline says
    # why it is not on it; any other ok row must have one.
    doc = load(run_copy, "model.json")
    doc["rows"][0].update(bytes=0.0, intensity=None)
    save(run_copy, "model.json", doc)
    assert load_run(run_copy).model_df.intensity.isna().tolist()[0]
    name = doc["rows"][0]["name"]
    assert f"{name}: moves no bytes (no arithmetic intensity), cannot sit on a roofline" in \
        roofline.plot(run_copy, tmp_path / "roof.png").omitted
    doc["rows"][0]["bytes"] = 1.0e6
    save(run_copy, "model.json", doc)
    with pytest.raises(RooflabDataError, match=r"\$\.rows\[0\]\.intensity"):
        load_run(run_copy)


def section_file(run, section: str, value, machine_created: str | None = None) -> None:
    """machine.<section>.json as `write_machine_section` writes it (harness/json_io.cpp)."""
    created = load(run, "machine.json")["created"] if machine_created is None else machine_created
    save(run, f"machine.{section}.json", {"schema": "rooflab.machine_section/1", "section": section,
                                          "machine_created": created, "created": "2026-11-24T00:00:00Z",
                                          "value": value})


def test_machine_sections_are_joined_as_rooflab_reads_them(run_copy):
    """gpu-characterize, rtamm units and rooflab_mpi write machine.<section>.json beside machine.json;
    the reader joins each as machine.json's key of that name."""
    section_file(run_copy, "rtamm", {"units": []})
    section_file(run_copy, "gpu", {"schema": "rooflab.gpu/1", "compute": {"fma_f32": 100.0}})
    m = load_run(run_copy).machine
    assert m["rtamm"] == {"units": []} and m["gpu"]["compute"] == {"fma_f32": 100.0}
    assert "stale_sections" not in m


def test_a_section_of_an_earlier_machine_json_is_named_not_joined(run_copy, tmp_path):
    section_file(run_copy, "gpu", {"schema": "rooflab.gpu/1"}, machine_created="2020-01-01T00:00:00Z")
    run = load_run(run_copy)
    assert "gpu" not in run.machine
    assert "machine.gpu.json was measured for the machine.json of 2020-01-01" in run.machine["stale_sections"]["gpu"]
    from rooflab.report import tables
    assert any("gpu section not used" in w and "rooflab gpu-characterize" in w for w in tables.warnings(run))


def test_the_rtamm_calibration_is_joined_only_with_the_units_it_was_fitted_on(run_copy):
    """`rooflab rtamm calibrate` writes machine.rtamm_calibration.json "fitted_on" the revision of
    machine.rtamm.json; after `rtamm units` rewrote the units it is named stale, never joined."""
    section_file(run_copy, "rtamm", {"units": []})
    units = load(run_copy, "machine.rtamm.json")
    units["revision"] = "2026-11-24T00:00:00Z#00000001"
    save(run_copy, "machine.rtamm.json", units)
    section_file(run_copy, "rtamm_calibration", {"calibrations": []})
    cal = load(run_copy, "machine.rtamm_calibration.json")
    cal["fitted_on"] = {"rtamm": "2026-11-24T00:00:00Z#00000001"}
    save(run_copy, "machine.rtamm_calibration.json", cal)
    m = load_run(run_copy).machine
    assert m["rtamm_calibration"] == {"calibrations": []} and "stale_sections" not in m
    units["revision"] = "2026-11-24T00:00:00Z#00000002"  # the units measured again
    save(run_copy, "machine.rtamm.json", units)
    run = load_run(run_copy)
    assert "rtamm_calibration" not in run.machine and run.machine["rtamm"] == {"units": []}
    why = run.machine["stale_sections"]["rtamm_calibration"]
    assert ("machine.rtamm_calibration.json was fitted on machine.rtamm.json revision 2026-11-24T00:00:00Z#00000001; "
            "machine.rtamm.json is now revision 2026-11-24T00:00:00Z#00000002") in why
    assert "rooflab rtamm calibrate" in why
    (run_copy / "machine.rtamm.json").unlink()
    assert "machine.rtamm.json is missing" in load_run(run_copy).machine["stale_sections"]["rtamm_calibration"]
    cal["fitted_on"] = {"rtamm": 7}
    save(run_copy, "machine.rtamm_calibration.json", cal)
    with pytest.raises(RooflabDataError, match=re.escape("$.fitted_on.rtamm")):
        load_run(run_copy)


@pytest.mark.parametrize("breakage,says", [
    (lambda d: d.update(section="rtamm"), 'does not match the file name (expected "gpu"'),
    (lambda d: d.pop("value"), 'does not match the file name'),
    (lambda d: d.update(schema="rooflab.machine/1"), 'expected "rooflab.machine_section/1"'),
    (lambda d: d.update(machine_created=7), "$.machine_created: expected string")])
def test_a_malformed_section_file_is_an_error_naming_it(run_copy, breakage, says):
    section_file(run_copy, "gpu", {"schema": "rooflab.gpu/1"})
    doc = load(run_copy, "machine.gpu.json")
    breakage(doc)
    save(run_copy, "machine.gpu.json", doc)
    with pytest.raises(RooflabDataError, match=re.escape(str(run_copy / "machine.gpu.json")) + ".*" + re.escape(says)):
        load_run(run_copy)


def test_compute_ceilings_per_isa(run_copy):
    machine = load(run_copy, "machine.json")
    widest = machine["compute"]["isa"]
    # A file from before compute.by_isa: the widest ISA's table only, labelled with it.
    by = load_run(run_copy, required=("machine",)).machine_df["compute_by_isa"]
    assert set(by.isa) == {widest} and len(by) == len(load_run(run_copy, required=("machine",)).machine_df["compute"])
    machine["compute"]["by_isa"] = {"scalar": {"ceilings": {"fma_f64": {"1": 9.5, "2": 19.0}}},
                                    widest: {"ceilings": machine["compute"]["ceilings"]}}
    save(run_copy, "machine.json", machine)
    by = load_run(run_copy, required=("machine",)).machine_df["compute_by_isa"]
    s = by[by.isa == "scalar"].sort_values("threads")
    assert s.key.tolist() == ["fma_f64", "fma_f64"] and s.gflops.tolist() == [9.5, 19.0]
    machine["compute"]["by_isa"]["scalar"] = {"ceilings": {"fma_f64": {"1": "fast"}}}
    save(run_copy, "machine.json", machine)
    with pytest.raises(RooflabDataError, match=r"compute\.by_isa\.scalar\.ceilings\.fma_f64"):
        load_run(run_copy, required=("machine",))


def test_bandwidth_ceilings_per_isa(run_copy):
    machine = load(run_copy, "machine.json")
    assert load_run(run_copy, required=("machine",)).machine_df["bandwidth_by_isa"].empty  # older file
    machine["bandwidth"]["by_isa"] = {"scalar": {"levels": {"L1": {"read": {"1": 60.0, "2": 120.0}}, "L2": {}}}}
    save(run_copy, "machine.json", machine)
    by = load_run(run_copy, required=("machine",)).machine_df["bandwidth_by_isa"].sort_values("threads")
    assert by.isa.tolist() == ["scalar", "scalar"] and by.level.tolist() == ["L1", "L1"]
    assert by.kernel.tolist() == ["read", "read"] and by.gbps.tolist() == [60.0, 120.0]
    machine["bandwidth"]["by_isa"]["scalar"]["levels"]["L1"]["read"] = {"1": "fast"}
    save(run_copy, "machine.json", machine)
    with pytest.raises(RooflabDataError, match=r"bandwidth\.by_isa\.scalar\.levels\.L1\.read"):
        load_run(run_copy, required=("machine",))
    machine["bandwidth"]["by_isa"]["scalar"] = {"curves": []}
    save(run_copy, "machine.json", machine)
    with pytest.raises(RooflabDataError, match=r'bandwidth\.by_isa\.scalar.*missing key "levels"'):
        load_run(run_copy, required=("machine",))
