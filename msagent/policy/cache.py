"""An LRU cache of frozen policies by ModelKey: a miss builds a policy and loads its weights."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from msagent.policy.policy import Policy
from msagent.vocabulary import ModelKey, Weights


class PolicyCache:
    """Keeps the ``size`` most recently used snapshots; ``misses`` counts the pulls.

    Args:
        build: Makes a fresh policy of a policy id's shape (its weights are then loaded into
            it); league players may have networks of their own.
        pull: The weights of a snapshot (e.g. from the model pool).
        size: Snapshots kept; the least recently used one is dropped beyond it.
    """

    def __init__(self, build: Callable[[str], Policy], pull: Callable[[ModelKey], Weights],
                 size: int = 8) -> None:
        if size < 1:
            raise ValueError(f"a policy cache needs size >= 1, got {size}")
        self.build, self.pull, self.size = build, pull, size
        self._policies: OrderedDict[ModelKey, Policy] = OrderedDict()
        self._spare: dict[str, list[Policy]] = {}  # evicted policies, by policy id (shape)
        self.misses = 0

    def get(self, key: ModelKey) -> Policy:
        """The policy of snapshot ``key``, pulled on a miss (reusing an evicted policy object)."""
        policy = self._policies.get(key)
        if policy is not None:
            self._policies.move_to_end(key)
            return policy
        self.misses += 1
        spare = self._spare.get(key.policy_id)
        policy = spare.pop() if spare else self.build(key.policy_id)
        policy.set_weights(self.pull(key))
        self._policies[key] = policy
        while len(self._policies) > self.size:
            old, evicted = self._policies.popitem(last=False)
            self._spare.setdefault(old.policy_id, []).append(evicted)
        return policy

    def __contains__(self, key: ModelKey) -> bool:
        """Whether ``key`` is cached now (no pull, no reordering)."""
        return key in self._policies

    def __len__(self) -> int:
        """Snapshots cached now."""
        return len(self._policies)
