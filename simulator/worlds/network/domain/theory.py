"""The theory run beside the LLMs: Zino, Ye and Cao's coevolution of actions and opinions.

No model: agents hold an action x_i in {-1, +1} (No/Yes) and an opinion y_i in [-1, 1]. An
update revises one agent i (lzino90/coevolutionary, CHAOS/CAOf.m):

* action +1 with probability e^(b p+) / (e^(b p+) + e^(b p-)), where
  p+ = lam (y_i - c_i) / 2 + (1 - lam)(1 + alpha) / (4 d_i) sum_j A_ij (1 + x_j) and
  p- = -lam (y_i - c_i) / 2 + (1 - lam) / (4 d_i) sum_j A_ij (1 - x_j); b = inf is best
  response (a tie, p+ = p-, is a fair coin: the limit of the rule). lam is ZYC's weight of
  one's own opinion against coordination with friends' actions; c_i = 0 is CAOf.m exactly;
* opinion y_i <- (1 - mu) sum_j W_ij y_j + mu (1 / d_i) sum_j A_ij x_j, using the actions and
  opinions from before this update. W is A's rows over d_i, or (`communication`) a simple
  random walk on a separate graph, as Zino's scripts use SRW(RRG(n, 4)).

LLM-SAM's four coefficients (its prompts: higher lambda "less likely to buy it because the
costs are too high"; higher a, f "more influence" of friends, of the new information; higher
tau "stick to their own opinion more firmly") map so each keeps its direction (`from_agents`):

* lambda -> the cost c_i = 2 lambda_i - 1 the opinion is weighed against (`cost`): the
  own-opinion term favours Yes when y_i > c_i, i.e. when the opinion O on [0, 1] exceeds
  lambda (397 of LLM-SAM's 450 survey rows with O != lambda chose Yes exactly then);
  lambda = 1/2 is ZYC's rule. ZYC's lam stays a setting of the run (`opinion_weight`);
* a, tau, f weigh the opinion update, Friedkin-Johnsen style (a + tau + f = 1 keeps y in
  [-1, 1]): y_i <- tau_i y_i(0) + a_i s_i + f_i u_i(t), where s_i is ZYC's update above (the
  friends' opinions and actions), y_i(0) the agent's initial opinion and u(t) the round's outside
  information in [-1, 1] (`information`, one value per round, or per round and agent). With no
  information the f share stays on the agent's current opinion (no news: no pull). a = 1,
  tau = f = 0 is ZYC exactly;
* the table's O in [0, 1] is y = 2 O - 1, A in {0, 1} is x = 2 A - 1; opinions go back to the
  answers' 0..10 scale with `opinion_scale((y + 1) / 2)`, so round 0 equals `round_zero`.

`stubborn` s makes agents 0..s-1 innovators: x = y = +1 from the start, never updated (CAOf.m's
tenth argument). A round (`schedule`) is "sweep": every other agent updates once, in a fresh
random order, as every LLM agent answers every round; or "random": `updates_per_round` updates
(default n) of agents drawn at random, the original's asynchronous clock (its figures run 4 n^2
updates: 4 n rounds of n). A trajectory has one row per round, like an LLM run; a dynamic
network gives round t its snapshot t - 1. `degroot` is the synchronous rounded-mean model a
scripted LLM reproduces exactly.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import itemgetter

import networkx as nx
import numpy as np

from simulator.worlds.network.domain.agents_table import AgentRow

Adjacency = nx.Graph | np.ndarray | Sequence[Sequence[float]]


@dataclass(frozen=True)
class TheoryRun:
    """A trajectory: row t is the state after round t (row 0 the start)."""

    opinions: np.ndarray  # (rounds + 1, n) floats in [-1, 1]
    actions: np.ndarray  # (rounds + 1, n) in {-1, +1}
    chosen: np.ndarray  # (updates,) the agent each update revised
    chosen_opinion: np.ndarray  # (updates,) its opinion just before the update
    chosen_action: np.ndarray  # (updates,) the action it took
    coins: np.ndarray  # (updates,) the uniform number each action was drawn with

    @property
    def scores(self) -> np.ndarray:
        """Opinions on the answers' 0..10 scale, whole numbers (int(O x 10), O = (y + 1) / 2)."""
        scaled = np.floor(np.round(5.0 * (self.opinions + 1.0), 9)).astype(int)
        return np.clip(scaled, 0, 10)  # a + tau + f may miss 1 by the table's 1e-6

    @property
    def decisions(self) -> np.ndarray:
        """True where the action is +1 (Yes)."""
        return self.actions > 0


@dataclass(frozen=True)
class Start:
    """What the agents table gives the theory (see the module's mapping)."""

    opinions: np.ndarray
    actions: np.ndarray
    a: np.ndarray
    tau: np.ndarray
    f: np.ndarray
    lam: np.ndarray  # LLM-SAM's cost trade-off: `coevolve`'s cost, not ZYC's lam


def from_agents(rows: Sequence[AgentRow]) -> Start:
    """y = 2 O - 1, x = 2 A - 1 and the four coefficients as arrays, in table order."""
    return Start(
        opinions=np.array([2.0 * r.opinion - 1.0 for r in rows]),
        actions=np.array([1 if r.action == 1 else -1 for r in rows]),
        a=np.array([r.a for r in rows]),
        tau=np.array([r.tau for r in rows]),
        f=np.array([r.f for r in rows]),
        lam=np.array([r.lam for r in rows]),
    )


def neighbours(adjacency: Adjacency) -> list[np.ndarray]:
    """Each node's neighbours (itself where there is a self-loop); nodes are 0..n-1."""
    if isinstance(adjacency, nx.Graph):
        n = adjacency.number_of_nodes()
        return [np.array(sorted(adjacency.adj[i]), dtype=np.intp) for i in range(n)]
    matrix = np.asarray(adjacency)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"an adjacency matrix is square; got shape {matrix.shape}")
    return [np.flatnonzero(row).astype(np.intp) for row in matrix]


def _per_agent(value: float | Sequence[float] | np.ndarray, n: int, name: str) -> np.ndarray:
    array = np.broadcast_to(np.asarray(value, dtype=float), (n,)).copy()
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite")
    return array


SCHEDULES = ("sweep", "random")


def walk(graph: Adjacency) -> list[np.ndarray]:
    """The simple random walk's neighbours on a communication graph (Zino's SRW.m: each row
    over its degree; a node with no neighbours hears itself)."""
    return [
        nb if len(nb) else np.array([i], dtype=np.intp) for i, nb in enumerate(neighbours(graph))
    ]


def coevolve(
    graph: Adjacency | Sequence[Adjacency],
    opinions: Sequence[float] | np.ndarray,
    actions: Sequence[int] | np.ndarray,
    *,
    lam: float | Sequence[float] | np.ndarray = 0.5,
    cost: float | Sequence[float] | np.ndarray = 0.5,
    alpha: float = 0.0,
    mu: float = 0.0,
    beta: float = math.inf,
    a: float | Sequence[float] | np.ndarray = 1.0,
    tau: float | Sequence[float] | np.ndarray = 0.0,
    f: float | Sequence[float] | np.ndarray = 0.0,
    information: Sequence[float | Sequence[float] | None] | None = None,
    rounds: int = 3,
    schedule: str = "sweep",
    updates_per_round: int | None = None,
    communication: Adjacency | None = None,
    stubborn: int = 0,
    seed: int | None = None,
    draws: tuple[Sequence[int], Sequence[float]] | None = None,
    initial: Sequence[float] | np.ndarray | None = None,
) -> TheoryRun:
    """Run the coevolution for `rounds` rounds; a seed reproduces the run exactly.

    `graph` is one network, or a list of snapshots (round t uses snapshot t - 1, the last
    once they run out). `lam` is ZYC's own-opinion weight, `cost` LLM-SAM's lambda (the cost
    c = 2 cost - 1 the opinion is weighed against; 1/2: none). `information[t - 1]` is round t's
    outside information u(t) (None: no news that round, so the f share stays on the agent's
    current opinion). W is A's rows over d_i, or the random walk on `communication` (one graph
    for the whole run). `draws` (who updates, and the uniform number each action is drawn
    with) replace the seed's, so a reference fed the same numbers can be compared update for
    update. `initial` is y(0), the opinions the tau share holds on to: `opinions` unless given
    (a run continued from a later state, e.g. a fork's, keeps the agents' first opinions)."""
    y = np.array(opinions, dtype=float)
    x = np.array(actions, dtype=int)
    n = len(y)
    if x.shape != (n,) or not np.all(np.abs(x) == 1):
        raise ValueError("actions are one -1 or +1 per agent")
    if np.any(np.abs(y) > 1.0):
        raise ValueError("opinions lie in [-1, 1]")
    if not 0 <= stubborn < n:
        raise ValueError(f"stubborn innovators are 0..{n - 1} of the {n} agents")
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule is one of {', '.join(SCHEDULES)}; got {schedule!r}")
    if schedule == "sweep" and updates_per_round is not None:
        raise ValueError("updates_per_round applies to the random schedule only")
    snapshots = [graph] if _is_one_graph(graph) else list(graph)  # type: ignore[arg-type]
    if not snapshots:
        raise ValueError("give a graph, or a list of one or more snapshots")
    nbrs_per_snapshot = [neighbours(g) for g in snapshots]
    if any(len(nb) != n for nb in nbrs_per_snapshot):
        raise ValueError(f"every snapshot needs {n} nodes, one per agent")
    heard = None if communication is None else walk(communication)
    if heard is not None and len(heard) != n:
        raise ValueError(f"the communication graph needs {n} nodes, one per agent")
    lam_, cost_, a_, tau_, f_ = (
        _per_agent(v, n, k)
        for v, k in ((lam, "lam"), (cost, "cost"), (a, "a"), (tau, "tau"), (f, "f"))
    )
    if information is not None and len(information) < rounds:
        raise ValueError(f"information gives {len(information)} rounds of {rounds}")
    given = [u for u in information or [] if u is not None]  # None: no news that round
    if any(np.any(np.abs(np.asarray(u, dtype=float)) > 1) for u in given):
        raise ValueError("information lies in [-1, 1]")
    movers = n - stubborn
    per_round = movers if schedule == "sweep" else updates_per_round or n
    if rounds < 0 or per_round < 0:
        raise ValueError("rounds and updates_per_round are 0 or more")
    total = rounds * per_round
    if draws is None:
        rng = np.random.default_rng(seed)
        if schedule == "sweep":
            orders = [rng.permutation(movers) for _ in range(rounds)]
            chosen = stubborn + (np.concatenate(orders) if orders else np.zeros(0, dtype=int))
        else:  # CAOf.m: i = s + randi(n - s)
            chosen = stubborn + rng.integers(0, movers, size=total)
        coins = rng.random(size=total)
    else:
        chosen, coins = np.asarray(draws[0], dtype=np.intp), np.asarray(draws[1], dtype=float)
        if chosen.shape != (total,) or coins.shape != (total,):
            raise ValueError(f"draws give {total} updates: one agent and one number each")
    if stubborn:
        y[:stubborn], x[:stubborn] = 1.0, 1
    # the loop is sequential by nature (each update sees the one before), so it runs on
    # Python lists with one C-level gather per neighbourhood: ~1 us an update, not ~15
    gathers = [[_gather(nb) for nb in nbrs] for nbrs in nbrs_per_snapshot]
    degrees = [[len(nb) for nb in nbrs] for nbrs in nbrs_per_snapshot]
    walk_gather = None if heard is None else [_gather(nb) for nb in heard]
    walk_degree = None if heard is None else [len(nb) for nb in heard]
    y0 = y.tolist() if initial is None else np.asarray(initial, dtype=float).tolist()
    if len(y0) != n:
        raise ValueError("initial gives one opinion per agent")
    ys, xs = y.tolist(), x.tolist()
    lam_l, a_l, tau_l, f_l = (v.tolist() for v in (lam_, a_, tau_, f_))
    cost_l = (2.0 * cost_ - 1.0).tolist()
    picks, numbers = chosen.tolist(), coins.tolist()
    out_y, out_x = [list(ys)], [list(xs)]
    seen_y, took = [0.0] * total, [0] * total
    best_response = math.isinf(beta)
    k = 0
    for t in range(1, rounds + 1):
        at = min(t - 1, len(gathers) - 1)
        gather, degree = gathers[at], degrees[at]
        news = None if information is None else information[t - 1]
        u = None if news is None else _per_agent(news, n, "information")
        outside_info = None if u is None else u.tolist()
        for _ in range(per_round):
            i = picks[k]
            d = degree[i]
            yi = ys[i]
            li = lam_l[i]
            own = li * (yi - cost_l[i])
            if walk_gather is None:
                hear = sum(gather[i](ys)) / d if d else yi
            else:
                hear = sum(walk_gather[i](ys)) / walk_degree[i]  # type: ignore[index]
            if d:
                sx = sum(gather[i](xs))
                # p+ - p- = lam (y - c) + (1 - lam)((1 + alpha)(d + sx) - (d - sx)) / (4 d)
                delta = own + (1.0 - li) * ((2.0 + alpha) * sx + alpha * d) / (4.0 * d)
                social = (1.0 - mu) * hear + mu * sx / d
            else:  # no friends: no actions to coordinate with or to see
                delta, social = own, (1.0 - mu) * hear + mu * yi
            if best_response and delta:
                new_x = 1 if delta > 0 else -1
            else:
                new_x = 1 if numbers[k] < _p_yes(beta, delta) else -1
            outside = yi if outside_info is None else outside_info[i]
            ys[i] = tau_l[i] * y0[i] + a_l[i] * social + f_l[i] * outside
            xs[i] = new_x
            seen_y[k] = yi
            took[k] = new_x
            k += 1
        out_y.append(list(ys))
        out_x.append(list(xs))
    return TheoryRun(
        np.array(out_y),
        np.array(out_x, dtype=int),
        chosen,
        np.array(seen_y),
        np.array(took),
        np.asarray(coins),
    )


def _gather(nb: np.ndarray) -> Callable[[list], tuple]:
    """A function giving the tuple of a list's values at `nb` (operator.itemgetter returns a
    bare value for one index, so that case is wrapped)."""
    if len(nb) == 1:
        j = int(nb[0])
        return lambda values: (values[j],)
    if len(nb) == 0:
        return lambda values: ()
    return itemgetter(*nb.tolist())


def _p_yes(beta: float, delta: float) -> float:
    """e^(b p+) / (e^(b p+) + e^(b p-)) = 1 / (1 + e^(-b (p+ - p-))), overflow-safe; with
    b = inf, 1 or 0 (0.5 on a tie)."""
    if math.isinf(beta):
        return 1.0 if delta > 0 else 0.0 if delta < 0 else 0.5
    z = beta * delta
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def _is_one_graph(graph: object) -> bool:
    if isinstance(graph, nx.Graph):
        return True
    if isinstance(graph, np.ndarray):
        return graph.ndim == 2
    first = next(iter(graph), None)  # type: ignore[call-overload]
    return not isinstance(first, nx.Graph | np.ndarray) and np.ndim(first) == 1


def rounded_mean(values: Sequence[int] | np.ndarray) -> int:
    """The mean of whole numbers rounded half up, in integers (no float ties): 4.5 -> 5."""
    total, count = int(np.sum(values)), len(values)
    return (2 * total + count) // (2 * count)


def degroot(adjacency: Adjacency, opinions: Sequence[int], rounds: int) -> np.ndarray:
    """Synchronous DeGroot on whole opinions: each round every agent takes the rounded mean
    (`rounded_mean`) of its neighbours' opinions from the round before (its own too where the
    graph has a self-loop); an agent with no neighbours keeps its own. Row t is round t."""
    nbrs = neighbours(adjacency)
    current = np.array(opinions, dtype=int)
    if len(current) != len(nbrs):
        raise ValueError(f"{len(current)} opinions for {len(nbrs)} nodes")
    out = [current]
    for _ in range(rounds):
        current = np.array(
            [rounded_mean(current[nb]) if len(nb) else current[i] for i, nb in enumerate(nbrs)]
        )
        out.append(current)
    return np.array(out)
