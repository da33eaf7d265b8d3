"""What training reports: metrics, a terminal progress display, TensorBoard scalars, log file."""

from msagent.telemetry.formatting import DROPPED
from msagent.telemetry.logs import log_to_file
from msagent.telemetry.metrics import Metrics
from msagent.telemetry.progress import ProgressDisplay
from msagent.telemetry.stopping import stop_reason
from msagent.telemetry.tensorboard import ScalarWriter

__all__ = ["DROPPED", "Metrics", "ProgressDisplay", "ScalarWriter", "log_to_file", "stop_reason"]
