# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Mirror encapsulations for the tests, packed by hand from
../shared/reference/mirrors-and-congestion.md (never from the C headers).

wrap() puts one Ethernet frame in the outer headers a switch or a cloud sends
a mirrored copy in: ERSPAN I, II, III, GRE-TEB, VXLAN or Geneve, over IPv4 or
IPv6, with outer VLAN tags if asked.  wrap_all() wraps a list as one session
would, numbering the frames.
"""
import socket
import struct

import roce

ENCAPS = ("erspan1", "erspan2", "erspan3", "gre", "vxlan", "geneve")
# the encapsulations that carry a sequence number (the GRE S bit)
NUMBERED = ("erspan2", "erspan3", "gre")

GRE_C, GRE_K, GRE_S = 0x8000, 0x2000, 0x1000
ERSPAN2_PROTO, ERSPAN3_PROTO, TEB_PROTO = 0x88BE, 0x22EB, 0x6558
VXLAN_PORT, GENEVE_PORT = 4789, 6081

OUTER_MAC_DST = bytes.fromhex("02000000c011")
OUTER_MAC_SRC = bytes.fromhex("02000000517c")
OUTER_V4 = ("192.0.2.10", "192.0.2.1")
OUTER_V6 = ("2001:db8:5::10", "2001:db8:5::1")


def _csum(data):
    return ~roce.ones_sum(data) & 0xFFFF


def _ip(proto, body, family, src, dst, tos=0):
    if family == 6:
        s, d = socket.inet_pton(socket.AF_INET6, src), socket.inet_pton(socket.AF_INET6, dst)
        hdr = struct.pack(">IHBB", 6 << 28 | tos << 20, len(body), proto, 64) + s + d
        if proto == 17:  # UDP over IPv6 needs its checksum (RFC 8200 8.1)
            pseudo = s + d + struct.pack(">IxxxB", len(body), 17)
            c = _csum(pseudo + body[:6] + b"\0\0" + body[8:]) or 0xFFFF
            body = body[:6] + struct.pack(">H", c) + body[8:]
        return hdr + body, 0x86DD
    s, d = socket.inet_aton(src), socket.inet_aton(dst)
    hdr = struct.pack(">BBHHHBBH", 0x45, tos, 20 + len(body), 0x4242, 0x4000, 64, proto, 0) + s + d
    hdr = hdr[:10] + struct.pack(">H", _csum(hdr)) + hdr[12:]
    return hdr + body, 0x0800


def gre(proto, body, *, seq=None, key=None, csum=False, version=0):
    """A GRE header (C, K, S words as asked) and body."""
    flags = (GRE_C if csum else 0) | (GRE_K if key is not None else 0) | \
        (GRE_S if seq is not None else 0) | version
    out = struct.pack(">HH", flags, proto)
    if csum:
        out += struct.pack(">HH", 0, 0)
    if key is not None:
        out += struct.pack(">I", key)
    if seq is not None:
        out += struct.pack(">I", seq & 0xFFFFFFFF)
    out += body
    if csum:
        out = out[:4] + struct.pack(">H", _csum(out)) + out[6:]
    return out


def erspan2_header(session, *, truncated=False, vlan=0, cos=0, index=0, version=1):
    return struct.pack(">HHI", version << 12 | vlan, cos << 13 | (1 << 10 if truncated else 0) |
                       (session & 0x3FF), index & 0xFFFFF)


def erspan3_header(session, *, truncated=False, vlan=0, cos=0, timestamp=0, sgt=0, hw_id=0,
                   direction=0, gra=1, o_bit=False, version=2):
    out = struct.pack(">HHIHH", version << 12 | vlan, cos << 13 | (1 << 10 if truncated else 0) |
                      (session & 0x3FF), timestamp & 0xFFFFFFFF, sgt,
                      (hw_id & 0x3F) << 4 | direction << 3 | gra << 1 | (1 if o_bit else 0))
    if o_bit:
        out += struct.pack(">II", 0x03 << 26, 0)  # platform ID 3, the rest platform-specific
    return out


def vxlan_header(vni, *, i_flag=True):
    return struct.pack(">B3xI", 0x08 if i_flag else 0, (vni & 0xFFFFFF) << 8)


def geneve_header(vni, *, options=b"", proto=TEB_PROTO):
    return struct.pack(">BBHI", len(options) // 4, 0, proto, (vni & 0xFFFFFF) << 8) + options


def _udp(sport, dport, body):
    return struct.pack(">HHHH", sport, dport, 8 + len(body), 0) + body


def encap_body(frame, encap, *, session=0x64, seq=None, truncate=None, o_bit=False, direction=0,
               key=None, csum=False, port=None, timestamp=0):
    """What follows the outer IP header, and its IP protocol.  truncate=N: the switch cut the
    inner frame to N bytes (ERSPAN II/III set their T bit)."""
    inner = frame[:truncate] if truncate is not None else frame
    cut = truncate is not None and truncate < len(frame)
    if encap == "erspan1":
        return gre(ERSPAN2_PROTO, inner), 47
    if encap == "erspan2":
        return gre(ERSPAN2_PROTO, erspan2_header(session, truncated=cut) + inner,
                   seq=0 if seq is None else seq, key=key), 47
    if encap == "erspan3":
        return gre(ERSPAN3_PROTO, erspan3_header(session, truncated=cut, o_bit=o_bit,
                                                 direction=direction, timestamp=timestamp) + inner,
                   seq=0 if seq is None else seq, key=key), 47
    if encap == "gre":
        return gre(TEB_PROTO, inner, seq=seq, key=key, csum=csum), 47
    if encap == "vxlan":
        return _udp(0xC1C1, port or VXLAN_PORT, vxlan_header(session) + inner), 17
    if encap == "geneve":
        return _udp(0xC1C1, port or GENEVE_PORT, geneve_header(session) + inner), 17
    raise ValueError(f"unknown encapsulation {encap}")


def outer(body, proto, outer_family=4, *, vlan=None, src=None, dst=None):
    """Ethernet (VLAN tags: an id or a list, outermost first) and IP around `body`."""
    dsrc, ddst = OUTER_V6 if outer_family == 6 else OUTER_V4
    ip, ethertype = _ip(proto, body, outer_family, src or dsrc, dst or ddst)
    l2 = OUTER_MAC_DST + OUTER_MAC_SRC
    for vid in ([] if vlan is None else [vlan] if isinstance(vlan, int) else list(vlan)):
        l2 += struct.pack(">HH", 0x8100, vid)
    return l2 + struct.pack(">H", ethertype) + ip


def wrap(frame, encap, outer_family=4, *, session=0x64, seq=None, vlan=None, truncate=None,
         src=None, dst=None, **kw):
    """frame as a switch mirrors it in `encap` over an IPv4 or IPv6 outer header.

    session: the ERSPAN session ID (10 bits), the VXLAN/Geneve VNI; the GRE key is `key`.
    seq: the GRE sequence number (ERSPAN II/III always carry one: 0 when not given).
    vlan: outer VLAN id(s).  truncate: the switch cut the frame to that many bytes.
    src/dst: the outer addresses (src is who mirrors).  Other keywords: encap_body()'s.
    """
    body, proto = encap_body(frame, encap, session=session, seq=seq, truncate=truncate, **kw)
    return outer(body, proto, outer_family, vlan=vlan, src=src, dst=dst)


def wrap_all(frames, encap, outer_family=4, *, first_seq=1, **kw):
    """frames as one session mirrors them, numbered from first_seq where the encapsulation
    numbers frames."""
    numbered = encap in NUMBERED
    return [wrap(f, encap, outer_family, seq=first_seq + i if numbered else None, **kw)
            for i, f in enumerate(frames)]


def outer_len(encap, outer_family=4, *, vlan=None, **kw):
    """Bytes the encapsulation adds before the inner frame."""
    return len(wrap(b"", encap, outer_family, vlan=vlan, seq=1 if encap in NUMBERED else None, **kw))
