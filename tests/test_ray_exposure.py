"""What a Ray run exposes: the sockets of a local Ray the executor starts, and where the model key goes.

Before: `datasolver run --executor ray` started a Ray whose GCS, raylet, workers and request-slots
actor listened on `::` (every interface), one agent on the machine's address; and every Ray task
carried the run config, model key included, in its arguments.
"""

from __future__ import annotations

import ipaddress
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from datasolver.llm import LLMSettings
from datasolver.llm.fake import ScriptedServer
from datasolver.pipeline.ray_executor import split_secrets, starts_local_ray, worker_settings
from tests.helpers.pipeline import bearer_key, copy_examples, examples_server

pytest.importorskip("ray", reason="the Ray executor's tests need the optional 'ray' package")
pytestmark = pytest.mark.xdist_group("ray")  # one worker runs the Ray tests, one Ray at a time

KEY = "sk-ray-secret-4711"
_TCP_LISTEN, _UDP_BOUND = "0A", "07"  # socket states in /proc/net/tcp*, udp*


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat[stat.rindex(")") + 2:].split()[1]), []).append(int(entry))
    found, queue = [], [root]
    while queue:
        pid = queue.pop()
        found.append(pid)
        queue.extend(children.get(pid, []))
    return found


def _address(hex_address: str, v6: bool) -> str:
    raw = bytes.fromhex(hex_address)
    if v6:  # four host-order 32-bit words
        return str(ipaddress.IPv6Address(b"".join(raw[i:i + 4][::-1] for i in range(0, 16, 4))))
    return str(ipaddress.IPv4Address(raw[::-1]))


def _bound_sockets() -> dict[int, tuple[str, str, int]]:
    """inode → (protocol, address, port) of every listening TCP and bound UDP socket here."""
    table = {}
    for name, proto, state in (("tcp", "tcp", _TCP_LISTEN), ("tcp6", "tcp", _TCP_LISTEN),
                               ("udp", "udp", _UDP_BOUND), ("udp6", "udp", _UDP_BOUND)):
        for line in Path(f"/proc/net/{name}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == state:
                address, port = fields[1].split(":")
                table[int(fields[9])] = (proto, _address(address, name.endswith("6")), int(port, 16))
    return table


def listening(root: int) -> set[tuple[str, str, str, int]]:
    """(process name, protocol, address, port) of every socket the process tree of `root` listens on."""
    table, found = _bound_sockets(), set()
    for pid in _descendants(root):
        try:
            name = Path(f"/proc/{pid}/comm").read_text().strip()
            links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
        except OSError:
            continue
        for link in links:
            if link.startswith("socket:[") and int(link[8:-1]) in table:
                found.add((name, *table[int(link[8:-1])]))
    return found


def _is_loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    mapped = getattr(ip, "ipv4_mapped", None)
    return (mapped or ip).is_loopback


@pytest.mark.slow
def test_a_local_ray_started_by_the_executor_listens_on_loopback_only(tmp_path: Path) -> None:
    """`datasolver run --executor ray` with no cluster: every socket of every process it starts
    (GCS, raylet, agents, workers, the request-slots actor, the driver) is bound to loopback."""
    input_dir = copy_examples(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env["MODEL_API_KEY"] = KEY  # (not TMPDIR: Ray's socket paths under it must stay short)
    seen: set[tuple[str, str, str, int]] = set()
    with examples_server(face=ScriptedServer) as server:
        command = [sys.executable, "-m", "datasolver", "run", str(input_dir), str(tmp_path / "out"),
                   "--executor", "ray", "--workers", "1", "--ray-cpus", "1", "--no-doc-llm",
                   "--tasks", "task_demo_sales", "--api-url", server.base_url, "--model", "fake-model"]
        process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            while process.poll() is None:  # what it listens on while the task runs
                seen |= listening(process.pid)
                time.sleep(0.2)
            output = process.stdout.read().decode(errors="replace")
        finally:
            if process.poll() is None:
                process.kill()
            process.wait()
        records = server.records
    assert process.returncode == 0, output[-3000:]
    assert "solved 1" in output, output[-3000:]
    names = {name for name, *_ in seen}
    # Not vacuous: the cluster's own servers and a worker were caught listening.
    assert {"gcs_server", "raylet"} <= names, seen
    assert any(name.startswith("ray::") for name in names), seen
    exposed = sorted(s for s in seen if not _is_loopback(s[2]))
    assert exposed == [], f"listening beyond loopback: {exposed}"
    # The key reached the worker (through its environment) and was sent to the model.
    completions = [r for r in records if r.path.endswith("/chat/completions")]
    assert completions and {bearer_key(r.headers) for r in completions} == {KEY}


def test_the_key_travels_in_the_workers_environment_not_in_task_arguments(monkeypatch) -> None:
    settings = LLMSettings(base_url="https://user:pw-secret@models.example/v1", api_key=KEY, model="m")
    sent, env = split_secrets(settings)
    assert env == {"MODEL_API_KEY": KEY, "MODEL_API_URL": "https://user:pw-secret@models.example/v1"}
    import pickle

    shipped = pickle.dumps(sent)
    assert KEY.encode() not in shipped and b"pw-secret" not in shipped
    monkeypatch.setenv("MODEL_API_KEY", KEY)
    monkeypatch.setenv("MODEL_API_URL", "https://user:pw-secret@models.example/v1")
    assert worker_settings(sent) == settings  # the worker puts both back from its environment
    # A worker whose environment has another endpoint keeps the one it was sent.
    monkeypatch.setenv("MODEL_API_URL", "https://elsewhere.example/v1")
    assert worker_settings(sent).base_url == sent.base_url


def test_which_addresses_start_a_local_ray(monkeypatch) -> None:
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert starts_local_ray(None) and starts_local_ray("local")
    assert not starts_local_ray("auto") and not starts_local_ray("10.0.0.5:6379")
    monkeypatch.setenv("RAY_ADDRESS", "ray://head:10001")
    assert not starts_local_ray(None)
