"""A ReFrame 4 site configuration for rooflab's tests (rooflab_checks.py).

`local`: this machine, ReFrame's local scheduler and launcher (what tests/reframe/ runs). A
centre keeps its own configuration and adds nothing for rooflab: the tests are valid on every
system and programming environment ('*'). The commented `cluster` system below shows a Slurm
partition (scheduler slurm, launcher srun) for one that starts from this file.

    reframe -C integrations/reframe/settings.py -c integrations/reframe/rooflab_checks.py -r
"""

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
        # A Slurm cluster: select it with `reframe --system cluster:compute ...` (or give it
        # hostnames of the login nodes, listed before `local`, whose '.*' matches every host).
        # rooflab_checks.py asks for one task on one exclusive node; each node that runs the tests
        # needs the rooflab binary (-S rooflab=PATH, e.g. on a shared file system).
        # {
        #     "name": "cluster",
        #     "descr": "a Slurm cluster",
        #     "hostnames": [r"login\d+"],
        #     "partitions": [
        #         {
        #             "name": "compute",
        #             "scheduler": "slurm",
        #             "launcher": "srun",
        #             "access": ["--partition=compute"],
        #             "environs": ["builtin"],
        #             "max_jobs": 16,
        #         },
        #     ],
        # },
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
