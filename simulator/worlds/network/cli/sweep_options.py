"""`llm-sim sweep create` of an opinion-network experiment: the spec a file and flags make.

Its axes (graphs, scenarios, tables, rounds) are lists of mappings and names, so they come
from the YAML file; the flags shared with other kinds (--llm, --seeds, --seed, --repetitions,
--name) go over it. A flag of another kind is refused, never dropped."""

from __future__ import annotations

from simulator.domain.yaml_io import load_model
from simulator.errors import UserError
from simulator.worlds.grid.cli.sweep_options import CHAT_ONLY, given, numbers
from simulator.worlds.network.domain.sweep import NetworkSweepSpec
from simulator.worlds.network.services import sweeps as network_sweeps

OTHER_KINDS = (
    *CHAT_ONLY,
    ("agents", "--agents"),
    ("steps", "--steps"),
    ("radius", "--radius"),
    ("memory", "--memory"),
)


def network_sweep_spec(file: str | None, flags: dict) -> NetworkSweepSpec:
    """The file's spec with the flags over it."""
    named = [flag for key, flag in OTHER_KINDS if given(flags.get(key))]
    if named:
        raise UserError(
            f"{', '.join(named)} do not apply to an opinion-network experiment",
            field=named[0],
            fix="leave them out; a network sweep takes a YAML file (graphs, scenarios, agents, "
            "rounds, theory) and --llm, --seeds, --seed, --repetitions and --name",
        )
    data: dict = {}
    if file is not None:
        data = load_model(file, NetworkSweepSpec, "sweep").model_dump(
            mode="json", exclude_unset=True
        )
    overrides = {
        "name": flags.get("name"),
        "repetitions": flags.get("repetitions"),
        "seed": flags.get("seed"),
        "llms": list(flags.get("llms") or ()) or None,
        "seeds": numbers(flags.get("seeds"), "--seeds"),
    }
    data.update({k: v for k, v in overrides.items() if v is not None})
    data["kind"] = "network"
    return network_sweeps.validate_spec(data, source=str(file) if file else None)
