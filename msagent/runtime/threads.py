"""torch's intra-op threads in a service's process, set by both backends as an instance starts
(a module of its own so that neither backend imports ``state``, which imports them)."""

from __future__ import annotations

import sys


def pin_torch_threads(n: int) -> None:
    """Give torch ``n`` intra-op threads if torch is loaded (2 threads ran 2-3x slower here)."""
    torch = sys.modules.get("torch")
    if torch is not None and n > 0 and torch.get_num_threads() != n:
        torch.set_num_threads(n)
