"""Run one of the authors' scripts and record every plotted number.

Usage: python capture.py SCRIPT.py OUT.json [NAME ...]   (run from the release folder)
NAMEs: DataFrames left in the script's globals at the end to write out as records.

Patches (nothing else in the script changes):
- lines starting with '%' (IPython magics such as '%matplotlib qt') are dropped;
- lines calling os.chdir(...) are dropped;
- a line made of seven single quotes (an unterminated string: a SyntaxError) is dropped;
- matplotlib runs on the Agg backend, so plt.show() draws nothing and returns;
- the script runs one top-level statement at a time; a statement that raises is recorded
  and the next one runs (so a missing input file stops only what depends on it).
Recording: Axes.bar / Axes.errorbar / seaborn.heatmap calls are logged on their axes; at each
savefig the figure's axes (title, labels, tick labels) and their logged calls are written out.
"""

import ast
import json
import re
import sys
import traceback

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn
from matplotlib.axes import Axes
from matplotlib.figure import Figure


def plain(v):
    if v is None:
        return None
    if isinstance(v, (pd.Series, pd.Index)):
        return [plain(x) for x in v.tolist()]
    if isinstance(v, pd.DataFrame):
        return {"index": plain(v.index), "columns": plain(v.columns), "values": plain(v.values)}
    if isinstance(v, np.ndarray):
        return [plain(x) for x in v.tolist()]
    if isinstance(v, (list, tuple, range)):
        return [plain(x) for x in v]
    if isinstance(v, (np.floating, float)):
        f = float(v)
        return None if f != f else f
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (int, str, bool)):
        return v
    return str(v)


def log(ax, rec):
    ax.__dict__.setdefault("_captured_calls", []).append(rec)


_bar = Axes.bar


def bar(self, x, height, width=0.8, bottom=None, **kw):
    log(
        self,
        {
            "kind": "bar",
            "x": plain(x),
            "height": plain(height),
            "yerr": plain(kw.get("yerr")),
            "label": kw.get("label"),
        },
    )
    return _bar(self, x, height, width, bottom, **kw)


_errorbar = Axes.errorbar


def errorbar(self, x, y, yerr=None, xerr=None, *a, **kw):
    log(
        self,
        {
            "kind": "errorbar",
            "x": plain(x),
            "y": plain(y),
            "xerr": plain(xerr),
            "yerr": plain(yerr),
            "label": kw.get("label"),
            "color": plain(kw.get("color")),
        },
    )
    return _errorbar(self, x, y, yerr, xerr, *a, **kw)


_heatmap = seaborn.heatmap


def heatmap(data, *a, **kw):
    ax = _heatmap(data, *a, **kw)
    log(ax, {"kind": "heatmap", "data": plain(pd.DataFrame(data))})
    return ax


Axes.bar = bar
Axes.errorbar = errorbar
seaborn.heatmap = heatmap

FIGURES = []
_savefig = Figure.savefig


def savefig(self, fname, *a, **kw):
    axes = []
    for ax in self.axes:
        axes.append(
            {
                "title": ax.get_title(),
                "xlabel": ax.get_xlabel(),
                "ylabel": ax.get_ylabel(),
                "xticklabels": [t.get_text() for t in ax.get_xticklabels()],
                "yticklabels": [t.get_text() for t in ax.get_yticklabels()],
                "calls": ax.__dict__.get("_captured_calls", []),
            }
        )
    FIGURES.append({"file": str(fname), "texts": [t.get_text() for t in self.texts], "axes": axes})
    return _savefig(self, fname, *a, **kw)


Figure.savefig = savefig


def main(script, out, dump=()):
    with open(script, encoding="utf-8") as fh:
        text = fh.read()
    lines = []
    dropped = []
    for i, line in enumerate(text.splitlines(), 1):
        if (
            line.lstrip().startswith("%")
            or re.match(r"\s*os\.chdir\(", line)
            or line.strip() == "'''''''"
        ):
            dropped.append({"line": i, "text": line})
            lines.append("")
        else:
            lines.append(line)
    tree = ast.parse("\n".join(lines), filename=script)
    env = {"__name__": "__main__", "__file__": script}
    errors = []
    for node in tree.body:
        code = compile(ast.Module([node], []), script, "exec")
        try:
            exec(code, env)
        except Exception as exc:
            errors.append(
                {
                    "line": node.lineno,
                    "error": f"{type(exc).__name__}: {exc}",
                    "trace": traceback.format_exc(limit=2)[-600:],
                }
            )
            print(f"[capture] line {node.lineno}: {type(exc).__name__}: {exc}", flush=True)
    plt.close("all")
    frames = {
        name: json.loads(env[name].to_json(orient="records"))
        for name in dump
        if isinstance(env.get(name), pd.DataFrame)
    }
    with open(out, "w") as fh:
        json.dump(
            {
                "script": script,
                "dropped_lines": dropped,
                "errors": errors,
                "figures": FIGURES,
                "frames": frames,
            },
            fh,
            indent=1,
        )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
