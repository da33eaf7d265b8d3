"""The TOML of ``msagent serve`` / ``msagent ingest``: the game-client gateway, its Redis, its
stores and the games it accepts.

Example::

    [gateway]
    port = 8700
    data_dir = "gateway-data"        # tokens, the embedded Redis's files, default stores

    [[gateway.games]]
    name = "cartpole"
    env = "CartPole-v1"              # schema from a Gymnasium env's spaces, or declare it:

    [[gateway.games]]
    name = "pong"
    obs_shape = [84, 84, 4]
    obs_dtype = "uint8"
    action_n = 6

    [[gateway.games]]
    name = "tactics"
    obs_shape = [32]
    action_nvec = [3, 2]             # MultiDiscrete: a unit (one of 3) and a move (one of 2)
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, model_validator

from msagent.config.base import Section
from msagent.config.messages import describe
from msagent.errors import ConfigError
from msagent.experience.schema import ACTION_FIELDS, GAME_NAME, GameSchema


class GameSection(Section):
    """One game the gateway accepts uploads for: a Gymnasium ``env`` id whose spaces give the
    schema, or the schema's fields declared here (see ``GameSchema``)."""

    name: str = Field(pattern=GAME_NAME.pattern)
    env: str = ""
    """A Gymnasium env id whose spaces give the schema (instead of ``obs_shape`` and one
    action field)."""
    obs_shape: list[int] | None = None
    obs_dtype: Literal["float32", "uint8"] = "float32"
    action_n: int | None = Field(None, ge=1)
    action_nvec: list[int] | None = None
    action_shape: list[int] | None = None
    max_steps: int = Field(10_000, ge=1, le=1_000_000)

    @model_validator(mode="after")
    def _env_or_fields(self) -> GameSection:
        declared = [f for f in ACTION_FIELDS if getattr(self, f) is not None]
        if bool(self.env) == (self.obs_shape is not None) or (self.env and declared):
            raise ValueError(f"game {self.name!r}: give either env (a Gymnasium id, whose "
                             f"spaces give the schema) or obs_shape with one of "
                             f"{', '.join(ACTION_FIELDS)}")
        if not self.env:
            self.schema()  # a bad declaration fails when the config is loaded, naming its file
        return self

    def schema(self) -> GameSchema:
        """The game's upload schema (building the Gymnasium env once when ``env`` is set)."""
        if not self.env:
            return self._declared_schema()
        import gymnasium as gym

        try:
            env = gym.make(self.env)
        except Exception as exc:  # gymnasium raises several kinds for an unknown id
            raise ConfigError(f"game {self.name!r}: cannot make Gymnasium env {self.env!r}: "
                              f"{exc}") from None
        try:
            return GameSchema.from_spaces(self.name, env.observation_space, env.action_space,
                                          self.max_steps)
        finally:
            env.close()

    def _declared_schema(self) -> GameSchema:
        """The schema of the fields declared here (ValueError: they do not make one)."""
        try:
            return GameSchema(name=self.name, obs_shape=tuple(self.obs_shape),
                              obs_dtype=self.obs_dtype, action_n=self.action_n,
                              action_nvec=_tuple_or_none(self.action_nvec),
                              action_shape=_tuple_or_none(self.action_shape),
                              max_steps=self.max_steps)
        except ValidationError as exc:
            reasons = "; ".join(_reason(e) for e in exc.errors(include_url=False))
            raise ValueError(f"game {self.name!r}: {reasons}") from None


def _reason(error: dict) -> str:
    """One pydantic error of the schema in words, naming its field when it has one."""
    where = ".".join(str(part) for part in error["loc"] if not isinstance(part, int))
    text = error["msg"].removeprefix("Value error, ")
    return f"{where}: {text}" if where else text


def _tuple_or_none(values: list[int] | None) -> tuple[int, ...] | None:
    """A TOML list as the schema's tuple (None stays None: not declared)."""
    return None if values is None else tuple(values)


class GatewaySection(Section):
    """The gateway service.

    Attributes:
        host: Address uvicorn listens on (loopback by default; put a TLS proxy in front of it
            before exposing it).
        port: Its port.
        data_dir: Folder of the token file, the embedded Redis's append-only files and the
            default stores (relative to the TOML's folder).
        redis_url: Redis to stream records through; ``""`` starts an embedded ``redis-server``
            on a free loopback port with append-only persistence in ``data_dir/redis``.
        appendfsync: The embedded Redis's ``appendfsync`` (``always``: no acknowledged upload
            is lost even if Redis itself is killed; ``everysec``: faster, up to 1 s at risk).
        prefix: Prefix of every Redis key the gateway uses.
        store: Experience store (a local path or a pyarrow/fsspec URI such as ``s3://b/exp``);
            ``""``: ``data_dir/experience``.
        models: Model store the gateway serves ONNX models from (path or URI); ``""``:
            ``data_dir/models``.
        max_body_bytes: Largest request body read (after decompression); larger: 413.
        rate_per_s: Uploads per second each client may sustain (token bucket); above: 429.
        burst: Uploads a client may send at once above the rate.
        rate_bytes_per_s: Body bytes per second (after decompression) each client may sustain;
            above: 429. Each gateway process counts its own (even where ``rate_limits`` shares
            the upload counts in Redis): the limit protects that process's CPU from decoding.
        burst_bytes: Body bytes a client may send at once above that rate (at least
            ``max_body_bytes``); unset: four max-size bodies.
        idempotency_ttl_s: How long an episode id is remembered (a retry within it is stored once).
        max_backlog: Stream entries not yet ingested above which uploads get 503 (the store lags).
        workers: Gateway processes serving the port (each uses one core at most): more for
            more uploads/s on a machine with cores to spare.
        rate_limits: Where the token buckets live: ``process`` (in each gateway process),
            ``redis`` (shared by every process and host on this Redis), ``auto`` (``redis``
            when ``workers`` > 1, so a client's limit holds whichever worker it reaches).
        ingest: Run the ingestion consumer as a child process of ``msagent serve``.
        ingest_nice: The consumer's niceness (0-19): under CPU contention it yields to the
            gateway, so a burst of uploads is accepted at full speed and ingested right after
            (the stream holds it, up to ``max_backlog``).
        ingest_batch: Records per Parquet file the consumer writes at most.
        ingest_flush_s: Longest a record waits in the consumer before its file is written.
        claim_idle_ms: Pending entries idle this long are claimed again (a consumer died).
        max_head_bytes: Longest request line plus headers; longer: 431 and the connection
            closed (parsing a head costs CPU that grows with its length, before any token).
        head_timeout_s: Longest a request's head may take to arrive, from the connection's
            start or the request's first byte; slower: 408 and the connection closed.
        body_idle_timeout_s: Longest a request body may pause between received bytes (while
            the gateway waits for it); longer: 408 and the connection closed.
        body_timeout_s: Longest a request body may take in all (a body sent a byte at a time
            pauses little); longer: 408 and the connection closed.
        max_connections: Open connections each gateway process holds at most; more: 503 and
            closed at once (put a proxy with per-address limits in front for more).
        docs: Serve the interactive API docs at ``/docs`` (Swagger UI from the
            ``swagger-ui-bundle`` package, no CDN); ``/openapi.json`` is served either way.
        games: The games uploads are accepted for.
    """

    host: str = "127.0.0.1"
    port: int = Field(8700, ge=0, le=65535)
    data_dir: str = "gateway-data"
    redis_url: str = ""
    appendfsync: Literal["always", "everysec"] = "everysec"
    prefix: str = Field("msagent:exp", min_length=1, max_length=64)
    store: str = ""
    models: str = ""
    max_body_bytes: int = Field(4 * 1024 * 1024, ge=1024)
    rate_per_s: float = Field(200.0, gt=0)
    burst: int = Field(400, ge=1)
    rate_bytes_per_s: float = Field(16 * 1024 * 1024, gt=0)
    burst_bytes: int | None = Field(None, ge=1024)
    idempotency_ttl_s: int = Field(7 * 24 * 3600, ge=1)
    max_backlog: int = Field(1_000_000, ge=1)
    workers: int = Field(1, ge=1, le=64)
    rate_limits: Literal["auto", "process", "redis"] = "auto"
    ingest: bool = True
    ingest_nice: int = Field(10, ge=0, le=19)
    ingest_batch: int = Field(2000, ge=1)
    ingest_flush_s: float = Field(1.0, gt=0)
    claim_idle_ms: int = Field(30_000, ge=1)
    max_head_bytes: int = Field(16 * 1024, ge=1024, le=1024 * 1024)
    head_timeout_s: float = Field(10.0, gt=0, le=3600)
    body_idle_timeout_s: float = Field(10.0, gt=0, le=3600)
    body_timeout_s: float = Field(120.0, gt=0, le=86400)
    max_connections: int = Field(1024, ge=1, le=1_000_000)
    docs: bool = False
    games: list[GameSection] = Field(min_length=1)

    @property
    def byte_burst(self) -> int:
        """The body bytes a client may send at once (``burst_bytes``, or four max-size bodies)."""
        return self.burst_bytes or 4 * self.max_body_bytes

    @model_validator(mode="after")
    def _burst_holds_a_body(self) -> GatewaySection:
        """A body larger than the byte burst could never be accepted."""
        if self.byte_burst < self.max_body_bytes:
            raise ValueError(f"burst_bytes ({self.burst_bytes}) must be at least max_body_bytes "
                             f"({self.max_body_bytes}): a body larger than a burst would never "
                             f"be accepted")
        return self

    @model_validator(mode="after")
    def _unique_games(self) -> GatewaySection:
        names = [g.name for g in self.games]
        if len(set(names)) != len(names):
            raise ValueError(f"game names must be unique, got {names}")
        return self


class GatewayConfig(Section):
    """A whole ``msagent serve`` config; paths are resolved against ``base_dir``."""

    gateway: GatewaySection
    base_dir: str = "."
    """Set by the loader to the TOML's folder, which relative paths start from."""

    def path(self, value: str, default: str) -> str:
        """A configured store path or URI (``default`` under ``data_dir`` when empty);
        relative local paths start from the TOML's folder."""
        value = value or str(Path(self.gateway.data_dir) / default)
        if "://" in value:
            return value
        return str((Path(self.base_dir) / value).resolve())

    @property
    def shared_rate_limits(self) -> bool:
        """Whether the token buckets are kept in Redis (see ``rate_limits``)."""
        gw = self.gateway
        return gw.rate_limits == "redis" or (gw.rate_limits == "auto" and gw.workers > 1)

    @property
    def data_dir(self) -> Path:
        """The data folder, absolute."""
        return Path(self.path(self.gateway.data_dir, ""))

    def schemas(self) -> dict[str, GameSchema]:
        """Every game's upload schema by name."""
        return {g.name: g.schema() for g in self.gateway.games}


def load_gateway_config(path: str | Path) -> GatewayConfig:
    """Read and validate a gateway TOML; ConfigError names the file and every bad key."""
    path = Path(path).expanduser().absolute()
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    try:
        return GatewayConfig.model_validate({**data, "base_dir": str(path.parent)})
    except ValidationError as exc:
        raise ConfigError(describe(exc, GatewayConfig, str(path))) from None
