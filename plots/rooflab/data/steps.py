"""RUN/steps.json: ./run_all.sh's record of its steps (id, title, status, reason, seconds, log)."""
from __future__ import annotations

from pathlib import Path

from rooflab.data.jsonfile import Checker, read_schema_file

SCHEMA = "rooflab.steps/1"
STATUSES = ("ok", "failed", "skipped")


def load(run_dir) -> dict | None:
    """The document, every step checked; None when the run was not made by run_all.sh (no
    file); RooflabDataError when the file is unusable."""
    path = Path(run_dir) / "steps.json"
    if not path.exists():
        return None
    doc = read_schema_file(path, "rooflab.steps", 1, "./run_all.sh")
    ck = Checker(path)
    for k in ("command", "started"):
        ck.opt(doc, k, "$", (str,))
    for i, st in enumerate(ck.items(doc, "steps", "$")):
        w = f"$.steps[{i}]"
        if not isinstance(st.get("id"), str) or st.get("status") not in STATUSES:
            raise ck.fail(w, f"needs an id and a status ({', '.join(STATUSES)})")
        for k in ("title", "reason", "log"):
            ck.opt(st, k, w, (str,))
        ck.opt(st, "elapsed_s", w, (float,))
    return doc
