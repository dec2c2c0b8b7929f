"""`rooflab fleet submit|status|collect`: characterize + bench + model on every node of a Slurm
partition, one run directory per node (RUN/<node>/), then the results gathered (docs/fleet.md).

The job (why not an array): `submit` writes ONE batch job on N whole nodes (--exclusive) whose
batch step starts `srun --ntasks-per-node=1 --whole`, one task per allocated node. An sbatch
array cannot give each task its own node from sbatch options: --nodelist applies to every
array task, and array tasks with --nodes=1 may all land on the same node one after another
(measuring it N times and the others never). One job with N nodes gets exactly the requested
nodes (or N distinct ones), each measured once, all at the same time, and no other job shares
them while they are timed. Each task also takes a per-host lock (/tmp/rooflab-fleet.lock) so
that two node names served by one host (several slurmd on one machine, as in the test) never
time at the same time either.

Exit codes: 0 ok, 1 error (collect: a node is missing or failed), 2 usage, 3 (collect) every node
present but some case failed verification.
"""
from __future__ import annotations

import datetime as dt
import fcntl
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

from rooflab import cli
from rooflab.data.jsonfile import RooflabDataError, read_document, read_schema_file, write_json_atomic

PROG = "rooflab fleet"
SCHEMA = "rooflab.fleet/1"
NODE_SCHEMA = "rooflab.fleet_node/1"
PLOTS = Path(__file__).resolve().parents[1]  # plots/: fleet.py, history.py
FLEET_PY = PLOTS / "fleet.py"
HOST_LOCK = "/tmp/rooflab-fleet.lock"
# The files each node's run must have (the layout `rooflab report --fleet` reads).
NODE_FILES = {"machine.json": "rooflab.machine", "bench.json": "rooflab.bench", "model.json": "rooflab.model"}
COMMANDS = {
    "submit": "write the batch script and submit it (sbatch): characterize + bench + model on each node",
    "status": "the job's state (squeue / sacct) and each node's progress",
    "collect": "check each node's results, name missing / failed nodes, optionally store them (history)",
}
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---- Slurm host lists ----------------------------------------------------------------------
def _split_top(text: str) -> list[str]:
    """Splits at commas outside brackets: "a,n[1-3,5],b" -> ["a", "n[1-3,5]", "b"]."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise ValueError("']' without '['")
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if depth:
        raise ValueError("'[' without ']'")
    parts.append(cur)
    return parts


def _expand_one(name: str) -> list[str]:
    m = re.search(r"\[([^\[\]]*)\]", name)
    if not m:
        return [name]
    head, tail = name[:m.start()], name[m.end():]
    out = []
    for r in m.group(1).split(","):
        lo, _, hi = r.partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()):
            raise ValueError(f"bad range [{m.group(1)}]")
        hi = hi or lo
        if int(hi) < int(lo):
            raise ValueError(f"bad range [{m.group(1)}] ({lo}-{hi} runs backwards)")
        width = len(lo) if lo.startswith("0") else 0  # node[01-10]: zero padded
        out += [f"{head}{i:0{width}d}{t}" for i in range(int(lo), int(hi) + 1) for t in _expand_one(tail)]
    return out


def expand_hostlist(text: str) -> list[str]:
    """A Slurm host list ("n[01-03],gpu7") as names, in order, each once; ValueError when malformed."""
    names: list[str] = []
    for part in _split_top(text.strip()):
        part = part.strip()
        if not part:
            raise ValueError("an empty name")
        for n in _expand_one(part):
            if not NAME_RE.fullmatch(n):
                raise ValueError(f"not a node name: {n!r}")
            if n not in names:
                names.append(n)
    return names


# ---- submit --------------------------------------------------------------------------------
def _rooflab_exe(given: str | None) -> str:
    exe = given or os.environ.get("ROOFLAB_EXE", "")
    if not exe:
        raise cli.UsageError("the rooflab binary is unknown: run this as `rooflab fleet` or give --rooflab PATH")
    p = Path(exe).resolve()
    if not (p.is_file() and os.access(p, os.X_OK)):
        raise cli.UsageError(f"--rooflab {exe}: not an executable file")
    return str(p)


def _run_dir(text: str) -> Path:
    """RUN must be a new or empty directory (a fleet run is never written over another)."""
    run = Path(text).absolute()
    if run.exists() and not run.is_dir():
        raise cli.UsageError(f"--out {text}: exists and is not a directory")
    if (run / "fleet.json").exists():
        raise cli.UsageError(f"--out {text}: already holds a fleet run (fleet.json); choose a new directory")
    if run.is_dir() and any(run.iterdir()):
        raise cli.UsageError(f"--out {text}: not empty; choose a new directory")
    parent = next((p for p in [run, *run.parents] if p.exists()), None)
    if parent is None or not os.access(parent, os.W_OK):
        raise cli.UsageError(f"--out {text}: cannot be created ({parent} is not writable)")
    return run


def batch_script(cfg: dict) -> str:
    """The sbatch script: one job on whole nodes, one srun task per node (module docstring)."""
    run = cfg["run"]
    q = shlex.quote
    lines = [
        "#!/bin/bash",
        f"# rooflab fleet run, written by `rooflab fleet submit` at {cfg['submitted']} (docs/fleet.md).",
        "# One job on whole nodes, one task per node (srun --ntasks-per-node=1): each node measured",
        "# once, alone; an array task could not be tied to its own node.",
        "#SBATCH --job-name=rooflab-fleet",
        f"#SBATCH --partition={cfg['partition']}",
        f"#SBATCH --nodes={cfg['nodes']}",
    ]
    if cfg["nodelist"]:
        lines.append(f"#SBATCH --nodelist={','.join(cfg['nodelist'])}")
    lines += [
        "#SBATCH --ntasks-per-node=1",
        "#SBATCH --exclusive",
        f"#SBATCH --output={run}/slurm-%j.out",
        f"#SBATCH --chdir={run}",
    ]
    if cfg.get("time"):
        lines.append(f"#SBATCH --time={cfg['time']}")
    if cfg.get("account"):
        lines.append(f"#SBATCH --account={cfg['account']}")
    lines += [f"#SBATCH {a}" for a in cfg.get("sbatch_args", [])]
    lines += [
        "set -u",
        "# The run's environment: this build's rooflab (and the Python its commands use); nothing",
        "# is built or installed on the nodes, so RUN and the build must be on a shared file system.",
        f"export ROOFLAB_EXE={q(cfg['rooflab'])} ROOFLAB_PYTHON={q(cfg['python'])}",
        "# OpenMP settings of the submitting shell would bound what the node's run may use.",
        "unset OMP_NUM_THREADS OMP_PROC_BIND OMP_PLACES GOMP_CPU_AFFINITY",
        f"echo \"$SLURM_JOB_NODELIST\" >{q(run + '/job_nodelist')}",
        "# --whole: the step gets every CPU of its node (else one CPU per task); --cpu-bind=none: the",
        "# run places its own threads; --kill-on-bad-exit=0: a failing node does not stop the others.",
        "srun --nodes=\"$SLURM_JOB_NUM_NODES\" --ntasks=\"$SLURM_JOB_NUM_NODES\" --ntasks-per-node=1 --whole \\",
        "     --cpu-bind=none --kill-on-bad-exit=0 \\",
        f"     {q(cfg['python'])} {q(str(FLEET_PY))} node {q(run)}",
    ]
    return "\n".join(lines) + "\n"


def cmd_submit(a) -> int:
    if a.nodelist is not None:
        try:
            nodelist = expand_hostlist(a.nodelist)
        except ValueError as e:
            raise cli.UsageError(f"--nodelist {a.nodelist!r}: {e}") from None
    else:
        nodelist = []
    run = _run_dir(a.out)
    if a.filter is not None:
        try:
            re.compile(a.filter)
        except re.error as e:
            raise cli.UsageError(f"--filter {a.filter!r}: not a regular expression ({e})") from None
    cfg = {
        "schema": SCHEMA, "submitted": now(), "run": str(run), "partition": a.partition,
        "nodes": len(nodelist) or a.nodes, "nodelist": nodelist, "profile": a.profile, "filter": a.filter or "",
        "time": a.time or "", "account": a.account or "", "sbatch_args": a.sbatch_arg or [],
        "rooflab": _rooflab_exe(a.rooflab), "python": a.python or sys.executable,
        "submit_host": socket.gethostname(), "job_id": None,
    }
    script = batch_script(cfg)
    sbatch_cmd = ["sbatch", "--parsable", str(run / "fleet.sbatch")]
    if a.dry_run:
        print(f"# {run}/fleet.sbatch\n{script}")
        print("# submit with:\n" + " ".join(shlex.quote(c) for c in sbatch_cmd))
        print("# (--dry-run: nothing written, nothing submitted)", file=sys.stderr)
        return 0
    sbatch = shutil.which("sbatch")
    if not sbatch:
        raise RooflabDataError("sbatch not found: run this on a Slurm login node (--dry-run prints the script)")
    created = not run.exists()
    run.mkdir(parents=True, exist_ok=True)
    (run / "fleet.sbatch").write_text(script, encoding="utf-8")
    cfg["sbatch_command"] = sbatch_cmd
    write_json_atomic(run / "fleet.json", cfg)  # before sbatch: the node tasks read it
    p = subprocess.run([sbatch, *sbatch_cmd[1:]], capture_output=True, text=True)
    if p.returncode != 0:  # nothing submitted: RUN is left as it was, free for the next try
        for f in ("fleet.sbatch", "fleet.json"):
            (run / f).unlink(missing_ok=True)
        if created:
            run.rmdir()
        raise RooflabDataError(f"sbatch failed (exit {p.returncode}): {p.stderr.strip() or p.stdout.strip()}")
    job = p.stdout.strip().split(";")[0]  # --parsable: "<id>[;<cluster>]"
    if not job.isdigit():
        raise RooflabDataError(f"sbatch printed no job id: {p.stdout.strip()!r}")
    cfg["job_id"] = job
    write_json_atomic(run / "fleet.json", cfg)
    print(f"submitted job {job}: {cfg['nodes']} node(s) of partition {a.partition}, profile {a.profile} -> {run}")
    print(f"follow it: rooflab fleet status {run}; then: rooflab fleet collect {run}")
    return 0


# ---- node (what each srun task runs) ---------------------------------------------------------
def _cpu_facts(rooflab: str) -> dict:
    facts: dict = {"cpus_online": os.cpu_count(), "cpus_usable": len(os.sched_getaffinity(0))}
    try:
        info = subprocess.run([rooflab, "info"], capture_output=True, text=True, timeout=60).stdout
        for line in info.splitlines():
            k, _, v = line.partition(": ")
            if k == "cpu signature":
                facts["cpu_signature"] = v.strip()
            elif k.startswith("best ISA"):
                facts["best_isa"] = v.strip()
    except (OSError, subprocess.SubprocessError) as e:
        facts["info_error"] = str(e)
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                facts["cpu_model"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return facts


def cmd_node(a) -> int:
    run = Path(a.run).absolute()
    cfg = read_schema_file(run / "fleet.json", "rooflab.fleet", 1, missing=f"{run}: no fleet.json")
    node = os.environ.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0]
    if not NAME_RE.fullmatch(node):
        raise RooflabDataError(f"node name {node!r} cannot name a directory")
    d = run / node
    (d / "logs").mkdir(parents=True, exist_ok=True)
    rl = cfg["rooflab"]
    doc = {"schema": NODE_SCHEMA, "node": node, "hostname": socket.gethostname(), "job_id": os.environ.get("SLURM_JOB_ID"),
           "task": os.environ.get("SLURM_PROCID"), "job_nodelist": os.environ.get("SLURM_JOB_NODELIST"),
           "profile": cfg["profile"], "filter": cfg["filter"], "rooflab": rl, "state": "waiting", "started": now()}
    write_json_atomic(d / "node.json", doc)
    steps: list[dict] = []
    t_wait = time.time()
    # One measuring task per host at a time (several node names on one host): a no-op wait on a
    # real cluster, where each node runs one task.
    with open(HOST_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        doc.update(state="running", lock_wait_s=round(time.time() - t_wait, 1), measure_started=now(),
                   host=_cpu_facts(rl))
        write_json_atomic(d / "node.json", doc)
        plan = [("characterize", [rl, "characterize", "--profile", cfg["profile"], "--out", str(d)]),
                ("bench", [rl, "bench", "--profile", cfg["profile"], "--out", str(d)]
                 + (["--filter", cfg["filter"]] if cfg["filter"] else [])),
                ("model", [rl, "model", "--run", str(d)])]
        for sid, argv in plan:
            if sid == "bench" and (d / "machine.json").exists():
                argv += ["--machine", str(d / "machine.json")]
            if sid == "model" and not (d / "bench.json").exists():
                steps.append({"id": sid, "status": "skipped", "reason": "needs bench.json", "elapsed_s": 0, "log": ""})
                continue
            doc["state"] = f"running {sid}"
            write_json_atomic(d / "node.json", doc)
            t0 = time.time()
            with open(d / "logs" / f"{sid}.log", "w") as log:
                rc = subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT).returncode
            ok = rc == 0 or (sid == "bench" and rc == 3 and (d / "bench.json").exists())
            steps.append({"id": sid, "status": "ok" if ok else "failed", "exit_code": rc,
                          "reason": "" if rc == 0 else ("some case failed verification" if ok else f"exit {rc}"),
                          "elapsed_s": round(time.time() - t0, 1), "log": f"logs/{sid}.log"})
            doc["steps"] = steps
            write_json_atomic(d / "node.json", doc)
        failed = [s["id"] for s in steps if s["status"] == "failed"]
        doc.update(state="failed" if failed else "done", ended=now(), steps=steps)
    write_json_atomic(d / "node.json", doc)
    print(f"{node}: {doc['state']}" + (f" ({', '.join(failed)} failed; logs in {d}/logs)" if failed else ""))
    return 1 if failed else 0


# ---- status ----------------------------------------------------------------------------------
def _load(run: str) -> tuple[Path, dict]:
    p = Path(run).absolute()
    if not p.is_dir():
        raise cli.UsageError(f"{run}: not a directory")
    if not (p / "fleet.json").exists():
        raise cli.UsageError(f"{run}: not a fleet run (no fleet.json; make one with `rooflab fleet submit`)")
    return p, read_schema_file(p / "fleet.json", "rooflab.fleet", 1)


def _slurm(argv: list[str]) -> tuple[bool, str]:
    """(ran ok, stdout or the reason it did not)."""
    if not shutil.which(argv[0]):
        return False, f"{argv[0]} not found"
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode == 0:
        return True, p.stdout
    said = (p.stderr or p.stdout).strip().splitlines()
    return False, said[-1] if said else f"exit {p.returncode}"


def job_state(job: str) -> tuple[str, list[str]]:
    """The job's state (PENDING, RUNNING, ..., or "ENDED" when it left the queue and sacct cannot
    say more) and lines to show."""
    ok, out = _slurm(["squeue", "-h", "-j", job, "-o", "%i|%T|%M|%D|%R"])
    lines = []
    if ok and out.strip():
        jid, state, elapsed, n, where = out.strip().splitlines()[0].split("|", 4)
        return state, [f"job {jid}: {state}, {elapsed} elapsed, {n} node(s): {where}"]
    if not ok:
        lines.append(f"squeue: {out}")
    ok, out = _slurm(["sacct", "-n", "-P", "-j", job, "-o", "JobID,State,ExitCode,Elapsed,NodeList"])
    rows = [r.split("|") for r in out.strip().splitlines()] if ok else []
    if rows:
        lines += [f"  {r[0]}: {r[1]}, exit {r[2]}, {r[3]}, {r[4]}" for r in rows if len(r) == 5]
        return rows[0][1].split()[0], [f"job {job} (sacct):"] + lines
    lines.append(f"job {job}: not in the queue (ended); sacct: {out.strip() or 'no record'}")
    return "ENDED", lines


def _node_dirs(run: Path) -> dict[str, Path]:
    return {p.name: p for p in sorted(run.iterdir()) if p.is_dir() and
            ((p / "node.json").exists() or any((p / f).exists() for f in NODE_FILES))}


def _expected(run: Path, cfg: dict) -> list[str]:
    if cfg.get("nodelist"):
        return list(cfg["nodelist"])
    f = run / "job_nodelist"
    if f.exists() and f.read_text().strip():
        try:
            return expand_hostlist(f.read_text().strip())
        except ValueError:
            pass
    return []


def cmd_status(a) -> int:
    run, cfg = _load(a.run)
    job = cfg.get("job_id")
    if not job:
        raise RooflabDataError(f"{run}/fleet.json has no job id (the submission failed?)")
    deadline = time.time() + (a.wait or 0)
    while True:
        state, lines = job_state(job)
        if not a.wait or state not in ("PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED"):
            break
        if time.time() >= deadline:
            print("\n".join(lines))
            cli.say(f"{PROG} status", "error", f"job {job} still {state} after --wait {a.wait} s")
            return 1
        time.sleep(min(5.0, max(0.5, deadline - time.time())))
    print("\n".join(lines))
    dirs = _node_dirs(run)
    names = _expected(run, cfg)
    names += [n for n in dirs if n not in names]
    for n in names:
        if n not in dirs:
            print(f"  {n}: no results yet")
            continue
        try:
            doc = read_document(dirs[n] / "node.json")
            print(f"  {n}: {doc.get('state', '?')}" + "".join(
                f", {s['id']} {s['status']} ({s['elapsed_s']} s)" for s in doc.get("steps", [])))
        except RooflabDataError as e:
            print(f"  {n}: {e}")
    if not names:
        print(f"  no node has started ({cfg['nodes']} requested)")
    return 0


# ---- collect ---------------------------------------------------------------------------------
def check_node(d: Path) -> dict:
    """What collect reports of one node directory: status ok | verification | failed, problems."""
    r: dict = {"node": d.name, "status": "ok", "problems": [], "files": {}}
    docs = {}
    for f, schema in NODE_FILES.items():
        try:
            docs[f] = read_schema_file(d / f, schema, 1)
            r["files"][f] = "ok"
        except RooflabDataError as e:
            r["files"][f] = "missing" if not (d / f).exists() else "unusable"
            r["problems"].append(str(e) if (d / f).exists() else f"no {f}")
    node = {}
    try:
        node = read_schema_file(d / "node.json", "rooflab.fleet_node", 1)
    except RooflabDataError as e:
        r["problems"].append(str(e))
    for s in node.get("steps", []):
        if s.get("status") == "failed":
            r["problems"].append(f"step {s['id']} failed ({s.get('reason', '')}; {d.name}/{s.get('log', '')})")
    if node and node.get("state") not in ("done", "failed"):
        r["problems"].append(f"the node's run did not end (state: {node.get('state')})")
    host = node.get("host", {})
    r["cpu"] = host.get("cpu_model") or docs.get("machine.json", {}).get("host", {}).get("cpu", "")
    sig = docs.get("machine.json", {}).get("host", {}).get("cpu_signature")
    if sig and host.get("cpu_signature") and sig != host["cpu_signature"]:
        r["problems"].append(f"machine.json was measured on {sig!r}, the node is {host['cpu_signature']!r}")
    if host and host.get("cpus_usable", 0) < host.get("cpus_online", 0):
        r["problems"].append(f"the task could use {host['cpus_usable']} of {host['cpus_online']} CPUs")
    verified, failures = set(), []  # per case: repetitions and aggregates repeat its name
    for b in docs.get("bench.json", {}).get("benchmarks", []):
        if b.get("run_type", "iteration") != "iteration":
            continue
        name = b.get("run_name") or b.get("name", "?")
        v = (b.get("rooflab") or {}).get("verification") or {}
        if b.get("error_occurred") or v.get("ok") is False:
            failures += [name] if name not in failures else []
        elif v.get("ok"):
            verified.add(name)
    verified = len(verified - set(failures))
    r["verified"], r["verification_failures"] = verified, failures
    if "bench.json" in docs and verified + len(failures) == 0:
        r["problems"].append("bench.json holds no verified case")
    r["elapsed_s"] = round(sum(s.get("elapsed_s", 0) for s in node.get("steps", [])), 1)
    if r["problems"]:
        r["status"] = "failed"
    elif failures:
        r["status"] = "verification"
    return r


def _history_add(exe: str | None, d: Path, db: str, commit: str | None) -> tuple[bool, str]:
    argv = ([exe] if exe else [sys.executable, str(PLOTS / "history.py")]) + ["history", "add", str(d), "--db", db]
    if not exe:
        argv.remove("history")
    if commit:
        argv += ["--commit", commit]
    p = subprocess.run(argv, capture_output=True, text=True)
    return p.returncode == 0, (p.stdout.strip() if p.returncode == 0 else (p.stderr or p.stdout).strip())


def cmd_collect(a) -> int:
    run, cfg = _load(a.run)
    dirs = _node_dirs(run)
    expected = _expected(run, cfg)
    missing = [n for n in expected if n not in dirs]
    if not expected and len(dirs) < cfg["nodes"]:  # the job never started: no node names known
        missing = [f"({cfg['nodes'] - len(dirs)} of {cfg['nodes']} requested node(s), names unknown)"]
    extra = [n for n in dirs if expected and n not in expected]
    rows = [check_node(dirs[n]) for n in dirs]
    exe = os.environ.get("ROOFLAB_EXE") or cfg.get("rooflab")
    for r in rows:
        if a.history and r["files"].get("bench.json") == "ok":
            ok, msg = _history_add(exe, dirs[r["node"]], a.history, a.commit)
            r["history"] = msg
            if not ok:
                r["problems"].append(f"history add failed: {msg}")
                r["status"] = "failed"
    print(f"{'node':20} {'status':13} {'verified':>8} {'failed':>6} {'seconds':>8}  cpu / problems")
    for r in rows:
        print(f"{r['node']:20} {r['status']:13} {r['verified']:>8} {len(r['verification_failures']):>6} "
              f"{r['elapsed_s']:>8}  {r['cpu']}")
        for p in r["problems"] + [f"verification failed: {n}" for n in r["verification_failures"][:5]]:
            print(f"{'':22}{p}")
        if r.get("history"):
            print(f"{'':22}history: {r['history']}")
    for n in missing:
        print(f"{n:20} missing")
    for n in extra:
        print(f"(note: {n} was not requested)")
    failed = [r["node"] for r in rows if r["status"] == "failed"]
    cfg["collected"] = {"time": now(), "nodes": rows, "missing": missing, "failed": failed,
                        "extra": extra, "history": a.history or None}
    write_json_atomic(run / "fleet.json", cfg)
    print(f"{len(rows)} node(s) collected, {len(missing)} missing, {len(failed)} failed -> {run}/fleet.json")
    if missing or failed:
        return 1
    return 3 if any(r["status"] == "verification" for r in rows) else 0


# ---- the command line -------------------------------------------------------------------------
def parser_for(name: str) -> cli.Parser:
    prog = f"{PROG} {name}"
    if name == "submit":
        p = cli.Parser(prog, "--partition P (--nodes N | --nodelist L) --out RUN [--profile P] [options]", COMMANDS[name],
                       epilog="One job on whole nodes with one task per node (docs/fleet.md says why not an array). "
                              "RUN and the build must be on a file system every node sees.")
        p.add_argument("--partition", required=True, metavar="P", help="the Slurm partition")
        g = p.add_mutually_exclusive_group(required=True)
        g.add_argument("--nodes", type=cli.positive_int, metavar="N", help="any N nodes of the partition")
        g.add_argument("--nodelist", metavar="L", help="these nodes (a Slurm host list: n[01-04],gpu7)")
        p.add_argument("--out", required=True, metavar="RUN", help="the fleet run directory (new or empty): RUN/<node>/")
        p.add_argument("--profile", choices=("smoke", "quick", "paper"), default="quick",
                       help="the profile of characterize and bench (default quick)")
        p.add_argument("--filter", metavar="REGEX", help="only the benchmarks matching REGEX (rooflab bench --filter)")
        p.add_argument("--time", metavar="LIMIT", help="the job's time limit (sbatch --time)")
        p.add_argument("--account", metavar="A", help="sbatch --account")
        p.add_argument("--sbatch-arg", action="append", metavar="ARG",
                       help="another sbatch option for the script, e.g. --sbatch-arg=--constraint=zen4 (repeatable)")
        p.add_argument("--rooflab", metavar="PATH", help="the rooflab binary the nodes run (default: this one)")
        p.add_argument("--python", metavar="PATH", help="the Python the nodes run (default: this one, the venv's)")
        p.add_argument("--dry-run", action="store_true", help="print the script and the sbatch command; write nothing")
    elif name == "node":
        p = cli.Parser(prog, "RUN", "one node's run (what the job's srun tasks run)")
        p.add_run_argument("the fleet run directory")
    elif name == "status":
        p = cli.Parser(prog, "RUN [--wait SECONDS]", COMMANDS[name])
        p.add_run_argument("the fleet run directory")
        p.add_argument("--wait", type=cli.positive_int, metavar="SECONDS",
                       help="first wait (at most SECONDS) until the job has left the queue; exit 1 when it has not")
    else:
        p = cli.Parser(prog, "RUN [--history DB] [--commit SHA]", COMMANDS[name],
                       epilog="exit codes: 0 every node ok, 1 a node missing or failed, 3 some case failed verification")
        p.add_run_argument("the fleet run directory")
        p.add_argument("--history", metavar="DB", help="also store each node's run: rooflab history add NODE_DIR --db DB")
        p.add_argument("--commit", metavar="SHA", help="the git commit, for history add --commit")
    return p


def main(argv: list[str] | None = None) -> int:
    bodies = {"submit": cmd_submit, "status": cmd_status, "collect": cmd_collect, "node": cmd_node}
    return cli.command_group(
        PROG, "rooflab on a Slurm cluster: characterize + bench + model on each node into RUN/<node>/ (docs/fleet.md).",
        COMMANDS, lambda name, rest: cli.run(parser_for(name), bodies[name], rest),
        sys.argv[1:] if argv is None else argv, hidden=("node",))
