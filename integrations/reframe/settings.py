"""A ReFrame 4 site configuration for rooflab's tests (rooflab_checks.py).

`local`: this machine, ReFrame's local scheduler and launcher (what tests/reframe/ runs). A
centre keeps its own configuration and adds nothing for rooflab: the tests are valid on every
system and programming environment ('*'). `cluster`: a Slurm partition (scheduler slurm,
launcher srun), there when ROOFLAB_SLURM_PARTITION names it (see below).

    reframe -C integrations/reframe/settings.py -c integrations/reframe/rooflab_checks.py -r
"""
import os

site_configuration = {
    "systems": [
        {
            "name": "local",
            "descr": "this machine: local scheduler and launcher",
            "hostnames": [".*"],
            "partitions": [
                {
                    "name": "default",
                    "scheduler": "local",
                    "launcher": "local",
                    "environs": ["builtin"],
                    # rooflab pins its own threads; one process per node.
                    "max_jobs": 1,
                },
            ],
        },
        # A Slurm cluster, defined when ROOFLAB_SLURM_PARTITION names its partition: select it with
        # `reframe --system cluster:compute ...` (or give it hostnames of the login nodes, listed
        # before `local`, whose '.*' matches every host). rooflab_checks.py asks for one task on
        # one exclusive node; each node that runs the tests needs the rooflab binary
        # (-S rooflab=PATH, e.g. on a shared file system). ROOFLAB_SLURM_SCHEDULER: `slurm`
        # (default; polls with sacct) or `squeue` (a Slurm without accounting, as the local one
        # of tests/reframe/slurm_local.sh).
        *([{
            "name": "cluster",
            "descr": "a Slurm cluster",
            "hostnames": [r"login\d+"],
            "partitions": [
                {
                    "name": "compute",
                    "scheduler": os.environ.get("ROOFLAB_SLURM_SCHEDULER", "slurm"),
                    "launcher": "srun",
                    "access": [f"--partition={os.environ['ROOFLAB_SLURM_PARTITION']}"],
                    "environs": ["builtin"],
                    "max_jobs": 16,
                },
            ],
        }] if os.environ.get("ROOFLAB_SLURM_PARTITION") else []),
    ],
    # No environments: rooflab is built already; ReFrame's own `builtin` environment serves.
    "logging": [
        {
            "level": "debug",
            "handlers": [
                {"type": "stream", "name": "stdout", "level": "info", "format": "%(message)s"},
                {"type": "file", "name": "reframe.log", "level": "debug",
                 "format": "[%(asctime)s] %(levelname)s: %(check_info)s: %(message)s",
                 "append": False},
            ],
            # One line per test and run in perflogs/<system>/<partition>/<test>.log: each
            # performance variable with its value, unit, reference and thresholds.
            "handlers_perflog": [
                {
                    "type": "filelog",
                    "prefix": "%(check_system)s/%(check_partition)s",
                    "level": "info",
                    "format": ("%(check_job_completion_time)s|%(check_result)s|"
                               "%(check_name)s|%(check_perfvalues)s"),
                    "format_perfvars": ("%(check_perf_var)s=%(check_perf_value)s|"
                                        "%(check_perf_unit)s|%(check_perf_ref)s|"
                                        "%(check_perf_lower_thres)s|"
                                        "%(check_perf_upper_thres)s|"
                                        "%(check_perf_result)s|"),
                    "append": True,
                },
            ],
        },
    ],
}
