"""The sweep runner's leases (engine/ports.py `Leases`) on the store."""

from __future__ import annotations

from simulator.errors import StoreUnavailable
from simulator.store.repositories.sweep_claims import worker_identity
from simulator.store.store import Store


class StoreLeases:
    """A sweep's runs as the store leases them to workers (store/repositories/sweep_claims.py)."""

    def __init__(self, store: Store):
        self.store = store

    def worker_name(self) -> str:
        return worker_identity()

    def expire_dead(self, sweep_id: str) -> int:
        return self.store.sweeps.expire_dead_local_leases(sweep_id)

    def claimable(self, sweep_id: str) -> list[str]:
        return self.store.sweeps.claimable_ids(sweep_id)

    def claim(self, run_id: str, worker: str, ttl_ms: int) -> dict | None:
        return self.store.sweeps.claim(run_id, worker, ttl_ms)

    def heartbeat(self, run_id: str, worker: str, ttl_ms: int) -> bool:
        return self.store.sweeps.heartbeat(run_id, worker, ttl_ms)

    def release(self, run_id: str, worker: str) -> None:
        self.store.sweeps.release(run_id, worker)

    def fail(self, run_id: str, error: str, worker: str) -> None:
        self.store.conversations.set_status(run_id, "failed", error, worker)

    def status_counts(self, sweep_id: str) -> dict[str, int]:
        return self.store.sweeps.status_counts(sweep_id)

    @property
    def unreachable(self) -> StoreUnavailable | None:
        return self.store.unreachable

    def outage(self, exc: BaseException) -> StoreUnavailable | None:
        return self.store.outage(exc)
