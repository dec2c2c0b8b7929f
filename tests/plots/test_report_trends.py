"""`rooflab report RUN --history DB` (plots/rooflab/report/trends.py, figures/trend.py): the
trends page of the run's benchmarks over a small synthetic store made here (two machines, a step
in one benchmark's time and in every efficiency, cachegrind counts with a step), change points
marked where the steps are, the efficiency of both machines in one axes, the family pages' rows
linking to existing anchors, and the errors of a missing or bad store and of bad options."""
from __future__ import annotations

import html
import re
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import unquote

import pytest
from conftest import assert_png, run_script

from trend_store import COUNTED, MACHINES, OK_NAMES, OTHER, RUN, STEP_AT, STEPPED, fill

from rooflab.figures import trend
from rooflab.history import changepoints, synth
from rooflab.history.ingest import fingerprint
from rooflab.history.store import Store
from rooflab.report import build, trends

needs_detector = pytest.mark.skipif(changepoints.missing() is not None,
                                    reason="signal-processing-algorithms (plots/requirements-optional.txt) is "
                                           "not installed")


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    db = str(tmp_path_factory.mktemp("hist") / "h.sqlite")
    fill(db)
    return db


@pytest.fixture(scope="module")
def report(store, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("rep") / "report"
    p = run_script("report.py", str(RUN), "--out", str(out), "--history", store)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip().splitlines()[-1] == str(out / "index.html")
    return out


def read(out: Path, name: str) -> str:
    return (out / name).read_text(encoding="utf-8")


def sections(page: str) -> dict[str, str]:
    """anchor id -> the HTML of its <section> on the trends page."""
    return {html.unescape(m.group(1)): m.group(2)
            for m in re.finditer(r'<section id="([^"]+)">(.*?)</section>', page, re.S)}


def test_page_written_linked_from_index_with_a_trend_per_benchmark(report):
    index, page = read(report, "index.html"), read(report, "trends.html")
    assert '<a href="trends.html">Trends' in index and "Trends over the history" in index
    secs = sections(page)
    # Every ok benchmark of the run has a section with its figure; the store's other benchmark
    # is not drawn, the run's failed and skipped ones have no history.
    assert sorted(secs) == sorted(trends.anchor(n) for n in OK_NAMES)
    assert OTHER not in page
    for body in secs.values():
        src = html.unescape(re.search(r'<img src="([^"]+)"', body).group(1))
        assert src.startswith("trends/") and (report / src).is_file()
        assert_png(report / src)
    assert "4 of this run's 9 benchmarks have a history" in html.unescape(page)
    # The machines, with their CPU facts.
    for facts in MACHINES.values():
        assert html.escape(facts["cpu"]) in page and fingerprint(facts).fingerprint in page


@needs_detector
def test_change_points_where_the_synthetic_steps_are(report):
    page = read(report, "trends.html")
    table = page[page.index("Latest regressions and improvements"):page.index("<h2>Machines")]
    step = f"{synth.commit_of(STEP_AT - 1)[:10]}..{synth.commit_of(STEP_AT)[:10]}"
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S)[1:]
    cells = [[html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)]
             for r in rows]
    found = {(c[0], c[1], c[2]) for c in cells if c[4] == step}
    a, b = (fingerprint(f).fingerprint[:8] for f in MACHINES.values())
    assert (STEPPED, "time", a) in found
    assert (STEPPED, "time", b) not in found  # B's time of it has no step
    assert all((n, "efficiency", m) in found for n in OK_NAMES for m in (a, b))
    assert (COUNTED, "instructions", a) in found
    # Every change point found is at the step: no false alarm in the flat series.
    assert all(c[4] == step for c in cells), [c for c in cells if c[4] != step]
    by_key = {(c[0], c[1], c[2]): c for c in cells}
    assert by_key[(STEPPED, "time", a)][3] == "regression" and by_key[(STEPPED, "time", a)][5].startswith("+2")
    assert by_key[(COUNTED, "instructions", a)][5] == "+8.0%"
    # The section of the stepped benchmark says so under its figure.
    assert "time regression +2" in sections(page)[trends.anchor(STEPPED)]


def test_family_rows_link_to_existing_anchors(report):
    page = read(report, "trends.html")
    ids = {html.unescape(i) for i in re.findall(r'id="([^"]+)"', page)}
    fam = read(report, "sinkhorn.html") + read(report, "floyd_warshall.html")
    hrefs = [html.unescape(h) for h in re.findall(r'href="(trends\.html#[^"]+)"', fam)]
    linked = {unquote(h.split("#", 1)[1]) for h in hrefs}
    assert linked == {trends.anchor(n) for n in OK_NAMES}
    assert linked <= ids
    # The failed row (no history) has no link.
    assert not re.search(r'<a href="trends\.html#[^"]*1000x777', fam)


def drawn(store, tmp_path, monkeypatch, names):
    """Draws the trends of `names` -> (the History, {benchmark: [(axes title, line labels,
    x of the dashed vertical lines)]})."""
    figures = {}
    real_save = trend.fc.save

    def keep(fig, out):
        figures[fig._suptitle.get_text()] = [
            (ax.get_title(loc="left"), [ln.get_label() for ln in ax.get_lines()],
             sorted(ln.get_xdata()[0] for ln in ax.get_lines()
                    if ln.get_linestyle() == "--" and len(set(ln.get_xdata())) == 1)) for ax in fig.axes]
        return real_save(fig, out)

    monkeypatch.setattr(trend.fc, "save", keep)
    h = trends.load(store, names)
    trends.page(h, SimpleNamespace(run_dir=RUN), tmp_path)
    return h, figures


@needs_detector
def test_change_points_are_drawn_between_the_runs_of_the_step(store, tmp_path, monkeypatch):
    h, figures = drawn(store, tmp_path, monkeypatch, [STEPPED, "sinkhorn/typical/f64/128x128/threads:1"])
    a, b = (fingerprint(f).fingerprint for f in MACHINES.values())
    at = {m: (sum(i for i, r in enumerate(h.runs) if r.machine == m and r.commit in
                  (synth.commit_of(STEP_AT - 1), synth.commit_of(STEP_AT)))) / 2 for m in (a, b)}
    # Per machine panels are titled "... — <machine label>"; the efficiency panel holds every machine.
    axes = {"efficiency" if t.startswith("roofline efficiency") else t.split(" — ")[-1]: x
            for t, _, x in figures[STEPPED]}
    labels = {fp: trends.machine_label(fp, f) for fp, f in h.machines.items()}
    assert axes[labels[a]] == [at[a]]  # its time stepped on A
    assert axes[labels[b]] == []       # not on B
    assert axes["efficiency"] == sorted(at.values())
    flat = {t.split(" — ")[-1]: x for t, _, x in figures["sinkhorn/typical/f64/128x128/threads:1"]
            if t.startswith("median time")}
    assert flat == {labels[a]: [], labels[b]: []}


def test_two_machines_share_the_efficiency_axes_and_time_is_per_machine(store, tmp_path, monkeypatch):
    h, figures = drawn(store, tmp_path, monkeypatch, [STEPPED, COUNTED])
    axes_seen = [[(t, lab) for t, lab, _ in axes] for axes in figures.values()]
    assert len(axes_seen) == 2
    labels = {fp: trends.machine_label(fp, f) for fp, f in h.machines.items()}
    for axes in axes_seen:
        eff = [a for a in axes if a[0].startswith("roofline efficiency")]
        assert len(eff) == 1
        assert set(labels.values()) <= set(eff[0][1])  # both machines, labelled, in the one axes
        times = [a[0] for a in axes if a[0].startswith("median time")]
        assert sorted(t.split(" — ")[1] for t in times) == sorted(labels.values())
    # Only COUNTED has cachegrind counts (on machine A only): one counts panel in all.
    titles = [a[0] for axes in axes_seen for a in axes]
    assert [t.split(" — ")[1] for t in titles if t.startswith("cachegrind counts")] == [labels[fingerprint(
        MACHINES["A"]).fingerprint]]


def test_without_the_detector_the_page_says_so_and_draws_the_series(store, tmp_path, monkeypatch):
    def absent():
        raise changepoints.DetectorMissing("the change-point detector needs the Python package "
                                           "signal-processing-algorithms")
    monkeypatch.setattr(changepoints, "_package", absent)
    h = trends.load(store, OK_NAMES)
    assert h.detector and all(not v.result.changes for v in h.verdicts)
    body = "\n".join(trends.page(h, SimpleNamespace(run_dir=RUN), tmp_path))
    assert "change points not marked" in body and "signal-processing-algorithms" in body
    assert len(sections(body)) == len(OK_NAMES)


def test_many_benchmarks_are_capped_with_a_note_and_keep_their_anchors(store, tmp_path, monkeypatch):
    monkeypatch.setattr(trends, "MAX_FIGURES", 2)
    (tmp_path / "trends").mkdir()
    (tmp_path / "trends" / "trend_of_an_earlier_report.png").write_bytes(b"stale")
    h = trends.load(store, OK_NAMES)
    body = "\n".join(trends.page(h, SimpleNamespace(run_dir=RUN), tmp_path))
    assert len(sections(body)) == 2 and "the first 2 are drawn" in body
    ids = {html.unescape(i) for i in re.findall(r'id="([^"]+)"', body)}
    assert {trends.anchor(n) for n in OK_NAMES} <= ids
    assert len(list((tmp_path / "trends").glob("*.png"))) == 2  # the earlier report's is gone


def one_line_error(p, code: int, *words: str) -> None:
    assert p.returncode == code and p.stdout == "", (p.returncode, p.stdout, p.stderr)
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr and "internal error" not in p.stderr, p.stderr
    for w in words:
        assert w in p.stderr, p.stderr


def test_missing_or_bad_store_is_one_line_and_exit_1(tmp_path, capsys):
    out = tmp_path / "out"
    p = run_script("report.py", str(RUN), "--out", str(out), "--history", str(tmp_path / "none.sqlite"))
    one_line_error(p, 1, "none.sqlite", "no history store there")
    assert not (tmp_path / "none.sqlite").exists() and not out.exists()  # nothing made, nothing drawn
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    newer = tmp_path / "newer.sqlite"
    with Store(str(newer)) as s, s._tx(write=True):
        s._exec("INSERT INTO schema_version VALUES (99, 'from the future', 'now')")
    # The same path in-process (each start of the command costs seconds).
    for db, words in ((bad, ["bad.sqlite"]), ("mysql://x@y/z", ["unknown kind of store"]),
                      (newer, ["schema version 99"])):
        rc = build.main([str(RUN), "--out", str(out), "--history", str(db)])
        err = capsys.readouterr()
        one_line_error(SimpleNamespace(returncode=rc, stdout=err.out, stderr=err.err), 1,
                       "rooflab report: error:", *words)
        assert not out.exists()


def test_keep_going_writes_the_rest_with_the_history_named_at_the_top(tmp_path, capsys):
    out = tmp_path / "out"
    rc = build.main([str(RUN), "--out", str(out), "--keep-going", "--history", str(tmp_path / "none.sqlite")])
    assert rc == 1 and "written without the history" in capsys.readouterr().err
    index = read(out, "index.html")
    assert "the history" in index and "no history store there" in index
    assert not (out / "trends.html").exists() and "trends.html" not in index
    assert "trends.html#" not in read(out, "sinkhorn.html")


def test_the_reproducing_command_names_the_store_without_its_password():
    from rooflab.data.run import load_run
    html_ = build.commands_section(load_run(RUN), None, "postgresql://ci:secret@db.example/hist")
    assert "--history 'postgresql://ci:***@db.example/hist'" in html.unescape(html_) and "secret" not in html_


@pytest.mark.parametrize("args,words", [
    (["--history"], ["--history", "expected one argument"]),
    (["--history", "h.sqlite", "--markdown"], ["--history is for the HTML report"]),
])
def test_bad_options_exit_2(args, words):
    p = run_script("report.py", str(RUN), *args)
    one_line_error(p, 2, "usage: rooflab report", *words)


def test_a_store_without_the_runs_benchmarks_says_how_to_add_it(tmp_path):
    db = tmp_path / "empty.sqlite"
    Store(str(db)).close()
    h = trends.load(str(db), OK_NAMES)
    body = html.unescape("\n".join(trends.page(h, SimpleNamespace(run_dir=RUN), tmp_path)))
    assert "the history has none of this run's benchmarks" in body and "rooflab history add" in body
    assert trends.links(h) == {}
