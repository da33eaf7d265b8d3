"""The env worker: runs the environments, acts through the inference server or local policies,
and writes fragments to the replay buffer."""

from __future__ import annotations

from msagent.services.env_worker.acting import Acting
from msagent.services.env_worker.league_client import home_players, report_results
from msagent.services.env_worker.worker import EnvWorker, LeagueSeats, WorkerSettings, worker_seed

__all__ = ["Acting", "EnvWorker", "LeagueSeats", "WorkerSettings", "home_players",
           "report_results", "worker_seed"]
