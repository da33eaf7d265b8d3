"""Where a run's services landed: node and pid of every instance, as lines for the console and
``train.log``, and as data for the dashboard feed."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

Placements = dict[str, list[dict[str, Any]]]


def placements_of(handles: list[Any]) -> Placements:
    """Every service's instances with their node, IP and pid."""
    return {h.name: h.placements() for h in handles}


def placement_lines(found: Placements) -> list[str]:
    """One line per service: its instances grouped by node (IP, short node id, pids)."""
    lines = []
    for service, instances in found.items():
        by_node: dict[tuple[str, str], list[int]] = defaultdict(list)
        for p in instances:
            by_node[(p["ip"], p["node"])].append(p["pid"])
        where = "; ".join(f"{len(pids)} on {ip} (node {node[:8]}, pid "
                          f"{', '.join(map(str, sorted(pids)))})"
                          for (ip, node), pids in sorted(by_node.items()))
        lines.append(f"{service} x{len(instances)}: {where or 'no live instance'}")
    return lines


def new_instances(before: Placements, after: Placements) -> list[str]:
    """Lines for the instances in ``after`` that ``before`` did not have (replacements)."""
    known = {p["instance"] for ps in before.values() for p in ps}
    return [f"{p['instance']} placed on {p['ip']} (node {p['node'][:8]}, pid {p['pid']})"
            for ps in after.values() for p in ps if p["instance"] not in known]
