# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""What real NIC traffic carries and roceval gen never makes: mlx5 DC, RoCEv1, snapped captures.

Frames are built here and in tests/roce.py from the wire formats (rocev2.md and
docs/protocol.md's DC layout), never from the C headers.  RoCEv1 ICRCs are computed
here with zlib over the masked bytes, and checked byte for byte on the real
ConnectX captures when they are present.
"""
import json
import re
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

import roce
from conftest import ROCEVAL, nonzero_rules, real_capture, replay_json, run
from roce import RD, UC, frame, pattern, transport

sys.path.insert(0, str(Path(__file__).resolve().parent))

def real(name):
    return real_capture(f"realcaps/{name}")


def write_records(path, records, snaplen=262144, order="<"):
    """A classic pcap of (captured bytes, wire length) records, little- or big-endian (order)."""
    out = struct.pack(order + "IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, snaplen, 1)
    for i, (data, wire) in enumerate(records):
        out += struct.pack(order + "IIII", 1700000000 + i, 0, len(data), wire) + bytes(data)
    Path(path).write_bytes(out)
    return path


def read_records(path):
    """(captured bytes, wire length) of every record of a classic little-endian pcap."""
    d = Path(path).read_bytes()
    assert struct.unpack_from("<I", d)[0] == 0xA1B2C3D4
    off, out = 24, []
    while off + 16 <= len(d):
        _, _, cap, wire = struct.unpack_from("<IIII", d, off)
        out.append((d[off + 16:off + 16 + cap], wire))
        off += 16 + cap
    return out


def replay_records(tmp_path, records, *opts, name="r.pcap", order="<"):
    r = replay_json(write_records(tmp_path / name, records, order=order), *opts)
    roce.check_accounting(r)
    return r


def totals(r, *keys):
    return {k: r[k] for k in keys}


# --- mlx5 DC ------------------------------------------------------------------
# docs/protocol.md's layout: BTH, then 20 bytes (flags byte: 0x11 on requests, 0x10 on
# responses; the sender's QP number; 16 bytes of connection context), then the
# RC-style operation headers.  The context words are the ones real ConnectX
# frames carry (mlx5sniff-dc-connect-write-4k.pcap).
DCI, DCT, DC_KEY = 0x009035, 0x807FF4, 0xFFEEDDCC


def dc_hdr(request, qpn):
    return struct.pack(">I", (0x11 if request else 0x10) << 24 | qpn) + \
        struct.pack(">IIII", 0x00715004, 0x0061E97D, 0x0000C0DE, 0)


def dc(opc, dqpn, psn, body, *, padcnt=0, dci=DCI, **frame_kw):
    """An RD-range frame laid out as DC; `body` is everything after the DC header.

    Requests go from the DCI's host to the DCT's, responses back.
    """
    request = (opc & 0x1F) not in (0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12)
    if not request:
        frame_kw = {"src": roce.V4_DST, "dst": roce.V4_SRC, **frame_kw}
    tp = roce.bth(opc, dqpn=dqpn, psn=psn, migreq=True, padcnt=padcnt) + \
        dc_hdr(request, dci if request else DCT) + body
    return frame(tp, **frame_kw)


def reth(dmalen, va=0x7F69F0384000):
    return struct.pack(">QII", va, 0x0538, dmalen)


def aeth(syndrome, msn):
    return struct.pack(">I", syndrome << 24 | msn)


P = 0xA9454D  # the connect packet's PSN in the real capture

DC_GOOD = [
    # connect: RESYNC to DestQP 0xFFFFFF, a 16-byte body ending in the DC access key
    dc(0x55, 0xFFFFFF, P, struct.pack(">IIQ", 0x20000000, 0, DC_KEY)),
    # its reply: AETH syndrome 0x64 (NAK code 4) and 8 more bytes, as the capture shows
    dc(0x51, DCI, P, aeth(0x64, 0) + struct.pack(">II", 0x10000000, 0)),
    dc(0x46, DCT, P + 1, reth(2 * 4096 + 100) + pattern(4096)),
    dc(0x47, DCT, P + 2, pattern(4096, 1)),
    dc(0x48, DCT, P + 3, pattern(100, 2)),
    dc(0x51, DCI, P + 3, aeth(0x1F, 1)),
    dc(0x4A, DCT, P + 4, reth(8) + pattern(8)),
    # another DCI to the same DCT: a PSN space of its own
    dc(0x4A, DCT, 0x123456, reth(16) + pattern(16), dci=0x009036),
    dc(0x4A, DCT, P + 5, reth(0) + b""),
    dc(0x44, DCT, P + 6, pattern(5) + bytes(3), padcnt=3),
    dc(0x4C, DCT, P + 7, reth(8192)),  # consumes two PSNs
    dc(0x4D, DCI, P + 7, aeth(0x00, 2) + pattern(4096)),
    dc(0x4F, DCI, P + 8, aeth(0x00, 2) + pattern(4096)),
    dc(0x4B, DCT, P + 9, reth(4) + struct.pack(">I", 7) + pattern(4), ipv6=True),
]


def test_dc_conversation_breaks_nothing(tmp_path):
    r = roce.replay_frames(tmp_path / "dc.pcap", DC_GOOD, "--pmtu", "4096")
    n = len(DC_GOOD)
    assert totals(r, "frames", "roce", "icrc_ok", "icrc_bad", "icrc_unchecked", "rocev2_ipv4",
                  "rocev2_ipv6") == {"frames": n, "roce": n, "icrc_ok": n, "icrc_bad": 0,
                                     "icrc_unchecked": 0, "rocev2_ipv4": n - 1, "rocev2_ipv6": 1}
    # the connect reply's syndrome is NAK code 4 on the wire: told, as telemetry
    assert nonzero_rules(r) == {"nak_invalid": 1}
    # the requests are keyed by their DCI: the connect and the writes are one flow
    flows = {(f["src"], f["dst"], f["dqpn"]): f["packets"] for f in r["flows"]}
    assert flows[(roce.V4_SRC, roce.V4_DST, DCI)] == 8
    assert flows[(roce.V4_DST, roce.V4_SRC, DCI)] == 4  # the responses to it
    assert flows[(roce.V4_SRC, roce.V4_DST, 0x009036)] == 1


def test_dc_rules_apply(tmp_path):
    cases = [
        ({"payload_length": 1}, [dc(0x4A, DCT, 1, reth(16) + pattern(8))]),  # payload != DMALen
        ({"payload_length": 1}, [dc(0x47, DCT, 1, pattern(4000))]),  # MIDDLE != PMTU
        ({"pad": 1, "payload_length": 1}, [dc(0x46, DCT, 1, reth(8192) + pattern(4095) + bytes(1),
                                              padcnt=1)]),
        ({"payload_length": 1}, [dc(0x51, DCI, 1, aeth(0x1F, 0) + bytes(12))]),  # 12, not 0 or 8
        ({"truncated": 1}, [frame(roce.bth(0x4A, dqpn=DCT, psn=1) + dc_hdr(True, DCI)[:16])]),
        ({"psn_gap": 1}, [dc(0x4A, DCT, 10, reth(4) + pattern(4)),
                          dc(0x4A, DCT, 12, reth(4) + pattern(4))]),
        ({"opcode_sequence": 1}, [dc(0x46, DCT, 20, reth(8192) + pattern(4096)),
                                  dc(0x4A, DCT, 21, reth(4) + pattern(4))]),
        ({"opcode": 1}, [frame(roce.bth(0x56, dqpn=DCT) + dc_hdr(True, DCI) + bytes(8))]),
    ]
    for i, (want, frames) in enumerate(cases):
        r = roce.replay_frames(tmp_path / f"c{i}.pcap", frames, "--pmtu", "4096")
        assert nonzero_rules(r) == want, (i, r)
        assert (r["roce"], r["icrc_ok"]) == (len(frames), len(frames)), i


def test_rd_strict_reads_dc_as_rd(tmp_path):
    """rd=strict: RDETH's Resv8 is DC's non-zero flags byte, the lengths are 8 bytes off."""
    frames = DC_GOOD[:4]  # connect, its reply, WRITE_FIRST, WRITE_MIDDLE
    r = roce.replay_frames(tmp_path / "s.pcap", frames, "--pmtu", "4096", "--set", "rd=strict")
    assert nonzero_rules(r) == {"reserved": 4, "payload_length": 4}
    assert r["icrc_ok"] == 4
    r = roce.replay_frames(tmp_path / "d.pcap", frames, "--pmtu", "4096", "--set", "rd=dc")
    assert nonzero_rules(r) == {"nak_invalid": 1}


def test_rd_resync_is_defined_in_both_layouts(tmp_path):
    strict = roce.roce(roce.opcode(RD, "RESYNC"), 0)
    r = roce.replay_frames(tmp_path / "r.pcap", [strict], "--set", "rd=strict")
    assert nonzero_rules(r) == {}
    r = roce.replay_frames(tmp_path / "d.pcap", [DC_GOOD[0]])
    assert nonzero_rules(r) == {}


def test_rd_setting_is_reported_and_checked():
    assert re.search(r"^  rd=dc\|strict$", run("help", "config", check=True).stdout, re.M)
    res = run("replay", "--set", "rd=loose", "x.pcap")
    assert res.returncode == 2 and "rd=loose: expected dc or strict" in res.stderr


@pytest.mark.parametrize("name,frames,rocev2", [("mlx5sniff-dc-write-small.pcap", 19, 19),
                                                ("mlx5sniff-dc-connect-write-4k.pcap", 29, 29)])
def test_real_dc_captures(name, frames, rocev2):
    r = replay_json(real(name), "--pmtu", "4096")
    assert totals(r, "frames", "roce", "rocev2_ipv4") == {"frames": frames, "roce": frames,
                                                         "rocev2_ipv4": rocev2}
    # every ICRC of the mlx5 sniffer's captures fails (its capture path, see its README);
    # nothing else is wrong with these ConnectX frames
    rules = nonzero_rules(r)
    assert rules.pop("icrc") == frames
    assert rules == ({"nak_invalid": 1} if "connect" in name else {})


# --- RoCEv1 ---------------------------------------------------------------------
SGID = bytes(10) + b"\xff\xff" + bytes([192, 168, 242, 56])
DGID = bytes(10) + b"\xff\xff" + bytes([192, 168, 242, 57])


def v1_icrc(grh_and_transport):
    """IBA A16: 8 x 0xFF, the GRH with TClass, FlowLabel and HopLmt all ones, BTH byte 4 0xFF."""
    b = bytearray(grh_and_transport)
    b[0] |= 0x0F
    b[1:4] = b"\xff\xff\xff"
    b[7] = 0xFF
    b[40 + 4] = 0xFF
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(b)))


def v1(tp, *, tclass=0x02, flow=0x12345, hlim=64, sgid=SGID, dgid=DGID, nxthdr=0x1B, paylen=None,
       vlan=None):
    """A RoCEv1 frame: Ethernet (EtherType 0x8915), GRH, the transport bytes, the ICRC."""
    n = len(tp) + 4 if paylen is None else paylen
    grh = struct.pack(">IHBB", 6 << 28 | tclass << 20 | flow, n, nxthdr, hlim) + sgid + dgid
    l2 = bytes.fromhex("020000000002020000000001")
    if vlan is not None:
        l2 += struct.pack(">HH", 0x8100, vlan)
    return l2 + b"\x89\x15" + grh + tp + v1_icrc(grh + tp)


def v1_rewrite(frm, off, value):
    """frm with a byte of the GRH replaced after its ICRC was computed."""
    return frm[:14 + off] + bytes([value]) + frm[14 + off + 1:]


def test_rocev1_conversation(tmp_path):
    qp = 0x2F9
    frames = [v1(transport(0x00, 1024, dqpn=qp, psn=10)), v1(transport(0x01, 1024, dqpn=qp, psn=11)),
              v1(transport(0x02, 100, dqpn=qp, psn=12)), v1(transport(0x11, dqpn=qp, psn=12)),
              v1(transport(0x04, 5, dqpn=qp, psn=13)), v1(transport(0x0A, 64, dqpn=qp, psn=14),
                                                         vlan=7)]
    r = roce.replay_frames(tmp_path / "v1.pcap", frames, "--pmtu", "1024")
    assert totals(r, "frames", "roce", "rocev1", "rocev2_ipv4", "rocev2_ipv6", "icrc_ok") == \
        {"frames": 6, "roce": 6, "rocev1": 6, "rocev2_ipv4": 0, "rocev2_ipv6": 0, "icrc_ok": 6}
    assert nonzero_rules(r) == {}
    # flows are keyed by the GIDs
    assert {(f["src"], f["dst"], f["dqpn"], f["packets"]) for f in r["flows"]} == \
        {("::ffff:192.168.242.56", "::ffff:192.168.242.57", qp, 6)}


def test_rocev1_icrc_masks_exactly_tclass_flowlabel_hoplimit(tmp_path):
    good = v1(transport(0x04, 32))
    masked = [v1_rewrite(good, 0, 0x6F), v1_rewrite(good, 1, 0xAB), v1_rewrite(good, 3, 0x01),
              v1_rewrite(good, 7, 1), good[:14 + 44] + b"\xc0" + good[14 + 45:]]  # BTH FECN/BECN
    r = roce.replay_frames(tmp_path / "m.pcap", masked)
    # five copies of one packet: the copies are one episode of retransmissions, the same request
    # (no retx_changed: what differs is masked), and every ICRC holds
    assert (r["icrc_ok"], r["icrc_bad"]) == (5, 0)
    assert nonzero_rules(r) == {"psn_duplicate": 4, "retx_episode": 1, "retx_timeout": 1}
    # SGID, DGID and the first payload byte are covered
    covered = [v1_rewrite(good, 8, 0x01), v1_rewrite(good, 39, 0x01),
               good[:14 + 40 + 12] + b"\x01" + good[14 + 40 + 13:]]
    r = roce.replay_frames(tmp_path / "c.pcap", covered)
    assert (r["icrc_ok"], r["icrc_bad"]) == (0, 3) and nonzero_rules(r) == {"icrc": 3}


def test_rocev1_rules_and_lengths(tmp_path):
    cases = [
        ({"tver": 1}, v1(transport(0x04, 8, tver=1)), 1),
        ({"opcode": 1}, v1(roce.bth(0x15) + bytes(8)), 1),
        ({"payload_length": 1}, v1(transport(0x00, 1000)), 1),
        ({"truncated": 1}, v1(transport(0x04, 8), paylen=200), 1),
        ({"truncated": 1}, v1(roce.bth(0x04)[:8], paylen=12), 1),
        ({}, v1(transport(0x04, 8), nxthdr=0x11), 0),  # not a BTH: not RoCE
        ({}, v1(transport(0x04, 8)) + bytes(20), 1),  # Ethernet padding after PayLen
    ]
    for i, (want, frm, n) in enumerate(cases):
        r = roce.replay_frames(tmp_path / f"v{i}.pcap", [frm], "--pmtu", "1024")
        assert nonzero_rules(r) == want, i
        assert (r["roce"], r["rocev1"]) == (n, n), i


def test_family_split(tmp_path):
    frames = [v1(transport(0x04, 8)), v1(transport(0x11)), roce.roce(0x04, 8), roce.roce(0x11),
              roce.roce(0x64, 8), roce.roce(0x04, 8, ipv6=True)]
    r = roce.replay_frames(tmp_path / "f.pcap", frames)
    assert totals(r, "roce", "rocev1", "rocev2_ipv4", "rocev2_ipv6", "icrc_ok") == \
        {"roce": 6, "rocev1": 2, "rocev2_ipv4": 3, "rocev2_ipv6": 1, "icrc_ok": 6}


def v1_frames_of(path):
    return [d for d, _ in read_records(path) if d[12:14] == b"\x89\x15"]


@pytest.mark.parametrize("name,n_v1,n_v2", [("cx-ibdump-rocev1-only.pcap", 2468, 0),
                                            ("cx-ibdump-rocev1-and-v2-mixed.pcap", 323, 301)])
def test_real_rocev1_icrc_byte_exact(name, n_v1, n_v2):
    path = real(name)
    v1s = v1_frames_of(path)
    assert len(v1s) == n_v1
    for d in v1s:
        end = 14 + 40 + struct.unpack_from(">H", d, 18)[0]
        assert d[end - 4:end] == v1_icrc(d[14:end - 4])
    r = replay_json(path, "--pmtu", "1024")
    assert totals(r, "roce", "rocev1", "rocev2_ipv4", "icrc_ok", "icrc_bad") == \
        {"roce": n_v1 + n_v2, "rocev1": n_v1, "rocev2_ipv4": n_v2, "icrc_ok": n_v1 + n_v2,
         "icrc_bad": 0}
    # the captures are lossy (their README): only the sequence warnings remain
    assert set(nonzero_rules(r)) <= {"psn_gap", "opcode_sequence"}


# --- snapped frames ----------------------------------------------------------------
def cut(frm, n):
    return (frm[:n], len(frm))


def test_snapped_frames_judged_on_their_headers(tmp_path):
    qp = 0x777
    records = [
        cut(roce.roce(0x00, 1024, dqpn=qp, psn=1), 128),
        cut(roce.roce(0x01, 1024, dqpn=qp, psn=2), 128),
        cut(roce.roce(0x02, 100, dqpn=qp, psn=4), 128),  # PSN 3 lost: psn_gap
        cut(roce.roce(0x04, 1000, tver=1), 128),
        cut(roce.roce(0x00, 1000), 128),  # FIRST of 1000 with a 1024 PMTU: payload_length from IP/UDP
        cut(roce.roce(0x11), 128),  # 62 bytes: whole, nothing was cut
        (roce.roce(0x04, 500)[:128], 300),  # IP length beyond the wire length: truncated
        cut(roce.roce(0x04, 500), 50),  # cut before the BTH: nothing to judge
        cut(roce.roce(0x04, 1000, frame_kw={"bad_icrc": True}), 128),  # the ICRC is not there
        cut(v1(transport(0x04, 900)), 128),
        cut(roce.roce(0x04, 1000, ipv6=True), 100),
    ]
    r = replay_records(tmp_path, records, "--pmtu", "1024")
    assert totals(r, "frames", "roce", "snapped", "icrc_ok", "icrc_bad", "icrc_unchecked", "rocev1") == \
        {"frames": 11, "roce": 11, "snapped": 9, "icrc_ok": 1, "icrc_bad": 0, "icrc_unchecked": 10,
         "rocev1": 1}
    assert nonzero_rules(r) == {"psn_gap": 1, "tver": 1, "payload_length": 1, "truncated": 1}
    text = run("replay", "--pmtu", "1024", tmp_path / "r.pcap", check=True).stdout
    assert "snapped: 9 of the 11 frames were cut by the capture, not on the wire" in text
    assert text.count("snapped:") == 1


def test_unrecorded_snap_length(tmp_path):
    """Records that give their cut length as the wire length: a capture-wide fixed cut, or not."""
    def middle(psn):
        return roce.roce(UC << 5 | 0x07, 4096, dqpn=0x3D53, psn=psn)

    def at243(frames):
        return [(f[:243], 243) for f in frames]

    r = replay_records(tmp_path, at243([middle(i) for i in range(8)]), "--pmtu", "4096")
    assert totals(r, "snapped", "icrc_unchecked") == {"snapped": 8, "icrc_unchecked": 8}
    assert nonzero_rules(r) == {}
    text = run("replay", tmp_path / "r.pcap", check=True).stdout
    assert "snapped: 8 frames stop at 243 bytes, the capture's longest" in text
    # big-endian; and among 3000 shorter whole frames (580 KB), which the scan of the records
    # reads a chunk at a time
    r = replay_records(tmp_path, at243([middle(i) for i in range(8)]), "--pmtu", "4096", name="be.pcap", order=">")
    assert totals(r, "snapped", "icrc_unchecked") == {"snapped": 8, "icrc_unchecked": 8}
    short = [(f, len(f)) for f in [roce.roce(0x04, 120, psn=i) for i in range(250)]]
    spread = short * 6 + at243([middle(i) for i in range(4)]) + short * 6 + at243([middle(i) for i in range(4, 8)])
    r = replay_records(tmp_path, spread, "--pmtu", "4096", name="spread.pcap")
    assert (tmp_path / "spread.pcap").stat().st_size > 2 * 256 * 1024
    assert totals(r, "snapped", "icrc_unchecked") == {"snapped": 8, "icrc_unchecked": 8}
    # seven are not a pattern: each record is taken at its word
    r = replay_records(tmp_path, at243([middle(i) for i in range(7)]), name="7.pcap")
    assert (r["snapped"], nonzero_rules(r)) == (0, {"truncated": 7})
    # a whole frame of that length says the capture did not cut there
    whole = roce.roce(0x04, 184, frame_kw={"eth_pad": b"\0"})
    assert len(whole) == 243
    r = replay_records(tmp_path, at243([middle(i) for i in range(8)] + [whole]), name="w.pcap")
    assert (r["snapped"], nonzero_rules(r)) == (0, {"truncated": 8})


def test_real_uccl_capture_snapped_not_truncated():
    r = replay_json(real("mlx5sniff-uccl-uc-write-snap243.pcap"), "--pmtu", "4096")
    assert totals(r, "frames", "roce", "snapped", "icrc_unchecked", "icrc_bad") == \
        {"frames": 520, "roce": 509, "snapped": 489, "icrc_unchecked": 489, "icrc_bad": 20}
    assert nonzero_rules(r) == {"icrc": 20}


def editcap_128(src, dst):
    if not shutil.which("editcap"):
        pytest.skip("editcap is missing (Debian: wireshark-common)")
    subprocess.run(["editcap", "-F", "pcap", "-s", "128", str(src), str(dst)], check=True)
    return dst


def assert_same_header_verdicts(whole, snapped_path, *opts):
    w = replay_json(whole, *opts)
    s = replay_json(snapped_path, *opts)
    n_cut = sum(1 for d, wire in read_records(snapped_path) if len(d) < wire)
    assert n_cut > 0
    assert s["snapped"] == n_cut and s["icrc_unchecked"] == w["icrc_unchecked"] + n_cut
    assert s["icrc_ok"] == w["icrc_ok"] - n_cut and s["rules"]["truncated"] == 0
    # every verdict but the ICRC's is the whole capture's
    assert {k: v for k, v in nonzero_rules(s).items() if k != "icrc"} == \
        {k: v for k, v in nonzero_rules(w).items() if k != "icrc"}
    assert {k: s[k] for k in ("frames", "roce", "rocev1", "rocev2_ipv4", "rocev2_ipv6")} == \
        {k: w[k] for k in ("frames", "roce", "rocev1", "rocev2_ipv4", "rocev2_ipv6")}
    return s


def test_real_capture_cut_to_128_bytes(tmp_path):
    src = real("cx-ibdump-rc-send-16qp-lossy-a.pcap")
    s = assert_same_header_verdicts(src, editcap_128(src, tmp_path / "a128.pcap"), "--pmtu", "1024")
    assert s["snapped"] == 533


def test_generated_traffic_cut_to_128_bytes(tmp_path):
    whole = tmp_path / "gen.pcap"
    run("gen", "-w", whole, "--count", "3000", "--seed", "5", check=True)
    assert_same_header_verdicts(whole, editcap_128(whole, tmp_path / "gen128.pcap"))


# --- live: the family split on every surface, and a trace file replayed ----------------
SENDER = r"""
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
data = open(sys.argv[2], "rb").read()
off = 24
while off < len(data):
    n = int.from_bytes(data[off + 8:off + 12], "little")
    s.send(data[off + 16:off + 16 + n])
    off += 16 + n
"""


def test_live_family_split_and_trace_replay(netns, tmp_path):
    frames = [v1(transport(0x04, 600, tver=1)) for _ in range(2)] + \
        [roce.roce(0x04, 600, tver=1, frame_kw={"bad_icrc": True}) for _ in range(3)] + \
        [roce.roce(0x04, 100, ipv6=True)]
    pcap = roce.write_pcap(tmp_path / "live.pcap", frames)
    sender = tmp_path / "send.py"
    sender.write_text(SENDER)
    run("attach", netns.if_rx, netns=netns.rx, check=True)
    out = tmp_path / "trace.pcapng"
    trace = subprocess.Popen(
        ["nsenter", f"--net=/run/netns/{netns.rx}", str(ROCEVAL), "trace", netns.if_rx, "--rule", "tver",
         "--count", "5", "--pcap", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "tracing" in trace.stderr.readline()
        run("/usr/bin/python3", sender, netns.if_tx, pcap, netns=netns.tx, check=True)
        trace.communicate(timeout=10)
    finally:
        if trace.poll() is None:
            trace.kill()
    assert trace.returncode == 0

    s = json.loads(run("stats", "--json", netns.if_rx, netns=netns.rx, check=True).stdout)
    assert totals(s, "roce", "rocev1", "rocev2_ipv4", "rocev2_ipv6", "icrc_ok", "icrc_bad") == \
        {"roce": 6, "rocev1": 2, "rocev2_ipv4": 3, "rocev2_ipv6": 1, "icrc_ok": 3, "icrc_bad": 3}
    assert s["rules"]["tver"] == 5
    text = run("stats", netns.if_rx, netns=netns.rx, check=True).stdout
    for key, n in (("rocev1", 2), ("rocev2_ipv4", 3), ("rocev2_ipv6", 1)):
        assert re.search(rf"^  {key} +{n}\b", text, re.M), key
    top = run("top", netns.if_rx, "-n", "1", netns=netns.rx, check=True,
              stdin=subprocess.DEVNULL).stdout
    assert "family rocev1 2 rocev2_ipv4 3 rocev2_ipv6 1" in top

    # the trace file holds headers only: replayed, the frames are snapped, never truncated
    r = replay_json(out)
    assert totals(r, "frames", "roce", "snapped", "icrc_unchecked", "rocev1", "rocev2_ipv4") == \
        {"frames": 5, "roce": 5, "snapped": 5, "icrc_unchecked": 5, "rocev1": 2, "rocev2_ipv4": 3}
    assert nonzero_rules(r) == {"tver": 5}

    # a trace of RoCEv1 frames names them by their GIDs
    v1_only = roce.write_pcap(tmp_path / "v1.pcap", frames[:2])
    trace = subprocess.Popen(
        ["nsenter", f"--net=/run/netns/{netns.rx}", str(ROCEVAL), "trace", netns.if_rx, "--rule", "tver",
         "--count", "2", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "tracing" in trace.stderr.readline()
        run("/usr/bin/python3", sender, netns.if_tx, v1_only, netns=netns.tx, check=True)
        stdout, _ = trace.communicate(timeout=10)
    finally:
        if trace.poll() is None:
            trace.kill()
    samples = [json.loads(line) for line in stdout.splitlines()]
    assert len(samples) == 2
    for s in samples:
        assert (s["src"], s["dst"], s["rocev1"], s["opcode_name"]) == \
            ("::ffff:192.168.242.56", "::ffff:192.168.242.57", True, "RC SEND_ONLY")
        assert s["cap_len"] == 14 + 40 + 12 < s["frame_len"] and "sport" not in s
