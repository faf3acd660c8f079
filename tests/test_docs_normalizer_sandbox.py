"""The model-written normalizer runs in the sandbox room, with solver.py's guarantees: it cannot
read a file outside its folder, write outside it, reach the network or a unix socket outside, and
its output is read back without following a link. Before, it ran under Popen + rlimits only."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest

from datasolver.documents.errors import NormalizerFailed
from datasolver.documents.structurize.normalize import run_normalizer
from datasolver.sandbox.run import kernel_features, landlock_abi

pytestmark = pytest.mark.skipif(landlock_abi() < 1, reason="reads are confined only with Landlock")

HOSTILE = '''
import socket

def normalize(value):
    try:
        if value == "read":
            with open({secret!r}) as fh:
                return "READ " + fh.read()
        if value == "write":
            with open({outside!r}, "w") as fh:
                fh.write("written")
            return "WROTE"
        if value == "tcp":
            with socket.create_connection(("127.0.0.1", {port}), timeout=3):
                return "CONNECTED"
        if value == "unix":
            with socket.socket(socket.AF_UNIX) as s:
                s.connect({unix!r})
                return "CONNECTED"
    except OSError as exc:
        return type(exc).__name__
    return value
'''


@pytest.fixture
def listeners(tmp_path: Path):
    """A TCP listener on loopback and a unix socket outside the sandbox; each counts who connects."""
    tcp = socket.create_server(("127.0.0.1", 0))
    unix = socket.socket(socket.AF_UNIX)
    unix_path = tmp_path / "outside.sock"
    unix.bind(str(unix_path))
    unix.listen()
    accepted: list[str] = []

    def serve(sock: socket.socket, name: str) -> None:
        try:
            conn, _ = sock.accept()
            accepted.append(name)
            conn.close()
        except OSError:
            pass

    threads = [threading.Thread(target=serve, args=(s, n), daemon=True) for s, n in ((tcp, "tcp"), (unix, "unix"))]
    for thread in threads:
        thread.start()
    yield tcp.getsockname()[1], unix_path, accepted
    tcp.close()
    unix.close()


def test_a_hostile_normalizer_reads_writes_and_connects_nothing_outside(tmp_path: Path, listeners) -> None:
    port, unix_path, accepted = listeners
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    outside = tmp_path / "written.txt"
    code = HOSTILE.format(secret=str(secret), outside=str(outside), port=port, unix=str(unix_path))
    mapping, failed = run_normalizer(code, ["read", "write", "tcp", "unix", "12"], timeout_s=20)
    assert failed == {}
    assert mapping["read"] == "PermissionError"
    assert mapping["write"] == "PermissionError" and not outside.exists()
    features = kernel_features()
    if features.get("namespaces") or features.get("landlock_abi", 0) >= 4:
        assert mapping["tcp"] != "CONNECTED"
    if features.get("seccomp"):
        assert mapping["unix"] == "PermissionError"
    assert mapping["12"] == "12"
    assert accepted == []


def test_a_normalizer_that_swaps_its_output_for_a_link_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text('{"map": {"a": "SECRET"}, "failed": {}}')
    # Every value maps; then, at exit, the map file becomes a link to a file the parent can read.
    code = (f"import atexit, os\n"
            f"atexit.register(lambda: (os.unlink('out.json'), os.symlink({str(secret)!r}, 'out.json')))\n"
            "def normalize(value):\n    return value\n")
    with pytest.raises(NormalizerFailed, match="unreadable: .*symlink"):
        run_normalizer(code, ["a"], timeout_s=20)


def test_a_normalizer_that_eats_memory_is_stopped() -> None:
    code = "def normalize(value):\n    blocks = []\n    while True:\n        blocks.append(bytearray(1 << 24))\n"
    mapping, failed = run_normalizer(code, ["x"], timeout_s=20)
    assert mapping == {} and "MemoryError" in failed["x"]


def test_a_normalizer_that_stops_its_own_clock_is_killed_by_the_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    from datasolver.documents.structurize import normalize

    monkeypatch.setattr(normalize, "START_GRACE_S", 1.0)
    code = ("import signal, time\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
            "def normalize(value):\n    while True:\n        time.sleep(0.05)\n")
    with pytest.raises(NormalizerFailed, match="did not finish within 1s"):
        run_normalizer(code, ["x"], timeout_s=1.0)
