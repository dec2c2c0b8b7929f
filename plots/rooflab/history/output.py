"""What `rooflab history check` writes: the table on stdout, a Markdown summary (a pull-request
comment) and JUnit XML (one test case per gated series, a failure per regression it gates)."""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree as ET

from rooflab.history.changepoints import Change, Result


@dataclass
class Verdict:
    result: Result
    gated: list[Change]  # the regressions that fail the check (since --since, or the latest)

    @property
    def name(self) -> str:
        s = self.result.series
        return f"{s.benchmark} {s.metric} @{s.machine[:12]}"


def _short(commit: str) -> str:
    return commit[:10] if commit else "?"


def describe(c: Change) -> tuple[str, str, str, str]:
    """(kind, commit range, size, p-value) as every output shows them."""
    p = f"<{c.resolution:.3f}" if c.pvalue < c.resolution else f"{c.pvalue:.3f}"
    return (c.kind, f"{_short(c.before.commit)}..{_short(c.after.commit)}",
            f"{(c.ratio - 1) * 100:+.1f}%", p)


def table(verdicts: list[Verdict]) -> str:
    rows = [("", "benchmark", "metric", "machine", "change", "commits", "size", "p")]
    for v in verdicts:
        s = v.result.series
        for c in v.result.changes:
            rows.append(("FAIL" if c in v.gated else "", s.benchmark, s.metric, s.machine[:12],
                         *describe(c)))
    if len(rows) == 1:
        return ""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(f"{x:<{w}}" for x, w in zip(r, widths)).rstrip() for r in rows) + "\n"


def summary_line(verdicts: list[Verdict], gate: str) -> str:
    changes = sum(len(v.result.changes) for v in verdicts)
    failed = sum(1 for v in verdicts if v.gated)
    return (f"history check: {len(verdicts)} series, {changes} change points, "
            f"{failed} series with a regression {gate}")


def markdown(verdicts: list[Verdict], gate: str) -> str:
    failed = [v for v in verdicts if v.gated]
    head = "## rooflab history check: " + (f"{len(failed)} regression(s) {gate}" if failed
                                           else f"no regression {gate}")
    out = [head, "", summary_line(verdicts, gate) + ".", ""]
    rows = [(v, c) for v in verdicts for c in v.result.changes]
    if rows:
        out += ["| | benchmark | metric | machine | change | commits (last before..first after) | size | p-value |",
                "|---|---|---|---|---|---|---|---|"]
        # Gated regressions first, newest first within each group (sorts are stable).
        rows.sort(key=lambda vc: vc[1].after.timestamp, reverse=True)
        rows.sort(key=lambda vc: vc[1] not in vc[0].gated)
        for v, c in rows:
            s = v.result.series
            kind, commits, size, p = describe(c)
            mark = ":x:" if c in v.gated else (":warning:" if c.regression else ":white_check_mark:")
            out.append(f"| {mark} | `{s.benchmark}` | {s.metric} | `{s.machine[:12]}` | {kind} | "
                       f"`{commits}` | {size} | {p} |")
        out.append("")
    return "\n".join(out)


def junit(verdicts: list[Verdict], gate: str) -> str:
    suite = ET.Element("testsuite", name="rooflab history check", tests=str(len(verdicts)),
                       failures=str(sum(1 for v in verdicts if v.gated)), errors="0", skipped="0")
    for v in verdicts:
        s = v.result.series
        case = ET.SubElement(suite, "testcase", classname=f"rooflab.history.{s.metric}",
                             name=f"{s.benchmark} @{s.machine[:12]}")
        if v.gated:
            lines = [f"{size} in {commits} (p {p})" for _, commits, size, p in map(describe, v.gated)]
            ET.SubElement(case, "failure", type="regression",
                          message=f"{s.benchmark} {s.metric}: regression {gate}: {lines[-1]}"
                          ).text = "\n".join(lines)
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_atomically(path: str | Path, text: str) -> None:
    """Writes next to `path` and renames over it: a reader never sees half a file."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
