"""rooflab's ReFrame test library (ReFrame 4): drop it into a centre's ReFrame configuration.

  rooflab_characterize  `rooflab characterize`: sanity = machine.json written, no error;
                        performance = the ceilings (DRAM and L1 read bandwidth, FMA and add+min
                        peaks per ISA, at 1 and all threads)
  rooflab_bench         `rooflab bench` on a selection + `rooflab model`: sanity = every case
                        verified and timed; performance = per kernel efficiency (attained /
                        predicted), GFLOP/s and time

References come from a file written by references.py from a stored rooflab run of the system
(never figures in this file): `-S references=FILE` (or ROOFLAB_REFERENCES). Without one, the
values are measured and logged, and nothing is compared. docs/reframe.md has the variables.

    reframe -C integrations/reframe/settings.py -c integrations/reframe/rooflab_checks.py -r \
        -S rooflab=build/release/rooflab -S references=refs.json
"""
import os
import shutil
import sys

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_after, run_before, sanity_function, variable
from reframe.core.exceptions import SanityError

# ReFrame loads this file by path; its helper module sits beside it.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rooflab_perf as rp  # noqa: E402


def _default_rooflab():
    """ROOFLAB_BIN, else `rooflab` on PATH, else this checkout's release build."""
    if os.environ.get("ROOFLAB_BIN"):
        return os.environ["ROOFLAB_BIN"]
    found = shutil.which("rooflab")
    if found:
        return found
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, "..", "..", "build", "release", "rooflab"))


class RooflabBase(rfm.RunOnlyRegressionTest):
    """What both tests share: the binary, the references, one exclusive node."""
    rooflab = variable(str, value=_default_rooflab())
    references = variable(str, value=os.environ.get("ROOFLAB_REFERENCES", ""))
    # The profile passed to rooflab (smoke: minutes in all; quick: the default; paper: hours).
    profile = variable(str, value="quick")
    valid_systems = ["*"]
    valid_prog_environs = ["*"]
    num_tasks = 1
    num_tasks_per_node = 1
    # Ceilings and timings mean nothing on a shared node.
    exclusive_access = True
    maintainers = ["rooflab"]
    tags = {"rooflab", "performance"}


    @run_after("init")
    def _check_options(self):
        if self.profile not in ("smoke", "quick", "paper"):
            raise ValueError(f"profile {self.profile!r}: expected smoke, quick or paper")
        # Relative to where reframe was started, not to the stage directory the job runs in.
        if self.references:
            self.references = os.path.abspath(self.references)
        if "/" in self.rooflab:
            self.rooflab = os.path.abspath(self.rooflab)

    def _references(self):
        """This system's entry of the references file: {} when no file is given."""
        if not self.references:
            return {}
        refs = rp.load(self.references, rp.REFERENCES_SCHEMA)
        return rp.references_for(refs, self.references_test, self.current_partition.fullname)

    def _stage_path(self, name):
        return os.path.join(self.stagedir, name)

    def _set_performance(self, measured):
        """measured {variable: (value, unit)} -> ReFrame's perf_variables and reference (the
        reference file's tuples for this system; the variables it does not name are logged,
        not compared)."""
        refs = self._references().get("references", {})
        self.perf_variables = {
            name: sn.make_performance_function(sn.defer(value), unit)
            for name, (value, unit) in measured.items()
        }
        self.reference = {
            self.current_partition.fullname: {name: tuple(ref) for name, ref in refs.items()}
        }

    @staticmethod
    def _exit_line(command):
        # The job's own exit status of the rooflab command, printed for the sanity check (the
        # job script goes on to the next command after a failure).
        return f'echo "rooflab {command} exit: $?"'

    def _assert_exit(self, command):
        return sn.assert_found(rf"^rooflab {command} exit: 0$", self.stdout,
                               msg=f"rooflab {command} failed (see the job's stderr)")


@rfm.simple_test
class rooflab_characterize(RooflabBase):
    """The machine's ceilings: `rooflab characterize --profile P [--threads T]`."""
    # 0: every CPU of the node (so the ceilings come at 1 and at all threads).
    threads = variable(int, value=0)
    descr = "rooflab characterize: bandwidth and compute ceilings"
    # Its entry in the references file (a centre's subclass keeps it).
    references_test = "rooflab_characterize"
    keep_files = ["machine.json"]

    @run_before("run")
    def _command(self):
        self.executable = self.rooflab
        self.executable_opts = ["characterize", "--profile", self.profile, "--out", "."]
        if self.threads > 0:
            self.executable_opts += ["--threads", str(self.threads)]
        self.postrun_cmds = [self._exit_line("characterize")]

    @sanity_function
    def machine_written(self):
        return sn.all([self._assert_exit("characterize"),
                       _assert_machine(self._stage_path("machine.json"), self._references())])

    @run_before("performance")
    def _ceilings(self):
        machine = rp.load(self._stage_path("machine.json"), rp.MACHINE_SCHEMA)
        self._set_performance(rp.ceiling_values(machine))


@sn.deferrable
def _assert_machine(path, refs):
    """machine.json parses, has its ceilings, and every ceiling the references name."""
    try:
        machine = rp.load(path, rp.MACHINE_SCHEMA)
    except rp.RunError as e:
        raise SanityError(str(e)) from None
    values = rp.ceiling_values(machine)
    if not values:
        raise SanityError(f"{path}: no bandwidth or compute ceilings")
    missing = sorted(set(refs.get("references", {})) - set(values))
    if missing:
        raise SanityError(f"{path}: the references name ceilings this run did not measure: "
                          + ", ".join(missing))
    return True


@rfm.simple_test
class rooflab_bench(RooflabBase):
    """Kernels verified, timed and priced by the roofline:
    [`rooflab characterize`;] `rooflab bench --profile P --filter R --case N...`; `rooflab model`.

    The selection: `bench_filter` and `cases`; when both are empty, the cases of the references
    file for this system; else `default_filter`."""
    bench_filter = variable(str, value="")
    cases = variable(typ.List[str], value=[])
    # A small compute-bound + DRAM-bound pair, every ISA, one thread (18 cases in quick).
    default_filter = variable(str, value=r"^(gemm/blocked|sinkhorn/fused_uv)/[^/]+/f64/[^/]+/threads:1$")
    # The ceilings the model prices the kernels against: a machine.json of this node, else
    # (empty) measured in the same job by `rooflab characterize --profile machine_profile`.
    machine = variable(str, value="")
    machine_profile = variable(str, value="quick")
    # Which of the selected kernels become performance variables (a regex on the name).
    perf_cases = variable(str, value="")
    # More options for `rooflab bench`, e.g. ['--benchmark_repetitions=9'].
    bench_opts = variable(typ.List[str], value=[])
    descr = "rooflab bench + model: per-kernel efficiency against the roofline"
    references_test = "rooflab_bench"
    keep_files = ["bench.json", "machine.json", "model.json"]

    @run_after("init")
    def _machine_path(self):
        if self.machine:
            self.machine = os.path.abspath(self.machine)

    def _selection(self):
        if self.bench_filter or self.cases:
            return self.bench_filter, list(self.cases)
        ref_cases = self._references().get("cases", [])
        if ref_cases:
            return "", list(ref_cases)
        return self.default_filter, []

    @run_before("run")
    def _command(self):
        r = self.rooflab
        if self.machine:
            self.prerun_cmds = [f"cp {self.machine} machine.json"]
        else:
            self.prerun_cmds = [f"{r} characterize --profile {self.machine_profile} --out .",
                                self._exit_line("characterize")]
        bench_filter, cases = self._selection()
        self.executable = r
        self.executable_opts = ["bench", "--profile", self.profile, "--out", ".",
                                "--machine", "machine.json"]
        if bench_filter:
            self.executable_opts += ["--filter", f"'{bench_filter}'"]
        for c in cases:
            self.executable_opts += ["--case", f"'{c}'"]
        self.executable_opts += list(self.bench_opts)
        self.postrun_cmds = [self._exit_line("bench"),
                             f"{r} model --run . > model.txt 2>&1", self._exit_line("model")]

    @sanity_function
    def every_case_verified(self):
        checks = [self._assert_exit("bench"), self._assert_exit("model")]
        if not self.machine:
            checks.insert(0, self._assert_exit("characterize"))
        checks.append(_assert_bench(self._stage_path("bench.json"),
                                    self._stage_path("model.json"), self._references()))
        return sn.all(checks)

    @run_before("performance")
    def _kernels(self):
        model = rp.load(self._stage_path("model.json"), rp.MODEL_SCHEMA)
        self._set_performance(rp.kernel_values(model, self.perf_cases or None))


@sn.deferrable
def _assert_bench(bench_path, model_path, refs):
    """bench.json: every case verified and timed; model.json: every referenced kernel priced."""
    try:
        bench = rp.load(bench_path, rp.BENCH_SCHEMA)
        model = rp.load(model_path, rp.MODEL_SCHEMA)
    except rp.RunError as e:
        raise SanityError(str(e)) from None
    if not bench.get("benchmarks"):
        raise SanityError(f"{bench_path}: no benchmarks ran")
    failed = rp.bench_failures(bench)
    if failed:
        raise SanityError(f"{len(failed)} case(s) failed: " + "; ".join(failed[:5]))
    missing = sorted(set(refs.get("references", {})) - set(rp.kernel_values(model)))
    if missing:
        raise SanityError(f"{model_path}: no value for the referenced " + ", ".join(missing))
    return True

