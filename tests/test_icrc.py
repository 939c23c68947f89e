# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The ICRC, byte for byte: known answers, masked fields, every covered bit, every size."""
import random
import struct

import pytest
from scapy.contrib.roce import BTH
from scapy.layers.inet import IP, UDP
from scapy.packet import Raw
from scapy.utils import rdpcap

import roce
from conftest import nonzero_rules, poke, real_capture, replay
from roce import cnp, frame, transport

# rocev2.md section 5: the IPv4 UC SEND_ONLY vector and its IPv6 twin
KAT_BODY = bytes.fromhex("4630818be28935d90e9a955054" "01be885e500000")


def kat_transport():
    return transport(0x24, KAT_BODY[:18], padcnt=2, pad=KAT_BODY[18:], migreq=True, dqpn=211,
                     psn=13571856)


def kat_v4():
    return frame(kat_transport(), src="192.168.0.7", dst="192.168.0.7", tos=0x01, ip_id=1144,
                 ttl=64, sport=49152)


def kat_v6():
    return frame(kat_transport(), ipv6=True, src="2022::1023", dst="2023::1024", tc=226,
                 fl=0x1FACE, hlim=255, sport=49152)




def assert_all_ok(r, n, rules=None):
    assert (r["frames"], r["roce"], r["icrc_ok"], r["icrc_bad"], r["icrc_unchecked"]) == \
        (n, n, n, 0, 0)
    assert nonzero_rules(r) == (rules or {})


def test_builder_known_answers():
    v4, v6 = kat_v4(), kat_v6()
    assert v4[14 + 2:14 + 4] == b"\x00\x40"  # total length 64, as the vector says
    assert v4[-4:] == bytes.fromhex("78f353f3")
    assert v6[14 + 4:14 + 6] == b"\x00\x2c"  # payload length 44
    assert v6[-4:] == bytes.fromhex("3e5b743b")


def test_builder_agrees_with_a_real_cnp():
    capture = bytes(rdpcap(str(real_capture("cnp-connectx4lx-ipv4.pcap")))[0])
    assert capture[-4:] == bytes.fromhex("82fd002a")
    assert roce.icrc(capture[14:]) == capture[-4:]


def test_known_answers_pass(tmp_path):
    r = replay(tmp_path, [kat_v4(), kat_v6()])
    assert_all_ok(r, 2)
    # the vector with its ICRC stored big-endian, the classic sender bug
    for f in (kat_v4(), kat_v6()):
        r = replay(tmp_path, [f[:-4] + f[-4:][::-1]])
        assert (r["icrc_ok"], r["icrc_bad"]) == (0, 1)


def scapy_frame(opc, rest, dqpn, **ip):
    """scapy's own RoCE layer (IPv4 only in scapy 2.5) computing the ICRC."""
    p = IP(src="10.1.2.3", dst="10.3.2.1", **ip) / UDP(sport=1234, dport=4791) / \
        BTH(opcode=opc, padcount=-len(rest) % 4, pkey=0xFFFF, dqpn=dqpn, psn=0x1234, becn=1) / \
        Raw(rest + bytes(-len(rest) % 4))
    return bytes(p)


def test_agrees_with_scapy(tmp_path):
    frames = []
    for size in (0, 1, 3, 4, 17, 64, 255, 1024, 4096):
        rest = roce.pattern(size, size)
        for ip in ({}, {"tos": 0xB8, "ttl": 3}, {"options": b"\x94\x04\x00\x00"}):
            dgram = scapy_frame(0x04, rest, len(frames), **ip)
            assert roce.icrc(dgram) == dgram[-4:], (size, ip)
            frames.append(bytes.fromhex("020000000002020000000001" "0800") + dgram)
    # and roceval agrees with both
    r = replay(tmp_path, frames)
    assert_all_ok(r, len(frames))




def test_masked_fields_keep_it_valid(tmp_path):
    """What a switch or router may change: TTL, DSCP/ECN, checksums, FECN/BECN, Resv6."""
    def v4(*pairs):  # a fresh frame (its own flow) with the bytes changed
        return poke(frame(transport(0x04, 40)), *pairs)

    def v6(*pairs):
        return poke(frame(transport(0x04, 40), ipv6=True), *pairs)

    l3, udp4, bth4 = 14, 14 + 20, 14 + 28
    udp6, bth6 = 14 + 40, 14 + 48
    frames = [v4(), v6()]
    frames += [v4(l3 + 8, ttl) for ttl in (0, 1, 63, 255)]
    frames += [v4(l3 + 1, tos) for tos in (0x00, 0x01, 0x02, 0xB8, 0xFE)]
    frames += [v4(l3 + 10, a, l3 + 11, b) for a, b in ((0, 0), (0xFF, 0xFF), (0x12, 0x34))]
    frames += [v4(udp4 + 6, a, udp4 + 7, b) for a, b in ((0, 0), (0xFF, 0xFF), (0xAB, 1))]
    frames += [v4(bth4 + 4, b) for b in (0x80, 0x40, 0xC0, 0x01, 0x3F, 0xFF)]
    frames += [v4(l3 + 1, 0xB8, l3 + 8, 1, l3 + 10, 0, l3 + 11, 0, udp4 + 6, 0, udp4 + 7, 0,
                  bth4 + 4, 0xFF)]
    frames += [v6(l3 + 7, h) for h in (0, 1, 255)]
    frames += [v6(l3, 0x60 | n) for n in (0x0, 0xF, 0x5)]  # traffic class high nibble
    frames += [v6(l3 + 1, b) for b in (0x00, 0x0F, 0xE0, 0xCF)]  # TC low nibble, flow label
    frames += [v6(l3 + 2, 0xFF, l3 + 3, 0xFF), v6(l3 + 2, 0, l3 + 3, 0)]
    frames += [v6(udp6 + 6, 0, udp6 + 7, 0)]
    frames += [v6(bth6 + 4, b) for b in (0x80, 0x40, 0x3F, 0xFF)]
    frames += [v6(l3, 0x6F, l3 + 1, 0xEF, l3 + 2, 0xFF, l3 + 3, 0xFF, l3 + 7, 0, udp6 + 6, 0,
                  udp6 + 7, 0, bth6 + 4, 0xC0)]
    roce.assert_distinct_flows(frames)
    r = replay(tmp_path, frames)
    assert_all_ok(r, len(frames))
    # ECN CE is masked too, and counted as telemetry
    ce = [v4(l3 + 1, 0x03), v4(l3 + 1, 0xFF), v6(l3 + 1, 0x3F)]
    r = replay(tmp_path, ce, name="ce.pcap")
    assert_all_ok(r, 3, {"ecn_ce": 3})
    # Resv6 under resv6=check: the ICRC still holds, the rule counts it
    r = replay(tmp_path, [v4(bth4 + 4, 0x01), v6(bth6 + 4, 0xFF)], "--set", "resv6=check",
               name="resv6.pcap")
    assert_all_ok(r, 2, {"reserved": 2})


def flip(f, bit):
    return f[:bit // 8] + bytes([f[bit // 8] ^ (0x80 >> bit % 8)]) + f[bit // 8 + 1:]


# Base frame for the bit flips: RC SEND_ONLY, 8 payload bytes, PadCnt 0.  For
# each covered bit, what a flip there must make roceval count (beyond "icrc"):
# fields that delimit the frame or decide what it is are listed by what the
# flip turns the frame into; everything else must only break the ICRC.
SEND_ONLY_8 = dict(opc=0x04, payload=8)
BTH_FLIP_RULES = {
    # opcode bits, MSB first: 0x84 (CNP transport, not 0x81), 0x44 (RD: needs RDETH+DETH,
    # 12 bytes > 8), 0x24 (UC SEND_ONLY), 0x14 (FETCH_ADD: AtomicETH missing),
    # 0x0C (READ_REQUEST: RETH missing), 0x00 (SEND_FIRST: 8 is no PMTU),
    # 0x06 (WRITE_FIRST: RETH missing), 0x05 (SEND_ONLY_WITH_IMMEDIATE: 4 + 4 bytes)
    0: {"opcode": 1}, 1: {"truncated": 1}, 2: {}, 3: {"truncated": 1}, 4: {"truncated": 1},
    5: {"payload_length": 1}, 6: {"truncated": 1}, 7: {},
    # SE (allowed on SEND_ONLY), MigReq, PadCnt 2 and 1 (payload 6 and 7 of 8), TVer
    8: {}, 9: {}, 10: {}, 11: {}, 12: {"tver": 1}, 13: {"tver": 1}, 14: {"tver": 1},
    15: {"tver": 1},
    # AckReq, then Resv7
    64: {}, **{b: {"reserved": 1} for b in range(65, 72)},
}


def flip_expectations(f, ipv6):
    """(bit, kind, extra rules) for every bit of the datagram of a frame like f.

    kind: "masked" (ICRC still valid), "not_roce", "truncated" (lengths no
    longer fit, ICRC unchecked), "fragment", or "bad" (ICRC checked and wrong).
    """
    l3 = 14
    dlen = len(f) - l3
    out = []
    for bit in range(l3 * 8, len(f) * 8):
        o = bit // 8 - l3  # byte offset in the datagram
        b = bit % 8
        extra = {}
        if not ipv6:
            iphl = 20
            if o == 0:
                kind = "not_roce"  # version or IHL
            elif o in (1, 8, 10, 11):
                kind = "masked"  # TOS, TTL, checksum
                if o == 1 and b == 7:
                    extra = {"ecn_ce": 1}  # ECN 10 -> 11
            elif o in (2, 3):
                kind = "truncated"  # total length
            elif o == 6 and b == 2:
                kind = "fragment"  # MF
            elif (o == 6 and b >= 3) or o == 7:
                kind = "not_roce"  # fragment offset: a later fragment
            elif o == 9:
                kind = "not_roce"  # protocol
            else:
                kind = "bad"
        else:
            iphl = 40
            if o == 0 and b < 4:
                kind = "not_roce"  # version
            elif o in (0, 1, 2, 3, 7):
                kind = "masked"  # traffic class, flow label, hop limit
                if o == 1 and b == 3:
                    extra = {"ecn_ce": 1}  # ECN 10 -> 11
            elif o in (4, 5):
                kind = "truncated"  # payload length
            elif o == 6:
                kind = "not_roce"  # next header
            else:
                kind = "bad"
        u = o - iphl
        if 0 <= u < 8:
            if u in (2, 3):
                kind = "not_roce"  # destination port
            elif u in (4, 5):
                kind = "truncated"  # UDP length
            elif u in (6, 7):
                kind = "masked"  # UDP checksum
        t = u - 8
        if 0 <= t < 12:
            if t == 4:
                kind = "masked"  # FECN, BECN, Resv6
            elif t * 8 + b in BTH_FLIP_RULES:
                extra = BTH_FLIP_RULES[t * 8 + b]
                if "truncated" in extra:
                    kind = "bad"  # the UDP length fits: the ICRC is still checked
        assert o < dlen
        out.append((bit, kind, extra))
    return out


@pytest.mark.parametrize("ipv6", [False, True], ids=["ipv4", "ipv6"])
def test_every_covered_bit(tmp_path, ipv6):
    rng = random.Random(2 if ipv6 else 1)

    def base():  # a random DestQP each, so no two flipped frames share a flow
        return frame(transport(0x04, 8, dqpn=rng.getrandbits(24)), ipv6=ipv6)

    exp = flip_expectations(base(), ipv6)
    by_kind = {}
    for bit, kind, extra in exp:
        by_kind.setdefault(kind, []).append((flip(base(), bit), extra))
    roce.assert_distinct_flows([f for k in ("bad", "masked") for f, _ in by_kind[k]])
    # one replay per kind, so a frame counted in the wrong place cannot hide behind another
    for kind, flips in by_kind.items():
        frames = [f for f, _ in flips]
        n = len(frames)
        r = replay(tmp_path, frames, name=f"{kind}.pcap")
        rules = {}
        for _, extra in flips:
            for k, v in extra.items():
                rules[k] = rules.get(k, 0) + v
        if kind == "masked":
            totals = (n, n, n, 0, 0)
        elif kind == "not_roce":
            totals = (n, 0, 0, 0, 0)
        elif kind == "truncated":
            totals = (n, n, 0, 0, n)
            rules["truncated"] = n
        elif kind == "fragment":
            totals = (n, n, 0, 0, n)
            rules["ip_fragment"] = n
        else:
            totals = (n, n, 0, n, 0)
            rules["icrc"] = n
        got = (r["frames"], r["roce"], r["icrc_ok"], r["icrc_bad"], r["icrc_unchecked"])
        assert got == totals, kind
        assert nonzero_rules(r) == rules, kind
    # the whole ICRC input beyond the headers: payload and the ICRC itself
    assert len(by_kind["bad"]) >= (8 + 4) * 8


@pytest.mark.parametrize("ipv6", [False, True], ids=["ipv4", "ipv6"])
def test_every_payload_size(tmp_path, ipv6):
    """0..320 bytes covers every remainder of the CRC's 64-byte blocks, at both alignments."""
    frames = [frame(transport(0x04, n), ipv6=ipv6) for n in range(0, 321)]
    r = replay(tmp_path, frames)
    assert_all_ok(r, len(frames))
    # ...and the byte before the ICRC (pad, payload or, with none, the PSN) is covered in each
    r = replay(tmp_path, [flip(f, (len(f) - 5) * 8 + 7) for f in frames], name="bad.pcap")
    assert (r["icrc_ok"], r["icrc_bad"]) == (0, len(frames))


def test_sizes_in_every_header_layout(tmp_path):
    """VLAN tags, IP options and xTHs shift the payload: sizes around the CRC's blocks."""
    rng = random.Random(7)
    frames = []
    for opc in (0x04, 0x05, 0x0A, 0x0B, 0x10, 0x64, 0x65, 0x44, 0xA4, 0xAB):
        for n in (1, 2, 3, 5, 6, 7, 60, 61, 62, 63, 64, 65, 66, 67, 124, 127, 128, 129, 250):
            kw = {"ipv6": rng.random() < 0.5,
                  "vlans": rng.choice([(), (5,), (5, 6)]),
                  "qinq": rng.random() < 0.5}
            if not kw["ipv6"]:
                kw["ip_options"] = b"\x01" * rng.choice([0, 4, 8, 40])
            frames.append(frame(transport(opc, n), **kw))
    r = replay(tmp_path, frames, "--set", "rd=strict")  # 0x44 laid out as IBA RD
    assert_all_ok(r, len(frames))


def test_multi_buffer_4096(tmp_path):
    """A 4096-byte PMTU packet is ~4.2 KB: beyond one page, read from the XDP frags."""
    def frames():
        return [frame(transport(0x00, 4096)), frame(transport(0x0A, 4096), ipv6=True),
                frame(transport(0x06, 4096, dmalen=1 << 20), vlans=(7, 8), qinq=True),
                frame(transport(0x0D, 4096)), frame(transport(0x04, 4093), ipv6=True)]

    good = frames()
    assert all(len(f) > 4150 for f in good)
    r = replay(tmp_path, good)
    assert_all_ok(r, 5)
    # a flipped bit near the end, far into the frags, and one at the start of the payload
    bad = [flip(f, (len(f) - 6) * 8 + 3) for f in frames()] + [flip(frames()[0], (14 + 40) * 8)]
    r = replay(tmp_path, bad, name="bad.pcap")
    assert (r["icrc_ok"], r["icrc_bad"]) == (0, 6)
    assert nonzero_rules(r) == {"icrc": 6}


def test_jumbo_9000(tmp_path):
    """A 9000-byte datagram: larger than any RoCE payload may be, but its ICRC is checked."""
    vendor = frame(roce.bth(0xC7) + roce.pattern(9000 - 20 - 8 - 12 - 4))
    send = frame(transport(0x04, 9000 - 40 - 8 - 12 - 4), ipv6=True)
    assert len(vendor) == len(send) == 9014
    r = replay(tmp_path, [vendor, send])
    assert_all_ok(r, 2, {"opcode_vendor": 1, "payload_length": 1})
    r = replay(tmp_path, [flip(vendor, 9000 * 8), flip(send, 100 * 8)], name="bad.pcap")
    assert (r["icrc_ok"], r["icrc_bad"]) == (0, 2)


def test_vlan_tags(tmp_path):
    def tp():
        return transport(0x04, 32)

    frames = [frame(tp(), vlans=(100,)), frame(tp(), vlans=(100, 200)),
              frame(tp(), vlans=(100, 200), qinq=True), frame(tp(), vlans=(4095,), ipv6=True),
              frame(tp(), vlans=(1, 2), qinq=True, ipv6=True)]
    assert struct.unpack_from(">H", frames[2], 12)[0] == 0x88A8
    r = replay(tmp_path, frames)
    assert_all_ok(r, 5)
    # the tag is outside the ICRC: changing it keeps the ICRC valid
    retag = frames[1][:14] + b"\x0f\xff" + frames[1][16:]
    r = replay(tmp_path, [retag], name="retag.pcap")
    assert_all_ok(r, 1)


def test_ip_options(tmp_path):
    opts = [b"\x94\x04\x00\x00", b"\x01" * 8, b"\x01" * 39 + b"\x00"]
    r = replay(tmp_path, [frame(transport(0x0A, 64), ip_options=o) for o in opts])
    assert_all_ok(r, 3)
    # options are covered, not masked
    r = replay(tmp_path, [flip(frame(transport(0x0A, 64), ip_options=o), (14 + 20) * 8 + 7)
                          for o in opts], name="bad.pcap")
    assert (r["icrc_ok"], r["icrc_bad"]) == (0, 3)


def test_ethernet_padding_ignored(tmp_path):
    frames = [frame(transport(0x24, 0), eth_pad=b"\xaa\x55"),  # 58 -> 60 bytes
              frame(transport(0x11), eth_pad=bytes(range(1, 21))),
              frame(transport(0x04, 0), ipv6=True, eth_pad=b"\xff" * 64),
              cnp(frame_kw={"eth_pad": b"\x00" * 4})]
    r = replay(tmp_path, frames)
    assert_all_ok(r, 4, {"cnp": 1})
