"""A small tour of the msagent runtime on the embedded Ray (SEED-RL style inference).

Two "env worker" processes each run 4 fake environments and ask a batched inference service
for actions; a "learner" publishes new parameters that the inference service picks up.
"""

from __future__ import annotations

import time

import numpy as np

import msagent
from msagent import Solver, launch, publish, register, subscribe


class Inference:
    """Answers batched predict calls with the newest published parameters."""

    def __init__(self) -> None:
        self.params = subscribe("params/demo")

    @register(batch=2, max_wait_ms=5)
    def predict(self, obs: list[np.ndarray]) -> list[tuple[int, np.ndarray]]:
        version, weights = self.params.latest()
        w = weights if weights is not None else np.zeros(4, np.float32)
        return [(version, (o @ w > 0).astype(np.int64)) for o in obs]


class EnvWorker:
    """Steps 4 fake environments; one predict call per step carries all of them."""

    @register
    def run(self, steps: int, seed: int) -> dict[str, float]:
        rng, versions = np.random.default_rng(seed), set()
        for _ in range(steps):
            version, _actions = Solver().retrieve("Inference", "predict",
                                                  rng.standard_normal((4, 4)))
            versions.add(version)
        return {"steps": steps * 4, "versions_seen": len(versions)}


def main() -> None:
    """Launch the services, publish parameters while the workers play, print the result."""
    start = time.perf_counter()
    msagent.init(backend="ray")
    print(f"[demo] embedded Ray up in {time.perf_counter() - start:.1f} s")
    inference = launch(Inference)
    launch(EnvWorker, num=2)
    runs = [Solver().retrieve_async(EnvWorker, "run", 300, seed) for seed in range(2)]
    for version in range(1, 6):
        publish("params/demo", np.random.default_rng(version).standard_normal(4).astype(np.float32))
        print(f"[demo] learner published parameters version {version}")
        time.sleep(0.3)
    results = Solver.gather(runs)
    sizes = inference.stats()[0]["batch_sizes"]["predict"]
    mean = sum(int(s) * c for s, c in sizes.items()) / sum(sizes.values())
    print(f"[demo] env steps {sum(r['steps'] for r in results)}, parameter versions seen per "
          f"worker {[r['versions_seen'] for r in results]}, mean predict batch {mean:.2f} of 2")
    msagent.shutdown()


if __name__ == "__main__":
    main()
