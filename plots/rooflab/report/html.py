"""HTML building blocks of the report: escaping, number formats, tables, notes, figures and the
page frame with its navigation bar."""
from __future__ import annotations

import html
import math
from pathlib import Path

from rooflab.data.jsonfile import MalformedInput, RooflabDataError, write_text_atomic

# Laptop-readable: a max width, and every table scrolls inside itself (display: block) so a wide
# table never makes the page scroll sideways; long names and commands wrap.
CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 1em auto; max-width: 1150px;
       padding: 0 1em; color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { border-bottom: 2px solid #ddd; padding-bottom: 0.2em; margin-top: 1.6em; }
h3 { margin-bottom: 0.3em; }
nav { background: #f4f6fa; border: 1px solid #dde; padding: 0.4em 0.8em; margin: 0.4em 0 1em; }
nav a { margin-right: 1em; white-space: nowrap; } nav a.here { font-weight: 700; color: #222; text-decoration: none; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.92em; display: block; overflow-x: auto;
        max-width: 100%; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f0f0f0; } td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.failed td { background: #fde2e2; color: #9b0000; } tr.skipped td { color: #777; background: #f6f6f6; }
tr.slower td { background: #fde2e2; } tr.faster td { background: #e3f6e3; } tr.disagrees td { background: #fde2e2; }
td.v-holds { background: #e3f6e3; } td.v-direction-holds { background: #fff6d6; } td.v-does-not-hold { background: #fde2e2; }
td.v-not-measured, td.v-not-measurable-here { color: #666; background: #f6f6f6; }
.note { background: #fff6d6; border-left: 4px solid #e0b000; padding: 0.4em 0.8em; margin: 0.6em 0; }
.warn { background: #fde2e2; border-left: 4px solid #c00; padding: 0.4em 0.8em; margin: 0.6em 0; }
.meta { color: #555; } code { background: #f3f3f3; padding: 0 0.25em; overflow-wrap: anywhere; }
pre { background: #f6f6f6; padding: 0.5em; white-space: pre-wrap; overflow-wrap: anywhere; font-size: 0.85em; }
figure { margin: 1em 0 2em; } figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption { font-weight: 600; margin-bottom: 0.3em; }
img.thumb { width: 150px; max-width: 100%; border: 1px solid #ddd; }
table.compact { font-size: 0.85em; } table.compact td { padding: 0.15em 0.45em; }
ul.families li { margin: 0.2em 0; }
table.claims td:first-child { min-width: 13em; } table.claims span.meta { font-size: 0.92em; }
"""


def esc(v) -> str:
    return html.escape("" if v is None else str(v), quote=True)


def missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def fmt_num(v, digits: int = 3) -> str:
    return "—" if missing(v) else f"{v:.{digits}g}"


def fmt_time(s) -> str:
    if missing(s):
        return "—"
    for unit, f in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if abs(s) >= f or unit == "ns":
            return f"{s / f:.3g} {unit}"
    return str(s)


def table(headers: list[str], rows: list[list[str]], row_classes: list[str] | None = None,
          num_cols: set[int] = frozenset(), cls: str = "") -> str:
    """rows hold already-escaped HTML cell contents."""
    attr = f' class="{cls}"' if cls else ""
    out = [f"<table{attr}><thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in headers) + "</tr></thead><tbody>"]
    for i, r in enumerate(rows):
        rc = f' class="{row_classes[i]}"' if row_classes and row_classes[i] else ""
        out.append(f"<tr{rc}>" + "".join(f'<td class="num">{c}</td>' if j in num_cols else f"<td>{c}</td>"
                                         for j, c in enumerate(r)) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def text_table(headers: list[str], rows: list[list[str]], num_cols: set[int] = frozenset(), cls: str = "") -> str:
    """table() of plain-text cells (escaped here)."""
    return table(headers, [[esc(c) for c in r] for r in rows], num_cols=num_cols, cls=cls)


def note(text: str, cls: str = "note") -> str:
    return f'<div class="{cls}">{esc(text)}</div>'


def not_drawn(e: RooflabDataError) -> str:
    """Why a figure or section is absent: a warning when its file is unusable, a note when it
    is only missing."""
    return note(f"not drawn: {e}", "warn" if isinstance(e, MalformedInput) else "note")


def figure(fname: str, title: str, caption: str = "") -> str:
    """The image under its title; caption: a line of plain text between them."""
    more = f'<p class="meta">{esc(caption)}</p>' if caption else ""
    return (f'<figure id="{esc(fname)}"><figcaption>{esc(title)}</figcaption>{more}'
            f'<img src="{esc(fname)}" alt="{esc(title)}"></figure>')


def draw(module, run_dir, out_dir, fname: str, title: str, drawn: set[str]) -> str:
    """module.plot(run_dir, out_dir/fname) as a <figure>, or a note saying why it was not drawn;
    adds fname to `drawn` when it was."""
    try:
        module.plot(run_dir, Path(out_dir) / fname)
    except RooflabDataError as e:
        return f"<h3>{esc(title)}</h3>" + not_drawn(e)
    drawn.add(fname)
    return figure(fname, title)


def page(title: str, nav: list[tuple[str, str]], here: str, body: list[str]) -> str:
    """A complete page; nav = [(file, label)], the entry whose file is `here` is not a link."""
    links = " ".join(f'<a class="here">{esc(label)}</a>' if f == here else f'<a href="{esc(f)}">{esc(label)}</a>'
                     for f, label in nav)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{esc(title)}</title>"
            f"<style>{CSS}</style></head><body>\n<nav>{links}</nav>\n" + "\n".join(b for b in body if b) +
            "\n</body></html>\n")


write_atomic = write_text_atomic


def md_table(headers: list[str], rows: list[list[str]]) -> str:
    cell = lambda s: str(s).replace("|", "\\|").replace("\n", " ")
    return "\n".join(["| " + " | ".join(cell(h) for h in headers) + " |", "|" + "---|" * len(headers)] +
                     ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows])
