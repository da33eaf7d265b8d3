"""An embedded Ray whose node times out during start-up (Ray's fixed 30 s, reached on a loaded
machine) is started once more; any other failure, or a second time-out, is raised."""

from __future__ import annotations

import pytest

from msagent.runtime.ray_backend import start_ray

TIMED_OUT = "The current node timed out during startup. This could happen because ..."


class FakeRay:
    """``ray.init``/``ray.shutdown`` that fail with the given errors, in order."""

    def __init__(self, *errors: Exception) -> None:
        self.errors, self.inits, self.shutdowns = list(errors), [], 0

    def init(self, **options: object) -> None:
        self.inits.append(options)
        if self.errors:
            raise self.errors.pop(0)

    def shutdown(self) -> None:
        self.shutdowns += 1


def test_a_start_up_time_out_is_tried_once_more_with_the_same_options() -> None:
    ray = FakeRay(Exception(TIMED_OUT))
    start_ray(ray, address="local", num_cpus=2)
    assert ray.inits == [{"address": "local", "num_cpus": 2}] * 2 and ray.shutdowns == 1


def test_a_second_time_out_or_another_error_is_raised() -> None:
    ray = FakeRay(Exception(TIMED_OUT), Exception(TIMED_OUT))
    with pytest.raises(Exception, match="timed out during startup"):
        start_ray(ray, address="local")
    assert len(ray.inits) == 2
    other = FakeRay(ValueError("bad address"))
    with pytest.raises(ValueError, match="bad address"):
        start_ray(other, address="x")
    assert len(other.inits) == 1 and other.shutdowns == 0
