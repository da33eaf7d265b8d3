"""Parameter averaging: the element-wise mean of several weight sets of one network.

Late in a league run the newest parameters swing from one snapshot to the next (the
opponents move too), and the mean of the last few snapshots plays more steadily than any
one of them, as stochastic weight averaging (Izmailov et al. 2018) does for supervised nets.
Hand-written because ``torch.optim.swa_utils`` averages live modules, not stored weight sets.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from msagent.errors import ConfigError
from msagent.vocabulary import Weights


def mean_weights(sets: Sequence[Weights]) -> Weights:
    """The element-wise mean of ``sets``, each tensor in its own dtype.

    Raises:
        ConfigError: no sets, or sets that differ in names or shapes (naming the first).
    """
    if not sets:
        raise ConfigError("mean_weights needs at least one weight set")
    first = sets[0]
    for i, other in enumerate(sets[1:], 1):
        _check_same(first, other, i)
    return {name: np.mean([s[name] for s in sets], axis=0, dtype=np.float64).astype(w.dtype)
            for name, w in first.items()}


def _check_same(first: Weights, other: Weights, index: int) -> None:
    """Refuse a set whose tensor names or shapes differ from the first one's."""
    if set(first) != set(other):
        diff = sorted(set(first) ^ set(other))
        raise ConfigError(f"weight set {index} differs from set 0 in tensors {diff[:4]}")
    for name, w in first.items():
        if np.shape(other[name]) != np.shape(w):
            raise ConfigError(f"weight set {index}: {name!r} has shape "
                              f"{np.shape(other[name])}, set 0 has {np.shape(w)}")
