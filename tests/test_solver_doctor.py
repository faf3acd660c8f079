"""`datasolver doctor`: one line per protection, consistent with the kernel features probed."""

from __future__ import annotations

from click.testing import CliRunner

from datasolver.cli import cli
from datasolver.sandbox.run import kernel_features


def test_doctor_reports_each_protection_as_the_kernel_allows() -> None:
    result = CliRunner().invoke(cli, ["doctor"])
    lines = {line[5:].split("  ")[0].strip(): line[:3].strip() for line in result.output.splitlines()}
    features = kernel_features()
    expected = {
        "writes confined to the scratch folder": features["landlock_abi"] >= 1,
        "reads confined to the allow-list": features["landlock_abi"] >= 1,
        "signals and abstract unix sockets scoped": features["landlock_abi"] >= 6,
        "sockets only of the allowed families": bool(features.get("seccomp")),
        "kernel keyrings refused": bool(features.get("seccomp")),
        "SysV IPC and POSIX message queues of other processes hidden": bool(features.get("namespaces")),
        "host name hidden": bool(features.get("namespaces")),
        "every descendant dies with the run": bool(features.get("namespaces")),
        "UDP and all other network": bool(features.get("namespaces")),
        "process count bounded for the tree": bool(features.get("namespaces")),
    }
    for name, active in expected.items():
        assert lines[name] == ("yes" if active else "NO"), (name, result.output)
    assert lines["sandbox starts"] == "yes"
    assert result.exit_code == (0 if features["landlock_abi"] >= 1 else 1), result.output
