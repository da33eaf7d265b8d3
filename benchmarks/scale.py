"""Capacity of msagent's central services: the league, the model pool, central inference.

Run: ``python benchmarks/scale.py`` (embedded Ray on 127.0.0.1; defaults ``--clients 8,32,128
--seconds 10 --procs 4``); a smoke run: ``python benchmarks/scale.py --clients 2,4 --seconds 1
--procs 2``. ``--json PATH`` also writes the summary; ``--redis-url redis://host:port/0`` uses
a Redis the user started (for the model pool, and the league's mirror, as a run does).

Each service is launched with ``launch(...)`` exactly as ``msagent.train.wiring``
launches it (``LeagueService`` with a league's settings, ``ModelPoolService`` with
url/keep_last/namespace, ``configured(batch, max_wait_ms)`` as ``InferenceServer`` with the
CartPole example's scripts), and called with ``Solver().retrieve`` as env workers call it:

- ``noop``: a registered ``echo(x) -> x`` (``concurrent=True``, like the league's and the
  pool's methods, so a Ray actor call): the runtime's own call rate, the baseline the league's
  and the pool's rates are divided by ("vs no-op", same client count, same run).
- ``noop_direct``: the same echo registered ``direct=True``, as ``InferenceServer.predict``
  is (same-node callers use the instance's Unix socket, not a Ray call): the baseline of the
  inference rate, which would otherwise exceed the Ray no-op's.
- ``league``: one request = ``next_matches(player, n)`` + ``report([EpisodeResult...])`` of
  a synthetic outcome for each match got (matches/s); the league has a main player and a main
  exploiter (clients alternate between them) and ``--league-snapshots`` frozen snapshots, so
  PFSP weighs them on every draw.
- ``league_db``: the same with a second league service that writes every result (and the
  ratings it moved) to a league database before answering, as a run's does (a SQLite file
  in a temporary folder, or ``--league-database URL``); its ratio is to ``league`` (no
  database), same client count, same run.
- ``pool``: ``pull(key)`` of a random one of ``--snapshots`` frozen snapshots, each a
  float32 weight dict of ``--snapshot-mb`` MB (pulls/s and MB/s).
- ``inference``: ``predict(PredictRequest)`` with one CartPole observation for the trainable
  policy (predictions/s); ``--inference-servers`` servers, each batching up to
  ``--inference-batch`` requests (0: clients per server at the largest client count, as a
  run's ``services.inference.batch = 0``) with ``--max-wait-ms`` (the config's default 0:
  a batch is whatever arrived while the previous one ran). The mean batch the servers formed
  comes from the handle's stats (``mean_batch_size``) over the whole measurement, warm-up
  included. No parameters are published, so the servers act with the initial weights.

Clients: ``--procs`` client processes (a registered ``ScaleClient`` service, so Ray actors),
each running about ``clients / procs`` threads; each thread stands for one client (an env
worker) in a closed loop: one call outstanding, the next sent as soon as the answer came.
Threads inside a few processes stand for clients because 128 client processes would not fit
in 24 GiB; the threads share their process's GIL, and the client processes share the
machine's cores with the services, so on a small machine the figures are a lower bound of
what the services would serve to clients on other machines.

Measurement: every thread makes one warm-up call (its route), waits for a common start time,
then loops; calls that end inside the window ``[start + --warmup, start + --warmup +
--seconds]`` are counted. Rate = calls counted / ``--seconds`` (all processes together);
latency = p50 and p99 of those calls (ms, timed in the client thread around
``Solver().retrieve``; a league request is the two calls together). Client counts are
measured in turn, every service at one client count back to back (sharing the noise).

Saturation: for client counts c_1 < ... < c_k, a service "saturates at c_i" for the smallest
i such that going from c_i to c_(i+1) raises its rate by less than 10 % while its p99 grows:
more clients then only queue. When no step qualifies it is "not saturated up to c_k".
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

import numpy as np  # noqa: E402
import ray  # noqa: E402

import msagent  # noqa: E402
from msagent import ServiceHandle, Solver, launch, register  # noqa: E402
from msagent.league.settings import MAIN, MAIN_EXPLOITER, LeagueSettings, PlayerSpec  # noqa: E402
from msagent.league_db import database_url, redact  # noqa: E402
from msagent.league_db.recorder import DatabaseSettings  # noqa: E402
from msagent.services.inference import configured, mean_batch_size  # noqa: E402
from msagent.services.league import LeagueService  # noqa: E402
from msagent.services.model_pool import ModelPoolService  # noqa: E402
from msagent.user_scripts import game_factory  # noqa: E402
from msagent.vocabulary import (EpisodeResult, Match, ModelKey, PolicyScripts,  # noqa: E402
                                PredictRequest)

ROOT = Path(__file__).resolve().parent.parent
ENV_SCRIPT = ROOT / "examples" / "cartpole" / "cartpole_env.py"
AGENT_SCRIPT = ROOT / "examples" / "cartpole" / "cartpole_agent.py"
SERVICES = ("noop", "noop_direct", "league", "league_db", "pool", "inference")
OPTIONAL = ("league", "league_db", "pool", "inference")
BASELINE = {"league": "noop", "league_db": "league", "pool": "noop",
            "inference": "noop_direct"}
UNITS = {"noop": "calls/s (echo, Ray call)", "noop_direct": "calls/s (echo, direct channel)",
         "league": "matches/s (one next_matches + one report), no league database",
         "league_db": "matches/s, every result written to the league database (as a run "
                      "does)",
         "pool": "pulls/s", "inference": "predictions/s (one observation each)"}
SATURATION_GAIN = 1.10
POOL_POLICY = "bench"


class NoOp:
    """The baseline service: returns its argument."""

    @register(concurrent=True)
    def echo(self, x: Any) -> Any:
        """The argument, untouched."""
        return x

    @register(concurrent=True, direct=True)
    def echo_direct(self, x: Any) -> Any:
        """The argument, untouched (over the direct channel from the same node)."""
        return x


# ---------------------------------------------------------------- client side (Ray actors)


def synthetic_result(match: Match, rng: np.random.Generator) -> EpisodeResult:
    """A finished game of ``match`` with a random outcome, as the env worker reports one."""
    outcome = float(rng.choice((-1.0, 0.0, 1.0)))
    seat = match.learner_seat
    returns = tuple(outcome if i == seat else -outcome for i in range(len(match.seats)))
    learner = match.learner
    return EpisodeResult(outcome, 100, ModelKey(learner.name, learner.version),
                         outcome=outcome, match=match, seat_returns=returns)


def noop_call(target: str, options: dict[str, Any], index: int) -> Callable[[], int]:
    """One echo; moves no payload worth counting."""
    solver = Solver()
    return lambda: solver.retrieve(target, "echo", index) * 0


def noop_direct_call(target: str, options: dict[str, Any], index: int) -> Callable[[], int]:
    """One echo over the direct channel."""
    solver = Solver()
    return lambda: solver.retrieve(target, "echo_direct", index) * 0


def league_call(target: str, options: dict[str, Any], index: int) -> Callable[[], int]:
    """``next_matches`` for this client's player, then ``report`` of each match got."""
    solver, rng = Solver(), np.random.default_rng(index)
    player, n = options["players"][index % len(options["players"])], options["n"]

    def call() -> int:
        matches = solver.retrieve(target, "next_matches", player, n)
        solver.retrieve(target, "report", [synthetic_result(m, rng) for m in matches])
        return 0

    return call


def pool_call(target: str, options: dict[str, Any], index: int) -> Callable[[], int]:
    """``pull`` of a random snapshot; returns the bytes of weights received."""
    solver, rng, keys = Solver(), np.random.default_rng(index), options["keys"]

    def call() -> int:
        snapshot = solver.retrieve(target, "pull", keys[int(rng.integers(len(keys)))])
        return sum(int(w.nbytes) for w in snapshot.weights.values())

    return call


def inference_call(target: str, options: dict[str, Any], index: int) -> Callable[[], int]:
    """``predict`` of one random observation for the trainable policy."""
    solver, rng, shape = Solver(), np.random.default_rng(index), (1, *options["obs_shape"])

    def call() -> int:
        obs = rng.standard_normal(shape).astype(np.float32)
        solver.retrieve(target, "predict", PredictRequest(obs, "main"))
        return 0

    return call


CALLS: dict[str, Callable[[str, dict[str, Any], int], Callable[[], int]]] = {
    "noop": noop_call, "noop_direct": noop_direct_call, "league": league_call,
    "league_db": league_call, "pool": pool_call, "inference": inference_call}


@dataclass
class ThreadLog:
    """What one simulated client recorded inside the window."""

    latencies_ms: list[float] = field(default_factory=list)
    bytes: int = 0
    error: str | None = None


def client_loop(call: Callable[[], int], start_at: float, window: tuple[float, float],
                log: ThreadLog) -> None:
    """Warm up, wait for the common start, then call in a closed loop until the window ends."""
    try:
        call()
        time.sleep(max(0.0, start_at - time.time()))
        while True:
            began = time.perf_counter()
            moved = call()
            took, ended = time.perf_counter() - began, time.time()
            if ended > window[1]:
                return
            if ended >= window[0]:
                log.latencies_ms.append(took * 1000.0)
                log.bytes += moved
    except Exception as exc:  # noqa: BLE001 (reported to the driver, which stops the run)
        log.error = f"{type(exc).__name__}: {exc}"


class ScaleClient:
    """A client process: runs ``threads`` simulated clients against one service."""

    @register
    def drive(self, kind: str, target: str, threads: int, first: int, start_at: float,
              window: tuple[float, float], options: dict[str, Any]) -> dict[str, Any]:
        """Run the closed loops; return the latencies (ms), bytes and first error."""
        logs = [ThreadLog() for _ in range(threads)]
        workers = [threading.Thread(target=client_loop, daemon=True, args=(
            CALLS[kind](target, options, first + i), start_at, window, logs[i]))
            for i in range(threads)]
        for t in workers:
            t.start()
        for t in workers:
            t.join()
        latencies = np.array([x for log in logs for x in log.latencies_ms], np.float64)
        errors = [log.error for log in logs if log.error]
        return {"pid": os.getpid(), "latencies_ms": latencies,
                "bytes": sum(log.bytes for log in logs), "error": errors[0] if errors else None}


# ---------------------------------------------------------------- driver side


@dataclass
class Row:
    """One service at one client count."""

    clients: int
    rate: float
    p50_ms: float
    p99_ms: float
    vs_noop: float | None = None
    mb_per_s: float | None = None
    mean_batch: float | None = None


def split(clients: int, procs: int) -> list[int]:
    """Threads per client process (the first ones take the remainder)."""
    return [clients // procs + (i < clients % procs) for i in range(procs)]


def drive(client_handle: ServiceHandle, kind: str, target: str, clients: int, seconds: float,
          warmup: float, options: dict[str, Any]) -> tuple[np.ndarray, int]:
    """Run ``clients`` closed-loop clients over the client processes; latencies and bytes."""
    ids = client_handle.instance_ids()
    shares = [(iid, n) for iid, n in zip(ids, split(clients, len(ids))) if n > 0]
    start_at = time.time() + 1.0
    window = (start_at + warmup, start_at + warmup + seconds)
    firsts = np.cumsum([0] + [n for _, n in shares])

    def one(i: int) -> dict[str, Any]:
        iid, n = shares[i]
        return client_handle.call_some([iid], "drive", kind, target, n, int(firsts[i]),
                                       start_at, window, options)[iid]

    with ThreadPoolExecutor(len(shares)) as pool:
        parts = list(pool.map(one, range(len(shares))))
    for part in parts:
        if part["error"]:
            raise RuntimeError(f"{kind} client in pid {part['pid']} failed: {part['error']}")
    return np.concatenate([p["latencies_ms"] for p in parts]), sum(p["bytes"] for p in parts)


def batch_counts(stats: list[dict[str, Any]]) -> dict[int, int]:
    """``predict`` batches seen so far, by size, over every instance."""
    out: dict[int, int] = {}
    for instance in stats:
        for size, count in instance["batch_sizes"].get("predict", {}).items():
            out[int(size)] = out.get(int(size), 0) + count
    return out


def batch_delta(before: dict[int, int], after: dict[int, int]) -> float | None:
    """Mean ``predict`` batch formed between two ``batch_counts`` (via ``mean_batch_size``)."""
    delta = {str(s): c - before.get(s, 0) for s, c in after.items() if c > before.get(s, 0)}
    return mean_batch_size([{"batch_sizes": {"predict": delta}}])


def measure(client_handle: ServiceHandle, kind: str, target: ServiceHandle, clients: int,
            args: argparse.Namespace, options: dict[str, Any]) -> Row:
    """One service at one client count: rate, latency and the service's own extras."""
    before = batch_counts(target.stats()) if kind == "inference" else {}
    latencies, moved = drive(client_handle, kind, target.name, clients, args.seconds,
                             args.warmup, options)
    p50, p99 = (np.percentile(latencies, [50, 99]) if len(latencies) else (math.nan,) * 2)
    row = Row(clients, len(latencies) / args.seconds, float(p50), float(p99))
    if kind == "pool":
        row.mb_per_s = moved / args.seconds / 2**20
    if kind == "inference":
        row.mean_batch = batch_delta(before, batch_counts(target.stats()))
    return row


def saturates_at(rows: list[Row]) -> int | None:
    """The smallest client count past which the rate grows < 10 % while p99 grows."""
    for a, b in zip(rows, rows[1:]):
        if b.rate < SATURATION_GAIN * a.rate and b.p99_ms > a.p99_ms:
            return a.clients
    return None


# ---------------------------------------------------------------- services under test


def league_settings() -> LeagueSettings:
    """A main player and a main exploiter, default roles."""
    return LeagueSettings(players=(PlayerSpec("main", MAIN),
                                   PlayerSpec("main_exploiter", MAIN_EXPLOITER)))


def fill_league(league: ServiceHandle, snapshots: int) -> None:
    """Add ``snapshots`` frozen snapshots (every fifth the exploiter's) for PFSP to weigh."""
    for version in range(1, snapshots + 1):
        player = "main_exploiter" if version % 5 == 0 else "main"
        league.call_all(LeagueService.add_snapshot, player, ModelKey(player, version), version * 10)


def fill_pool(pool: ServiceHandle, snapshots: int, snapshot_mb: float) -> list[ModelKey]:
    """Push ``snapshots`` frozen float32 weight dicts of ``snapshot_mb`` MB; their keys."""
    rng = np.random.default_rng(0)
    per_layer = max(1, int(snapshot_mb * 2**20 / 4 / 4))  # four float32 layers
    keys = []
    for _ in range(snapshots):
        weights = {f"layer{i}.weight": rng.standard_normal(per_layer).astype(np.float32)
                   for i in range(4)}
        keys.append(pool.call_all(ModelPoolService.push, POOL_POLICY, weights, {"frozen": True})[0])
    return keys


def cartpole_scripts(seed: int = 0) -> PolicyScripts:
    """The CartPole example's scripts, as ``run_services.policy_scripts(cfg)`` makes them."""
    return PolicyScripts(str(ENV_SCRIPT), str(AGENT_SCRIPT), {}, seed)


def obs_shape(scripts: PolicyScripts) -> tuple[int, ...]:
    """The shape of one observation of the scripts' game."""
    game = game_factory(scripts.env_script, scripts.env_params)()
    try:
        return tuple(game.observation_space.shape)
    finally:
        game.close()


def start_services(args: argparse.Namespace, namespace: str) -> dict[str, ServiceHandle]:
    """Launch the services under test in parallel, as the training wiring does."""
    wanted, started = set(args.services), {}
    started["noop"] = launch(NoOp, wait=False)
    started["noop_direct"] = started["noop"]
    if "league" in wanted:
        started["league"] = launch(LeagueService, wait=False, args=(
            league_settings(), 0, 2, None, args.redis_url, namespace))
    if "league_db" in wanted:
        url = args.league_database or database_url("", tempfile.mkdtemp(prefix="scale-db-"))
        print(f"league_db writes to {redact(url)}")
        started["league_db"] = launch(LeagueService, wait=False, name="LeagueServiceDB", args=(
            league_settings(), 0, 2, None, args.redis_url, namespace, None,
            DatabaseSettings(url, namespace, "scale")))
    if "pool" in wanted:
        started["pool"] = launch(ModelPoolService, wait=False, kwargs={
            "url": args.redis_url, "keep_last": 10, "namespace": namespace})
    if "inference" in wanted:
        batch = args.inference_batch or -(-max(args.clients) // args.inference_servers)
        started["inference"] = launch(configured(batch, args.max_wait_ms), wait=False,
                                      num=args.inference_servers, name="InferenceServer",
                                      args=(cartpole_scripts(), 32))
    for handle in started.values():
        handle.wait_ready()
    return started


def prepare(args: argparse.Namespace, handles: dict[str, ServiceHandle]) -> dict[str, Any]:
    """Fill the league and the pool; the options each kind of client needs."""
    options: dict[str, Any] = {"noop": {}, "noop_direct": {}}
    for kind in ("league", "league_db"):
        if kind in handles:
            fill_league(handles[kind], args.league_snapshots)
            options[kind] = {"players": ["main", "main_exploiter"], "n": args.matches_per_call}
    if "pool" in handles:
        options["pool"] = {"keys": fill_pool(handles["pool"], args.snapshots, args.snapshot_mb)}
    if "inference" in handles:
        options["inference"] = {"obs_shape": obs_shape(cartpole_scripts())}
    return options


# ---------------------------------------------------------------- report


def print_table(kind: str, rows: list[Row]) -> None:
    """One service's table: clients, rate, latency, ratio to the no-op (and its extras)."""
    extra = {"pool": "    MB/s", "inference": "  mean batch"}.get(kind, "")
    against = f"; vs no-op: / {BASELINE[kind]} req/s" if kind in BASELINE else " (baseline)"
    print(f"\n{kind}: {UNITS[kind]}{against}")
    print(f"{'clients':>8} {'req/s':>10} {'p50 ms':>9} {'p99 ms':>9} {'vs no-op':>9}{extra}")
    for r in rows:
        ratio = "" if r.vs_noop is None else f"{r.vs_noop:.2f}"
        line = f"{r.clients:>8d} {r.rate:>10.1f} {r.p50_ms:>9.2f} {r.p99_ms:>9.2f} {ratio:>9}"
        if kind == "pool":
            line += f" {r.mb_per_s:>7.1f}"
        if kind == "inference":
            line += f" {r.mean_batch:>12.2f}" if r.mean_batch is not None else f" {'-':>12}"
        print(line)


def summary(args: argparse.Namespace, results: dict[str, list[Row]]) -> dict[str, Any]:
    """Plain data of the whole run, for capacity estimates."""
    return {
        "machine": {"python": sys.version.split()[0], "ray": ray.__version__,
                    "cores": os.cpu_count()},
        "settings": {k: v for k, v in vars(args).items() if k != "json"},
        "services": {kind: {"unit": UNITS[kind], "baseline": BASELINE.get(kind),
                            "rows": [asdict(r) for r in rows],
                            "saturates_at": saturates_at(rows)}
                     for kind, rows in results.items()},
    }


def saturation_line(kind: str, rows: list[Row]) -> str:
    """'<service> saturates at N clients' (or not, over the measured range)."""
    at = saturates_at(rows)
    if at is None:
        return f"{kind}: not saturated up to {rows[-1].clients} clients"
    return f"{kind}: saturates at {at} clients"


# ---------------------------------------------------------------- main


def run(args: argparse.Namespace) -> dict[str, list[Row]]:
    """Every client count, every service (no-op first): the rows per service."""
    namespace = f"scale-{uuid.uuid4().hex[:8]}"
    handles = start_services(args, namespace)
    client_handle = launch(ScaleClient, num=args.procs)
    options = prepare(args, handles)
    results: dict[str, list[Row]] = {kind: [] for kind in handles}
    for clients in args.clients:
        for kind, handle in handles.items():
            row = measure(client_handle, kind, handle, clients, args, options[kind])
            base = results[BASELINE[kind]][-1].rate if kind in BASELINE else 0.0
            row.vs_noop = row.rate / base if base else None
            results[kind].append(row)
            print(f"  {clients:4d} clients  {kind:11s} {row.rate:9.1f} req/s  "
                  f"p99 {row.p99_ms:8.2f} ms", flush=True)
    if args.redis_url:
        print(f"(Redis keys of this run are under the namespace {namespace!r})")
    return results


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--clients", type=lambda s: sorted({int(x) for x in s.split(",")}),
                   default=[8, 32, 128], help="client counts, comma-separated")
    p.add_argument("--seconds", type=float, default=10.0, help="measured window per point")
    p.add_argument("--warmup", type=float, default=1.0, help="seconds before each window")
    p.add_argument("--procs", type=int, default=4, help="client processes")
    p.add_argument("--services", type=lambda s: [x for x in s.split(",") if x],
                   default=list(OPTIONAL),
                   help="of league,league_db,pool,inference (no-ops: always)")
    p.add_argument("--league-snapshots", type=int, default=50)
    p.add_argument("--league-database", default="",
                   help="league_db's database URL (default: a SQLite file in a temp folder)")
    p.add_argument("--matches-per-call", type=int, default=1, help="n of next_matches")
    p.add_argument("--snapshots", type=int, default=20, help="model-pool snapshots")
    p.add_argument("--snapshot-mb", type=float, default=4.0)
    p.add_argument("--redis-url", default="", help="a running Redis (default: in memory)")
    p.add_argument("--inference-servers", type=int, default=1)
    p.add_argument("--inference-batch", type=int, default=0,
                   help="predict batch (0: largest client count per server)")
    p.add_argument("--max-wait-ms", type=float, default=0.0)
    p.add_argument("--json", type=Path, default=None, help="also write the summary here")
    args = p.parse_args(argv)
    unknown = set(args.services) - set(OPTIONAL)
    if unknown or min(args.clients) < 1 or args.procs < 1:
        p.error(f"bad --services {sorted(unknown)} or --clients/--procs below 1")
    return args


def main() -> None:
    """Launch, measure, print the tables, the saturation lines and the JSON summary."""
    args = parse_args()
    msagent.init(backend="ray")
    print(f"python {sys.version.split()[0]}, ray {ray.__version__}, {os.cpu_count()} cores; "
          f"clients {args.clients} in {args.procs} processes, {args.seconds:g} s each")
    try:
        results = run(args)
    finally:
        msagent.shutdown()
    for kind, rows in results.items():
        print_table(kind, rows)
    print()
    for kind, rows in results.items():
        print(saturation_line(kind, rows))
    out = summary(args, results)
    print(json.dumps(out, indent=1))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
