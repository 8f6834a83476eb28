"""Group commit on every store flavour: writes queued together go out as one batch per group,
in the order one conversation writes, each writer hears its own outcome, and nothing is lost to
a cancelled writer or overtaken by a synchronous write."""

from __future__ import annotations

import asyncio
import threading
import uuid

from simulator.store.counting import is_server_collection
from simulator.store.database import open_database
from simulator.store.group_commit import GroupCommit
from simulator.store.store import open_store


def _run(coro):
    return asyncio.run(coro)


def test_writes_queued_together_go_out_as_one_batch(store):
    async def go() -> list[bool]:
        writes = store.group_commit()
        futures = [writes.insert("messages", {"_id": f"m{i}", "n": i}) for i in range(20)]
        futures += [
            writes.insert("calls", {"_id": f"c{i}", "state": "in_flight"}) for i in range(5)
        ]
        results = list(await asyncio.gather(*futures))
        assert writes.stats.flushes == 1
        assert writes.stats.writes == 25
        if is_server_collection(store.db.messages):
            assert writes.stats.round_trips == 2  # one insert_many per collection
        return results

    assert _run(go()) == [True] * 25
    assert store.db.messages.count_documents({}) == 20
    assert store.db.calls.count_documents({"state": "in_flight"}) == 5


def test_a_taken_id_is_false_for_its_writer_only(store):
    store.db.messages.insert_one({"_id": "m1", "n": "first"})

    async def go() -> list[bool]:
        writes = store.group_commit()
        return list(
            await asyncio.gather(
                writes.insert("messages", {"_id": "m0", "n": 0}),
                writes.insert("messages", {"_id": "m1", "n": "second"}),
                writes.insert("messages", {"_id": "m2", "n": 2}),
                writes.insert("messages", {"_id": "m2", "n": "again"}),
            )
        )

    assert _run(go()) == [True, False, True, False]
    assert store.db.messages.find_one({"_id": "m1"})["n"] == "first"  # never overwritten
    assert store.db.messages.find_one({"_id": "m2"})["n"] == 2


def test_groups_go_out_in_one_conversations_order_whatever_the_queue_order(store):
    """Queued message first, ledger outcome next, its row last: the row is still inserted
    before the update that completes it and before the message."""
    seen: list[str] = []

    async def go() -> None:
        writes = store.group_commit()
        original = writes._write

        def spy(collection, kind, ops):
            seen.append(f"{collection} {kind}")
            return original(collection, kind, ops)

        writes._write = spy  # type: ignore[method-assign]
        await asyncio.gather(
            writes.insert("messages", {"_id": "x-m1"}),
            writes.update("calls", {"_id": "x-c1"}, {"state": "done"}),
            writes.insert("calls", {"_id": "x-c1", "state": "in_flight"}),
            writes.insert("prompts", {"_id": "p1"}),
        )

    _run(go())
    assert seen == ["prompts insert", "calls insert", "calls update", "messages insert"]
    assert store.db.calls.find_one({"_id": "x-c1"})["state"] == "done"


def test_a_failed_group_fails_the_groups_after_it_and_writes_none_of_them(store):
    async def go() -> tuple[object, object, object]:
        writes = store.group_commit()
        original = writes._write

        def broken_calls(collection, kind, ops):
            if collection == "calls":
                raise ConnectionError("server went away")
            return original(collection, kind, ops)

        writes._write = broken_calls  # type: ignore[method-assign]
        return tuple(
            await asyncio.gather(
                writes.insert("prompts", {"_id": "p1"}),
                writes.insert("calls", {"_id": "c1"}),
                writes.insert("messages", {"_id": "m1"}),
                return_exceptions=True,
            )
        )

    prompt, call, message = _run(go())
    assert prompt is True  # written before the failure
    assert isinstance(call, ConnectionError) and isinstance(message, ConnectionError)
    assert store.db.messages.count_documents({}) == 0  # never overtakes the failed row


def test_a_cancelled_writer_still_gets_its_write(store):
    async def go() -> None:
        writes = store.group_commit()
        task = asyncio.ensure_future(writes.insert("calls", {"_id": "c1", "state": "in_flight"}))
        await asyncio.sleep(0)
        task.cancel()
        assert store.db.calls.count_documents({"_id": "c1"}) == 0  # still queued

        async def flushed() -> None:
            # the flush timer fires regardless; `writes` counts what a flush has written (on a
            # server a writer thread writes it: `flushes` counts a flush as it begins)
            while writes.stats.writes == 0:
                await asyncio.sleep(0)

        await asyncio.wait_for(flushed(), 30)  # a limit for a broken test only
        assert task.cancelled()

    _run(go())
    assert store.db.calls.count_documents({"_id": "c1"}) == 1


def test_flush_now_writes_what_is_queued_before_a_synchronous_write(store):
    async def go() -> None:
        writes = store.group_commit()
        pending = writes.insert("messages", {"_id": "m1"})
        writes.flush_now()  # as the recorder does before marking a status
        assert store.db.messages.count_documents({"_id": "m1"}) == 1
        assert await pending is True

    _run(go())


def _order_and_outcomes_kept(store, threaded: bool) -> set[str]:
    """Five conversation turns through one GroupCommit; the names of the threads that wrote."""
    writers: set[str] = set()
    write_batch = GroupCommit._write_batch

    def recorded(self, batch):
        writers.add(threading.current_thread().name)
        return write_batch(self, batch)

    async def go() -> list[bool]:
        writes = GroupCommit(store.db, asyncio.get_running_loop(), threaded=threaded)
        writes._write_batch = recorded.__get__(writes)
        results: list[bool] = []
        for turn in range(5):  # each turn waits for its row, as a conversation does
            results.append(await writes.insert("calls", {"_id": f"c{turn}"}))
            await writes.update("calls", {"_id": f"c{turn}"}, {"state": "done"})
            results.append(await writes.insert("messages", {"_id": f"m{turn}"}))
        writes.close()
        return results

    assert _run(go()) == [True] * 10
    assert store.db.calls.count_documents({"state": "done"}) == 5
    assert store.db.messages.count_documents({}) == 5
    return writers


def test_the_event_loop_thread_keeps_the_order_and_the_outcomes(store):
    """The embedded stores are written on the event loop's thread only (not thread-safe)."""
    assert _order_and_outcomes_kept(store, threaded=False) == {threading.current_thread().name}


def test_a_writer_thread_keeps_the_order_and_the_outcomes(wire_server):
    """Servers flush on a writer thread (the loop keeps serving while the server answers)."""
    store = open_store(open_database(wire_server, f"t_{uuid.uuid4().hex[:10]}"))
    try:
        assert is_server_collection(store.db.calls)
        writers = _order_and_outcomes_kept(store, threaded=True)
    finally:
        store.close()
    assert writers and all(name.startswith("sim-group-commit") for name in writers)
