"""Shared pieces of the telemetry tests."""


class FakeClock:
    """A clock the test moves by hand (``clock.now += 1.0``)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now
