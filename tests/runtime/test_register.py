"""The @register decorator: bare and with arguments, direct calls, bad settings."""

from __future__ import annotations

import pytest

from msagent import register
from msagent.runtime.spec import RegisterSpec, registered_methods


class Plain:
    @register
    def bare(self, x: int) -> int:
        return x + 1

    @register(response=False, batch=4, max_wait_ms=2, idempotent=True)
    def configured(self, xs: list[int]) -> list[int]:
        return xs

    def not_registered(self) -> None:
        """Not a service method."""


class Child(Plain):
    @register(concurrent=True)
    def extra(self) -> str:
        return "extra"


def test_bare_and_configured_specs_are_recorded() -> None:
    specs = registered_methods(Plain)
    assert specs == {
        "bare": RegisterSpec(),
        "configured": RegisterSpec(response=False, batch=4, max_wait_ms=2, idempotent=True),
    }


def test_registered_methods_are_inherited() -> None:
    assert set(registered_methods(Child)) == {"bare", "configured", "extra"}


def test_decorated_method_can_still_be_called_directly() -> None:
    assert Plain().bare(41) == 42
    assert Plain().configured([1, 2]) == [1, 2]


@pytest.mark.parametrize("kwargs, needle", [
    ({"batch": 0}, "batch"), ({"batch": 2.5}, "batch"), ({"max_wait_ms": -1}, "max_wait_ms"),
])
def test_bad_settings_are_rejected_naming_the_setting(kwargs: dict, needle: str) -> None:
    with pytest.raises(ValueError, match=needle):
        register(**kwargs)
