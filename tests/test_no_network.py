import socket

import pytest

pytestmark = pytest.mark.fast  # in-process: no server, CLI subprocess or wheel build


def test_tests_cannot_reach_beyond_loopback():
    # 0.0.0.0 is not a loopback address to the guard, yet Linux would route it to this machine,
    # so even a broken guard sends nothing off the machine.
    with pytest.raises(OSError, match="may not reach the network"):
        socket.create_connection(("0.0.0.0", 9), timeout=0.5)
