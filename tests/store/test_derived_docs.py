"""Documents made from a shared base encode to the very bytes the store's encoder gives."""

from __future__ import annotations

import copy
import datetime
import pickle

import bson
import pytest
from bson.codec_options import CodecOptions
from hypothesis import given
from hypothesis import strategies as st

from simulator.store.derived_docs import Derived, DerivedEncoder

OPTIONS = CodecOptions(tz_aware=False)


def encode(doc) -> bytes:
    return bson.encode(doc, codec_options=OPTIONS)


BASE = {
    "_id": "conv_base",
    "key": "k_base",
    "schema_version": 1,
    "status": "waiting",
    "cell": {"role_llms": {"Guard": "mock:a"}, "days": 2},
    "order": 0,
    "spec": {"agents": {"Guard": 1}, "seed": None, "name_template": "{role}_{n}"},
    "agents": [{"name": "Guard_1"}, {"name": "Prisoner_1"}],
    "day_split": [10, 10],
    "counters": {"calls": 0},
}
values = st.one_of(
    st.none(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),  # int32 and int64 both
    st.text(max_size=20),
    st.floats(allow_nan=False),
    st.lists(st.integers(min_value=0, max_value=99), max_size=3),
)


def derived(own_id: str, seed, order: int, **more) -> Derived:
    own = {"_id": own_id, "order": order, "spec": Derived(BASE["spec"], {"seed": seed}), **more}
    return Derived(BASE, own)


@given(own_id=st.text(min_size=1, max_size=12), seed=values, order=values, extra=values)
def test_same_bytes_as_the_whole_document_encoded(own_id, seed, order, extra):
    encoder = DerivedEncoder(encode)
    for doc in (derived(own_id, seed, order), derived(own_id, seed, order, added=extra)):
        assert encoder.encode(doc) == encode(dict(doc))
        assert bson.decode(encoder.encode(doc)) == bson.decode(encode(dict(doc)))


def test_id_comes_first_at_the_top_level_whatever_the_order():
    base = {"status": "waiting", "_id": "x", "n": 1}
    doc = Derived(base, {"_id": "conv_1"})
    assert DerivedEncoder(encode).encode(doc) == encode(dict(doc))
    assert next(iter(bson.decode(DerivedEncoder(encode).encode(doc)))) == "_id"


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.__setitem__("status", "done"),  # a field of the base replaced
        lambda d: d.update({"fork": {"at": 3}}),
        lambda d: d.setdefault("added", 1),
        lambda d: d.pop("cell"),
        lambda d: d.__delitem__("day_split"),
        lambda d: d.__ior__({"status": "failed"}),
        lambda d: d["spec"].__setitem__("agents", {"Guard": 2}),  # in the nested one
    ],
)
def test_a_changed_document_is_encoded_as_it_is_now(change):
    encoder = DerivedEncoder(encode)
    doc = derived("conv_1", 7, 3)
    encoder.encode(doc)  # the plan for this base is made before the change
    change(doc)
    assert encoder.encode(doc) == encode(dict(doc))


def test_its_own_fields_may_change_and_are_read_when_encoded():
    encoder = DerivedEncoder(encode)
    doc = derived("conv_1", 7, 3, created_at=datetime.datetime(2026, 1, 2, 3, 4, 5, 6000))
    doc["_id"] = "conv_2"  # a clashing random id replaced
    assert not doc.changed
    assert bson.decode(encoder.encode(doc))["_id"] == "conv_2"
    assert encoder.encode(doc) == encode(dict(doc))


def test_copies_are_plain_dicts_with_the_same_fields():
    doc = derived("conv_1", 7, 3)
    for copied in (copy.deepcopy(doc), copy.copy(doc), pickle.loads(pickle.dumps(doc))):
        assert type(copied) is dict
        assert copied == dict(doc)


def test_a_plain_dict_is_encoded_by_the_store_encoder():
    seen = []

    def counting(doc):
        seen.append(doc)
        return encode(doc)

    encoder = DerivedEncoder(counting)
    seen.clear()  # it tried a few values on the store's encoder when made
    assert encoder.encode(dict(BASE)) == encode(BASE)
    assert seen == [BASE]


def test_a_store_encoder_that_writes_numbers_otherwise_is_followed():
    def as_floats(doc):
        return encode({k: float(v) if type(v) is int else v for k, v in doc.items()})

    doc = Derived(BASE, {"_id": "conv_1", "repetition": 2})  # (top-level numbers only)
    assert DerivedEncoder(as_floats).encode(doc) == as_floats(dict(doc))
    assert bson.decode(DerivedEncoder(as_floats).encode(doc))["repetition"] == 2.0


def test_a_creation_time_shared_by_documents_is_encoded_once():
    calls = []

    def counting(doc):
        calls.append(doc)
        return encode(doc)

    encoder = DerivedEncoder(counting)
    moment = datetime.datetime(2026, 1, 2, 3, 4, 5, 6000)
    first, second = (derived(f"conv_{i}", i, i, created_at=moment) for i in (1, 2))
    assert encoder.encode(first) == encode(dict(first))
    calls.clear()
    assert encoder.encode(second) == encode(dict(second))
    assert calls == []
    later = derived("conv_3", 3, 3, created_at=moment.replace(second=6))
    assert encoder.encode(later) == encode(dict(later))
