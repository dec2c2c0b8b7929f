"""The report as Markdown, to paste into an issue: warnings, machine summary, the regression
comparison (with a baseline), the claims ledger, per-family summary tables, the commands.
`rooflab report RUN --markdown` prints it; the HTML build writes it as report/report.md."""
from __future__ import annotations

from rooflab import claims as claims_mod
from rooflab.data.run import Run
from rooflab.report import tables as rd
from rooflab.report.html import md_table


def _title(run: Run) -> str:
    return ((run.machine or {}).get("host", {}).get("hostname") or (run.bench or {}).get("context", {}).get("host_name")
            or run.run_dir.name)


def steps_lines(steps: dict | None) -> list[str]:
    """./run_all.sh's failed and skipped steps with their reasons (RUN/steps.json), for the top."""
    problems = rd.step_problems(steps)
    if not problems:
        return []
    return ["## Failed and skipped steps", ""] + [f"- **{status}**: {what}" for status, what in problems] + \
           ["", f"(`{steps.get('command', '')}`; what these steps did not produce is missing below; the rest is complete.)", ""]


def render(run: Run, claim_rows: list[dict], cmp: rd.Comparison | None, steps: dict | None = None) -> str:
    out = [f"# rooflab report — {_title(run)}", "", f"Run directory: `{run.run_dir.resolve()}`", ""]
    out += steps_lines(steps)
    out += [f"- ⚠ not used: {m}" for m in run.invalid.values()]
    out += [f"- note: {m}" for k, m in run.missing.items() if k not in run.invalid]
    out += ["", "## Self-diagnosis", ""]
    out += [f"- ⚠ {w}" for w in rd.warnings(run)] or ["No warnings recorded."]

    out += ["", "## Machine", ""]
    if run.machine is None:
        out.append(run.missing["machine"])
    else:
        out += [md_table(["field", "value"], rd.machine_facts(run)), "", "Cache capacities, reported vs measured:", "",
                md_table(*rd.caches_table(run)), ""]
        lv = run.machine_df["levels"]
        if not lv.empty:  # the widest thread count only: the full table is in the HTML report
            t = int(lv.threads.max())
            out += [f"Bandwidth ceilings (GB/s, {t} thread{'s' if t > 1 else ''}):", "",
                    md_table(*rd.bandwidth_table(run, [t])), ""]
        head, rows = rd.bandwidth_isa_table(run)
        if rows:
            out += ["In-cache bandwidth ceilings per ISA (GB/s; a kernel's L1..L3 traffic is priced against its own "
                    "ISA's):", "", md_table(head, rows), ""]
        head, rows, _ = rd.likwid_table(run)
        if rows:
            out += ["Bandwidth ceilings vs likwid-bench:", "", md_table(head, rows), ""]
        out += ["Compute ceilings (GFLOP/s):", "", md_table(*rd.compute_table(run))]
        head, rows = rd.isa_choice_table(run)
        out += ["", "Default ISA of each per-ISA variant, measured (median ms per run; `rooflab isa-calibrate`):", "",
                md_table(head, rows) if rows else "no ISA calibration: the default ISA is the widest this CPU runs"]

    if cmp is not None:
        out += ["", f"## Regression comparison against `{cmp.base}`", "", cmp.markdown(), "", cmp.summary]

    out += ["", "## Claims ledger", "", claims_mod.markdown(claim_rows).rstrip()]

    out += ["", "## Families"]
    have = rd.families_with_data(run)
    for fam in have:
        out += ["", f"### {fam.heading}"]
        tables = rd.summary_tables(run, fam)
        for title_, head, rows in tables:
            out += ["", f"{title_}:", "", md_table(head, rows)]
        if not tables:
            out += ["", "(see the HTML report for its figures)"]
    absent = [f.heading for f in rd.FAMILIES if f not in have]
    if absent:
        out += ["", "No data in this run: " + ", ".join(absent) + "."]

    out += ["", "## Commands to reproduce", "",
            md_table(["file", "command"], [[f, f"`{c}`"] for f, c in rd.commands(run)])]
    return "\n".join(out) + "\n"


def with_problems(md: str, problems: list[str]) -> str:
    """The summary with what `report --keep-going` could not build, after the title block."""
    lines = md.split("\n")
    at = 4 if len(lines) > 4 else len(lines)
    add = ["## Parts of this report that could not be built", ""] + [f"- ⚠ {p}" for p in problems] + [""]
    return "\n".join(lines[:at] + add + lines[at:])


def minimal(run: Run, steps: dict | None, problems: list[str]) -> str:
    """The steps and the problems only: what is left when the summary itself fails."""
    return "\n".join([f"# rooflab report — {_title(run)}", "", f"Run directory: `{run.run_dir.resolve()}`", ""]
                     + steps_lines(steps)) + "\n"
