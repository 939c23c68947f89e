# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Congestion and QoS on a live interface: one case of each judgement through a real veth, timed by
the kernel's clock, with the real binary attached (native XDP, and tc, where the stack has taken the
VLAN tag out of the frame), then what stats, status and top show of it; and the priority of a tag
that reached the driver beside the frame, as from a NIC that strips tags."""
import json
import os
import subprocess
import sysconfig
import time

import pytest

import roce
from conftest import nonzero_rules, run
from test_congestion import CE, NOT_ECT, cnp, data
# the daemon's fixtures and helpers (daemons is a fixture: imported, pytest finds it here)
from test_daemon import daemons, get, send, start, write_conf  # noqa: F401

# Sends the frames of a pcap out of an interface, pausing after frame i for the i-th of the pauses.
SEND_PACED = r"""
import socket, struct, sys, time
ifname, path, pauses = sys.argv[1], sys.argv[2], [float(x) for x in sys.argv[3].split(",")]
data = open(path, "rb").read()
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((ifname, 0))
off, i = 24, 0
while off < len(data):
    caplen = struct.unpack("<I", data[off + 8:off + 12])[0]
    s.send(data[off + 16:off + 16 + caplen])
    off += 16 + caplen
    time.sleep(pauses[i])
    i += 1
"""

SETTINGS = ("dscp=26", "cnp_dscp=48", "pcp=3", "ect=required", "cnp_gap=20ms", "cnp_delay=100ms",
            "link_speed=100000")


def sequence():
    """(frame, seconds to wait after it): one case of each judgement.  CNPs come from B to A, CE-marked
    requests from A to B; nothing pairs them by QP, so they are matched by IP pair."""
    return [
        (data(0x501, vlans=(9,), prios=(3,)), 0),  # in class: nothing
        (data(0x502, vlans=(9,), prios=(0,)), 0),  # pcp
        (data(0x503, dscp=0), 0),  # dscp
        (data(0x504, ecn=NOT_ECT), 0),  # not_ect
        (data(0x505, 1, ecn=CE), 0),  # CE-marked, answered at once...
        (cnp(0x602), 0.3),  # ...by the next CNP from B to A
        (cnp(0x601, dscp=0), 0),  # cnp_dscp
        (cnp(0x601), 0.3),  # right after the last one to the same QP: cnp_gap
        (data(0x505, 2, ecn=CE), 0.3),  # past the window the last CNP covers: waits
        (data(0x505, 3, ecn=CE), 0),  # 0.3 s on, none came: ce_unanswered; none comes for it either: the sweep
        # counts it once cnp_delay has passed
        (roce.pfc({3: 1000}), 0), (roce.pfc({3: 0}), 0), (roce.pfc({5: 50}), 0),
    ]


# For the sending end's tc egress: the frame's outer VLAN tag moved out of its bytes into the socket
# buffer, which veth hands the receiving end beside the frame, as a NIC that strips tags hands its
# driver the tag it took out.  The receiving end's XDP then sees an untagged frame.
UNTAG = r"""
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

SEC("tc")
int untag(struct __sk_buff *skb)
{
	__u16 h[2];

	if (skb->vlan_present || bpf_skb_load_bytes(skb, 12, h, sizeof(h)) || h[0] != bpf_htons(0x8100))
		return TC_ACT_OK;
	if (!bpf_skb_vlan_pop(skb))
		bpf_skb_vlan_push(skb, bpf_htons(0x8100), bpf_ntohs(h[1]));
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
"""


def strip_tags(ns, tmp_path):
    """What ns's sending end sends reaches the receiving end with its outer tag beside the frame."""
    src, obj = tmp_path / "untag.bpf.c", tmp_path / "untag.bpf.o"
    src.write_text(UNTAG)
    subprocess.run(["clang", "-O2", "-g", "-target", "bpf", f"-I/usr/include/{sysconfig.get_config_var('MULTIARCH')}",
                    "-c", str(src), "-o", str(obj)], check=True)
    ns.ip("netns", "exec", ns.tx, "tc", "qdisc", "add", "dev", ns.if_tx, "clsact")
    ns.ip("netns", "exec", ns.tx, "tc", "filter", "add", "dev", ns.if_tx, "egress", "bpf", "da", "obj", str(obj),
          "sec", "tc")


def rx_vlan_kfunc():
    """Whether this kernel gives XDP a stripped tag (bpf_xdp_metadata_rx_vlan_tag, 6.8+)."""
    out = subprocess.run(["bpftool", "btf", "dump", "file", "/sys/kernel/btf/vmlinux"], check=True,
                         capture_output=True, text=True).stdout
    return "'bpf_xdp_metadata_rx_vlan_tag'" in out


def send_paced(ns, tmp_path, seq):
    pcap = roce.write_pcap(tmp_path / "paced.pcap", [f for f, _ in seq])
    subprocess.run(["nsenter", f"--net=/run/netns/{ns.tx}", "taskset", "-c", "0", "/usr/bin/python3", "-c",
                    SEND_PACED, ns.if_tx, str(pcap), ",".join(str(p) for _, p in seq)], check=True, timeout=60)


def stats(ns):
    return json.loads(run("stats", ns.if_rx, "--json", netns=ns.rx, check=True).stdout)


@pytest.mark.parametrize("mode", ["native", "tc"])
def test_live_congestion_and_qos(netns, tmp_path, mode):
    seq = sequence()
    run("attach", netns.if_rx, "--mode", mode, *SETTINGS, netns=netns.rx, check=True)
    try:
        send_paced(netns, tmp_path, seq)
        deadline = time.monotonic() + 10
        while (st := stats(netns))["roce"] < 10 or st["pfc_frames"] < 3 or st["rules"]["ce_unanswered"] < 2:
            assert time.monotonic() < deadline, st
            time.sleep(0.2)
        status = json.loads(run("status", netns.if_rx, "--json", netns=netns.rx, check=True).stdout)[0]
        top = run("top", netns.if_rx, "-n", "1", netns=netns.rx, check=True).stdout
    finally:
        run("detach", netns.if_rx, netns=netns.rx)
    assert st["roce"] == 10
    assert nonzero_rules(st) == {"pcp": 1, "dscp": 1, "not_ect": 1, "cnp_dscp": 1, "cnp_gap": 1, "cnp": 3,
                                 "ecn_ce": 3, "ce_unanswered": 2}
    assert st["latency"]["ce_cnp"]["count"] == 1
    # the answer is the CNP sent right after the CE frame, not one 0.3 s on (a bucket of 2^29 ns or
    # more): a loaded machine may hold the sender for milliseconds between the two, never 134
    assert st["latency"]["ce_cnp"]["p99_ns"] <= 1 << 27
    assert (st["pfc_frames"], st["mac_control_other"], st["mac_control_malformed"]) == (3, 0, 0)
    paused = {p["priority"]: (p["frames"], p["xoff"], p["xon"], p["quanta"], p["pause_ns"])
              for p in st["pfc"] if p["frames"]}
    assert paused == {3: (2, 1, 1, 1000, 5120), 5: (1, 1, 0, 50, 256)}
    assert {k: status["settings"][k] for k in ("cnp_gap", "cnp_delay", "cnp_reaction", "dscp", "ect")} == \
        {"cnp_gap": "20ms", "cnp_delay": "100ms", "cnp_reaction": "0", "dscp": "26", "ect": "required"}
    assert "  congestion: cnp 3, ecn_ce 3, ce_unanswered 2, cnp_gap 1, pfc frames 3\n" in top
    assert "  pfc priority 3: 2 frames, 1 xoff, 1 xon, 1000 quanta (5.1 us paused at 100000 Mb/s)\n" in top
    assert "  ce_cnp latency: 1 answers, p50 <= " in top


@pytest.mark.parametrize("mode", ["native", "generic", "tc"])
def test_live_pcp_of_a_stripped_tag(netns, tmp_path, mode):
    """Tags the sender moved beside the frame: native XDP reads them from the driver (the XDP RX
    metadata kfunc, bound to the device), tc from the socket buffer; generic XDP has no way to them
    and judges only tags in the frame, of which these frames have none but the last's inner one."""
    strip_tags(netns, tmp_path)
    seq = [(data(0x501, vlans=(9,), prios=(3,)), 0),  # in class
           (data(0x502, vlans=(9,), prios=(0,)), 0),  # pcp
           (cnp(0x601, vlans=(9,), prios=(6,)), 0),  # in class
           (cnp(0x602, vlans=(9,), prios=(1,)), 0),  # cnp_pcp
           (data(0x503), 0),  # untagged: not judged
           # two tags: the outer beside the frame, the inner (in class) in it
           (data(0x504, vlans=(9, 10), prios=(5, 3)), 0)]
    run("attach", netns.if_rx, "--mode", mode, "pcp=3", "cnp_pcp=6", netns=netns.rx, check=True)
    try:
        send_paced(netns, tmp_path, seq)
        deadline = time.monotonic() + 10
        while (st := stats(netns))["roce"] < len(seq):
            assert time.monotonic() < deadline, st
            time.sleep(0.2)
        status = json.loads(run("status", netns.if_rx, "--json", netns=netns.rx, check=True).stdout)[0]
        text = run("status", netns.if_rx, netns=netns.rx, check=True).stdout
    finally:
        run("detach", netns.if_rx, netns=netns.rx)
    source = {"native": "rx_metadata" if rx_vlan_kfunc() else "frame_tag", "generic": "frame_tag",
              "tc": "skb_tag"}[mode]
    assert st["roce"] == len(seq)
    if source == "frame_tag":
        assert nonzero_rules(st) == {"cnp": 2}
    else:
        assert nonzero_rules(st) == {"pcp": 2, "cnp_pcp": 1, "cnp": 2}
    assert (status["mode"], status["pcp_source"]) == (mode, source)
    assert "\n  pcp          " + {"rx_metadata": "rx metadata", "frame_tag": "frame tag",
                                  "skb_tag": "skb tag"}[source] in text


@pytest.mark.parametrize("mode", ["native", "tc"])
def test_live_a_quiet_flow_is_judged_by_the_sweep(netns, tmp_path, mode):
    """A CE-marked request, then nothing more on its QPs nor between its hosts: no frame judges it, the
    timer that sweeps the reorder windows does once cnp_delay has passed.  A mark from another host its
    CNP answers at once owes nothing."""
    other = "192.0.2.5"
    seq = [(data(0x530, 1, ecn=CE), 0), (data(0x531, 1, ecn=CE, src=other), 0), (cnp(0x631, dst=other), 0)]
    run("attach", netns.if_rx, "--mode", mode, "cnp_delay=100ms", netns=netns.rx, check=True)
    try:
        send_paced(netns, tmp_path, seq)
        start = time.monotonic()
        while (st := stats(netns))["rules"]["ce_unanswered"] < 1:
            assert time.monotonic() - start < 10, st
            time.sleep(0.05)
        # the sweep passes every 10 ms: a second pass must not count it again
        time.sleep(0.5)
        st = stats(netns)
    finally:
        run("detach", netns.if_rx, netns=netns.rx)
    assert nonzero_rules(st) == {"ecn_ce": 2, "cnp": 1, "ce_unanswered": 1}
    assert st["latency"]["ce_cnp"]["count"] == 1


def test_live_settings_change_without_a_reload(netns, tmp_path):
    """config turns a judgement on for the running program: the same frame, counted only after."""
    run("attach", netns.if_rx, netns=netns.rx, check=True)
    try:
        frame = [(data(0x510, dscp=0), 0)]
        send_paced(netns, tmp_path, frame)
        run("config", netns.if_rx, "dscp=26", netns=netns.rx, check=True)
        send_paced(netns, tmp_path, frame)
        deadline = time.monotonic() + 10
        while (st := stats(netns))["roce"] < 2:
            assert time.monotonic() < deadline, st
            time.sleep(0.2)
        bad = run("config", netns.if_rx, "cnp_gap=4ns", netns=netns.rx)
    finally:
        run("detach", netns.if_rx, netns=netns.rx)
    assert st["rules"]["dscp"] == 1
    assert bad.returncode == 2 and bad.stderr.startswith("roceval config: cnp_gap=4ns: expected whole microseconds")


def test_congestion_metrics_from_the_daemon(netns, daemons, tmp_path):
    """PFC per priority (frames by kind, quanta, seconds at the link_speed the file sets), the ce_cnp
    latency and the cnp_reaction histogram, as Prometheus reads them."""
    frames = [roce.pfc({3: 1000}), roce.pfc({3: 0}), roce.pfc({5: 50}), data(0x520, 1, ecn=CE), cnp(0x620)]
    pcap = roce.write_pcap(tmp_path / "cc.pcap", frames)
    port = 9435 + os.getpid() % 1000
    start(daemons, netns, write_conf(tmp_path / "a.conf", netns, port, "link_speed = 100000", "cnp_delay = 100ms",
                                     "cnp_reaction = 50us"), port)
    send(netns, pcap)
    body = ""
    deadline = time.monotonic() + 10
    ifname = netns.if_rx
    while f'roceval_mac_control_frames_total{{interface="{ifname}",kind="pfc"}} 3\n' not in body or \
            f'roceval_violations_total{{interface="{ifname}",rule="cnp",severity="info"}} 1\n' not in body:
        assert time.monotonic() < deadline, body
        time.sleep(0.2)
        body = get(netns, port)["body"]
    want = {(3, "xoff"): 1, (3, "xon"): 1, (5, "xoff"): 1}
    for p in range(8):
        for kind in ("xoff", "xon"):
            assert f'roceval_pfc_frames_total{{interface="{ifname}",priority="{p}",kind="{kind}"}} ' \
                f'{want.get((p, kind), 0)}\n' in body, (p, kind)
        quanta = {3: 1000, 5: 50}.get(p, 0)
        assert f'roceval_pfc_pause_quanta_total{{interface="{ifname}",priority="{p}"}} {quanta}\n' in body
        # a quantum is 512 bit times: 5.12 ns at 100 Gb/s
        assert f'roceval_pfc_pause_seconds_total{{interface="{ifname}",priority="{p}"}} ' \
            f'{quanta * 5.12e-9:.9f}\n' in body
    assert f'roceval_latency_seconds_count{{interface="{ifname}",kind="ce_cnp"}} 1\n' in body
    les = [f"{(b + 1) / 8:g}" for b in range(16)] + ["+Inf"]
    for le in les:
        assert f'roceval_cnp_reaction_ratio_bucket{{interface="{ifname}",le="{le}"}} 0\n' in body, le
    assert f'roceval_cnp_reaction_ratio_count{{interface="{ifname}"}} 0\n' in body
    check = subprocess.run(["promtool", "check", "metrics"], input=body, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
