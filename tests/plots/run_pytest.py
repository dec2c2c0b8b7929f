"""CTest entry point: `python run_pytest.py <pytest args>`, skipped (77) without the packages."""
import sys

from pydeps import require_or_skip

if __name__ == "__main__":
    require_or_skip()
    import pytest
    sys.exit(pytest.main(sys.argv[1:]))
