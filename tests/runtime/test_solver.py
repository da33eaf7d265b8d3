"""Solver.retrieve on both backends: the seed snippet, discovery, errors, load balancing."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

import pytest

from msagent import Solver, launch
from msagent.errors import MethodNotRegisteredError, ServiceNotFoundError
from msagent.services.solver import Solver as SeedPathSolver

from tests.runtime.helpers import Caller, Counter, Worker


def test_seed_snippet_on_a_local_object(backend: str) -> None:
    worker = Worker(k=3)
    solver = SeedPathSolver()
    ans = solver.retrieve(worker, "func", *(1, 2), key="v")
    assert ans == {"args": [1, 2], "kwargs": {"key": "v"}, "k": 3}


def test_seed_snippet_on_a_launched_service(backend: str) -> None:
    worker = launch(Worker, num=2, kwargs={"k": 7})
    for target in (worker, Worker, "Worker"):
        ans = Solver().retrieve(target, "func", *(1,), key="v")
        assert ans == {"args": [1], "kwargs": {"key": "v"}, "k": 7}


def test_remote_exception_is_raised_with_its_type_and_message(backend: str) -> None:
    launch(Worker)
    with pytest.raises(ValueError, match="the remote message"):
        Solver().retrieve(Worker, "fail", "the remote message")
    assert Solver().retrieve(Worker, "func", 1)["args"] == [1]  # still serving


def test_unregistered_method_names_service_and_method(backend: str) -> None:
    launch(Worker)
    with pytest.raises(MethodNotRegisteredError, match=r"'Worker'.*'nope'.*func"):
        Solver().retrieve(Worker, "nope")
    assert Solver().retrieve(Worker, "func", 2)["args"] == [2]


def test_unknown_service_names_the_service(backend: str) -> None:
    launch(Worker)
    with pytest.raises(ServiceNotFoundError, match=r"'Ghost'.*Worker"):
        Solver().retrieve("Ghost", "func")


def test_retrieve_async_pipelines_calls(backend: str) -> None:
    launch(Worker, num=2)
    futures = [Solver().retrieve_async(Worker, "func", i) for i in range(10)]
    assert [r["args"][0] for r in Solver.gather(futures)] == list(range(10))


def test_load_is_spread_over_instances(backend: str) -> None:
    handle = launch(Worker, num=2)
    with ThreadPoolExecutor(4) as pool:
        pids = list(pool.map(lambda _: Solver().retrieve(handle, "sleep", 0.02), range(16)))
    assert len(set(pids)) == (2 if backend == "ray" else 1)
    calls = [s["calls"].get("sleep", 0) for s in handle.stats()]
    assert min(calls) >= 4, calls  # least-outstanding routing uses both instances


def test_plain_methods_never_overlap_on_one_instance(backend: str) -> None:
    launch(Counter)
    with ThreadPoolExecutor(6) as pool:
        overlaps = list(pool.map(lambda _: Solver().retrieve(Counter, "tick"), range(30)))
    assert max(overlaps) == 0


def test_a_service_reaches_another_through_the_registry(backend: str) -> None:
    handle = launch(Worker, kwargs={"k": 5})
    launch(Caller)
    assert Solver().retrieve(Caller, "call_worker", handle, 4)["args"] == [4]
    assert Solver().retrieve(Caller, "call_worker", "Worker", 6)["k"] == 5


def test_launching_a_class_without_registered_methods_is_an_error(backend: str) -> None:
    with pytest.raises(TypeError, match="no @register methods"):
        launch(int)


def test_call_all_reaches_every_instance_and_instances_know_their_index(backend: str) -> None:
    from tests.runtime.helpers import Indexed

    handle = launch(Indexed, num=3, name="Indexed")
    assert sorted(handle.call_all("whoami")) == [("Indexed", 0), ("Indexed", 1), ("Indexed", 2)]
    handle.scale(4)
    assert ("Indexed", 3) in handle.call_all("whoami")
    with pytest.raises(MethodNotRegisteredError, match="nope"):
        handle.call_all("nope")


class WhoAmI(Protocol):
    """The call ``Indexed`` shares with other services (as a handle of several classes')."""

    def whoami(self) -> tuple[str, int]:
        """Which instance answers."""
        ...


class Absent(Protocol):
    """A call no launched service registered."""

    def vanish(self) -> None:
        """Never served."""
        ...


def test_handle_calls_take_the_method_itself_and_refuse_another_class_s(backend: str) -> None:
    from tests.runtime.helpers import Indexed

    handle = launch(Indexed, num=2, name="Indexed")
    assert sorted(handle.call_all(Indexed.whoami)) == [("Indexed", 0), ("Indexed", 1)]
    assert sorted(handle.call_each(WhoAmI.whoami).values()) == [("Indexed", 0), ("Indexed", 1)]
    first = handle.instance_ids()[0]
    assert handle.call_some([first], Indexed.whoami) == {first: ("Indexed", 0)}
    with pytest.raises(TypeError, match=r"Worker\.func is not a method of service 'Indexed'"):
        handle.call_all(Worker.func)
    with pytest.raises(TypeError, match=r"Worker\.pid is not a method of service 'Indexed'"):
        handle.call_some([first], Worker.pid)
    with pytest.raises(MethodNotRegisteredError, match="vanish"):
        handle.call_each(Absent.vanish)
    with pytest.raises(TypeError, match="a service method"):
        handle.call_all(42)
