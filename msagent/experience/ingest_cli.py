"""``msagent ingest CONFIG``: one ingestion consumer for a gateway config, until Ctrl-C or
SIGTERM (both flush the buffered records before it exits 0).

Its Redis URL comes from ``--redis-url`` (visible in ``ps`` to every user), the environment
variable ``MSAGENT_REDIS_URL`` (how ``msagent serve`` passes its embedded Redis's URL, which
holds a password) or the config's ``[gateway] redis_url``, in that order."""

from __future__ import annotations

import logging
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from msagent.errors import ConfigError
from msagent.experience.ingest import Ingestor
from msagent.experience.store import ExperienceStore
from msagent.experience.stream_keys import StreamKeys

if TYPE_CHECKING:  # the caller loads it: the config package sits above this one
    from msagent.config.gateway import GatewayConfig

INGEST_REDIS_ENV = "MSAGENT_REDIS_URL"
"""The environment variable ``msagent ingest`` reads its Redis URL from (the command line's
``envvar``; ``msagent serve`` sets it for its consumer)."""


def run_ingest(cfg: GatewayConfig, redis_url: str | None, where: str) -> None:
    """Consume the config's stream into its store until a stop signal (``where``: the
    config's file, named in errors)."""
    ingestor = build_ingestor(cfg, redis_url or cfg.gateway.redis_url, where)
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                            format="%(asctime)s %(levelname)s %(message)s")
    stop = threading.Event()
    with stop_on_signals(stop):
        ingestor.run(stop)


def build_ingestor(cfg: GatewayConfig, redis_url: str, where: str) -> Ingestor:
    """The consumer a gateway config describes, reading from ``redis_url``."""
    if not redis_url:
        raise ConfigError(f"{where}: no Redis to ingest from: set [gateway] redis_url or "
                          f"{INGEST_REDIS_ENV} (msagent serve sets it to its embedded Redis's "
                          f"URL), or pass --redis-url")
    g = cfg.gateway
    try:
        return Ingestor(redis_url, StreamKeys(g.prefix), ExperienceStore(cfg.path(g.store,
                        "experience")), cfg.schemas(), g.ingest_batch, g.ingest_flush_s,
                        g.claim_idle_ms)
    except ValueError as exc:  # a malformed Redis URL or store URI
        raise ConfigError(f"{where}: {exc}") from None


@contextmanager
def stop_on_signals(stop: threading.Event) -> Iterator[None]:
    """SIGINT and SIGTERM set ``stop`` instead of killing the process (restored afterwards)."""
    def handler(signum: int, _frame: object) -> None:
        logging.getLogger(__name__).info("ingest: %s received; flushing and stopping",
                                         signal.Signals(signum).name)
        stop.set()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
