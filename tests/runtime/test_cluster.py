"""A simulated two-node Ray cluster: instances land on both nodes and both answer."""

from __future__ import annotations

import pytest

from msagent import Solver, launch
from msagent.runtime import solver, state

from tests.conftest import forget_ray_backend
from tests.runtime.helpers import Worker


@pytest.fixture(scope="module")
def started_cluster():
    """Start a head and a worker node on 127.0.0.1 and connect msagent to them, once for the
    module (a cluster takes long to start; each test stops the services it launched)."""
    from ray.cluster_utils import Cluster

    forget_ray_backend()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 2})
    cluster.add_node(num_cpus=2)
    cluster.wait_for_nodes()
    backend = state.init(backend="ray", address=cluster.address)
    try:
        yield cluster, backend
    finally:
        backend.shutdown()
        state.attach(None)  # type: ignore[arg-type]
        solver.forget_routes()
        cluster.shutdown()


@pytest.fixture
def two_node_cluster(started_cluster):
    """The module's cluster, with msagent attached to it; the test's services are stopped
    after it."""
    cluster, backend = started_cluster
    state.attach(backend)
    try:
        yield cluster
    finally:
        backend.stop_services()
        solver.forget_routes()


@pytest.mark.slow
def test_instances_spread_over_two_nodes_and_retrieve_reaches_both(two_node_cluster) -> None:
    # one CPU each: 4 instances on two 2-CPU nodes must use both (SPREAD alone is best-effort
    # for actors that reserve nothing)
    handle = launch(Worker, num=4, resources={"spread": True, "num_cpus": 1})
    nodes = {p["node"] for p in handle.placements()}
    assert len(nodes) == 2
    pid_to_node = {p["pid"]: p["node"] for p in handle.placements()}
    import concurrent.futures as cf

    with cf.ThreadPoolExecutor(8) as pool:
        pids = set(pool.map(lambda _: Solver().retrieve(handle, "sleep", 0.05), range(32)))
    assert {pid_to_node[p] for p in pids} == nodes


@pytest.mark.slow
def test_a_learner_group_forms_across_two_nodes(two_node_cluster) -> None:
    from tests.runtime.group_member import GroupMember

    # two CPUs each on two 2-CPU nodes: the members must sit on different nodes
    handle = launch(GroupMember, num=2, resources={"spread": True, "num_cpus": 2},
                    args=("learner-group/cluster-test/main", 2))
    placements = handle.placements()
    assert len({p["node"] for p in placements}) == 2
    import concurrent.futures as cf

    ids = handle.instance_ids()
    with cf.ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(lambda i: handle.call_some([ids[i]], "average", 1.0 + 4 * i),
                                range(2)))
    means = [next(iter(a.values()))["mean"] for a in answers]
    assert means == [3.0, 3.0]  # (1 + 5) / 2 on both ranks
    handle.call_all("leave")


@pytest.mark.slow
def test_an_embedded_ray_never_joins_a_cluster_left_on_the_machine(two_node_cluster) -> None:
    # Ray's ray.init() joins the cluster `ray start` (or a test's Cluster) last recorded on the
    # machine; msagent's embedded Ray must be its own, whatever else runs here
    import subprocess
    import sys

    code = ("import ray\nfrom msagent.runtime.ray_backend import RayBackend\n"
            "RayBackend(num_cpus=1)\n"
            "print(ray.get_runtime_context().gcs_address, len(ray.nodes()))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    gcs, nodes = out.stdout.split()[-2:]
    assert gcs != two_node_cluster.address and nodes == "1", out.stdout
