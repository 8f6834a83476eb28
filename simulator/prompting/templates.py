"""The manager's and the summarizer's fixed prompts, shipped as YAML in `prompts/system/`."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml

PROMPTS_DIR = Path(__file__).resolve().parents[2] / "prompts"


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
