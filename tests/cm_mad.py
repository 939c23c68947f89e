# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""An independent RDMA CM builder for the tests: CM MADs on UD QP1, and whole handshakes.

Written from ../shared/reference/rdma-cm.md and checked field by field against tshark's
CM dissector (test_cm.py), never from the C headers.
"""
import struct
from dataclasses import dataclass

import roce

REQ, MRA, REJ, REP, RTU, DREQ, DREP = 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16
SIDR_REQ, SIDR_REP, LAP, APR = 0x17, 0x18, 0x19, 0x1A
CM_QKEY = 0x80010000
MTU_CODE = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}


def service_id(port, space=0x06):
    """RDMA CM IP ServiceID: 0x0000000001 | port space | port."""
    return 0x0000000001 << 24 | space << 16 | port


def mad(attr, body, tid=0x1234):
    """A 256-byte CM MAD: common header (base version 1, class 0x07, version 2, Send) and body."""
    hdr = struct.pack(">BBBBHHQHHI", 1, 0x07, 2, 0x03, 0, 0, tid, attr, 0, 0)
    body = bytes(body)
    assert len(body) <= 232
    return hdr + body + bytes(232 - len(body))


def req_body(comm, sid, qpn, psn, *, pkey=0xFFFF, mtu=1024, retry=7, rnr=7, ack_timeout=0x13):
    b = bytearray(96)
    struct.pack_into(">I", b, 0, comm)
    struct.pack_into(">Q", b, 8, sid)
    struct.pack_into(">Q", b, 16, 0x0002C90300A0B0C0)  # Local CA GUID
    struct.pack_into(">I", b, 32, qpn << 8 | 1)  # QPN | responder resources
    struct.pack_into(">I", b, 44, psn << 8 | 0x16 << 3 | retry)
    struct.pack_into(">H", b, 48, pkey)
    b[50] = MTU_CODE.get(mtu, mtu if mtu < 16 else 0) << 4 | rnr
    b[51] = 0xF0  # max CM retries
    struct.pack_into(">HH", b, 52, 0xFFFF, 0xFFFF)  # primary LIDs
    b[95] = ack_timeout << 3
    return bytes(b)


def rep_body(comm, remote, qpn, psn, *, rnr=7):
    b = bytearray(36)
    struct.pack_into(">II", b, 0, comm, remote)
    struct.pack_into(">I", b, 12, qpn << 8)
    struct.pack_into(">I", b, 20, psn << 8)
    b[24], b[25], b[26], b[27] = 1, 1, 0x10 << 3, rnr << 5
    struct.pack_into(">Q", b, 28, 0x0002C90300D0E0F0)
    return bytes(b)


def ids_body(comm, remote, extra=b""):
    return struct.pack(">II", comm, remote) + extra


def rej_body(comm, remote, reason, msg=0):
    """msg: 0 = REQ, 1 = REP, 2 = other message rejected."""
    return ids_body(comm, remote, struct.pack(">BBH", msg << 6, 0, reason))


def mra_body(comm, remote, msg=0, timeout=0x10):
    return ids_body(comm, remote, struct.pack(">BB", msg << 6, timeout << 3))


def dreq_body(comm, remote, remote_qpn):
    return ids_body(comm, remote, struct.pack(">I", remote_qpn << 8))


def frame(src, dst, payload, *, ipv6=False, bad_icrc=False):
    """A UD SEND_ONLY to QP1 from QP1 carrying `payload` (a MAD)."""
    return roce.roce(0x64, payload, dqpn=1, psn=0, qkey=CM_QKEY, srcqp=1, ipv6=ipv6,
                     frame_kw={"src": src, "dst": dst, "bad_icrc": bad_icrc})


@dataclass
class Conn:
    """One RC connection between an initiator (a) and a responder (b)."""
    a: str = "192.0.2.1"
    b: str = "192.0.2.2"
    a_qpn: int = 0x137
    b_qpn: int = 0x167
    a_psn: int = 0x9F931B  # the PSN a's QP receives first (announced in the REQ)
    b_psn: int = 0xBEE37A  # the PSN b's QP receives first (announced in the REP)
    a_comm: int = 0x71EF7529
    b_comm: int = 0xC25B8B76
    port: int = 4420
    space: int = 0x06
    mtu: int = 1024
    pkey: int = 0xFFFF
    tid: int = 0xB2975EF71
    ipv6: bool = False

    def cm(self, attr, body, *, from_a=True, tid=None, bad_icrc=False):
        src, dst = (self.a, self.b) if from_a else (self.b, self.a)
        return frame(src, dst, mad(attr, body, self.tid if tid is None else tid), ipv6=self.ipv6,
                     bad_icrc=bad_icrc)

    def req(self, **kw):
        return self.cm(REQ, req_body(self.a_comm, service_id(self.port, self.space), self.a_qpn,
                                     self.a_psn, pkey=self.pkey, mtu=self.mtu, **kw))

    def rep(self, **kw):
        return self.cm(REP, rep_body(self.b_comm, self.a_comm, self.b_qpn, self.b_psn, **kw),
                       from_a=False)

    def rtu(self):
        return self.cm(RTU, ids_body(self.a_comm, self.b_comm))

    def rej(self, reason, from_a=False):
        comm, remote = (self.a_comm, self.b_comm) if from_a else (0, self.a_comm)
        return self.cm(REJ, rej_body(comm, remote, reason), from_a=from_a)

    def mra(self):
        return self.cm(MRA, mra_body(self.b_comm, self.a_comm), from_a=False)

    def dreq(self, from_a=True):
        if from_a:
            return self.cm(DREQ, dreq_body(self.a_comm, self.b_comm, self.b_qpn), tid=self.tid + 1)
        return self.cm(DREQ, dreq_body(self.b_comm, self.a_comm, self.a_qpn), from_a=False,
                       tid=self.tid + 1)

    def drep(self, from_a=False):
        if from_a:
            return self.cm(DREP, ids_body(self.a_comm, self.b_comm), tid=self.tid + 1)
        return self.cm(DREP, ids_body(self.b_comm, self.a_comm), from_a=False, tid=self.tid + 1)

    def handshake(self):
        return [self.req(), self.rep(), self.rtu()]

    def teardown(self):
        return [self.dreq(), self.drep()]

    def to_b(self, name, psn, payload=None, transport=roce.RC, **kw):
        """A request (or response) from a to b's QP."""
        return roce.roce(roce.opcode(transport, name), payload, psn=psn, dqpn=self.b_qpn,
                         ipv6=self.ipv6, frame_kw={"src": self.a, "dst": self.b}, **kw)

    def to_a(self, name, psn, payload=None, transport=roce.RC, **kw):
        return roce.roce(roce.opcode(transport, name), payload, psn=psn, dqpn=self.a_qpn,
                         ipv6=self.ipv6, frame_kw={"src": self.b, "dst": self.a}, **kw)

    def conversation(self):
        """A SEND each way, each ACKed, starting at the announced PSNs."""
        return [self.to_b("SEND_ONLY", self.b_psn, 64), self.to_a("ACKNOWLEDGE", self.b_psn),
                self.to_a("SEND_ONLY", self.a_psn, 16), self.to_b("ACKNOWLEDGE", self.a_psn),
                self.to_b("SEND_ONLY", self.b_psn + 1, 8), self.to_a("ACKNOWLEDGE", self.b_psn + 1)]
