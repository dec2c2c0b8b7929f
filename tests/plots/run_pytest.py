"""CTest entry point: `python run_pytest.py [--skip-if-none-ran] <pytest args>`, skipped (77)
without the packages. --skip-if-none-ran: also 77 when every selected test was skipped (a suite
that needs one optional tool), so CTest shows SKIP with the reasons, never a silent pass."""
import sys

from pydeps import require_or_skip


class _Outcomes:
    def __init__(self):
        self.ran, self.skips = 0, []

    def pytest_runtest_logreport(self, report):
        if report.skipped:
            r = report.longrepr
            self.skips.append(r[2] if isinstance(r, tuple) else str(r))
        elif report.when == "call":
            self.ran += 1


if __name__ == "__main__":
    require_or_skip()
    import pytest
    args = sys.argv[1:]
    if "--skip-if-none-ran" not in args:
        sys.exit(pytest.main(args))
    args.remove("--skip-if-none-ran")
    seen = _Outcomes()
    rc = pytest.main(args, plugins=[seen])
    if rc == 0 and seen.ran == 0 and seen.skips:
        print("skipped: " + "; ".join(dict.fromkeys(seen.skips)))
        sys.exit(77)
    sys.exit(rc)
