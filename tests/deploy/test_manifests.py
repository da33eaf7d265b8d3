"""The deployment recipes of deploy/ agree with each other, with the league config they run,
with constraints.txt and with docs/cluster.md.

Plain parsing only (PyYAML, the Ray cluster launcher's own config check, msagent's config
loader): no Docker, no Kubernetes, no network.
"""

from __future__ import annotations

import copy
import json
import re
import shlex
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from msagent.config import TrainConfig, load_config

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
IMAGE = "msagent:0.1.0"
REDIS_PORT = 6380
GCS_PORT = 6379
CUSTOM_RESOURCES = {"msagent_head", "msagent_env", "msagent_learner"}
FAKE_ENV = {"REDIS_PASSWORD": "0123abcd", "REDIS_HOST": "redis.test"}
"""Values the head's shell would put into the entrypoint."""

Doc = dict[str, Any]


# --- loading -------------------------------------------------------------------------------------

@cache
def _yaml_docs(name: str) -> tuple[Doc, ...]:
    """Parse a (multi-document) YAML file of deploy/ once, skipping empty documents."""
    with (DEPLOY / name).open() as f:
        return tuple(doc for doc in yaml.safe_load_all(f) if doc)


def _of_kind(name: str, kind: str) -> list[Doc]:
    """The documents of one kind in a file, so each test names what it inspects."""
    return [doc for doc in _yaml_docs(name) if doc["kind"] == kind]


def _launcher() -> Doc:
    """The Ray cluster launcher config (one document)."""
    (doc,) = _yaml_docs("ray-cluster.yaml")
    return doc


def _raycluster() -> Doc:
    """The RayCluster of deploy/kuberay/raycluster.yaml."""
    (doc,) = _of_kind("kuberay/raycluster.yaml", "RayCluster")
    return doc


def _rayjob() -> Doc:
    """The RayJob of deploy/kuberay/rayjob.yaml."""
    (doc,) = _of_kind("kuberay/rayjob.yaml", "RayJob")
    return doc


def _cluster_specs() -> dict[str, Doc]:
    """Both KubeRay cluster specs by where they come from: they must describe the same nodes."""
    return {"RayCluster": _raycluster()["spec"], "RayJob": _rayjob()["spec"]["rayClusterSpec"]}


def _text(path: str) -> str:
    """A repository file as text (the Dockerfile, the docs, constraints.txt)."""
    return (ROOT / path).read_text()


@cache
def _train_config() -> TrainConfig:
    """deploy/league_cluster.toml as msagent loads it (so the test sees the validated config)."""
    return load_config(DEPLOY / "league_cluster.toml", [])


# --- pieces of manifests -------------------------------------------------------------------------

def _groups(spec: Doc) -> dict[str, Doc]:
    """A KubeRay cluster spec's node groups by name, the head as "head"."""
    return {"head": spec["headGroupSpec"], **{g["groupName"]: g for g in spec["workerGroupSpecs"]}}


def _ray_container(group: Doc) -> Doc:
    """The Ray container of a group's pod (KubeRay runs Ray in the first one)."""
    return group["template"]["spec"]["containers"][0]


def _env(container: Doc) -> dict[str, Doc]:
    """A container's env entries by name."""
    return {entry["name"]: entry for entry in container.get("env", [])}


def _start_resources(group: Doc) -> dict[str, float]:
    """The custom resources in a group's rayStartParams (KubeRay's shell-quoted JSON string)."""
    raw = group["rayStartParams"].get("resources")
    if raw is None:
        return {}
    return json.loads(raw.strip().strip('"').replace('\\"', '"'))


def _launcher_resources(commands: list[str]) -> dict[str, float]:
    """Every custom resource some start command of the launcher may pass to `ray start`."""
    found: dict[str, float] = {}
    for command in commands:
        for blob in re.findall(r"\{[^{}]*\}", command):
            found.update(json.loads(blob))
    return found


def _gpus(group: Doc) -> float:
    """The nvidia.com/gpu limit of a group's Ray container (0 when it asks for none)."""
    return float(_ray_container(group).get("resources", {}).get("limits", {})
                 .get("nvidia.com/gpu", 0))


def _expand(text: str, env: dict[str, str]) -> str:
    """Expand ${VAR} as the head's shell would, failing on a variable the head does not set."""
    return re.sub(r"\$\{(\w+)\}", lambda m: env[m.group(1)], text)


def _search(pattern: str, text: str) -> str:
    """The first match of ``pattern`` in ``text`` (its group 1 if it has one); a miss fails."""
    found = re.search(pattern, text)
    assert found is not None, f"{pattern!r} not found"
    return found.group(1) if found.re.groups else found.group(0)


def _requested(cfg: TrainConfig) -> dict[str, float]:
    """Total custom resources the config's services ask for (per-instance amount x instances)."""
    sv, players = cfg.services, len(cfg.league.player_ids())
    counts = {"env_worker": sv.env_worker.num, "learner": sv.learner.num * players,
              "buffer": 1, "model_pool": 1, "evaluator": sv.evaluator.num,
              "inference": sv.inference.num if sv.inference.mode == "central" else 0}
    total: dict[str, float] = {}
    for name, count in counts.items():
        for resource, amount in (getattr(sv, name).resources.custom or {}).items():
            total[resource] = total.get(resource, 0.0) + amount * count
    return total


# --- the image -----------------------------------------------------------------------------------

def test_every_ray_node_runs_the_image_the_docs_and_the_dockerfile_name() -> None:
    images = {_launcher()["docker"]["image"]}
    for spec in _cluster_specs().values():
        images |= {_ray_container(g)["image"] for g in _groups(spec).values()}
    assert images == {IMAGE}
    assert IMAGE in _text("docs/cluster.md")
    assert f"-t {IMAGE} ." in _text("deploy/Dockerfile")


def test_dockerfile_installs_the_pins_of_constraints_txt_on_python_311() -> None:
    dockerfile = _text("deploy/Dockerfile")
    pins = dict(line.split("==") for line in _text("constraints.txt").splitlines()
                if line and not line.startswith("#"))
    assert pins.keys() >= {"torch", "ray"}
    assert re.search(r"^FROM python:3\.11-slim-bookworm$", dockerfile, re.M)
    assert re.search(r"^COPY .*\bconstraints\.txt\b", dockerfile, re.M)
    installs = re.findall(r"pip install [^\n]*", dockerfile)
    assert any("-c constraints.txt" in line for line in installs)
    instructions = re.sub(r"#.*", "", dockerfile)
    for package in pins:  # the pins come from the file, never retyped
        assert f"{package}==" not in instructions
    for package, version in re.findall(r"\b(torch|ray)==([\w.+]+)", dockerfile):  # comments
        assert version == pins[package], package
    setup_pyftg = _search(r"--no-deps (pyftg==\S+)", _text("scripts/setup.sh"))
    assert any(f"--no-deps {setup_pyftg}" in line for line in installs)
    assert "ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu" in dockerfile
    assert "redis-server" not in instructions  # Redis is its own service
    assert 'CMD ["msagent", "--help"]' in dockerfile
    for spec in _cluster_specs().values():  # KubeRay's rayVersion is the image's Ray
        assert spec["rayVersion"] == pins["ray"]


def test_dockerfile_copies_what_the_nodes_run() -> None:
    copied = " ".join(re.findall(r"^COPY (.*)$", _text("deploy/Dockerfile"), re.M))
    for path in ("pyproject.toml", "README.md", "msagent/", "examples/", "scripts/",
                 "deploy/league_cluster.toml"):
        assert path in copied.split(), path


# --- one entrypoint ------------------------------------------------------------------------------

def test_rayjob_launcher_and_docs_submit_the_same_entrypoint() -> None:
    entrypoint = _rayjob()["spec"]["entrypoint"]
    assert _launcher()["metadata"]["msagent_entrypoint"] == entrypoint
    docs = _text("docs/cluster.md")
    assert entrypoint in docs
    # the two `ray job submit` commands wrap it so that the head's shell expands it
    assert docs.count(f"bash -c '{entrypoint}'") == 2


def test_entrypoint_trains_the_cluster_config_against_redis_on_6380() -> None:
    argv = shlex.split(_expand(_rayjob()["spec"]["entrypoint"], FAKE_ENV))
    assert argv[:2] == ["msagent", "train"]
    assert argv[argv.index("--address") + 1] == "auto"
    config = ROOT / argv[2]
    assert config == DEPLOY / "league_cluster.toml"
    overrides = [argv[i + 1] for i, arg in enumerate(argv) if arg == "--set"]
    url = load_config(config, overrides).services.model_pool.url
    assert url == f"redis://:{FAKE_ENV['REDIS_PASSWORD']}@{FAKE_ENV['REDIS_HOST']}:{REDIS_PORT}/0"


def test_the_head_provides_the_variables_of_the_entrypoint() -> None:
    names = set(re.findall(r"\$\{(\w+)\}", _rayjob()["spec"]["entrypoint"]))
    assert names == set(FAKE_ENV)
    services = {d["metadata"]["name"] for d in _of_kind("kuberay/raycluster.yaml", "Service")}
    for spec in _cluster_specs().values():
        env = _env(_ray_container(spec["headGroupSpec"]))
        assert env["REDIS_HOST"]["value"] in services
        assert env["REDIS_PASSWORD"]["valueFrom"]["secretKeyRef"]["name"] == "msagent-redis"
    launcher = _launcher()
    assert any(o.startswith("-e REDIS_HOST=") for o in launcher["docker"]["run_options"])
    assert 'export REDIS_PASSWORD="$(cat /etc/msagent/redis_password)"' in " ".join(
        launcher["head_start_ray_commands"])


# --- Redis ---------------------------------------------------------------------------------------

def test_redis_listens_on_one_port_everywhere_and_not_on_rays_gcs_port() -> None:
    assert REDIS_PORT != GCS_PORT
    (service,) = _of_kind("kuberay/raycluster.yaml", "Service")
    assert [p["port"] for p in service["spec"]["ports"]] == [REDIS_PORT]
    (deployment,) = _of_kind("kuberay/raycluster.yaml", "Deployment")
    redis = deployment["spec"]["template"]["spec"]["containers"][0]
    assert redis["args"][redis["args"].index("--port") + 1] == str(REDIS_PORT)
    assert [p["containerPort"] for p in redis["ports"]] == [REDIS_PORT]
    policy = next(d for d in _of_kind("kuberay/raycluster.yaml", "NetworkPolicy")
                  if d["metadata"]["name"] == "msagent-redis")
    assert [p["port"] for p in policy["spec"]["ingress"][0]["ports"]] == [REDIS_PORT]
    entrypoint = _expand(_rayjob()["spec"]["entrypoint"], FAKE_ENV)
    assert _search(r'rediss?://[^@"]*@[^:/"]+:(\d+)/\d+"', entrypoint) == str(REDIS_PORT)
    assert f"-p 192.0.2.10:{REDIS_PORT}:{REDIS_PORT}" in _text("docs/cluster.md")
    assert f"--port {REDIS_PORT}" in _text("docs/cluster.md")
    head_start = " ".join(_launcher()["head_start_ray_commands"])
    assert f"--port={GCS_PORT}" in head_start
    assert f"$RAY_HEAD_IP:{GCS_PORT}" in " ".join(_launcher()["worker_start_ray_commands"])


def test_redis_password_comes_from_a_secret() -> None:
    (deployment,) = _of_kind("kuberay/raycluster.yaml", "Deployment")
    redis = deployment["spec"]["template"]["spec"]["containers"][0]
    assert redis["args"][redis["args"].index("--requirepass") + 1] == "$(REDIS_PASSWORD)"
    assert _env(redis)["REDIS_PASSWORD"]["valueFrom"]["secretKeyRef"] == {
        "name": "msagent-redis", "key": "password"}


# --- exposure ------------------------------------------------------------------------------------

def test_dashboard_binds_loopback_on_the_raycluster_and_the_launcher_head() -> None:
    assert _raycluster()["spec"]["headGroupSpec"]["rayStartParams"]["dashboard-host"] == "127.0.0.1"
    head_start = " ".join(_launcher()["head_start_ray_commands"])
    assert "--dashboard-host=127.0.0.1" in head_start


def test_the_rayjob_dashboard_is_open_only_to_the_operator_with_a_token() -> None:
    """A RayJob's operator polls the dashboard through the head Service: allowed only so."""
    spec = _rayjob()["spec"]
    host = spec["rayClusterSpec"]["headGroupSpec"]["rayStartParams"]["dashboard-host"]
    if host == "127.0.0.1":
        return
    assert host == "0.0.0.0"
    assert spec["submissionMode"] == "HTTPMode"
    assert spec["rayClusterSpec"]["authOptions"]["mode"] == "token"
    policy = next(d for d in _of_kind("kuberay/raycluster.yaml", "NetworkPolicy")
                  if d["metadata"]["name"] == "msagent-ray")
    rules = policy["spec"]["ingress"]
    open_8265 = [r for r in rules if {p["port"] for p in r.get("ports", [])} == {8265}]
    assert open_8265 and all(
        s["podSelector"]["matchLabels"] == {"app.kubernetes.io/name": "kuberay-operator"}
        for r in open_8265 for s in r["from"])
    # every other rule admits Ray pods only
    ray_labels = spec["rayClusterSpec"]["headGroupSpec"]["template"]["metadata"]["labels"]
    for rule in rules:
        if rule not in open_8265:
            for source in rule["from"]:
                assert "namespaceSelector" not in source
                assert source["podSelector"]["matchLabels"].items() <= ray_labels.items()


def test_no_service_is_reachable_from_outside_the_cluster() -> None:
    for name in ("kuberay/raycluster.yaml", "kuberay/rayjob.yaml"):
        for service in _of_kind(name, "Service"):
            assert service["spec"].get("type", "ClusterIP") == "ClusterIP"
    for spec in _cluster_specs().values():
        assert spec["headGroupSpec"].get("serviceType", "ClusterIP") == "ClusterIP"
        for group in _groups(spec).values():
            pod = group["template"]["spec"]
            assert not pod.get("hostNetwork")
            assert all("hostPort" not in p for c in pod["containers"] for p in c.get("ports", []))


def test_network_policies_select_the_ray_pods_and_redis() -> None:
    policies = {d["metadata"]["name"]: d["spec"]
                for d in _of_kind("kuberay/raycluster.yaml", "NetworkPolicy")}
    (deployment,) = _of_kind("kuberay/raycluster.yaml", "Deployment")
    redis_labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert policies["msagent-redis"]["podSelector"]["matchLabels"].items() <= redis_labels.items()
    for spec in _cluster_specs().values():
        for group in _groups(spec).values():
            labels = group["template"]["metadata"]["labels"]
            assert policies["msagent-ray"]["podSelector"]["matchLabels"].items() <= labels.items()
            admitted = policies["msagent-redis"]["ingress"][0]["from"][0]["podSelector"]
            assert admitted["matchLabels"].items() <= labels.items()


# --- token authentication ------------------------------------------------------------------------

def test_token_auth_is_on_for_every_kuberay_ray_container() -> None:
    for spec in _cluster_specs().values():
        secret = spec["authOptions"]["secretName"]
        assert spec["authOptions"]["mode"] == "token"
        for name, group in _groups(spec).items():
            env = _env(_ray_container(group))
            assert env["RAY_AUTH_MODE"]["value"] == "token", name
            assert env["RAY_AUTH_TOKEN"]["valueFrom"]["secretKeyRef"] == {
                "name": secret, "key": "auth_token"}, name


def test_token_auth_is_on_for_every_launcher_node_from_a_mounted_file() -> None:
    launcher = _launcher()
    options = launcher["docker"]["run_options"]  # shared by the head and every worker
    assert "-e RAY_AUTH_MODE=token" in options
    (token_path,) = [o.split("=", 1)[1] for o in options if o.startswith("-e RAY_AUTH_TOKEN_PATH=")]
    assert any(token_path.startswith(dest + "/") for dest in launcher["file_mounts"])
    assert not any(o.startswith("-e RAY_AUTH_TOKEN=") for o in options)  # no token in the file


def test_launcher_config_passes_rays_own_schema() -> None:
    from ray.autoscaler._private.util import prepare_config, validate_config

    validate_config(prepare_config(copy.deepcopy(_launcher())))


def test_secrets_are_created_by_the_docs_never_committed() -> None:
    docs = _text("docs/cluster.md")
    refs: set[tuple[str, str]] = set()
    for name in ("kuberay/raycluster.yaml", "kuberay/rayjob.yaml"):
        assert not _of_kind(name, "Secret")
        text = (DEPLOY / name).read_text()
        refs |= set(re.findall(r"secretKeyRef: \{name: ([\w-]+), key: (\w+)\}", text))
    assert refs == {("msagent-ray-auth", "auth_token"), ("msagent-redis", "password")}
    for secret, key in refs:
        assert re.search(rf"kubectl create secret generic {secret} --from-literal={key}=", docs)


# --- placement -----------------------------------------------------------------------------------

def test_the_configs_custom_resources_are_offered_by_the_kuberay_groups() -> None:
    requested = _requested(_train_config())
    assert set(requested) == CUSTOM_RESOURCES
    for origin, spec in _cluster_specs().items():
        offered: dict[str, float] = {}
        for group in _groups(spec).values():
            for resource, amount in _start_resources(group).items():
                offered[resource] = offered.get(resource, 0.0) + amount * group.get("replicas", 1)
        for resource, amount in requested.items():
            assert offered.get(resource, 0.0) >= amount, (origin, resource)


def test_the_configs_custom_resources_are_offered_by_the_launcher_nodes() -> None:
    launcher = _launcher()
    head = _launcher_resources(launcher["head_start_ray_commands"])
    workers = _launcher_resources(launcher["worker_start_ray_commands"])
    assert set(head) == {"msagent_head"}
    assert set(workers) == {"msagent_env", "msagent_learner"}
    for resource, amount in _requested(_train_config()).items():  # one node of a kind fits all
        assert {**head, **workers}[resource] >= amount, resource


def test_the_learners_group_has_the_gpus_the_learners_ask_for() -> None:
    cfg = _train_config()
    learner_gpus = (cfg.services.learner.resources.num_gpus * cfg.services.learner.num
                    * len(cfg.league.player_ids()))
    assert learner_gpus > 0
    for spec in _cluster_specs().values():
        groups = _groups(spec)
        assert "msagent_learner" in _start_resources(groups["learners"])
        assert _gpus(groups["learners"]) * groups["learners"]["replicas"] >= learner_gpus
        assert all(_gpus(g) == 0 for name, g in groups.items() if name != "learners")


def test_both_kuberay_recipes_describe_the_same_nodes() -> None:
    cluster, job = (_groups(spec) for spec in _cluster_specs().values())
    assert cluster.keys() == job.keys() == {"head", "env-workers", "learners"}
    assert cluster["env-workers"]["replicas"] == 4 and cluster["learners"]["replicas"] == 1
    for name in cluster:
        a, b = cluster[name], job[name]
        assert _start_resources(a) == _start_resources(b), name
        assert a.get("replicas") == b.get("replicas"), name
        assert _ray_container(a)["resources"] == _ray_container(b)["resources"], name
        assert _env(_ray_container(a)) == _env(_ray_container(b)), name
    assert _rayjob()["spec"]["shutdownAfterJobFinishes"] is True
    for doc in (_raycluster(), _rayjob()):
        assert doc["apiVersion"] == "ray.io/v1"


# --- the run volume ------------------------------------------------------------------------------

@pytest.mark.parametrize("group", ["head", "learners"])
def test_the_run_root_is_on_the_shared_volume_where_runs_are_written(group: str) -> None:
    root = Path(_train_config().run.root)
    assert root.is_absolute()
    (claim,) = _of_kind("kuberay/raycluster.yaml", "PersistentVolumeClaim")
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]
    for spec in _cluster_specs().values():
        pod = _groups(spec)[group]["template"]["spec"]
        volumes = {v["name"]: v for v in pod["volumes"]}
        mounts = [m for m in _ray_container(_groups(spec)[group])["volumeMounts"]
                  if root.is_relative_to(m["mountPath"])]
        assert mounts, (group, root)
        source = volumes[mounts[0]["name"]]["persistentVolumeClaim"]["claimName"]
        assert source == claim["metadata"]["name"]
    assert f"-v {root.parent}:{root.parent}" in _launcher()["docker"]["run_options"]


def test_the_shared_objects_carry_the_label_the_rayjob_recipe_applies() -> None:
    for doc in _yaml_docs("kuberay/raycluster.yaml"):
        shared = doc["metadata"].get("labels", {}).get("msagent.io/shared") == "true"
        assert shared == (doc["kind"] != "RayCluster"), doc["metadata"]["name"]
    assert "kubectl apply -f deploy/kuberay/raycluster.yaml -l msagent.io/shared=true" in _text(
        "docs/cluster.md")
