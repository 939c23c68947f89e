# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Every real capture (ROCEVAL_CAPTURES, by default ../shared/captures beside the clone).

The expectations below were written from an independent reading of the frames: tshark
(-d udp.port==4791,infiniband) for the frame, RoCE and opcode counts, a separate decoder written
from rocev2.md for lengths, PSNs and AETHs, and the ICRC recomputed with zlib.crc32 over the
masked bytes (rocev2.md section 5; for RoCEv1 the GRH's TClass, FlowLabel and HopLmt masked
like IPv6's).  Never from roceval's output: where roceval disagrees, the row fails.

Each capture is replayed with its own PMTU, read from its FIRST/MIDDLE payloads (4096 where it
has none: every ONLY/LAST then fits), so a payload_length count can only be a real violation.
"""
from dataclasses import dataclass, field

import pytest

import roce
from conftest import nonzero_rules, real_capture, replay_json

# The five RDMA CM MADs of one whole connection as tshark decodes them (attribute ids 0x10 REQ,
# 0x13 REP, 0x14 RTU, 0x15 DREQ, 0x16 DREP): counted by the info counter `cm`, and the RTU
# completes one handshake.
CM_HANDSHAKE = {"cm": 5, "cm_established": 1}


@dataclass
class Real:
    file: str
    pmtu: int
    frames: int
    roce: int
    icrc_ok: int
    icrc_bad: int
    icrc_unchecked: int = 0
    rocev1: int = 0
    rocev2_ipv4: int = 0
    rocev2_ipv6: int = 0
    snapped: int = 0
    rules: dict = field(default_factory=dict)
    both_ways: bool = False  # every ICRC checked failed, both ways: replay's capture-path note


CAPTURES = [
    # One ConnectX-4 Lx CNP (0x81, BECN): ICRC 82 fd 00 2a recomputed.
    Real("cnp-connectx4lx-ipv4.pcap", 4096, 1, 1, 1, 0, rocev2_ipv4=1, rules={"cnp": 1}),
    # 105 RoCEv2 (33 SEND_FIRST of 1024 bytes, 33 SEND_LAST_WITH_IMMEDIATE, 2 SEND_ONLY_WITH_
    # IMMEDIATE, 37 ACKs) and 18 ARP/TCP/ICMPv6 frames.  Consecutive PSNs, MSNs never go back.
    Real("rc-send-ack-ipv4.pcap", 1024, 123, 105, 105, 0, rocev2_ipv4=105),
    # 5 RC SEND_ONLY and their 5 ACKs among 35 TCP frames.
    Real("realcaps/cx-ib-send-bw-with-tcp.pcap", 4096, 45, 10, 10, 0, rocev2_ipv4=10),
    # RC SEND at 1024 on 16 QPs both ways (32 request flows, 533 requests) and 175 ACKs, every
    # ICRC valid.  The capture missed packets: 311 requests carry a PSN ahead of the one their
    # flow expects (6,912 request PSNs are absent from the file), and 159 of those gaps swallowed
    # a message's FIRST or LAST, so a MIDDLE/LAST arrives with no message open or a FIRST with
    # one still open.  True of the file, not of the fabric (the ACKs cover the missing PSNs).
    Real("realcaps/cx-ibdump-rc-send-16qp-lossy-a.pcap", 1024, 708, 708, 708, 0, rocev2_ipv4=708,
         rules={"psn_gap": 311, "opcode_sequence": 159}),
    # The same setup: 482 requests, 292 ahead of their flow (6,747 PSNs absent), 135 of them
    # breaking a message.
    Real("realcaps/cx-ibdump-rc-send-16qp-lossy-b.pcap", 1024, 641, 641, 641, 0, rocev2_ipv4=641,
         rules={"psn_gap": 292, "opcode_sequence": 135}),
    # RDMA CM on UD QP1 (5 SEND_ONLY with DETH), then RC SEND_ONLY x2, READ request and its
    # READ_RESPONSE_ONLY, WRITE_ONLY (payload = DMALen), 3 ACKs; 3 SMB/TCP frames.
    Real("realcaps/cx-ibdump-rdmacm-read.pcap", 4096, 16, 13, 13, 0, rocev2_ipv4=13, rules=CM_HANDSHAKE),
    # 5 CM MADs, 2 RC SEND_ONLY, 2 ACKs.
    Real("realcaps/cx-ibdump-rdmacm-send.pcap", 4096, 9, 9, 9, 0, rocev2_ipv4=9, rules=CM_HANDSHAKE),
    # 5 CM MADs, 4 SEND_ONLY, 2 WRITE_ONLY (payload = DMALen), 6 ACKs.
    Real("realcaps/cx-ibdump-rdmacm-write.pcap", 4096, 17, 17, 17, 0, rocev2_ipv4=17, rules=CM_HANDSHAKE),
    # 323 RoCEv1 frames (EtherType 0x8915, GIDs ::ffff:172.17.242.47 > .56) and 301 RoCEv2 the
    # other way, RC SEND at 1024 and ACKs, every ICRC valid (the RoCEv1 ones with the GRH masked).
    # Lossy like the files above: psn_gap 156 RoCEv1 + 144 RoCEv2, opcode_sequence 77 + 68.
    Real("realcaps/cx-ibdump-rocev1-and-v2-mixed.pcap", 1024, 624, 624, 624, 0, rocev1=323,
         rocev2_ipv4=301, rules={"psn_gap": 300, "opcode_sequence": 145}),
    # 2,468 RoCEv1 frames, both ways (1,554 and 914), 32 request flows, 1,931 requests: 1,432
    # ahead of their flow (6,089 PSNs absent from the file), 576 of them breaking a message.
    Real("realcaps/cx-ibdump-rocev1-only.pcap", 1024, 2468, 2468, 2468, 0, rocev1=2468,
         rules={"psn_gap": 1432, "opcode_sequence": 576}),
    # mlx5 DC: 2 DC ACKs (0x51), the connect packet (0x55, DestQP 0xFFFFFF), WRITE_FIRST and 25
    # WRITE_MIDDLE (0x46/0x47) with 4096-byte payloads once the 20-byte DC header is taken off,
    # PSNs 11093326-11093351 in order.  The connect packet carries 16 bytes after that header
    # and the first ACK 8 after its AETH: real ConnectX frames, so no error.  That ACK's AETH
    # (after the DC header) is syndrome 0x64, a NAK with code 4 (invalid RD request).  Every
    # ICRC fails, both ways: the capture path (the source MAC changes on every frame).
    Real("realcaps/mlx5sniff-dc-connect-write-4k.pcap", 4096, 29, 29, 0, 29, rocev2_ipv4=29,
         rules={"icrc": 29, "nak_invalid": 1}, both_ways=True),
    # mlx5 DC: 12 WRITE_ONLY (0x4A, 8 bytes = DMALen after the 20-byte DC header, PSNs
    # 278780-278791 in order) and 7 DC ACKs (syndrome 0x1F).  Every ICRC fails, both ways.
    Real("realcaps/mlx5sniff-dc-write-small.pcap", 4096, 19, 19, 0, 19, rocev2_ipv4=19,
         rules={"icrc": 19}, both_ways=True),
    # 16 RC WRITE_ONLY of 2 bytes (PadCnt 2) and 5 ACKs accepting them; every ICRC fails.
    Real("realcaps/mlx5sniff-rc-write-small.pcap", 4096, 21, 21, 0, 21, rocev2_ipv4=21,
         rules={"icrc": 21}, both_ways=True),
    # UC SEND_FIRST (1024 bytes) x9 and SEND_LAST x8, both ways; every ICRC fails.
    Real("realcaps/mlx5sniff-uc-send-sg.pcap", 1024, 17, 17, 0, 17, rocev2_ipv4=17,
         rules={"icrc": 17}, both_ways=True),
    # 489 UC WRITE FIRST/MIDDLE/LAST_WITH_IMMEDIATE records hold 243 bytes of 4154-byte frames
    # (IP total length 4140), and their records give 243 as the wire length too.  243 is also
    # the capture's longest record, reached only by these cut frames: a snap length the file
    # did not record, so they are snapped (judged on the bytes kept), not truncated on the
    # wire.  The 20 whole RoCEv2 frames (18 UD SEND_ONLY_WITH_IMMEDIATE, an RC ACK, an RC
    # WRITE_ONLY) all fail the ICRC, both ways.  11 frames are not RoCE.
    Real("realcaps/mlx5sniff-uccl-uc-write-snap243.pcap", 4096, 520, 509, 0, 20, icrc_unchecked=489,
         rocev2_ipv4=509, snapped=489, rules={"icrc": 20}, both_ways=True),
    # NVMe-oF discovery: RC SEND, WRITE FIRST/MIDDLE (1024) and LAST, WRITE_ONLY, READ and its
    # response, ACKs, 5 CM MADs; 4 frames are not RoCE.
    Real("realcaps/nvmeof-discover-a.pcap", 1024, 65, 61, 61, 0, rocev2_ipv4=61, rules=CM_HANDSHAKE),
    Real("realcaps/nvmeof-discover-b.pcap", 4096, 31, 31, 31, 0, rocev2_ipv4=31, rules=CM_HANDSHAKE),
    # NVMe-oF I/O: a SEND of FIRST, MIDDLE (1024) and LAST, SEND_ONLYs, ACKs.
    Real("realcaps/nvmeof-echo.pcap", 1024, 45, 45, 45, 0, rocev2_ipv4=45),
    Real("realcaps/nvmeof-idle.pcap", 4096, 4, 4, 4, 0, rocev2_ipv4=4),
    # One rxe RC READ request (DMALen 65536), ICRC 08 c6 15 4a.
    Real("realcaps/rxe-vmware-rc-read-request.pcap", 4096, 1, 1, 1, 0, rocev2_ipv4=1),
]


def test_every_real_capture_has_a_row():
    """A capture added to the directory must get its row, read from its frames."""
    capture_dir = real_capture("rc-send-ack-ipv4.pcap").parent
    files = sorted(str(p.relative_to(capture_dir)) for p in capture_dir.rglob("*.pcap*"))
    assert files == sorted(c.file for c in CAPTURES)


@pytest.mark.parametrize("c", CAPTURES, ids=lambda c: c.file)
def test_real_capture(c):
    r = replay_json(real_capture(c.file), "--pmtu", str(c.pmtu))
    roce.check_accounting(r)
    got = (r["frames"], r["roce"], r["icrc_ok"], r["icrc_bad"], r["icrc_unchecked"])
    assert got == (c.frames, c.roce, c.icrc_ok, c.icrc_bad, c.icrc_unchecked)
    assert nonzero_rules(r) == c.rules
    assert r["icrc_all_bad_both_directions"] is c.both_ways


@pytest.mark.parametrize("c", CAPTURES, ids=lambda c: c.file)
def test_real_capture_families(c):
    r = replay_json(real_capture(c.file), "--pmtu", str(c.pmtu))
    got = {k: r.get(k) for k in ("rocev1", "rocev2_ipv4", "rocev2_ipv6", "snapped")}
    assert got == {"rocev1": c.rocev1, "rocev2_ipv4": c.rocev2_ipv4, "rocev2_ipv6": c.rocev2_ipv6,
                   "snapped": c.snapped}
    assert c.rocev1 + c.rocev2_ipv4 + c.rocev2_ipv6 == c.roce


def test_rc_send_ack_with_a_wrong_pmtu():
    # 2048 makes all 33 SEND_FIRST packets (1024 bytes) illegal
    r = replay_json(real_capture("rc-send-ack-ipv4.pcap"), "--pmtu", "2048")
    assert nonzero_rules(r) == {"payload_length": 33}
