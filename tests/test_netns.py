# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Attachments and network namespaces: pins keyed by namespace, `ip netns exec`, stale pins.

bpffs is one tree for the whole host while interface names repeat in every
namespace, and `ip netns exec` gives its command a /sys of its own: an
attachment must survive however the namespace was entered, or the command must
say it cannot; one namespace must never touch another's attachment.
"""
import json
import os
import signal
import subprocess
import time

import pytest

from conftest import ROCEVAL, host_root, pin_dir, refusal, run


def xdp_id(ns, ifname):
    out = subprocess.run(["ip", "-n", ns, "-j", "link", "show", ifname], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)[0].get("xdp", {}).get("prog", {}).get("id")


def ip_netns_exec(ns, *args, timeout=60):
    return subprocess.run(["ip", "netns", "exec", ns, str(ROCEVAL), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)


def mount_host_bpffs(netns):
    """The host's bpffs mounted, as roceval mounts it where nothing is: by an attach (and detach)
    from the host's mount namespace."""
    run("attach", netns.if_rx, "--mode", "generic", netns=netns.rx, check=True)
    run("detach", netns.if_rx, netns=netns.rx, check=True)
    assert os.path.ismount("/sys/fs/bpf")


def test_ip_netns_exec_attach_pins_in_the_host_bpffs(netns):
    mount_host_bpffs(netns)
    root = host_root()
    res = ip_netns_exec(netns.rx, "attach", netns.if_rx, "--mode", "generic")
    if root is None:
        # reading commands are as honest: no "not attached" when they cannot look
        assert (res.returncode, res.stdout, res.stderr) == (1, "", refusal(netns.rx))
        assert xdp_id(netns.rx, netns.if_rx) is None
        assert not pin_dir(netns.if_rx, netns.rx).exists()
        run("attach", netns.if_rx, "--mode", "generic", netns=netns.rx, check=True)
        res = ip_netns_exec(netns.rx, "status")
        assert (res.returncode, res.stdout, res.stderr) == (1, "", refusal(netns.rx))
        res = ip_netns_exec(netns.rx, "detach", netns.if_rx)
        assert (res.returncode, res.stderr) == (1, refusal(netns.rx))
        assert xdp_id(netns.rx, netns.if_rx) is not None
        run("detach", netns.if_rx, netns=netns.rx, check=True)
        return
    # judged from the host, after the command is gone: the program runs, the pins are there
    prog = xdp_id(netns.rx, netns.if_rx)
    assert res.stdout == (f"{netns.if_rx}: attached roceval (program {prog}, generic mode); pinned in "
                          f"{root}/sys/fs/bpf/roceval/{pin_dir(netns=netns.rx).name}/{netns.if_rx}\n"), res.stderr
    assert subprocess.run(["bpftool", "prog", "show", "id", str(prog)], capture_output=True).returncode == 0
    assert (pin_dir(netns.if_rx, netns.rx) / "counters").exists()
    st = json.loads(run("status", "--json", netns.if_rx, netns=netns.rx, check=True).stdout)[0]
    assert st["program_id"] == prog and st["stale"] is False
    # and the reading commands of another `ip netns exec` find it there
    st = json.loads(ip_netns_exec(netns.rx, "status", "--json", netns.if_rx).stdout)[0]
    assert st["program_id"] == prog
    res = ip_netns_exec(netns.rx, "detach", netns.if_rx)
    assert (res.returncode, res.stdout) == (0, f"{netns.if_rx}: detached roceval\n"), res.stderr
    assert xdp_id(netns.rx, netns.if_rx) is None


def test_ip_netns_exec_pins_in_the_host_bpffs_through_pid_1(netns):
    """Where pid 1's root is reachable (here: pid 1 of a pid namespace, in a copy of the host's
    mounts), `ip netns exec` pins in the bpffs it sees, which outlives the command."""
    res = subprocess.run(["unshare", "--pid", "--fork", "--mount", "--mount-proc", "sh", "-c",
                          f"ip netns exec {netns.rx} {ROCEVAL} attach {netns.if_rx} --mode generic; echo rc=$?"],
                         capture_output=True, text=True, timeout=60)
    prog = xdp_id(netns.rx, netns.if_rx)
    assert res.stdout == (f"{netns.if_rx}: attached roceval (program {prog}, generic mode); pinned in "
                          f"/proc/1/root/sys/fs/bpf/roceval/{pin_dir(netns=netns.rx).name}/{netns.if_rx}\n"
                          "rc=0\n"), res.stderr
    # from the host, after every process of that pid namespace is gone
    assert (pin_dir(netns.if_rx, netns.rx) / "counters").exists()
    st = json.loads(run("status", "--json", netns.if_rx, netns=netns.rx, check=True).stdout)[0]
    assert st["program_id"] == prog and st["stale"] is False
    run("detach", netns.if_rx, netns=netns.rx, check=True)
    assert xdp_id(netns.rx, netns.if_rx) is None


def test_a_container_without_the_host_bpffs_refuses(netns):
    """pid 1 of its own pid and mount namespaces, no bpffs: mounting one would be the container's."""
    res = subprocess.run(["unshare", "--pid", "--fork", "--mount", "--mount-proc", "ip", "netns", "exec",
                          netns.rx, str(ROCEVAL), "attach", netns.if_rx],
                         capture_output=True, text=True, timeout=60)
    assert (res.returncode, res.stdout, res.stderr) == (1, "", refusal(netns.rx))
    assert xdp_id(netns.rx, netns.if_rx) is None


def test_ip_netns_exec_daemon_pins_in_the_host_bpffs(netns):
    mount_host_bpffs(netns)
    proc = subprocess.Popen(["ip", "netns", "exec", netns.rx, str(ROCEVAL), "daemon", "--interface",
                             netns.if_rx, "--listen", "none", "--interval", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while proc.poll() is None and xdp_id(netns.rx, netns.if_rx) is None and time.monotonic() < deadline:
            time.sleep(0.1)
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
        for lock in os.listdir("/run/roceval") if os.path.isdir("/run/roceval") else []:
            if lock.endswith(f"-{netns.if_rx}.lock"):
                os.unlink(f"/run/roceval/{lock}")
    if host_root() is None:
        assert (proc.returncode, err) == (1, refusal(netns.rx))
        assert xdp_id(netns.rx, netns.if_rx) is None
        return
    # what it said must be true once it is gone
    assert "left attached; counters stay pinned" in err
    assert xdp_id(netns.rx, netns.if_rx) is not None
    assert (pin_dir(netns.if_rx, netns.rx) / "counters").exists()
    run("detach", netns.if_rx, netns=netns.rx, check=True)


@pytest.fixture
def twins(netns):
    """An interface of the same name in both namespaces (each a veth with a peer of its own)."""
    name = "uxt" + netns.if_rx[-6:]
    for ns in (netns.tx, netns.rx):
        netns.ip("link", "add", name, "type", "veth", "peer", "name", name + "p", netns=ns)
        netns.ip("link", "set", name, "up", netns=ns)
    return name


def test_same_interface_name_in_two_namespaces(netns, twins):
    run("attach", twins, "--mode", "generic", netns=netns.tx, check=True)
    prog_tx = xdp_id(netns.tx, twins)
    run("attach", twins, "--mode", "generic", netns=netns.rx, check=True)
    prog_rx = xdp_id(netns.rx, twins)
    # attaching in one namespace left the other's attachment alone
    assert None not in (prog_tx, prog_rx) and prog_tx != prog_rx
    assert xdp_id(netns.tx, twins) == prog_tx
    assert pin_dir(twins, netns.tx) != pin_dir(twins, netns.rx)
    for ns, prog in ((netns.tx, prog_tx), (netns.rx, prog_rx)):
        st = json.loads(run("status", "--json", netns=ns, check=True).stdout)
        assert [(s["interface"], s["program_id"], s["this_netns"]) for s in st] == [(twins, prog, True)]

    # the host has no such interface: nothing to detach, and nobody else's attachment is touched
    res = run("detach", twins)
    assert (res.returncode, res.stdout, res.stderr) == (
        1, "", f"roceval: {twins}: no such interface, and roceval has no pins for one in this network "
               "namespace\n")
    assert (xdp_id(netns.tx, twins), xdp_id(netns.rx, twins)) == (prog_tx, prog_rx)

    # --all lists both, each marked with its namespace
    st = [s for s in json.loads(run("status", "--all", "--json", check=True).stdout)
          if s["interface"] == twins]
    assert sorted((s["netns_name"], s["program_id"], s["this_netns"]) for s in st) == sorted(
        [(netns.tx, prog_tx, False), (netns.rx, prog_rx, False)])
    text = run("status", "--all", check=True).stdout
    assert f"netns        {pin_dir(netns=netns.rx).name} ({netns.rx})" in text

    # --netns names another namespace explicitly
    run("--netns", netns.tx, "detach", twins, check=True)
    assert (xdp_id(netns.tx, twins), xdp_id(netns.rx, twins)) == (None, prog_rx)
    assert not pin_dir(twins, netns.tx).exists() and pin_dir(twins, netns.rx).exists()
    run("detach", twins, netns=netns.rx, check=True)


def test_stale_attachments_are_listed_and_reclaimed(netns, twins):
    for ns in (netns.tx, netns.rx):
        run("attach", twins, "--mode", "generic", netns=ns, check=True)
    run("attach", netns.if_rx, "--mode", "generic", netns=netns.rx, check=True)
    for ns in (netns.tx, netns.rx):
        netns.ip("link", "del", twins, netns=ns)

    # plain status lists the stale attachment, marked, next to the live one
    st = json.loads(run("status", "--json", netns=netns.rx, check=True).stdout)
    assert sorted((s["interface"], s["stale"]) for s in st) == sorted([(twins, True), (netns.if_rx, False)])
    text = run("status", netns=netns.rx, check=True).stdout
    assert f"STALE: the interface it was attached to is gone; 'roceval detach {twins}' removes the pins" in text
    # ... but stats and top without an interface serve only what runs
    assert [json.loads(line)["interface"] for line in
            run("stats", "--json", netns=netns.rx, check=True).stdout.splitlines()] == [netns.if_rx]

    # this namespace's only
    res = run("detach", "--stale", netns=netns.rx, check=True)
    assert res.stdout == f"{twins}: removed the pins of a stale attachment ({pin_dir(netns=netns.rx).name})\n"
    assert not pin_dir(twins, netns.rx).exists() and pin_dir(twins, netns.tx).exists()
    assert xdp_id(netns.rx, netns.if_rx) is not None
    assert run("detach", "--stale", netns=netns.rx, check=True).stdout == \
        "no stale attachment in this network namespace\n"

    # another namespace's stale attachment shows in --all, and --stale --all reclaims it
    st = [s for s in json.loads(run("status", "--all", "--json", check=True).stdout)
          if s["netns_name"] == netns.tx]
    assert [(s["interface"], s["stale"]) for s in st] == [(twins, True)]
    res = run("detach", "--stale", "--all", check=True)
    assert f"{twins}: removed the pins of a stale attachment ({pin_dir(netns=netns.tx).name})\n" in res.stdout
    assert not pin_dir(twins, netns.tx).exists()
    assert pin_dir(netns.if_rx, netns.rx).exists()
    run("detach", netns.if_rx, netns=netns.rx, check=True)


@pytest.mark.parametrize("args, msg", [
    (["detach"], "an interface is required"),
    (["detach", "eth0", "--stale"], "an interface or --stale, not both"),
    (["detach", "eth0", "--all"], "--all goes with --stale"),
    (["status", "eth0", "--all"], "an interface or --all, not both"),
])
def test_usage_errors(args, msg):
    res = run(*args)
    assert (res.returncode, res.stderr) == (2, f"roceval {args[0]}: {msg}; see 'roceval help {args[0]}'\n")


def test_netns_flag_errors():
    res = run("--netns", "rvnosuchns", "status")
    assert (res.returncode, res.stderr) == (
        2, "roceval: --netns rvnosuchns: Couldn't open /run/netns/rvnosuchns: No such file or directory\n")
