# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""An independent RoCEv2 frame builder for the tests.

Written from ../shared/reference/rocev2.md alone, never from the C headers,
so a mistake in the validator's opcode table or ICRC masking cannot hide in
a shared definition.  scapy builds Ethernet, VLAN tags, IP and UDP; the BTH,
every extended header and the ICRC are packed here by hand.

transport() returns the UDP payload without its ICRC (BTH, xTHs, payload,
pad); frame() wraps it in Ethernet/IP/UDP and appends the ICRC.
"""
import itertools
import json
import logging
import os
import struct
import zlib
from pathlib import Path

logging.getLogger("scapy.runtime").setLevel(logging.ERROR)

from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.layers.inet6 import IPv6, IPv6ExtHdrFragment  # noqa: E402
from scapy.layers.l2 import Dot1AD, Dot1Q, Ether  # noqa: E402
from scapy.packet import Raw  # noqa: E402

ROCE_PORT = 4791

# OpCode[7:5] (rocev2.md section 2)
RC, UC, RD, UD, CNP, XRC = 0, 1, 2, 3, 4, 5
TRANSPORT_NAMES = {RC: "RC", UC: "UC", RD: "RD", UD: "UD", XRC: "XRC"}

# Payload rules (rocev2.md section 3, last column)
NONE, PMTU, LAST, ONLY, EIGHT = "none", "pmtu", "last", "only", "eight"

# Extended header sizes (rocev2.md section 3, second table)
XTH_LEN = {"RDETH": 4, "DETH": 8, "XRCETH": 4, "RETH": 16, "AtomicETH": 28, "AETH": 4,
           "AtomicAckETH": 8, "ImmDt": 4, "IETH": 4, "FETH": 4}

# OpCode[4:0] -> (name, operation-specific xTHs in wire order, payload rule)
OPS = {
    0x00: ("SEND_FIRST", (), PMTU),
    0x01: ("SEND_MIDDLE", (), PMTU),
    0x02: ("SEND_LAST", (), LAST),
    0x03: ("SEND_LAST_WITH_IMMEDIATE", ("ImmDt",), LAST),
    0x04: ("SEND_ONLY", (), ONLY),
    0x05: ("SEND_ONLY_WITH_IMMEDIATE", ("ImmDt",), ONLY),
    0x06: ("RDMA_WRITE_FIRST", ("RETH",), PMTU),
    0x07: ("RDMA_WRITE_MIDDLE", (), PMTU),
    0x08: ("RDMA_WRITE_LAST", (), LAST),
    0x09: ("RDMA_WRITE_LAST_WITH_IMMEDIATE", ("ImmDt",), LAST),
    0x0A: ("RDMA_WRITE_ONLY", ("RETH",), ONLY),
    0x0B: ("RDMA_WRITE_ONLY_WITH_IMMEDIATE", ("RETH", "ImmDt"), ONLY),
    0x0C: ("RDMA_READ_REQUEST", ("RETH",), NONE),
    0x0D: ("RDMA_READ_RESPONSE_FIRST", ("AETH",), PMTU),
    0x0E: ("RDMA_READ_RESPONSE_MIDDLE", (), PMTU),
    0x0F: ("RDMA_READ_RESPONSE_LAST", ("AETH",), LAST),
    0x10: ("RDMA_READ_RESPONSE_ONLY", ("AETH",), ONLY),
    0x11: ("ACKNOWLEDGE", ("AETH",), NONE),
    0x12: ("ATOMIC_ACKNOWLEDGE", ("AETH", "AtomicAckETH"), NONE),
    0x13: ("COMPARE_SWAP", ("AtomicETH",), NONE),
    0x14: ("FETCH_ADD", ("AtomicETH",), NONE),
    0x15: ("RESYNC", (), NONE),  # RD only (the erratum in rocev2.md section 7)
    0x16: ("SEND_LAST_WITH_INVALIDATE", ("IETH",), LAST),
    0x17: ("SEND_ONLY_WITH_INVALIDATE", ("IETH",), ONLY),
    0x1C: ("FLUSH", ("FETH", "RETH"), NONE),
    0x1D: ("ATOMIC_WRITE", ("RETH",), EIGHT),
}
BY_NAME = {name: op for op, (name, _, _) in OPS.items()}

# Operations each transport defines; everything else in it is reserved.
DEFINED = {
    RC: set(OPS) - {0x15},
    UC: set(range(0x00, 0x0C)),
    RD: set(range(0x00, 0x16)) | {0x1C},
    UD: {0x04, 0x05},
    XRC: set(OPS) - {0x15},
}
RESPONSES = {0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12}  # responder-to-requester: no DETH/XRCETH
SE_ALLOWED = {0x02, 0x03, 0x04, 0x05, 0x09, 0x0B, 0x16, 0x17}
DMALEN_OPS = {0x0A, 0x0B}
CNP_OPCODE = 0x81


def opcode(transport_, name):
    return transport_ << 5 | BY_NAME[name]


def headers(opc):
    """The xTH names an opcode carries after its BTH, in wire order."""
    tr, op = opc >> 5, opc & 0x1F
    own = ()
    if tr == RD:
        own = ("RDETH",) if op in RESPONSES else ("RDETH", "DETH")
    elif tr == UD:
        own = ("DETH",)
    elif tr == XRC and op not in RESPONSES:
        own = ("XRCETH",)
    return own + OPS[op][1]


def payload_rule(opc):
    return OPS[opc & 0x1F][2]


def legal_payload(opc, pmtu=1024):
    """A payload size the opcode accepts (with that PMTU)."""
    return {NONE: 0, PMTU: pmtu, LAST: 100, ONLY: 64, EIGHT: 8}[payload_rule(opc)]


# Every frame gets its own DestQP unless told otherwise, so each is the first
# packet of its flow and no sequence rule (PSN, opcode sequence, MSN) can apply to it.
_next_qpn = itertools.count(0x100)


def bth(opc, *, se=False, migreq=False, padcnt=0, tver=0, pkey=0xFFFF, fecn=False, becn=False,
        resv6=0, dqpn=None, ackreq=False, resv7=0, psn=0x000456):
    if dqpn is None:
        dqpn = next(_next_qpn)
    return struct.pack(">BBHBBHBBH", opc,
                       se << 7 | migreq << 6 | (padcnt & 3) << 4 | (tver & 0xF),
                       pkey,
                       fecn << 7 | becn << 6 | (resv6 & 0x3F),
                       dqpn >> 16 & 0xFF, dqpn & 0xFFFF,
                       ackreq << 7 | (resv7 & 0x7F),
                       psn >> 16 & 0xFF, psn & 0xFFFF)


def xth(name, *, resv8=0, ee=0x000042, qkey=0x11111111, srcqp=0x000077, xrcsrq=0x000033,
        va=0x10000, rkey=0x1234, dmalen=0, syndrome=0, msn=7, imm=0xDEADBEEF, swap=1, compare=2,
        orig=0x0102030405060708, feth=0x00000001):
    if name == "RDETH":
        return struct.pack(">BBH", resv8, ee >> 16 & 0xFF, ee & 0xFFFF)
    if name == "DETH":
        return struct.pack(">IBBH", qkey, resv8, srcqp >> 16 & 0xFF, srcqp & 0xFFFF)
    if name == "XRCETH":
        return struct.pack(">BBH", resv8, xrcsrq >> 16 & 0xFF, xrcsrq & 0xFFFF)
    if name == "RETH":
        return struct.pack(">QII", va, rkey, dmalen)
    if name == "AtomicETH":
        return struct.pack(">QIQQ", va, rkey, swap, compare)
    if name == "AETH":
        return struct.pack(">BBH", syndrome, msn >> 16 & 0xFF, msn & 0xFFFF)
    if name == "AtomicAckETH":
        return struct.pack(">Q", orig)
    if name in ("ImmDt", "IETH"):
        return struct.pack(">I", imm)
    if name == "FETH":
        return struct.pack(">I", feth)
    raise ValueError(name)


def pattern(n, seed=0):
    return bytes((seed + 7 * i + (i >> 8)) & 0xFF for i in range(n))


def transport(opc, payload=None, *, padcnt=None, pad=None, dmalen=None, resv8=None,
              cnp_reserved=None, **kw):
    """BTH + xTHs + payload + pad of opcode `opc`: everything of the UDP payload but the ICRC.

    payload: bytes, or a size (filled with a pattern); default a legal size.
    padcnt: default what makes payload + pad a multiple of 4; pad: the pad bytes (default zeros).
    dmalen: RETH.DMALen, default the payload size (legal for WRITE_ONLY).
    resv8: the Resv8 byte of RDETH, DETH and XRCETH: an int for all, or {name: value}.
    Other keywords go to bth() or xth() by name.
    """
    bth_keys = {"se", "migreq", "tver", "pkey", "fecn", "becn", "resv6", "dqpn", "ackreq",
                "resv7", "psn"}
    bkw = {k: v for k, v in kw.items() if k in bth_keys}
    xkw = {k: v for k, v in kw.items() if k not in bth_keys}
    if opc == CNP_OPCODE:
        bkw.setdefault("becn", True)
        body = bytes(16) if cnp_reserved is None else cnp_reserved
        return bth(opc, padcnt=padcnt or 0, **bkw) + body
    if payload is None:
        payload = legal_payload(opc) if opc >> 5 < 6 else 0
    if isinstance(payload, int):
        payload = pattern(payload, opc)
    if padcnt is None:
        padcnt = -len(payload) % 4
    if pad is None:
        pad = bytes(padcnt)
    hdr = b""
    if opc >> 5 < 6:
        for name in headers(opc):
            extra = {}
            if name in ("RDETH", "DETH", "XRCETH") and resv8 is not None:
                extra["resv8"] = resv8.get(name, 0) if isinstance(resv8, dict) else resv8
            if name == "RETH":
                extra["dmalen"] = len(payload) if dmalen is None else dmalen
            hdr += xth(name, **xkw, **extra)
    return bth(opc, padcnt=padcnt, **bkw) + hdr + payload + pad


def icrc(datagram):
    """The ICRC (the 4 wire bytes) of an IP datagram whose UDP payload ends with the ICRC slot.

    rocev2.md section 5: 8 x 0xFF, then IP with TOS/TTL/checksum (IPv4) or traffic
    class/flow label/hop limit (IPv6) all ones, UDP with checksum 0xFFFF, BTH byte 4
    0xFF, the rest as it is; zlib's crc32 stored least-significant byte first.
    """
    b = bytearray(datagram)
    if b[0] >> 4 == 4:
        iphl = (b[0] & 0x0F) * 4
        b[1] = 0xFF
        b[8] = 0xFF
        b[10:12] = b"\xff\xff"
    else:
        iphl = 40
        b[0] |= 0x0F
        b[1:4] = b"\xff\xff\xff"
        b[7] = 0xFF
    udplen = struct.unpack_from(">H", b, iphl + 4)[0]
    b[iphl + 6:iphl + 8] = b"\xff\xff"
    if len(b) > iphl + 12:  # no BTH byte 4 in a datagram cut short
        b[iphl + 12] = 0xFF
    end = iphl + udplen - 4
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(b[:end])))


def ones_sum(data):
    """The ones' complement sum of data as 16-bit words, odd data padded with a zero byte."""
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f">{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def with_icrc_in_udp_checksum(out, tp_len, icrc_bytes):
    """out, whose UDP checksum was computed over a zero ICRC, its checksum updated for the ICRC
    it ends with (RFC 1624): what building it again would give, at half the cost of scapy's
    building, which is most of what making a frame costs."""
    udp = len(out) - tp_len - 12
    at = 8 + tp_len  # the ICRC's offset in the datagram, words counted from its start
    total = ones_sum(b"\0" * (at % 2) + icrc_bytes) + (~struct.unpack_from(">H", out, udp + 6)[0] & 0xFFFF)
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    # RFC 768: a sum that comes to zero is sent as all ones
    return out[:udp + 6] + struct.pack(">H", ~total & 0xFFFF or 0xFFFF) + out[udp + 8:]


MAC_DST, MAC_SRC = "02:00:00:00:00:02", "02:00:00:00:00:01"
V4_SRC, V4_DST = "192.0.2.1", "192.0.2.2"
V6_SRC, V6_DST = "2001:db8::1", "2001:db8::2"


def frame(tp, *, ipv6=False, vlans=(), prios=(), qinq=False, src=None, dst=None, tos=0x02, ttl=64,
          tc=0x02, fl=0x12345, hlim=64, ip_id=1, df=True, ip_options=b"", mf=False, v6frag=False,
          frag_offset=0, sport=0xC000, dport=ROCE_PORT, udp_chksum=None, ip_len=None,
          udp_len=None, bad_icrc=False, icrc_bytes=None, eth_pad=b"", cut=0):
    """An Ethernet frame carrying transport bytes `tp` and their ICRC.

    vlans: VLAN ids, outermost first (up to 2); qinq makes the outer tag 802.1ad; prios: their
    priorities (PCP), 0 where not given.
    ip_options: raw IPv4 option bytes (a multiple of 4).  mf/frag_offset: IPv4
    fragment fields; v6frag adds an IPv6 fragment header (M=1).
    ip_len/udp_len override the lengths (the ICRC still follows the real ones).
    bad_icrc flips the ICRC's last bit; icrc_bytes replaces it outright.
    eth_pad: bytes after the IP datagram; cut: bytes removed from the end.
    """
    l2 = Ether(dst=MAC_DST, src=MAC_SRC)
    for i, vid in enumerate(vlans):
        prio = prios[i] if i < len(prios) else 0
        l2 = l2 / (Dot1AD(vlan=vid, prio=prio) if qinq and i == 0 else Dot1Q(vlan=vid, prio=prio))
    if ipv6:
        l3 = IPv6(src=src or V6_SRC, dst=dst or V6_DST, tc=tc, fl=fl, hlim=hlim, plen=ip_len)
        if v6frag:
            l3 = l3 / IPv6ExtHdrFragment(m=1, offset=frag_offset, id=0x1234)
    else:
        flags = (2 if df else 0) | (1 if mf else 0)
        l3 = IP(src=src or V4_SRC, dst=dst or V4_DST, tos=tos, ttl=ttl, id=ip_id, flags=flags,
                frag=frag_offset, len=ip_len)
        if ip_options:
            l3.options = ip_options

    def build(body, chksum):
        return bytes(l2 / l3 / UDP(sport=sport, dport=dport, len=udp_len, chksum=chksum) /
                     Raw(body))

    # built once, with a zero ICRC: the ICRC masks the UDP checksum out
    raw = build(tp + bytes(4), udp_chksum)
    l3off = 14 + 4 * len(vlans)
    if icrc_bytes is None:
        # a fragment is never ICRC-checked
        icrc_bytes = bytes(4) if v6frag else icrc(raw[l3off:])
    if bad_icrc:
        icrc_bytes = icrc_bytes[:3] + bytes([icrc_bytes[3] ^ 1])
    out = raw[:-4] + icrc_bytes
    if udp_chksum is None:
        out = with_icrc_in_udp_checksum(out, len(tp), icrc_bytes)
    out += eth_pad
    return out[:len(out) - cut] if cut else out


def roce(opc, payload=None, *, ipv6=False, frame_kw=None, **kw):
    """A frame of opcode `opc`, valid unless the keywords say otherwise."""
    return frame(transport(opc, payload, **kw), ipv6=ipv6, **(frame_kw or {}))


def cnp(**kw):
    frame_kw = kw.pop("frame_kw", {})
    ipv6 = kw.pop("ipv6", False)
    return frame(transport(CNP_OPCODE, **kw), ipv6=ipv6, **frame_kw)


# MAC control frames (mirrors-and-congestion.md): EtherType 0x8808, a 2-byte opcode; PFC
# (IEEE 802.1Qbb) is opcode 0x0101, a class-enable vector (bit n = priority n), then eight pause
# times in quanta of 512 bit times (0 = resume), to 01:80:C2:00:00:01.
PFC_DST = "01:80:c2:00:00:01"


def pfc(quanta, *, vector=None, opcode=0x0101, dst=PFC_DST, vlans=(), prios=(), cut=0):
    """A PFC frame pausing priority p for quanta[p] (a dict); vector defaults to the priorities
    given.  Padded to the 60 bytes of a minimum Ethernet frame, as a NIC sends it."""
    if vector is None:
        vector = sum(1 << p for p in quanta)
    times = [quanta.get(p, 0) for p in range(8)]
    l2 = Ether(dst=dst, src=MAC_SRC, type=0x8808)
    if vlans:
        l2 = Ether(dst=dst, src=MAC_SRC)
        for i, vid in enumerate(vlans):
            l2 = l2 / Dot1Q(vlan=vid, prio=prios[i] if i < len(prios) else 0)
        l2.lastlayer().type = 0x8808
    out = bytes(l2 / Raw(struct.pack(">HH8H", opcode, vector, *times)))
    out += bytes(max(0, 60 - len(out)))
    return out[:len(out) - cut] if cut else out


def l3_offset(frm):
    """Offset of the IP header: after Ethernet and any VLAN tags."""
    off = 12
    while struct.unpack_from(">H", frm, off)[0] in (0x8100, 0x88A8):
        off += 4
    return off + 2


PCAP_EPOCH = 1700000000

# --- mirror-wrapped runs ---------------------------------------------------
# ROCEVAL_TEST_ENCAP: "all", or KIND:FAMILY[,KIND:FAMILY...] (erspan2:6).  Every Ethernet pcap
# the tests replay through replay_json() is then judged again, in the same replay, wrapped in
# each of those mirror encapsulations over that outer IP version as one session sends them
# (tests/encap.py): each wrapped copy must give the bare file's result exactly, but for the
# mirror totals and the session list, checked here, and the outer headers' bytes.
# tests/test_mirror_wrapped.py runs the exact-count suites so; tests of live attachments are not
# run so (conftest).
WRAP_KINDS = ("erspan1", "erspan2", "erspan3", "gre", "vxlan")


def _wraps(spec):
    if spec == "all":
        return tuple((k, f) for k in WRAP_KINDS for f in (4, 6))
    wraps = tuple((k, int(f)) for k, f in (w.split(":") for w in spec.split(","))) if spec else ()
    assert all(k in WRAP_KINDS and f in (4, 6) for k, f in wraps), f"ROCEVAL_TEST_ENCAP={spec}"
    return wraps


WRAPS = _wraps(os.environ.get("ROCEVAL_TEST_ENCAP", ""))
PCAP_MAGICS = (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1")  # little-endian, microseconds or nanoseconds


def wrap_capture(path, kind, family):
    """A copy of the Ethernet pcap `path` (little-endian) beside it, each frame wrapped as one
    session of `kind` over IPv`family` sends it, numbered from 1 where it numbers frames, how
    many it wrapped, and whether a record was cut; None for another capture.  A cut frame stays cut as much, its outer lengths
    the whole frame's.  A frame shorter than an Ethernet header stays bare: no switch mirrors one,
    and the decapsulation would call its mirror malformed."""
    import encap

    data = path.read_bytes()
    if data[:4] not in PCAP_MAGICS or len(data) < 24 or struct.unpack_from("<I", data, 20)[0] != 1:
        return None
    over = encap.outer_len(kind, family)
    out = [data[:16] + struct.pack("<II", struct.unpack_from("<I", data, 16)[0] + over, 1)]
    off, seq, cut = 24, 1, False
    while off + 16 <= len(data):
        sec, frac, caplen, wire = struct.unpack_from("<IIII", data, off)
        frame = data[off + 16:off + 16 + caplen]
        off, cut = off + 16 + caplen, cut or caplen < wire
        if wire < 14:
            out.append(struct.pack("<IIII", sec, frac, caplen, wire) + frame)
            continue
        whole = frame + bytes(max(0, wire - caplen))
        w = encap.wrap(whole, kind, family, seq=seq if kind in encap.NUMBERED else None)[:caplen + over]
        out.append(struct.pack("<IIII", sec, frac, len(w), wire + over) + w)
        seq += 1
    copy = path.with_name(f"{path.name}.{kind}-{family}.pcap")
    copy.write_bytes(b"".join(out))
    return copy, seq - 1, cut


def assert_wrapped_as_bare(w, bare, kind, family, n):
    """w, the replay of bare's frames, n of them wrapped in kind over IPv`family`: those one
    session's, none lost, the outer headers' bytes on top; all else as bare.  A frame that is itself a
    mirror's bare (a bit flip can send one to UDP 4789) is one nested in the wrapped copy, never
    taken apart twice, and a malformed one is malformed inside it too."""
    import encap

    where = f"wrapped in {kind} over IPv{family}"
    assert (w["mirror_frames"], w["mirror_lost"], w["mirror_malformed"], w["mirror_nested"],
            w["mirror_truncated"], w["mirror_sessions_full"]) == \
        (n, 0, bare["mirror_malformed"], bare["mirror_frames"], 0, 0), where
    assert [(m["encap"], m["frames"], m["lost"], m["nested"]) for m in w["mirrors"]] == \
        ([(kind, n, 0, bare["mirror_frames"])] if n else []), where
    assert w["bytes"] == bare["bytes"] + n * encap.outer_len(kind, family), where
    assert {k: v for k, v in w.items() if not k.startswith("mirror") and k != "bytes"} == \
        {k: v for k, v in bare.items() if not k.startswith("mirror") and k != "bytes"}, where


def wrapped_copies(path):
    """The WRAPS copies of the capture `path` (none of a real capture's) as (kind, family,
    wrap_capture's (path, frames, cut))."""
    from conftest import CAPTURES

    path = Path(path)
    return [] if CAPTURES in path.resolve().parents else \
        [(k, f, c) for k, f in WRAPS if (c := wrap_capture(path, k, f))]


def replay_wrapped(path, *opts):
    """replay --json of the capture `path` (opts before it) and of its WRAPS copies, in one
    replay; each copy held to the bare result, which is returned."""
    from conftest import run

    copies = wrapped_copies(path)
    res = run("replay", "--json", *opts, path, *[c[0] for _, _, c in copies], check=True)
    results = [json.loads(line) for line in res.stdout.splitlines()]
    if not copies:
        return results[0]
    assert len(results) == 1 + len(copies), res.stdout[-2000:]
    return hold_copies(results, copies)


def hold_copies(results, copies):
    """results: replay --json of a capture then of its copies (wrapped_copies); each copy held
    to the bare result, which is returned."""
    bare = {k: v for k, v in results[0].items() if k != "file"}
    if bare["snapped"] and not any(cut for _, _, (_, _, cut) in copies):
        # replay inferred a cut from records that all stop at one length; wrapped, their outer
        # lengths say the inner frames were whole at that length: nothing to compare
        return bare
    for (kind, family, (_, n, _)), w in zip(copies, results[1:]):
        assert_wrapped_as_bare({k: v for k, v in w.items() if k != "file"}, bare, kind, family, n)
    return bare


def pcap_bytes(frames, linktype=1, snaplen=65535, times=None):
    """times: each frame's capture time in seconds after PCAP_EPOCH (default: 0, 1, 2 ...).
    A frame longer than snaplen is cut to it and records its whole length, as tcpdump -s does."""
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, snaplen, linktype)]
    for i, f in enumerate(frames):
        t = i if times is None else times[i]
        kept = min(len(f), snaplen)
        out.append(struct.pack("<IIII", PCAP_EPOCH + int(t), round(t % 1 * 1e6), kept, len(f)))
        out.append(bytes(f[:kept]))
    # joined once: growing one bytes object copies it whole for every frame
    return b"".join(out)


def write_pcap(path, frames, linktype=1, times=None, snaplen=65535):
    """Writes frames (bytes) to a classic little-endian pcap; returns the path."""
    with open(path, "wb") as f:
        f.write(pcap_bytes(frames, linktype, snaplen, times=times))
    return path


# --- replaying frames through roceval ------------------------------------

def check_accounting(r):
    """Every RoCEv2 frame is accounted for exactly once."""
    assert r["roce"] == r["icrc_ok"] + r["icrc_bad"] + r["icrc_unchecked"] + r["icrc_skipped"], r
    assert r["roce"] <= r["frames"], r
    assert r["rules"]["icrc"] == r["icrc_bad"], r
    assert r["roce"] == r["rocev1"] + r["rocev2_ipv4"] + r["rocev2_ipv6"], r
    # a fragment, an over-long length or a capture's cut is the only reason an ICRC goes unchecked
    assert r["icrc_unchecked"] <= (r["rules"]["truncated"] + r["rules"]["ip_fragment"] +
                                   r["snapped"]), r


def replay_frames(path, frames, *opts, times=None):
    """Writes frames to the pcap `path`, replays it and returns the checked JSON result."""
    from conftest import replay_json

    write_pcap(path, frames, times=times)
    r = replay_json(path, *opts)
    check_accounting(r)
    return r


def flow_key(frm):
    """(source, destination, DestQP) of a frame: what the flow table keys on."""
    l3 = l3_offset(frm)
    if frm[l3] >> 4 == 6:
        src, dst, bth_off = frm[l3 + 8:l3 + 24], frm[l3 + 24:l3 + 40], l3 + 48
    else:
        iphl = (frm[l3] & 0x0F) * 4
        src, dst, bth_off = frm[l3 + 12:l3 + 16], frm[l3 + 16:l3 + 20], l3 + iphl + 8
    return src, dst, frm[bth_off + 5:bth_off + 8]


def assert_distinct_flows(frames):
    """Each frame the first of its flow: no sequence rule can apply to any of them."""
    keys = [flow_key(f) for f in frames]
    assert len(set(keys)) == len(keys)


# Linux cooked capture link types (`tcpdump -i any`)
SLL, SLL2 = 113, 276


def cooked(frame, linktype, *, proto=None, strip_vlan=False, halen=6):
    """An Ethernet frame as the kernel hands it to a cooked capture: the link header replaced by
    the cooked one (pcap/sll.h), the sender's MAC in the address field."""
    src, etype, body = frame[6:12], struct.unpack_from(">H", frame, 12)[0], frame[14:]
    if strip_vlan and etype in (0x8100, 0x88A8):
        etype, body = struct.unpack_from(">H", body, 2)[0], body[4:]
    etype = etype if proto is None else proto
    addr = (src if halen == 6 else bytes(halen))[:8].ljust(8, b"\0")
    if linktype == SLL:
        # packet type 0 (to us), ARPHRD_ETHER, address length, address, protocol
        return struct.pack(">HHH8sH", 0, 1, halen, addr, etype) + body
    # protocol, reserved, interface index, ARPHRD_ETHER, packet type, address length, address
    return struct.pack(">HHIHBB8s", etype, 0, 3, 1, 0, halen, addr) + body


# Raw IP capture link types (tunnel interfaces, cloud capture services): RAW, whose records' first
# nibble tells IPv4 from IPv6, and IPV4 and IPV6, one family each
RAW, IPV4, IPV6 = 101, 228, 229


def raw_ip(frame):
    """An Ethernet frame as a raw IP capture records it: its IP packet, the Ethernet header and
    any VLAN tags gone."""
    return bytes(frame[l3_offset(frame):])


def pcapng_bytes(frames, linktype=1, times=None):
    """The same frames as a pcapng file: section header, one interface, enhanced packet blocks.
    times: seconds, as pcap_bytes takes them (default: one microsecond apart)."""
    def block(btype, body):
        body += bytes(-len(body) % 4)
        n = len(body) + 12
        return struct.pack("<II", btype, n) + body + struct.pack("<I", n)

    out = [block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1)),
           block(1, struct.pack("<HHI", linktype, 0, 65535))]
    for i, f in enumerate(frames):
        us = i if times is None else (PCAP_EPOCH * 10**6 + round(times[i] * 1e6))
        out.append(block(6, struct.pack("<IIIII", 0, us >> 32, us & 0xFFFFFFFF, len(f), len(f)) + bytes(f)))
    return b"".join(out)
