"""The whole client loop on one machine, as the platform seed describes it: game clients
upload episodes through the gateway, the store fills, training from stored experience
publishes ONNX models, and the clients download each new one.

Run:  python examples/client_loop/loop.py [--minutes 3] [--clients 4]

It starts ``msagent serve gateway.toml`` (its own Redis and ingestion consumer), creates a
token, starts ``msagent train train.toml`` (store readers, V-trace, ONNX publishing), and runs
simulated CartPole clients in this process, printing the mean return of the episodes each
published model played. Everything it writes goes to ``examples/client_loop/data`` (delete
the folder to start over).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from msagent.client.http import wait_healthy
from msagent.client.simulate import ClientSettings, Played, run_clients
from msagent.gateway.tokens import TokenStore

HERE = Path(__file__).resolve().parent
REPORT_S = 10.0


def wait_gateway(url: str, proc: subprocess.Popen) -> None:
    """Block until the gateway answers /healthz (or fail if it exited)."""
    if not wait_healthy(url, alive=lambda: proc.poll() is None):
        raise SystemExit(f"msagent serve did not become healthy (exit code {proc.poll()})")


def report(played: Played) -> None:
    """One line per model version: episodes played and their mean return."""
    rows = played.mean_returns()
    line = "  ".join(f"v{v}: {m:6.1f} ({n} ep)" for v, (n, m) in list(rows.items())[-6:])
    print(f"[clients] mean return per model version  {line}", flush=True)


def main() -> None:
    """Gateway, training and clients, for ``--minutes``; a summary at the end."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=3.0)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--port", type=int, default=8700)
    args = parser.parse_args()
    token = TokenStore.of_data_dir(HERE / "data").create("simulated", ["upload", "download"],
                                                         games=["cartpole"])[1]
    msagent = [sys.executable, "-m", "msagent"]
    serve = subprocess.Popen([*msagent, "serve", str(HERE / "gateway.toml"), "--port",
                              str(args.port)])
    train = None
    stop, played = threading.Event(), Played()
    try:
        url = f"http://127.0.0.1:{args.port}"
        wait_gateway(url, serve)
        train = subprocess.Popen([*msagent, "train", str(HERE / "train.toml"), "--set",
                                  f"run.stop.time_s={args.minutes * 60}", "--set",
                                  "logging.progress=false"])
        settings = ClientSettings(url, token, "cartpole", "CartPole-v1", args.clients,
                                  str(HERE / "data" / "client-cache"))
        clients = threading.Thread(target=run_clients, args=(settings, stop, played))
        clients.start()
        while train.poll() is None:
            time.sleep(REPORT_S)
            report(played)
    finally:
        stop.set()
        for proc in (train, serve):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGINT)
                proc.wait(60)
    rows = played.mean_returns()
    if rows:
        first, last = next(iter(rows.items())), list(rows.items())[-1]
        print(f"first model v{first[0]}: mean return {first[1][1]:.1f} over {first[1][0]} "
              f"episodes; last model v{last[0]}: {last[1][1]:.1f} over {last[1][0]}")
    if played.failures:
        print(f"{len(played.failures)} uploads failed, e.g. {played.failures[0]}")


if __name__ == "__main__":
    os.chdir(HERE)
    main()
