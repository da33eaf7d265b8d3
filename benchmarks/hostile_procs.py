"""The hostile-client benchmark's view of the gateway's processes (psutil): which are alive
since when (a crash is a pid that died or was replaced), their roles, their RSS and CPU."""

from __future__ import annotations

import subprocess

import psutil


def process_tree(proc: subprocess.Popen) -> dict[int, tuple[float, str, int]]:
    """Every process of the gateway: pid -> (start time, role, RSS bytes)."""
    root = psutil.Process(proc.pid)
    tree = {}
    for p in [root, *root.children(recursive=True)]:
        try:
            tree[p.pid] = (p.create_time(), _role(p), p.memory_info().rss)
        except psutil.Error:
            continue
    return tree


def _role(p: psutil.Process) -> str:
    """redis, consumer, helper (multiprocessing's) or gateway (serve and its workers)."""
    cmd = " ".join(p.cmdline())
    if "redis" in p.name():
        return "redis"
    if " ingest " in cmd:
        return "consumer"
    return "helper" if "resource_tracker" in cmd or "semaphore_tracker" in cmd else "gateway"


def cpu_by_role(proc: subprocess.Popen, good_pid: int | None) -> dict[str, float]:
    """CPU seconds so far of the attack (this process), the good client and each role of the
    gateway's processes (where the benchmark's two cores went)."""
    out = {"attack": sum(psutil.Process().cpu_times()[:2])}
    pids = {good_pid: "good client"} if good_pid else {}
    for pid, (_, role, _) in process_tree(proc).items():
        pids[pid] = role
    for pid, role in pids.items():
        try:
            out[role] = out.get(role, 0.0) + sum(psutil.Process(pid).cpu_times()[:2])
        except psutil.Error:
            continue
    return out


def gateway_rss(tree: dict[int, tuple[float, str, int]]) -> int:
    """RSS of the gateway's own processes."""
    return sum(rss for _, role, rss in tree.values() if role == "gateway")


def rss_by_process(before: dict, after: dict) -> dict[int, str]:
    """Each gateway process's RSS before and after (a worker's growth is diluted in a sum
    with the supervisor's)."""
    return {pid: f"{rss / 2**20:.0f} -> {after[pid][2] / 2**20:.0f}"
            for pid, (_, role, rss) in before.items() if role == "gateway" and pid in after}


def crashes(before: dict, after: dict, proc: subprocess.Popen) -> list[str]:
    """Processes of the gateway that died (restarted or not) between the two snapshots, or
    appeared unexplained; one line each."""
    gone = [f"{before[p][1]} pid {p} died" for p in before
            if p not in after or after[p][0] != before[p][0]]
    new = [f"{after[p][1]} pid {p} started" for p in after if p not in before]
    out = [f"{g} ({n})" for g, n in zip(gone, new)] + gone[len(new):] + new[len(gone):]
    if proc.poll() is not None:
        out.append(f"msagent serve exited with {proc.returncode}")
    return out
