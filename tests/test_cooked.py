# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Linux cooked captures (LINUX_SLL, LINUX_SLL2: `tcpdump -i any`) and raw IP captures (RAW, IPV4,
IPV6) replay as their Ethernet originals."""
import json
import signal
import struct
import subprocess
import time

import pytest

import roce
from conftest import replay_json, run, timeless
from roce import IPV4, IPV6, RAW, SLL, SLL2, cooked, raw_ip

FAULTS = ("--corrupt-icrc", "1%", "--flip-invariant", "1%", "--drop", "1%", "--duplicate", "1%",
          "--bad-opcode", "1%", "--bad-pad", "1%", "--se-misuse", "1%", "--mutate-variant", "2%")


def pcap_records(path):
    """(caplen bytes, wire length) of every record of a little-endian microsecond pcap."""
    return [(f, wire) for f, wire, _ in timed_records(path)]


def timed_records(path):
    """(caplen bytes, wire length, seconds after roce.PCAP_EPOCH) of every record."""
    data = path.read_bytes()
    assert data[:4] == b"\xd4\xc3\xb2\xa1"
    out, off = [], 24
    while off < len(data):
        sec, usec, caplen, wire = struct.unpack_from("<IIII", data, off)
        out.append((data[off + 16:off + 16 + caplen], wire, sec - roce.PCAP_EPOCH + usec / 1e6))
        off += 16 + caplen
    return out


def write(path, linktype, records, pcapng=False, times=None):
    if pcapng:
        path.write_bytes(roce.pcapng_bytes(records, linktype=linktype, times=times))
    else:
        roce.write_pcap(path, records, linktype=linktype, times=times)
    return path


def original_times(path):
    """The original capture's frames and times: a copy keeps its latencies."""
    recs = timed_records(path)
    return [f for f, _, _ in recs], [t for _, _, t in recs]


def without_flows(r):
    return {k: v for k, v in r.items() if k != "flows"}


def untagged(r):
    """What replay counts for r's frames once a 4-byte VLAN tag is taken off every one of them."""
    return dict(without_flows(r), bytes=r["bytes"] - 4 * r["frames"], roce_bytes=r["roce_bytes"] - 4 * r["roce"])


@pytest.fixture(scope="module")
def original(tmp_path_factory):
    """A faulty conversation over IPv4 and IPv6 (frames of every size, psn and sequence faults),
    and one over a VLAN: Ethernet captures from `roceval gen`."""
    d = tmp_path_factory.mktemp("cooked")
    plain, vlan = d / "plain.pcap", d / "vlan.pcap"
    run("gen", "-w", plain, "--quiet", "--seed", "17", "--count", "3000", "-f", "mixed", "--pmtu", "1024",
        *FAULTS, check=True)
    run("gen", "-w", vlan, "--quiet", "--seed", "18", "--count", "1000", "-f", "mixed", "--vlan", "7",
        *FAULTS, check=True)
    return {"plain": plain, "vlan": vlan}


@pytest.mark.parametrize("pcapng", [False, True], ids=["pcap", "pcapng"])
@pytest.mark.parametrize("linktype", [SLL, SLL2], ids=["LINUX_SLL", "LINUX_SLL2"])
def test_cooked_counts_equal_ethernet(tmp_path, original, linktype, pcapng):
    want = replay_json(original["plain"], "--pmtu", "1024")
    assert want["icrc_bad"] > 0 and want["rules"]["psn_gap"] > 0 and want["rules"]["pad"] > 0
    assert want["roce"] > 2900  # the test means something
    frames, times = original_times(original["plain"])
    path = write(tmp_path / "c.cap", linktype, [cooked(f, linktype) for f in frames], pcapng, times)
    got = replay_json(path, "--pmtu", "1024")
    # every total and rule, every flow with its packets and bytes, and the latencies (same times)
    assert got == want


@pytest.mark.parametrize("linktype", [SLL, SLL2], ids=["LINUX_SLL", "LINUX_SLL2"])
def test_cooked_vlan(tmp_path, original, linktype):
    """A tag the capture kept (protocol 0x8100, TCI in the data) comes out as the tagged frame;
    one the kernel took off comes out untagged; both validate like the original."""
    want = replay_json(original["vlan"])
    assert want["roce"] > 900 and want["icrc_bad"] > 0
    frames, times = original_times(original["vlan"])
    assert all(f[12:14] == b"\x81\x00" for f in frames)
    kept = write(tmp_path / "kept.pcap", linktype, [cooked(f, linktype) for f in frames], times=times)
    assert replay_json(kept) == want
    stripped = write(tmp_path / "stripped.pcap", linktype, [cooked(f, linktype, strip_vlan=True) for f in frames],
                     times=times)
    got = replay_json(stripped)
    # bytes are 4 fewer a frame without the tag; everything else is the same
    assert without_flows(got) == untagged(want)
    assert [(f["src"], f["dst"], f["dqpn"], f["packets"], f["rules"]) for f in got["flows"]] == \
        [(f["src"], f["dst"], f["dqpn"], f["packets"], f["rules"]) for f in want["flows"]]
    assert sum(f["bytes"] for f in got["flows"]) == sum(f["bytes"] for f in want["flows"]) - 4 * want["roce"]


@pytest.mark.parametrize("linktype", [SLL, SLL2], ids=["LINUX_SLL", "LINUX_SLL2"])
def test_cooked_odd_records(tmp_path, linktype):
    """Records that are not Ethernet-II RoCE are counted as frames and left alone."""
    def good(qp):  # a flow of its own each: no sequence rule applies
        return roce.roce(roce.opcode(roce.RC, "SEND_ONLY"), 8, dqpn=qp)

    records = [
        cooked(good(1), linktype),                # RoCE, valid
        cooked(good(2), linktype, proto=0x0004),  # Linux's 802.2 LLC protocol number
        cooked(good(3), linktype, proto=0x0000),  # a netlink family, say
        cooked(good(4), linktype, proto=0x88CC),  # LLDP
        cooked(good(5), linktype, halen=0),       # no link-layer address (a tunnel)
        cooked(good(6), linktype, halen=8),       # an address that is no MAC: zero MAC
        cooked(good(7), linktype)[:10],           # shorter than the cooked header
        cooked(good(8), linktype)[:(16 if linktype == SLL else 20) + 1],  # header and one byte
        cooked(good(9), linktype)[:-6],           # cut inside the ICRC
    ]
    r = replay_json(write(tmp_path / "odd.pcap", linktype, records))
    assert (r["frames"], r["roce"], r["icrc_ok"], r["icrc_unchecked"]) == (9, 4, 3, 1)
    assert {k: v for k, v in r["rules"].items() if v} == {"truncated": 1}


def ethertype(frame):
    return frame[roce.l3_offset(frame) - 2:roce.l3_offset(frame)]


@pytest.mark.parametrize("pcapng", [False, True], ids=["pcap", "pcapng"])
@pytest.mark.parametrize("linktype", [RAW, IPV4, IPV6], ids=["RAW", "IPV4", "IPV6"])
def test_raw_ip_counts_equal_ethernet(tmp_path, original, linktype, pcapng):
    """Each record gets an Ethernet header again, zero MACs and the EtherType of its IP version:
    every verdict is the Ethernet original's (the ICRC does not cover the Ethernet header). RAW
    holds both families; IPV4 and IPV6 one each, so they are compared with the Ethernet frames of
    that family."""
    frames, times = original_times(original["plain"])
    families = {b"\x08\x00": IPV4, b"\x86\xdd": IPV6}
    assert sorted({ethertype(f) for f in frames}) == sorted(families)
    keep = [i for i, f in enumerate(frames) if linktype == RAW or families[ethertype(f)] == linktype]
    frames, times = [frames[i] for i in keep], [times[i] for i in keep]
    want = replay_json(write(tmp_path / "e.cap", 1, frames, pcapng, times), "--pmtu", "1024")
    assert want["icrc_bad"] > 0 and want["rules"]["psn_gap"] > 0 and want["rules"]["pad"] > 0
    assert want["roce"] > (2900 if linktype == RAW else 1200)  # the test means something
    assert (want["rocev2_ipv4"] > 0, want["rocev2_ipv6"] > 0) == (linktype != IPV6, linktype != IPV4)
    path = write(tmp_path / "r.cap", linktype, [raw_ip(f) for f in frames], pcapng, times)
    assert replay_json(path, "--pmtu", "1024") == want


def test_raw_ip_snapped(tmp_path, original):
    """A raw record cut by the snap length is snapped as its Ethernet original cut 14 bytes later."""
    frames, times = original_times(original["plain"])
    eth = roce.write_pcap(tmp_path / "e.pcap", frames, times=times, snaplen=142)
    raw = roce.write_pcap(tmp_path / "r.pcap", [raw_ip(f) for f in frames], RAW, times=times, snaplen=128)
    want = replay_json(eth, "--pmtu", "1024")
    assert want["snapped"] > 1000 and want["icrc_unchecked"] >= want["snapped"]
    assert replay_json(raw, "--pmtu", "1024") == want


def test_raw_ip_vlan(tmp_path, original):
    """A raw IP capture has no tags: it replays as the untagged frames, 4 bytes fewer each."""
    want = replay_json(original["vlan"])
    frames, times = original_times(original["vlan"])
    got = replay_json(write(tmp_path / "raw.pcap", RAW, [raw_ip(f) for f in frames], times=times))
    assert without_flows(got) == untagged(want)
    assert [dict(f, bytes=f["bytes"] + 4 * f["packets"]) for f in got["flows"]] == want["flows"]


def good_send(qp, **kw):
    """A valid SEND_ONLY on a flow of its own: no sequence rule applies."""
    return roce.roce(roce.opcode(roce.RC, "SEND_ONLY"), 8, dqpn=qp, **kw)


@pytest.mark.parametrize("pcapng", [False, True], ids=["pcap", "pcapng"])
def test_raw_odd_records(tmp_path, pcapng):
    """RAW's records that are not whole RoCE: counted as frames, not RoCE, or truncated when the
    IP and UDP lengths say more than the record holds; none stops the replay."""
    v4, v6 = raw_ip(good_send(1)), raw_ip(good_send(2, ipv6=True))
    records = [
        v4,                          # RoCE over IPv4, valid
        v6,                          # RoCE over IPv6, valid
        b"",                         # empty: no version to tell
        b"\x50" + v4[1:],            # version 5: an 802.3 length for EtherType, not RoCE
        v4[:1],                      # an IPv4 version nibble and nothing else
        v4[:19],                     # cut inside the IPv4 header
        v6[:39],                     # cut inside the IPv6 header
        raw_ip(good_send(3))[:-6],   # cut inside the ICRC: truncated
        raw_ip(good_send(4, ipv6=True))[:-6],
    ]
    r = replay_json(write(tmp_path / "odd.cap", RAW, records, pcapng))
    roce.check_accounting(r)
    assert (r["frames"], r["roce"], r["rocev2_ipv4"], r["rocev2_ipv6"], r["icrc_ok"], r["icrc_unchecked"]) == \
        (9, 4, 2, 2, 2, 2)
    assert r["bytes"] == sum(len(f) + 14 for f in records)
    assert {k: v for k, v in r["rules"].items() if v} == {"truncated": 2}


@pytest.mark.parametrize("linktype", [IPV4, IPV6], ids=["IPV4", "IPV6"])
def test_raw_family_mismatch(tmp_path, linktype):
    """IPV4 and IPV6 name their family; a record of the other one is not read as it: its header
    does not parse as the link type's, and it counts as a frame, not RoCE."""
    mine, other = (good_send(1), good_send(2, ipv6=True)) if linktype == IPV4 else (good_send(1, ipv6=True), good_send(2))
    r = replay_json(write(tmp_path / "m.pcap", linktype, [raw_ip(mine), raw_ip(other), b""]))
    assert (r["frames"], r["roce"], r["icrc_ok"]) == (3, 1, 1)
    assert not any(r["rules"].values())


@pytest.mark.parametrize("linktype", [0, 14], ids=["NULL", "14"])
def test_other_link_types_refused(tmp_path, linktype):
    """Any other link type keeps its one-line refusal, naming the types replay reads (14, DLT_RAW
    on OpenBSD, is no link type in a file: libpcap writes RAW's as 101 everywhere)."""
    path = roce.write_pcap(tmp_path / "other.pcap", [roce.cnp()[14:]], linktype=linktype)
    res = run("replay", path)
    assert res.returncode == 2 and res.stdout == ""
    name = "NULL" if linktype == 0 else "14"
    assert res.stderr == (f"roceval: {path}: link type {name} is not Ethernet; roceval reads Ethernet, "
                          "Linux cooked (LINUX_SLL, LINUX_SLL2) and raw IP (RAW, IPV4, IPV6) captures only\n")


def tcpdump_any(netns, path, *opts):
    """tcpdump -i any inside the receiving namespace, started and ready."""
    # Immediate mode: every frame is written as it comes, none waits in a ring block at SIGINT.
    # A snaplen above the largest frame (1024-byte PMTU) but far below the default keeps the
    # ring's slots small, and a 32 MiB ring holds the whole run: the kernel drops nothing.
    proc = subprocess.Popen(["nsenter", f"--net=/run/netns/{netns.rx}", "tcpdump", "-i", "any", "-U", "-n",
                             "--immediate-mode", "-s", "2048", "-B", "32768", "-w", str(path), *opts,
                             "udp", "port", "4791"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines = []
    while not lines or "listening on any" not in lines[-1]:
        lines.append(proc.stderr.readline())
        assert lines[-1] and len(lines) < 5, lines
    return proc


def complete_records(path):
    """How many whole records a pcap that is still being written holds so far."""
    data = path.read_bytes() if path.exists() else b""
    n, off = 0, 24
    while off + 16 <= len(data) and off + 16 + struct.unpack_from("<I", data, off + 8)[0] <= len(data):
        n, off = n + 1, off + 16 + struct.unpack_from("<I", data, off + 8)[0]
    return n


def stop(proc, path, frames):
    """Stops tcpdump once its capture holds `frames` records (30 s at most): an interrupt stops
    its loop, and frames still in the kernel's ring then would go unwritten and uncounted."""
    deadline = time.monotonic() + 30
    while complete_records(path) < frames and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert "\n0 packets dropped by kernel" in err, err
    return int(err.split(" packets captured")[0].split()[-1])


@pytest.mark.parametrize("vlan", [(), ("--vlan", "7")], ids=["untagged", "vlan"])
@pytest.mark.parametrize("opts,linktype", [((), SLL2), (("-y", "LINUX_SLL"), SLL)],
                         ids=["LINUX_SLL2", "LINUX_SLL"])
def test_tcpdump_any_of_generated_traffic(netns, tmp_path, opts, linktype, vlan):
    """`roceval gen` sends a faulty conversation over a veth; `tcpdump -i any` on the far side
    captures it; replay of that cooked capture counts exactly what replay of gen's own Ethernet
    capture of the same seed counts (the VLAN tag, which the receiving veth takes off, is put
    back by libpcap or not: the counts do not depend on it)."""
    args = ("--seed", "23", "--count", "1500", "-f", "mixed", "--pmtu", "1024", *vlan, *FAULTS)
    orig = tmp_path / "orig.pcap"
    summary = json.loads(run("gen", "-w", orig, "--json", "--quiet", *args, check=True).stdout)
    cap = tmp_path / "any.pcap"
    proc = tcpdump_any(netns, cap, *opts)
    try:
        run("gen", "-i", netns.if_tx, "--quiet", "--rate", "20000", *args, netns=netns.tx, check=True)
    finally:
        captured = stop(proc, cap, summary["frames"])
    assert captured == summary["frames"]
    assert struct.unpack_from("<I", cap.read_bytes(), 20)[0] == linktype
    got, want = (timeless(replay_json(p, "--pmtu", "1024")) for p in (cap, orig))
    first = pcap_records(cap)[0][0]
    proto = first[14:16] if linktype == SLL else first[0:2]
    if not vlan or proto == b"\x81\x00":
        assert got == want
    else:
        # the tag is gone (libpcap puts it back in LINUX_SLL only): 4 bytes fewer a frame
        assert without_flows(got) == untagged(want)
        for g, w in zip(got["flows"], want["flows"], strict=True):
            assert g == dict(w, bytes=w["bytes"] - 4 * w["packets"])
