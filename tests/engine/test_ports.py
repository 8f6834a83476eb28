"""The store-backed implementations answer every call of the engine's ports (engine/ports.py)
with the same parameters, so a world's run, the step loop and the sweep runner work on them."""

from __future__ import annotations

import inspect

import pytest

from simulator.engine.ports import Leases, MemoryShelf, Recorder
from simulator.engine.recorder import StoreRecorder
from simulator.services.sweep_leases import StoreLeases


def members(protocol: type) -> dict[str, object]:
    """The protocol's methods and properties, its bases' included."""
    found: dict[str, object] = {}
    for klass in reversed(protocol.__mro__):
        if klass in (object,) or not getattr(klass, "_is_protocol", False):
            continue
        for name, value in vars(klass).items():
            if not name.startswith("_") and (callable(value) or isinstance(value, property)):
                found[name] = value
    return found


@pytest.mark.parametrize(
    ("protocol", "implementation"),
    [(Recorder, StoreRecorder), (MemoryShelf, StoreRecorder), (Leases, StoreLeases)],
)
def test_the_store_implements_every_port_call(protocol, implementation):
    wanted = members(protocol)
    assert wanted, protocol
    for name, member in wanted.items():
        given = getattr(implementation, name, None)
        assert given is not None, f"{implementation.__name__} lacks {name}"
        if isinstance(member, property):
            assert isinstance(given, property), name
            continue
        expected = list(inspect.signature(member).parameters)
        assert list(inspect.signature(given).parameters) == expected, name
