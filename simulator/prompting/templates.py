"""The manager's and the summarizer's fixed prompts, shipped as YAML in `prompts/system/`.

`prompts/` is package data (`simulator/prompts`, a link to the top-level folder in a checkout), so
a non-editable install finds it too; it is located through importlib, never the source tree.
"""

from __future__ import annotations

from functools import lru_cache
from importlib.resources import files
from pathlib import Path

import yaml

PROMPTS_DIR = Path(str(files("simulator") / "prompts"))


@lru_cache(maxsize=4)
def load_template(name: str) -> dict[str, str]:
    path = PROMPTS_DIR / "system" / f"{name}.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return {key: str(value) for key, value in data.items()}


def fill(template: str, **values: str) -> str:
    """str.format without tripping over braces that model text may contain."""
    out = template
    for key, value in values.items():
        out = out.replace("{" + key + "}", value)
    return out
