# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""A host nobody prepared: nothing mounted on /sys/fs/bpf, as a freshly booted machine has it.

roceval mounts bpffs itself where the mount outlives it (the host's mount namespace), as
iproute2 and bpftool do, and refuses in one line where it would not; the suite never mounts it
for the product.  These tests take the host's bpffs away for their length and put it back,
pins and all, however they end.
"""
import json
import os
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import ROCEVAL, ROOT, host_root, pin_dir, refusal, run

BPFFS = "/sys/fs/bpf"
# the host's bpffs goes away meanwhile, and the demo's test counts every namespace on the host
pytestmark = pytest.mark.alone


def xdp_id(ns, ifname):
    out = subprocess.run(["ip", "-n", ns, "-j", "link", "show", ifname], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)[0].get("xdp", {}).get("prog", {}).get("id")


@pytest.fixture
def fresh_host():
    """Nothing mounted on /sys/fs/bpf.  A bpffs that was there is held on a bind mount of its own
    meanwhile (the same instance, so its pins live on) and put back afterwards; one the test
    mounted goes."""
    held = None
    if os.path.ismount(BPFFS):
        held = Path(tempfile.mkdtemp(prefix="roceval-bpffs-held-"))
        subprocess.run(["mount", "--bind", BPFFS, str(held)], check=True)
        subprocess.run(["umount", BPFFS], check=True)
    try:
        assert not os.path.ismount(BPFFS)
        yield
    finally:
        while os.path.ismount(BPFFS):
            subprocess.run(["umount", BPFFS], check=True)
        if held:
            subprocess.run(["mount", "--bind", str(held), BPFFS], check=True)
            subprocess.run(["umount", str(held)], check=True)
            held.rmdir()


def test_attach_mounts_bpffs_where_nothing_is(netns, fresh_host):
    # a reading command finds nothing and mounts nothing
    res = run("status", netns=netns.rx)
    assert (res.returncode, res.stdout, res.stderr) == \
        (0, "roceval is not attached to any interface in this network namespace\n", "")
    assert not os.path.ismount(BPFFS)

    res = run("attach", netns.if_rx, "--mode", "generic", netns=netns.rx)
    prog = xdp_id(netns.rx, netns.if_rx)
    assert (res.returncode, res.stdout, res.stderr) == (
        0, f"{netns.if_rx}: attached roceval (program {prog}, generic mode); pinned in "
           f"{pin_dir(netns.if_rx, netns.rx)}\n", "")
    assert os.path.ismount(BPFFS)
    assert stat.S_IMODE(os.stat(BPFFS).st_mode) & 0o777 == 0o700
    assert (pin_dir(netns.if_rx, netns.rx) / "counters").exists()
    st = json.loads(run("status", "--json", netns=netns.rx, check=True).stdout)
    assert [(s["interface"], s["program_id"]) for s in st] == [(netns.if_rx, prog)]
    run("detach", netns.if_rx, netns=netns.rx, check=True)
    assert xdp_id(netns.rx, netns.if_rx) is None


def test_ip_netns_exec_on_a_fresh_host_refuses(netns, fresh_host):
    """`ip netns exec` has a private /sys; the host has no bpffs for it to use, and a private mount
    would vanish with the command: it refuses, saying why, and mounts nothing."""
    why = "not mounted" if host_root() else "out of reach"
    res = subprocess.run(["ip", "netns", "exec", netns.rx, str(ROCEVAL), "attach", netns.if_rx, "--mode",
                          "generic"], capture_output=True, text=True, timeout=60)
    assert (res.returncode, res.stdout, res.stderr) == (1, "", refusal(netns.rx, why))
    assert xdp_id(netns.rx, netns.if_rx) is None
    assert not os.path.ismount(BPFFS)


def test_demo_on_a_fresh_host(fresh_host):
    """The README's first command, on a host where nothing mounted bpffs."""
    before = set(os.listdir("/run/netns")) if os.path.isdir("/run/netns") else set()
    res = subprocess.run(["bash", str(ROOT / "demo" / "demo.sh")], capture_output=True, text=True,
                         timeout=300, env=dict(os.environ, ROCEVAL=str(ROCEVAL)))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "AGREEMENT: all " in res.stdout and "roceval caught every injected fault" in res.stdout
    assert os.path.ismount(BPFFS)
    after = set(os.listdir("/run/netns")) if os.path.isdir("/run/netns") else set()
    assert after <= before
