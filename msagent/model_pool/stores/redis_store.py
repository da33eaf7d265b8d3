"""A store on a Redis server, so pools in several processes (or machines) share snapshots.

Layout under ``prefix`` (policy ids are percent-encoded, so a ``:`` in one cannot collide)::

    {prefix}:policies                  set of policy ids
    {prefix}:{policy}:counter          INCR counter handing out versions
    {prefix}:{policy}:versions         sorted set of stored versions (score = version)
    {prefix}:{policy}:{version}        safetensors bytes
    {prefix}:{policy}:{version}:meta   hash: metadata (msgpack bytes), frozen ("0" or "1")

Writes of one snapshot go in one MULTI transaction; freezing and pruning run as Lua scripts, so
a snapshot frozen by one process is never deleted by another's pruning. The pruning script
derives snapshot keys from the policy's key head, which suits one server, not Redis Cluster.
"""

from __future__ import annotations

from urllib.parse import quote

import redis

from msagent.credentials import expand, redact
from msagent.model_pool.stores.base import Store, StoredSnapshot
from msagent.vocabulary import ModelKey, PolicyId, Version

DEFAULT_PREFIX = "msagent:pool"

# KEYS[1]: the policy's counter; ARGV[1]: the smallest version the caller accepts.
_NEXT_VERSION = """
local v = redis.call('INCR', KEYS[1])
if v < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], ARGV[1])
  v = tonumber(ARGV[1])
end
return v
"""

_FREEZE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], 'frozen', '1')
return 1
"""

# KEYS[1]: the policy's index; ARGV[1]: the policy's key head; ARGV[2]: keep_last.
# Snapshot keys are derived from the head (fine on one server, not on Redis Cluster).
_PRUNE = """
local old = redis.call('ZRANGE', KEYS[1], 0, -(tonumber(ARGV[2]) + 1))
local deleted = {}
for _, version in ipairs(old) do
  local weights = ARGV[1] .. ':' .. version
  if redis.call('HGET', weights .. ':meta', 'frozen') ~= '1' then
    redis.call('DEL', weights, weights .. ':meta')
    redis.call('ZREM', KEYS[1], version)
    table.insert(deleted, version)
  end
end
return deleted
"""


class RedisKeys:
    """Names the Redis keys of one pool, all under one prefix."""

    def __init__(self, prefix: str = DEFAULT_PREFIX) -> None:
        """Remember the prefix that keeps this pool apart from others on the same server."""
        self.prefix = prefix

    def policies(self) -> str:
        """Key of the set of policy ids."""
        return f"{self.prefix}:policies"

    def counter(self, policy_id: PolicyId) -> str:
        """Key of the counter that hands out a policy's versions."""
        return f"{self.head(policy_id)}:counter"

    def index(self, policy_id: PolicyId) -> str:
        """Key of the sorted set of a policy's stored versions."""
        return f"{self.head(policy_id)}:versions"

    def weights(self, key: ModelKey) -> str:
        """Key of a snapshot's safetensors bytes."""
        return f"{self.head(key.policy_id)}:{key.version}"

    def metadata(self, key: ModelKey) -> str:
        """Key of a snapshot's metadata hash."""
        return f"{self.weights(key)}:meta"

    def head(self, policy_id: PolicyId) -> str:
        """Common head of a policy's keys (the policy id percent-encoded)."""
        return f"{self.prefix}:{quote(policy_id, safe='')}"


class RedisStore(Store):
    """Keeps snapshots on a Redis server; every pool with the same url and prefix sees the same ones."""

    def __init__(self, url: str, prefix: str = DEFAULT_PREFIX) -> None:
        """Connect lazily to the server at ``url`` (e.g. ``redis://127.0.0.1:6379/0``).

        Args:
            url: A redis-py connection URL; its password may be a ``${VAR}`` or
                ``${file:/path}`` placeholder (:mod:`msagent.credentials`).
            prefix: Head of every key, so that several pools can share one server.
        """
        self._url = url  # private: it may hold a password
        self.keys = RedisKeys(prefix)
        self._client = redis.Redis.from_url(expand(url))  # ConfigError: a secret is missing
        self._freeze = self._client.register_script(_FREEZE)
        self._prune = self._client.register_script(_PRUNE)

    def next_version(self, policy_id: PolicyId, at_least: Version = 0) -> Version:
        """Reserve the next version of a policy (at least ``at_least``), atomic across processes."""
        return int(self._client.eval(_NEXT_VERSION, 1, self.keys.counter(policy_id), at_least))

    def put(self, key: ModelKey, snapshot: StoredSnapshot) -> None:
        """Store a snapshot under a reserved key and add it to the policy's index, in one transaction."""
        fields = {"metadata": snapshot.metadata, "frozen": "1" if snapshot.frozen else "0"}
        with self._client.pipeline(transaction=True) as pipe:
            pipe.set(self.keys.weights(key), snapshot.weights)
            pipe.hset(self.keys.metadata(key), mapping=fields)
            pipe.zadd(self.keys.index(key.policy_id), {str(key.version): key.version})
            pipe.sadd(self.keys.policies(), key.policy_id)
            pipe.execute()

    def get(self, key: ModelKey) -> StoredSnapshot | None:
        """Read a snapshot's weights and metadata in one transaction, or None when it is not stored."""
        with self._client.pipeline(transaction=True) as pipe:
            pipe.get(self.keys.weights(key))
            pipe.hmget(self.keys.metadata(key), ["metadata", "frozen"])
            weights, (metadata, frozen) = pipe.execute()
        if weights is None or metadata is None:
            return None
        return StoredSnapshot(weights=weights, metadata=metadata, frozen=frozen == b"1")

    def versions(self, policy_id: PolicyId) -> list[Version]:
        """List the stored versions of a policy, oldest first."""
        return [int(v) for v in self._client.zrange(self.keys.index(policy_id), 0, -1)]

    def latest_version(self, policy_id: PolicyId) -> Version | None:
        """Return the highest stored version of a policy without reading any weights."""
        newest = self._client.zrange(self.keys.index(policy_id), -1, -1)
        return int(newest[0]) if newest else None

    def policies(self) -> list[PolicyId]:
        """List the policies that have had a snapshot stored, sorted."""
        return sorted(p.decode("utf-8") for p in self._client.smembers(self.keys.policies()))

    def freeze(self, key: ModelKey) -> bool:
        """Mark a stored snapshot frozen; return False when it is not stored."""
        keys = [self.keys.weights(key), self.keys.metadata(key)]
        return bool(self._freeze(keys=keys))

    def delete(self, key: ModelKey) -> bool:
        """Delete one snapshot, frozen or not, in one transaction; False if not stored."""
        with self._client.pipeline(transaction=True) as pipe:
            pipe.delete(self.keys.weights(key), self.keys.metadata(key))
            pipe.zrem(self.keys.index(key.policy_id), str(key.version))
            deleted, _ = pipe.execute()
        return bool(deleted)

    def prune(self, policy_id: PolicyId, keep_last: int) -> list[Version]:
        """Atomically delete a policy's snapshots older than its ``keep_last`` newest, except frozen ones."""
        keys = [self.keys.index(policy_id)]
        deleted = self._prune(keys=keys, args=[self.keys.head(policy_id), keep_last])
        return [int(v) for v in deleted]

    def close(self) -> None:
        """Close this store's connections to the server."""
        self._client.close()

    def __repr__(self) -> str:
        """Show the server and prefix, with any password the url holds as ``***``."""
        return f"RedisStore({redact(self._url)!r}, prefix={self.keys.prefix!r})"
