"""Run a command in the solver sandbox: own process group, wall-clock kill, rlimits, Landlock,
scrubbed environment, no network. What it does and does not guarantee: docs/sandbox.md.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Mapping

from datasolver.solver import sandbox_launch
from datasolver.solver.errors import SandboxError

GiB = 1 << 30
OUTPUT_TAIL_BYTES = 64 * 1024

# Variables passed through (after the secret filter); everything else is dropped.
_ENV_ALLOWED = re.compile(r"^(PATH|LANG|LANGUAGE|LC_[A-Z_]+|TZ|TERM|PYTHONPATH|PYTHONHASHSEED|VIRTUAL_ENV)$")
# Names that look like credentials are never passed, even when a caller asks for them.
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE|CERT", re.IGNORECASE)


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits and isolation switches for one sandboxed run."""

    timeout_s: float = 120.0
    memory_bytes: int | None = 8 * GiB  # RLIMIT_AS: address space, not resident memory
    cpu_seconds: int | None = None  # None: timeout × min(cpus, 8) + 10, a backstop only
    file_size_bytes: int | None = 2 * GiB  # RLIMIT_FSIZE: largest single file written
    max_processes: int | None = None  # RLIMIT_NPROC counts all of the user's tasks; off by default
    landlock: Literal["required", "best_effort", "off"] = "best_effort"
    isolate_network: bool = True  # `unshare --user --net` when it works here

    def resolved_cpu_seconds(self) -> int | None:
        if self.cpu_seconds is not None:
            return self.cpu_seconds
        return int(self.timeout_s * min(os.cpu_count() or 1, 8)) + 10


@dataclass
class SandboxRun:
    """Outcome of one sandboxed run: exit status, captured output tails and the guards in force."""

    returncode: int | None
    timed_out: bool
    duration_s: float
    stdout: str
    stderr: str
    guards: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def signal_name(self) -> str | None:
        """Name of the signal that ended the process (SIGKILL, SIGXCPU…), if any."""
        if self.returncode is not None and self.returncode < 0:
            try:
                return signal.Signals(-self.returncode).name
            except ValueError:
                return f"signal {-self.returncode}"
        return None


def landlock_abi() -> int:
    """Landlock ABI of this kernel (0: unavailable); file-system confinement needs >= 1."""
    return sandbox_launch.landlock_abi()


@functools.cache
def network_isolation_available() -> bool:
    """Whether `unshare --user --map-root-user --net` works here (probed once per process)."""
    exe = shutil.which("unshare")
    if not exe or sys.platform != "linux":
        return False
    try:
        probe = subprocess.run([exe, "--user", "--map-root-user", "--net", "true"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


def scrub_env(
    environ: Mapping[str, str], *, extra: Mapping[str, str] | None = None, home: Path | None = None
) -> tuple[dict[str, str], list[str]]:
    """An allow-listed environment with every key/token-like name removed.

    Returns the environment and the names of requested extras that were refused.
    """
    env = {k: v for k, v in environ.items() if _ENV_ALLOWED.match(k) and not SECRET_NAME.search(k)}
    refused = []
    for key, value in (extra or {}).items():
        if SECRET_NAME.search(key):
            refused.append(key)
        else:
            env[key] = value
    if home is not None:
        # Caches that libraries write under $HOME or $TMPDIR land in the writable scratch.
        for key in ("HOME", "TMPDIR", "TMP", "TEMP"):
            env[key] = str(home)
    env.setdefault("PATH", os.defpath)
    return env, refused


def run_sandboxed(
    argv: list[str],
    *,
    cwd: Path,
    write_dirs: list[Path],
    log_dir: Path,
    limits: SandboxLimits = SandboxLimits(),
    env: Mapping[str, str] | None = None,
    extra_env: Mapping[str, str] | None = None,
) -> SandboxRun:
    """Run `argv` confined to writing beneath `write_dirs`; output goes to files in `log_dir`.

    `env` defaults to os.environ and is always scrubbed; HOME/TMPDIR point at `log_dir`.
    Raises SandboxError only when the sandbox itself cannot be set up.
    """
    log_dir = Path(log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    for d in write_dirs:
        if not Path(d).is_dir():
            raise SandboxError(f"writable folder {d} does not exist")
    run_env, refused = scrub_env(os.environ if env is None else env, extra=extra_env, home=log_dir)
    notes = [f"refused secret-like variable {name}" for name in refused]
    run_env.setdefault("PYTHONIOENCODING", "utf-8")
    run_env["PYTHONUNBUFFERED"] = "1"  # output survives a kill
    run_env["PYTHONDONTWRITEBYTECODE"] = "1"

    status_file = log_dir / "sandbox.json"
    status_file.unlink(missing_ok=True)
    config = {
        "write_dirs": [str(Path(d).resolve()) for d in write_dirs],
        "write_files": [p for p in ("/dev/null",) if os.path.exists(p)],
        "landlock": limits.landlock,
        "status_file": str(status_file),
        "limits": {
            "memory_bytes": limits.memory_bytes,
            "cpu_seconds": limits.resolved_cpu_seconds(),
            "file_size_bytes": limits.file_size_bytes,
            "max_processes": limits.max_processes,
        },
    }
    command = [sys.executable, "-S", "-E", sandbox_launch.__file__, json.dumps(config), "--", *argv]
    net_isolated = limits.isolate_network and network_isolation_available()
    if net_isolated:
        command = [shutil.which("unshare") or "unshare", "--user", "--map-root-user", "--net", "--", *command]
    elif limits.isolate_network:
        notes.append("network namespace unavailable: only TCP is blocked (by Landlock, when present)")

    out_path, err_path = log_dir / "run.stdout", log_dir / "run.stderr"
    started = time.monotonic()
    timed_out = False
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        try:
            proc = subprocess.Popen(
                command, cwd=cwd, env=run_env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                start_new_session=True,  # own process group: one killpg ends every descendant
            )
        except OSError as exc:
            raise SandboxError(f"cannot start sandboxed process: {exc}") from exc
        try:
            proc.wait(timeout=limits.timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc.pid)
            proc.wait()
        # Whatever the solver left running in the background goes too.
        _kill_group(proc.pid)
    duration = time.monotonic() - started

    guards = _read_status(status_file)
    guards["network_namespace"] = net_isolated
    if not guards.get("writes_confined"):
        why = "switched off" if limits.landlock == "off" else guards.get("landlock_error", "unknown reason")
        notes.append(f"Landlock not applied ({why}): writes not confined to the task scratch folder")
    return SandboxRun(
        returncode=None if timed_out else proc.returncode,
        timed_out=timed_out,
        duration_s=duration,
        stdout=_tail(out_path),
        stderr=_tail(err_path),
        guards=guards,
        notes=notes,
    )


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _read_status(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"writes_confined": False, "landlock_error": "the launcher did not report (it failed before exec)"}


def _tail(path: Path, limit: int = OUTPUT_TAIL_BYTES) -> str:
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        size = fh.tell()
        fh.seek(max(0, size - limit))
        data = fh.read()
    text = data.decode("utf-8", errors="replace")
    return text if size <= limit else "…" + text
