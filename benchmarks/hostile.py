"""Hostile clients against a real gateway: at least 10,000 fuzzed and hostile requests (heads,
bodies, framing, tokens, games, encodings, slow clients) while a good client keeps uploading.

Run: ``python benchmarks/hostile.py [--requests 10000] [--seed 0] [--workers 1] [--quick]``.
It writes a config (two games, embedded Redis, ingestion on, the shipped limits), creates
tokens (attack tokens for cartpole, one for pixels, one for all games, a download-only, a
revoked, an expired and an admin token, and the good client's), starts ``msagent serve`` on a
free loopback port, warms it up with valid uploads, then sends the requests over raw sockets
(``--concurrency`` at a time, below the gateway's connection bound) beside a pool of slow
clients, and prints one table:

- crashes: a gateway process, worker, the ingestion consumer or Redis died or changed pid;
- 5xx answers; answers that leak internals (tracebacks, paths, exception names, reprs, the
  server software);
- uploads accepted (200/201) that the independent reference check refuses
  (``hostile_reference``: the documented schema, without msagent's code);
- the good client's p50/p99 round trip during the attack (one upload every 20 ms), and its
  failures;
- the gateway's RSS (its processes, not Redis or the consumer) after the warm-up and after the
  attack and a settle.

Targets: 0 crashes, 0 5xx, 0 leaks, 0 accepted-but-invalid, 0 good failures, p99 < 100 ms,
RSS back within 10 %. Exit code 1 if one is missed. ``--replay I[,J]`` sends cases again and
prints their bytes, answers and the reference's verdict (``sN``: slow case N).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from gateway import summary  # noqa: E402
from hostile_cases import Case, Draw, Tokens, upload  # noqa: E402
from hostile_driver import send  # noqa: E402
from hostile_families import make_case, slow_case  # noqa: E402
from hostile_good import GoodClient  # noqa: E402
from hostile_http import parse_requests  # noqa: E402
from hostile_judge import Judge  # noqa: E402
from hostile_procs import (cpu_by_role, crashes, gateway_rss, process_tree,  # noqa: E402
                           rss_by_process)
from hostile_reference import GAMES, upload_game, upload_problem  # noqa: E402

from msagent.client.http import wait_healthy  # noqa: E402
from msagent.gateway.redis_server import free_loopback_port  # noqa: E402
from msagent.gateway.tokens import TOKENS_FILE, TokenStore  # noqa: E402

SLOW_AT_ONCE = 100
"""Slow clients connected at the same time (with the attack's, below max_connections)."""

SETTLE_S = 3.0
"""Pause after the attack before the gateway's memory is measured again."""


def write_config(folder: Path, port: int, workers: int) -> Path:
    """A gateway config: the reference's games, embedded Redis, ingestion on, default limits."""
    games = "".join(
        f'[[gateway.games]]\nname = "{g.name}"\nobs_shape = {list(g.obs_shape)}\n'
        f'obs_dtype = "{g.obs_dtype}"\naction_n = {g.action_n}\nmax_steps = {g.max_steps}\n'
        for g in GAMES.values())
    path = folder / "gateway.toml"
    path.write_text(f'[gateway]\nport = {port}\ndata_dir = "data"\nworkers = {workers}\n'
                    + games)
    return path


def make_tokens(data_dir: Path) -> Tokens:
    """Every role's token, written to the gateway's token file before it starts."""
    store = TokenStore.of_data_dir(data_dir)

    def create(client: str, scopes: list[str], **kw: Any) -> str:
        """A new token of the client (only the token)."""
        return store.create(client, scopes, **kw)[1]

    revoked_id, revoked = store.create("revoked", ["upload"], games=["cartpole"])
    store.revoke(revoked_id)
    past = TokenStore(data_dir / TOKENS_FILE, clock=lambda: time.time() - 2 * 86400)
    expired = past.create("expired", ["upload"], expires_days=1,  # two days ago, for one
                          games=["cartpole"])[1]
    return Tokens(
        attack=[create(f"attack{i}", ["upload"], games=["cartpole"]) for i in range(8)],
        pixels=create("pixels", ["upload"], games=["pixels"]),
        all_games=create("allgames", ["upload", "download"], all_games=True),
        download=create("downloader", ["download"], all_games=True), revoked=revoked,
        expired=expired, admin=create("admin", ["admin"], all_games=True),
        good=create("good", ["upload"], games=["cartpole"]))


def warm_up(port: int, tokens: Tokens, data_dir: Path,
            args: argparse.Namespace) -> Counter[int]:
    """Valid uploads sent as the attack sends (a fresh connection each, ``--concurrency`` at
    a time, the same body mix) by 8 clients of their own, so that the memory baseline
    already holds what that much legitimate traffic costs; the answers by status."""
    store, statuses = TokenStore.of_data_dir(data_dir), Counter[int]()
    warm = dataclasses.replace(tokens, attack=[
        store.create(f"warm{i}", ["upload"], games=["cartpole"])[1] for i in range(8)])
    cases = iter(range(args.warmup))

    async def worker() -> None:
        """Send warm-up uploads until none are left."""
        for i in cases:
            d = Draw(args.seed, -1 - i, warm)
            outcome = await send("127.0.0.1", port, Case(i, "warm-up", "valid", [upload(d)]),
                                 ["POST"])
            statuses[outcome.answers[0].status if outcome.answers else -1] += 1

    async def load() -> None:
        """``--concurrency`` workers."""
        await asyncio.gather(*(worker() for _ in range(args.concurrency)))

    asyncio.run(load())
    return statuses


def start_gateway(config: Path, url: str, log: Path) -> subprocess.Popen:
    """``msagent serve`` once healthy (its stderr in ``log``)."""
    proc = subprocess.Popen([sys.executable, "-m", "msagent", "serve", str(config)],
                            stdout=subprocess.DEVNULL, stderr=open(log, "w"))
    if wait_healthy(url, alive=lambda: proc.poll() is None):
        return proc
    proc.kill()
    raise SystemExit(f"msagent serve did not become healthy:\n{log.read_text()[-2000:]}")


async def attack(port: int, args: argparse.Namespace, tokens: Tokens, judge: Judge) -> float:
    """The attack and the slow pool, with progress every few seconds; its seconds."""
    start = time.perf_counter()
    cases = iter(range(args.requests))
    slow = iter(range(args.slow))
    done = [0, 0]

    async def worker(indices: Any, make: Any, slot: int) -> None:
        """Draw, send and judge cases until none are left."""
        for i in indices:
            case = make(args.seed, i, tokens, args.families)
            outcome = await send("127.0.0.1", port, case, _methods(case))
            judge.judge(case, outcome)
            done[slot] += 1

    tasks = [asyncio.create_task(worker(cases, make_case, 0)) for _ in range(args.concurrency)]
    tasks += [asyncio.create_task(worker(slow, slow_case, 1))
              for _ in range(min(SLOW_AT_ONCE, args.slow))]
    progress = asyncio.create_task(_progress(start, done, args, judge))
    await asyncio.gather(*tasks)
    progress.cancel()
    return time.perf_counter() - start


def _methods(case: Case) -> list[str]:
    """The methods of the case's requests, as the reference reads them."""
    parsed = case.extra.get("parsed") or parse_requests(case.data)
    return [r.method for r in parsed.requests]


async def _progress(start: float, done: list[int], args: argparse.Namespace,
                    judge: Judge) -> None:
    """A line every 5 s."""
    while True:
        await asyncio.sleep(5)
        elapsed = time.perf_counter() - start
        found = {k: judge.counts[k] for k in ("5xx", "leaks", "accepted_invalid")}
        print(f"  {elapsed:5.1f} s: {done[0]}/{args.requests} requests "
              f"({done[0] / elapsed:.0f}/s), {done[1]}/{args.slow} slow clients; so far "
              f"{found}", flush=True)


def report(judge: Judge, good: dict, rss: tuple[int, int], crashed: list[str],
           seconds: float, extra: dict[str, Any]) -> bool:
    """Print the table (requests by family, then the targets), the findings and the
    information; whether every target is met."""
    lat = summary(len(good["latencies"]), 1.0, good["latencies"] or [0.0])
    rows = _targets(judge, good, lat, rss, crashed)
    print(f"\n{'':<34} {'value':>22}  {'goal':<10} result")
    for family, sent in sorted(judge.sent.items()):
        statuses = ", ".join(f"{s}: {n}" for s, n in sorted(judge.statuses[family].items()))
        print(f"{'sent: ' + family:<34} {sent:>22}  answers by status (-1: none): {statuses}")
    print(f"{'sent: all':<34} {sum(judge.sent.values()):>22}  ({judge.requests} requests "
          f"framed by the reference, {seconds:.1f} s)")
    for name, value, goal, ok in rows:
        print(f"{name:<34} {str(value):>22}  {goal:<10} {'PASS' if ok else 'FAIL'}")
    _details(judge, good, crashed, extra)
    result = {"crashes": len(crashed), "5xx": judge.counts["5xx"],
              "leaks": judge.counts["leaks"], "accepted_invalid": judge.counts["accepted_invalid"],
              "good_failures": len(good["failures"]), "p50_ms": lat["p50_ms"],
              "p99_ms": lat["p99_ms"], "rss_before": rss[0], "rss_after": rss[1],
              "rss_ratio": round(rss[1] / rss[0], 3), "requests": judge.requests,
              "sent": dict(judge.sent), "passed": all(ok for *_, ok in rows)}
    print("RESULT " + json.dumps(result))
    return result["passed"]


def _targets(judge: Judge, good: dict, lat: dict, rss: tuple[int, int],
             crashed: list[str]) -> list[tuple[str, Any, str, bool]]:
    """The table's target rows: name, value, goal, met."""
    ratio, counts = rss[1] / rss[0], judge.counts
    return [("crashes (pids changed)", len(crashed), "0", not crashed),
            ("5xx answers", counts["5xx"], "0", not counts["5xx"]),
            ("answers leaking internals", counts["leaks"], "0", not counts["leaks"]),
            ("accepted but invalid", counts["accepted_invalid"], "0",
             not counts["accepted_invalid"]),
            ("good uploads failed", len(good["failures"]), "0", not good["failures"]),
            (f"good upload p50 / p99 ms ({len(good['latencies'])})",
             f"{lat['p50_ms']} / {lat['p99_ms']}", "p99 < 100", lat["p99_ms"] < 100),
            ("gateway RSS MB before / after", f"{rss[0] / 2**20:.0f} / {rss[1] / 2**20:.0f} "
             f"({ratio:.2f}x)", "<= 1.10x", ratio <= 1.10)]


FINDINGS = {"5xx": "5xx answers", "leaks": "answers leaking internals",
            "accepted_invalid": "accepted but invalid",
            "not_json": "error answers not shaped {\"error\": ...} (information)",
            "refused_valid": "valid uploads (per the reference) refused (information)"}


def _details(judge: Judge, good: dict, crashed: list[str], extra: dict[str, Any]) -> None:
    """Every finding by kind with one example of each, then what is informational."""
    for line in crashed:
        print(f"crash: {line}")
    for kind, title in FINDINGS.items():
        if judge.counts[kind]:
            print(f"\n{title}: {judge.counts[kind]}, by kind: " + "; ".join(
                f"{group} ({n})" for group, n in judge.groups[kind].most_common(12)))
            print("examples (one of each of the first kinds seen):")
            print("\n".join(f.describe() for f in judge.findings[kind]))
    for failure in good["failures"][:5]:
        print(f"good upload failed: {failure}")
    print(f"\ninformation: how cases ended: {dict(sorted(judge.ended.items()))}")
    print(f"information: cases the client gave up on (no answer in time), by kind: "
          f"{dict(judge.timeouts.most_common(8)) or 'none'}")
    for key, value in extra.items():
        print(f"information: {key}: {value}")


def gateway_log(log: Path) -> str:
    """The gateway log's errors in a few words (every 500 logs a traceback there)."""
    text = log.read_text(errors="replace")
    errors = [line for line in text.splitlines() if "ERROR" in line or "Traceback" in line]
    return f"{len(errors)} error lines" + (f"; first: {errors[0][:200]}" if errors else "")


def admin_stats(url: str, token: str) -> Any:
    """The stream's length, pending and dead letters (the consumer re-checks every record:
    a dead letter is an accepted upload it refused)."""
    import httpx

    try:
        return httpx.get(f"{url}/v1/admin/stats", timeout=5,
                         headers={"Authorization": f"Bearer {token}"}).json()
    except (httpx.HTTPError, ValueError) as exc:
        return f"unavailable ({type(exc).__name__})"


def replay(port: int, args: argparse.Namespace, tokens: Tokens) -> None:
    """Send the ``--replay`` cases once each and print bytes, answers and verdicts."""
    infos = tokens.infos()
    for item in args.replay.split(","):
        slow = item.startswith("s")
        index = int(item.lstrip("s"))
        case = (slow_case if slow else make_case)(args.seed, index, tokens, args.families)
        outcome = asyncio.run(send("127.0.0.1", port, case, _methods(case)))
        parsed = parse_requests(case.data)
        print(f"case {item} [{case.family}: {case.kind}] ended {outcome.ended} after "
              f"{outcome.seconds:.2f} s\n  sent ({len(case.data)} bytes): {case.data[:1500]!r}")
        for k, request in enumerate(parsed.requests):
            verdict = upload_problem(request, infos) if upload_game(request) else "not an upload"
            print(f"  reference, request {k + 1}: {verdict or 'a valid upload'}")
        if parsed.error:
            print(f"  reference stops: {parsed.error}")
        print(f"  answered ({len(outcome.raw)} bytes): {outcome.raw[:1500]!r}")


def run(args: argparse.Namespace) -> bool:
    """Gateway up, warm-up, attack, settle, measure, report; whether every target is met."""
    with tempfile.TemporaryDirectory(prefix="hostile-") as tmp:
        folder, port = Path(tmp), free_loopback_port()
        url = f"http://127.0.0.1:{port}"
        tokens = make_tokens(folder / "data")
        proc = start_gateway(write_config(folder, port, args.workers), url, folder / "serve.log")
        try:
            if args.replay:
                replay(port, args, tokens)
                return True
            return _measured(proc, url, port, args, tokens, folder / "serve.log")
        finally:
            proc.terminate()
            proc.wait(60)


def _measured(proc: subprocess.Popen, url: str, port: int, args: argparse.Namespace,
              tokens: Tokens, log: Path) -> bool:
    """The measured part of :func:`run`."""
    good = GoodClient(url, tokens.good, args.interval_ms / 1000, 20)
    print(f"gateway up ({args.workers} worker(s)); warming up with {args.warmup} valid uploads",
          flush=True)
    warm = warm_up(port, tokens, log.parent / "data", args)
    good.wait_warm()
    time.sleep(1.0)
    before = process_tree(proc)
    judge = Judge(tokens.infos())
    print(f"attacking with {args.requests} requests and {args.slow} slow clients", flush=True)
    good.attack.set()
    cpu = cpu_by_role(proc, good.process.pid)
    seconds = asyncio.run(attack(port, args, tokens, judge))
    cpu = {role: round(s - cpu.get(role, 0.0), 1)
           for role, s in cpu_by_role(proc, good.process.pid).items()}
    results = good.finish()
    time.sleep(SETTLE_S)
    after = process_tree(proc)
    extra = {"warm-up answers": dict(warm), "stream (admin stats)": admin_stats(url, tokens.admin),
             "gateway log": gateway_log(log), "CPU seconds during the attack": cpu,
             "gateway RSS MB by process, before -> after": rss_by_process(before, after),
             "load average": os.getloadavg()}
    return report(judge, results, (gateway_rss(before), gateway_rss(after)),
                  crashes(before, after, proc), seconds, extra)


def main() -> None:
    """Parse the options, run, exit 1 if a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1, help="[gateway] workers")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--slow", type=int, default=300, help="slow clients (~10 s each)")
    parser.add_argument("--interval-ms", type=float, default=20.0,
                        help="between two good uploads")
    parser.add_argument("--warmup", type=int, default=2000,
                        help="valid uploads before the memory baseline")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke test: 1,000 requests, 12 slow clients")
    parser.add_argument("--replay", default="", help="cases to send again: 17,42,s3")
    parser.add_argument("--families", default="", help="only these families (comma-separated: "
                        "schema, bodies, heads, tokens, games, encodings)")
    args = parser.parse_args()
    args.families = frozenset(filter(None, args.families.split(",")))
    if args.quick:
        args.requests, args.slow, args.warmup = 1_000, 12, 400
    sys.exit(0 if run(args) else 1)


if __name__ == "__main__":
    main()
