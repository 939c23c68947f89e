# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Every per-packet rule and telemetry counter: frames that must trip it, near misses that must not.

Each case replays its frames through the XDP program and asserts the exact set
of non-zero rule counters and the exact frame totals.  Frames come from
tests/roce.py, which knows the wire format only from rocev2.md.  The stateful
rules (PSN, opcode sequence, MSN) are tested elsewhere; every frame here is the first of its
flow, so they must stay zero.
"""
import json

import pytest

import roce
from conftest import nonzero_rules, poke, replay_batch, run
from roce import CNP_OPCODE, RC, RD, UC, UD, XRC, cnp, frame, opcode, roce as rframe, transport

STATEFUL = {"psn_gap", "psn_duplicate", "opcode_sequence", "msn_regress", "pmtu_inconsistent",
            "flow_evicted"}
# RDMA CM rules judge a frame against a handshake seen before it: tests/test_cm.py trips each.
STATEFUL |= {"cm", "cm_established", "cm_rep_unknown", "cm_rtu_unknown", "cm_dreq_unknown",
             "cm_pending", "cm_start_psn", "cm_pkey", "cm_rej", "cm_mra", "cm_retry", "conn_evicted",
             "conn_expired"}
# Retransmission rules judge a request against its first transmission: tests/test_retx.py.
STATEFUL |= {"retx_episode", "retx_changed", "retx_uncompared", "retx_timeout", "nak_psn_wrong",
             "go_back_early", "go_back_late"}
# Timer rules judge a retry against when its NAK or its first transmission came: test_latency.py.
STATEFUL |= {"retx_timeout_early", "rnr_retry_early", "read_rerequest"}
# Reordering and a READ's PSN count judge a request against the ones before it: test_reorder.py.
STATEFUL |= {"psn_reorder", "psn_unjudged"}
# CNP pacing and CE answered judge a frame against the CNPs and marks before it: test_congestion.py.
STATEFUL |= {"cnp_gap", "ce_unanswered"}


class Case:
    """Frames, the options to replay them with, and what roceval must count.

    rule/kind say which rule the case is about and whether it must trip it
    ("trip") or must not ("near"), for the coverage check at the end.
    """

    def __init__(self, rule, kind, name, frames, rules, *, opts=(), roce=None, unchecked=0):
        self.rule, self.kind, self.name = rule, kind, name
        self.frames = frames if isinstance(frames, list) else [frames]
        self.rules = rules
        self.opts = opts
        self.roce = len(self.frames) if roce is None else roce
        self.unchecked = unchecked

    @property
    def id(self):
        return f"{self.rule}-{self.kind}-{self.name}"


CASES = []


def case(*a, **kw):
    CASES.append(Case(*a, **kw))


def tname(opc):
    tr = opc >> 5
    return f"{roce.TRANSPORT_NAMES.get(tr, 'CNP')}_{roce.OPS[opc & 0x1F][0]}"




def all_defined():
    return [tr << 5 | op for tr, ops in roce.DEFINED.items() for op in sorted(ops)]


# --- valid frames: every opcode of every transport, IPv4 and IPv6 -------------
for opc in all_defined():
    case("valid", "near", tname(opc), [rframe(opc), rframe(opc, ipv6=True)], {})
case("valid", "near", "cnp_v6", cnp(ipv6=True), {"cnp": 1})

# --- icrc -------------------------------------------------------------------
case("icrc", "trip", "last_bit", rframe(0x04, 32, frame_kw={"bad_icrc": True}), {"icrc": 1})
_tp = transport(0x04, 32)
case("icrc", "trip", "big_endian_store", frame(_tp, icrc_bytes=frame(_tp)[-4:][::-1]), {"icrc": 1})
case("icrc", "trip", "v6", rframe(0x11, ipv6=True, frame_kw={"bad_icrc": True}), {"icrc": 1})
case("icrc", "trip", "with_other_faults",
     rframe(0x01, 100, tver=1, frame_kw={"bad_icrc": True}),
     {"icrc": 1, "tver": 1, "payload_length": 1})
case("icrc", "trip", "reserved_opcode", frame(roce.bth(0x15) + bytes(8), bad_icrc=True),
     {"icrc": 1, "opcode": 1})
case("icrc", "near", "good", rframe(0x04, 32), {})


# --- truncated ----------------------------------------------------------------
def tr_case(name, frm, **kw):
    case("truncated", "trip", name, frm, {"truncated": 1}, unchecked=1, **kw)


tr_case("ip_len_beyond_frame", rframe(0x04, 64, frame_kw={"cut": 8}))
tr_case("ip_len_beyond_frame_by_1", rframe(0x04, 64, frame_kw={"cut": 1}))
tr_case("v6_len_beyond_frame", rframe(0x04, 64, ipv6=True, frame_kw={"cut": 8}))
tr_case("frame_ends_in_bth", rframe(0x04, 0, frame_kw={"cut": 12}))
tr_case("frame_ends_after_udp_header", rframe(0x04, 16)[:14 + 20 + 8])
tr_case("cut_after_vlans_and_options",
        rframe(0x0A, 256, frame_kw={"vlans": (3, 4), "qinq": True, "ip_options": b"\x01" * 12,
                                    "cut": 100}))
tr_case("udp_len_beyond_ip", rframe(0x04, 64, frame_kw={"udp_len": 8 + 12 + 64 + 4 + 4}))
tr_case("udp_len_beyond_ip_v6", rframe(0x04, 64, ipv6=True,
                                       frame_kw={"udp_len": 8 + 12 + 64 + 4 + 4}))
tr_case("udp_len_below_8", rframe(0x04, 64, frame_kw={"udp_len": 7}))
tr_case("ip_len_below_udp_header", rframe(0x04, 64, frame_kw={"ip_len": 24}))
tr_case("v6_payload_len_below_udp", rframe(0x04, 0, ipv6=True, frame_kw={"ip_len": 4}))
tr_case("udp_payload_below_bth_icrc", frame(roce.bth(0x04)[:8]))
tr_case("udp_payload_only_icrc", frame(b""))
# The UDP/IP lengths fit, but the opcode's headers do not: the ICRC is still checked.
for opc in all_defined():
    need = 12 + sum(roce.XTH_LEN[h] for h in roce.headers(opc))
    if need > 12:
        case("truncated", "trip", f"headers_{tname(opc)}",
             frame(transport(opc, 0)[:need - 4]), {"truncated": 1})
case("truncated", "trip", "rd_request_without_deth",
     frame(transport(opcode(RD, "SEND_ONLY"), 0)[:16]), {"truncated": 1})
case("truncated", "near", "bth_only_send_only", frame(roce.bth(opcode(UC, "SEND_ONLY"))), {})
case("truncated", "near", "ip_len_below_frame",
     rframe(0x04, 64, frame_kw={"eth_pad": bytes(range(1, 30))}), {})
case("truncated", "near", "exact_headers_ack", frame(transport(0x11)), {})
case("truncated", "near", "exact_headers_xrc_read_req",
     frame(transport(opcode(XRC, "RDMA_READ_REQUEST"), 0)), {})

# --- ip_fragment --------------------------------------------------------------
case("ip_fragment", "trip", "v4_mf", rframe(0x04, 64, frame_kw={"mf": True, "df": False}),
     {"ip_fragment": 1}, unchecked=1)
case("ip_fragment", "trip", "v4_mf_truncated_datagram",
     frame(transport(0x04, 64), mf=True, df=False, cut=40), {"ip_fragment": 1}, unchecked=1)
case("ip_fragment", "trip", "v6_frag_header", rframe(0x04, 64, ipv6=True,
                                                     frame_kw={"v6frag": True}),
     {"ip_fragment": 1}, unchecked=1)
case("ip_fragment", "trip", "v4_mf_ecn_ce", rframe(0x04, 64, frame_kw={"mf": True, "df": False,
                                                                       "tos": 0x03}),
     {"ip_fragment": 1, "ecn_ce": 1}, unchecked=1)
case("ip_fragment", "near", "v4_df", rframe(0x04, 64, frame_kw={"df": True}), {})
case("ip_fragment", "near", "v4_no_flags", rframe(0x04, 64, frame_kw={"df": False}), {})
# later fragments carry no UDP header: not RoCEv2 as far as anyone can tell
case("ip_fragment", "near", "v4_later_fragment",
     rframe(0x04, 64, frame_kw={"frag_offset": 100, "df": False}), {}, roce=0)
case("ip_fragment", "near", "v6_later_fragment",
     rframe(0x04, 64, ipv6=True, frame_kw={"v6frag": True, "frag_offset": 100}), {}, roce=0)

# --- tver -------------------------------------------------------------------
case("tver", "trip", "1", rframe(0x04, 32, tver=1), {"tver": 1})
case("tver", "trip", "15_v6", rframe(0x11, tver=15, ipv6=True), {"tver": 1})
case("tver", "trip", "8_cnp", cnp(tver=8), {"tver": 1, "cnp": 1})
case("tver", "near", "migreq_padcnt", rframe(0x04, 1, migreq=True, padcnt=3), {})

# --- opcode -------------------------------------------------------------------
RESERVED_OPS = [tr << 5 | op for tr in roce.DEFINED for op in range(32)
                if op not in roce.DEFINED[tr]]
for tr, name in roce.TRANSPORT_NAMES.items():
    ops = [opc for opc in RESERVED_OPS if opc >> 5 == tr]
    case("opcode", "trip", f"{name}_reserved_x{len(ops)}",
         [frame(roce.bth(opc) + bytes(16)) for opc in ops], {"opcode": len(ops)})
for opc in (0x80, 0x82, 0x9F):
    case("opcode", "trip", f"cnp_0x{opc:02x}", frame(roce.bth(opc, becn=True) + bytes(16)),
         {"opcode": 1})
case("opcode", "trip", "uc_read_request_v6", frame(roce.bth(UC << 5 | 0x0C) + bytes(16), ipv6=True),
     {"opcode": 1})
case("opcode", "near", "xrc_0x1f_is_not_vendor", frame(roce.bth(0xBF) + bytes(16)), {"opcode": 1})
case("opcode", "near", "cnp_0x81", cnp(), {"cnp": 1})

# --- opcode_vendor ------------------------------------------------------------
for opc in (0xC0, 0xDF, 0xE0, 0xFF):
    case("opcode_vendor", "trip", f"0x{opc:02x}", frame(roce.bth(opc) + bytes(20)),
         {"opcode_vendor": 1})
case("opcode_vendor", "trip", "0xc5_v6", frame(roce.bth(0xC5) + bytes(8), ipv6=True),
     {"opcode_vendor": 1})
case("opcode_vendor", "near", "0xbf", frame(roce.bth(0xBF) + bytes(20)), {"opcode": 1})

# --- pkey -------------------------------------------------------------------
for pk in (0x0000, 0x8000):
    case("pkey", "trip", f"0x{pk:04x}", rframe(0x04, 16, pkey=pk), {"pkey": 1})
    case("pkey", "trip", f"0x{pk:04x}_cnp", cnp(pkey=pk), {"pkey": 1, "cnp": 1})
for pk in (0x0001, 0x8001, 0x7FFF, 0xFFFF, 0x1234):
    case("pkey", "near", f"0x{pk:04x}", rframe(0x04, 16, pkey=pk), {})
ALLOWED = ("--pkey", "0x8001,0x1234")
for pk in (0x8001, 0x0001, 0x1234, 0x9234):
    case("pkey", "near", f"allowed_0x{pk:04x}", rframe(0x04, 16, pkey=pk), {}, opts=ALLOWED)
for pk in (0xFFFF, 0x0002, 0x8000, 0x1235):
    case("pkey", "trip", f"not_allowed_0x{pk:04x}", rframe(0x04, 16, pkey=pk), {"pkey": 1},
         opts=ALLOWED)
case("pkey", "trip", "not_allowed_mixed",
     [rframe(0x04, 16, pkey=pk) for pk in (0xFFFF, 0x8001, 0x7FFF, 0x1234, 0x0000)],
     {"pkey": 3}, opts=("--set", "pkeys=0x8001,0x1234"))

# --- reserved -----------------------------------------------------------------
for v in (0x01, 0x40, 0x7F):
    case("reserved", "trip", f"bth_resv7_0x{v:02x}", rframe(0x04, 16, resv7=v), {"reserved": 1})
case("reserved", "near", "ackreq", rframe(0x04, 16, ackreq=True), {})
RESV6 = ("--set", "resv6=check")
for v in (0x01, 0x10, 0x3F):
    case("reserved", "near", f"bth_resv6_0x{v:02x}_ignored", rframe(0x04, 16, resv6=v), {})
    case("reserved", "trip", f"bth_resv6_0x{v:02x}_checked", rframe(0x04, 16, resv6=v),
         {"reserved": 1}, opts=RESV6)
case("reserved", "near", "fecn_becn_checked", rframe(0x04, 16, fecn=True, becn=True), {},
     opts=RESV6)
case("reserved", "near", "resv6_ignore_explicit", rframe(0x04, 16, resv6=0x3F), {},
     opts=("--set", "resv6=ignore"))
case("reserved", "trip", "resv6_and_resv7_one_frame", rframe(0x04, 16, resv6=1, resv7=1),
     {"reserved": 1}, opts=RESV6)
for name, opc, where in (("rd_req_rdeth", opcode(RD, "SEND_ONLY"), {"RDETH": 0x80}),
                         ("rd_req_deth", opcode(RD, "SEND_ONLY"), {"DETH": 0x01}),
                         ("rd_req_both", opcode(RD, "RDMA_WRITE_FIRST"), {"RDETH": 1, "DETH": 1}),
                         ("rd_ack_rdeth", opcode(RD, "ACKNOWLEDGE"), {"RDETH": 0xFF}),
                         ("rd_read_resp_rdeth", opcode(RD, "RDMA_READ_RESPONSE_ONLY"),
                          {"RDETH": 0x10}),
                         ("ud_deth", opcode(UD, "SEND_ONLY"), {"DETH": 0x01}),
                         ("ud_deth_imm", opcode(UD, "SEND_ONLY_WITH_IMMEDIATE"), {"DETH": 0x80}),
                         ("xrc_xrceth", opcode(XRC, "SEND_ONLY"), {"XRCETH": 0x01}),
                         ("xrc_xrceth_atomic", opcode(XRC, "FETCH_ADD"), {"XRCETH": 0x40})):
    case("reserved", "trip", name, rframe(opc, resv8=where), {"reserved": 1})
# all-ones in the fields next to each Resv8
case("reserved", "near", "rd_full_fields",
     rframe(opcode(RD, "SEND_ONLY"), ee=0xFFFFFF, qkey=0xFFFFFFFF, srcqp=0xFFFFFF), {})
case("reserved", "near", "ud_full_fields",
     rframe(opcode(UD, "SEND_ONLY"), qkey=0xFFFFFFFF, srcqp=0xFFFFFF), {})
case("reserved", "near", "xrc_full_fields", rframe(opcode(XRC, "SEND_ONLY"), xrcsrq=0xFFFFFF), {})
# an XRC response has no XRCETH: its first bytes are the AETH
case("reserved", "near", "xrc_ack_no_xrceth",
     rframe(opcode(XRC, "ACKNOWLEDGE"), syndrome=0x1F, msn=0xFFFFFF), {})
for i in (0, 7, 15):
    body = bytearray(16)
    body[i] = 0x01
    case("reserved", "trip", f"cnp_byte_{i}", cnp(cnp_reserved=bytes(body)),
         {"reserved": 1, "cnp": 1})
case("reserved", "trip", "cnp_all_bytes_and_resv7", cnp(cnp_reserved=b"\xff" * 16, resv7=1),
     {"reserved": 1, "cnp": 1})
case("reserved", "near", "cnp_becn_fecn", cnp(fecn=True), {"cnp": 1}, opts=RESV6)

# --- pad ----------------------------------------------------------------------
case("pad", "trip", "tlen_not_multiple_of_4", rframe(0x04, 5, padcnt=0), {"pad": 1})
case("pad", "trip", "tlen_short_by_pad", rframe(0x04, 6, padcnt=1, pad=b"\0"), {"pad": 1})
case("pad", "trip", "tlen_odd_v6", rframe(0x24, 3, padcnt=0, ipv6=True), {"pad": 1})
case("pad", "near", "padcnt_makes_it_4", rframe(0x04, 5, padcnt=3), {})
case("pad", "near", "pad_bytes_nonzero", rframe(0x04, 5, padcnt=3, pad=b"\xaa\xbb\xcc"), {})
case("pad", "trip", "padcnt_beyond_area", rframe(0x04, 0, padcnt=1, pad=b""), {"pad": 1})
case("pad", "trip", "padcnt_beyond_area_imm", rframe(0x05, 0, padcnt=2, pad=b""), {"pad": 1})
case("pad", "near", "padcnt_equals_area_minus_1", rframe(0x04, 1, padcnt=3), {})
# no payload allowed: PadCnt can only be there with a wrong length or with payload bytes
case("pad", "trip", "ack_padcnt_no_bytes", rframe(0x11, 0, padcnt=2, pad=b""), {"pad": 1})
case("pad", "trip", "ack_padcnt_with_pad", rframe(0x11, 0, padcnt=3), {"pad": 1})
case("pad", "trip", "read_req_padcnt_payload", rframe(0x0C, 1, padcnt=3),
     {"pad": 1, "payload_length": 1})
case("pad", "trip", "cnp_padcnt", cnp(padcnt=1), {"pad": 1, "cnp": 1})
# FIRST/MIDDLE: PadCnt 0 always, and a PMTU payload then
for opc in (0x00, 0x01, 0x06, 0x07, 0x0D, 0x0E):
    case("pad", "trip", f"padcnt_{tname(opc)}", rframe(opc, 1021, padcnt=3),
         {"pad": 1, "payload_length": 1})
case("pad", "near", "padcnt_last", rframe(0x02, 1021, padcnt=3), {})
case("pad", "near", "padcnt_ud_only", rframe(opcode(UD, "SEND_ONLY"), 2, padcnt=2), {})

# --- payload_length -------------------------------------------------------------
PL = {"payload_length": 1}
FIRST_MIDDLE = (0x00, 0x01, 0x06, 0x07, 0x0D, 0x0E)
for opc in FIRST_MIDDLE:
    case("payload_length", "trip", f"{tname(opc)}_1000", rframe(opc, 1000), PL)
    case("payload_length", "trip", f"{tname(opc)}_0", rframe(opc, 0), PL)
    case("payload_length", "near", f"{tname(opc)}_every_pmtu",
         [rframe(opc, n) for n in (256, 512, 1024, 2048, 4096)], {})
case("payload_length", "trip", "uc_first_8192", rframe(opcode(UC, "SEND_FIRST"), 8192), PL)
case("payload_length", "trip", "xrc_middle_128", rframe(opcode(XRC, "SEND_MIDDLE"), 128), PL)
case("payload_length", "trip", "rd_write_first_768", rframe(opcode(RD, "RDMA_WRITE_FIRST"), 768),
     PL)
for pm in (256, 4096):
    case("payload_length", "trip", f"first_2048_pmtu_{pm}", rframe(0x00, 2048), PL,
         opts=("--pmtu", str(pm)))
    case("payload_length", "near", f"first_pmtu_{pm}", rframe(0x06, pm), {},
         opts=("--pmtu", str(pm)))
case("payload_length", "near", "pmtu_0_is_any", rframe(0x00, 512), {}, opts=("--pmtu", "0"))
# LAST/ONLY: at most the PMTU, 4096 when none is configured
for opc in (0x02, 0x03, 0x04, 0x05, 0x08, 0x09, 0x0A, 0x0B, 0x0F, 0x10, 0x16, 0x17):
    case("payload_length", "trip", f"{tname(opc)}_4100", rframe(opc, 4100), PL)
    case("payload_length", "near", f"{tname(opc)}_4096", rframe(opc, 4096), {})
case("payload_length", "trip", "ud_only_4097", rframe(opcode(UD, "SEND_ONLY"), 4097), PL)
case("payload_length", "trip", "only_1028_pmtu_1024", rframe(0x04, 1028), PL,
     opts=("--pmtu", "1024"))
case("payload_length", "trip", "last_1025_pmtu_1024", rframe(0x02, 1025), PL,
     opts=("--pmtu", "1024"))
case("payload_length", "near", "last_1024_pmtu_1024", rframe(0x02, 1024), {},
     opts=("--pmtu", "1024"))
case("payload_length", "near", "ud_only_256_pmtu_256", rframe(opcode(UD, "SEND_ONLY"), 256), {},
     opts=("--pmtu", "256"))
# LAST with no payload
for opc in (0x02, 0x03, 0x08, 0x09, 0x0F, 0x16):
    case("payload_length", "trip", f"{tname(opc)}_empty", rframe(opc, 0), PL)
    case("payload_length", "near", f"{tname(opc)}_1", rframe(opc, 1), {})
for opc in (0x04, 0x05, 0x0A, 0x0B, 0x10, 0x17):
    case("payload_length", "near", f"{tname(opc)}_empty", rframe(opc, 0), {})
# no payload allowed
for opc in (0x0C, 0x11, 0x12, 0x13, 0x14, 0x1C):
    case("payload_length", "trip", f"{tname(opc)}_4", rframe(opc, 4), PL)
case("payload_length", "trip", "rd_read_request_4", rframe(opcode(RD, "RDMA_READ_REQUEST"), 4), PL)
case("payload_length", "trip", "xrc_flush_4", rframe(opcode(XRC, "FLUSH"), 4), PL)
# RDMA WRITE ONLY: the payload is the whole message
for opc in (0x0A, 0x0B):
    case("payload_length", "trip", f"{tname(opc)}_dmalen_plus_1", rframe(opc, 64, dmalen=65), PL)
    case("payload_length", "trip", f"{tname(opc)}_dmalen_0", rframe(opc, 64, dmalen=0), PL)
    case("payload_length", "trip", f"{tname(opc)}_empty_dmalen_4", rframe(opc, 0, dmalen=4), PL)
    case("payload_length", "near", f"{tname(opc)}_dmalen_equal", rframe(opc, 61, padcnt=3), {})
case("payload_length", "trip", "uc_write_only_dmalen", rframe(opcode(UC, "RDMA_WRITE_ONLY"), 8,
                                                             dmalen=16), PL)
case("payload_length", "near", "write_first_dmalen_is_message",
     rframe(0x06, 1024, dmalen=1 << 20), {})
case("payload_length", "near", "read_request_any_dmalen", rframe(0x0C, 0, dmalen=1 << 30), {})
# ATOMIC_WRITE carries exactly 8 bytes
for n in (0, 4, 12, 16):
    case("payload_length", "trip", f"atomic_write_{n}", rframe(0x1D, n), PL)
case("payload_length", "near", "atomic_write_8", rframe(0x1D, 8), {})
case("payload_length", "near", "xrc_atomic_write_8", rframe(opcode(XRC, "ATOMIC_WRITE"), 8), {})
# CNP: 16 reserved bytes, nothing else
for n in (0, 12, 20, 32):
    case("payload_length", "trip", f"cnp_{n}_bytes", cnp(cnp_reserved=bytes(n)),
         {"payload_length": 1, "cnp": 1})
case("payload_length", "near", "cnp_16_bytes", cnp(), {"cnp": 1})

# --- se -----------------------------------------------------------------------
for tr, name in roce.TRANSPORT_NAMES.items():
    ops = [tr << 5 | op for op in sorted(roce.DEFINED[tr])]
    allowed = [opc for opc in ops if opc & 0x1F in roce.SE_ALLOWED]
    refused = [opc for opc in ops if opc & 0x1F not in roce.SE_ALLOWED]
    case("se", "near", f"{name}_allowed_x{len(allowed)}",
         [rframe(opc, se=True) for opc in allowed], {})
    if refused:
        case("se", "trip", f"{name}_refused_x{len(refused)}",
             [rframe(opc, se=True) for opc in refused], {"se": len(refused)})
case("se", "trip", "cnp", cnp(se=True), {"se": 1, "cnp": 1})
case("se", "near", "write_last_no_se", rframe(0x08, 4), {})

# --- atomic_align -------------------------------------------------------------
for va in (0x1001, 0x1004, 0x1007, 0xFFFFFFFFFFFFFFFF):
    case("atomic_align", "trip", f"cmp_swap_0x{va:x}", rframe(0x13, va=va), {"atomic_align": 1})
for opc in (opcode(RC, "FETCH_ADD"), opcode(RD, "COMPARE_SWAP"), opcode(XRC, "FETCH_ADD")):
    case("atomic_align", "trip", f"{tname(opc)}_0x2", rframe(opc, va=0x2), {"atomic_align": 1})
for va in (0x0, 0x1008, 0xFFFFFFFFFFFFFFF8, 0x8000000000000000):
    case("atomic_align", "near", f"fetch_add_0x{va:x}", rframe(0x14, va=va), {})
# alignment is an AtomicETH rule: a RETH's VA may be anything
case("atomic_align", "near", "write_only_reth_va_odd", rframe(0x0A, 8, va=0x1001), {})
case("atomic_align", "near", "read_request_va_odd", rframe(0x0C, 0, va=0x1003), {})
# the swap/compare data follow the VA: their low bits are not the VA's
case("atomic_align", "near", "odd_swap_compare", rframe(0x13, swap=7, compare=3), {})

# --- AETH: syndromes and NAK codes -----------------------------------------------
NAKS = {0x60: "nak_psn", 0x61: "nak_invalid", 0x62: "nak_access", 0x63: "nak_operational",
        0x64: "nak_invalid"}
for syn in (0x40, 0x5F, 0x80, 0xA0, 0xC3, 0xE0, 0xFF, 0x65, 0x6F, 0x7F):
    case("aeth_syndrome", "trip", f"0x{syn:02x}", rframe(0x11, syndrome=syn), {"aeth_syndrome": 1})
case("aeth_syndrome", "trip", "rd_ack_0x45", rframe(opcode(RD, "ACKNOWLEDGE"), syndrome=0x45),
     {"aeth_syndrome": 1})
case("aeth_syndrome", "trip", "atomic_ack_0x90", rframe(0x12, syndrome=0x90), {"aeth_syndrome": 1})
case("aeth_syndrome", "trip", "read_resp_first_0x70", rframe(0x0D, 1024, syndrome=0x70),
     {"aeth_syndrome": 1})
for syn in (0x00, 0x01, 0x1F):
    case("aeth_syndrome", "near", f"ack_credits_0x{syn:02x}", rframe(0x11, syndrome=syn), {})
for syn, rule in NAKS.items():
    case(rule, "trip", f"0x{syn:02x}", rframe(0x11, syndrome=syn), {rule: 1})
    case(rule, "trip", f"xrc_0x{syn:02x}_msn", rframe(opcode(XRC, "ACKNOWLEDGE"), syndrome=syn,
                                                      msn=0xFFFFFF), {rule: 1})
for syn in (0x20, 0x2A, 0x3F):
    case("nak_rnr", "trip", f"0x{syn:02x}", rframe(0x11, syndrome=syn), {"nak_rnr": 1})
case("nak_rnr", "trip", "rd_0x21", rframe(opcode(RD, "ACKNOWLEDGE"), syndrome=0x21), {"nak_rnr": 1})
case("nak_psn", "near", "read_resp_last_ack", rframe(0x0F, 100, syndrome=0x00), {})
for rule in ("nak_invalid", "nak_access", "nak_operational", "nak_rnr"):
    case(rule, "near", "ack_0x1f", rframe(0x11, syndrome=0x1F), {})
case("nak_invalid", "trip", "all_naks_counted_apart",
     [rframe(0x11, syndrome=s) for s in (0x60, 0x61, 0x62, 0x63, 0x64, 0x20, 0x00, 0x66)],
     {"nak_psn": 1, "nak_invalid": 2, "nak_access": 1, "nak_operational": 1, "nak_rnr": 1,
      "aeth_syndrome": 1})
# only an AETH has a syndrome: the same byte elsewhere is data
case("aeth_syndrome", "near", "syndrome_byte_in_payload", rframe(0x04, b"\xff\x00\x00\x00"), {})

# --- cnp ------------------------------------------------------------------------
case("cnp", "trip", "v4", cnp(), {"cnp": 1})
case("cnp", "trip", "three", [cnp(), cnp(ipv6=True), cnp(becn=False)], {"cnp": 3})
case("cnp", "near", "rc_send_with_becn", rframe(0x04, 16, becn=True), {})

# --- ecn_ce -----------------------------------------------------------------------
for tos in (0x03, 0xFF, 0x6B):
    case("ecn_ce", "trip", f"tos_0x{tos:02x}", rframe(0x04, 16, frame_kw={"tos": tos}),
         {"ecn_ce": 1})
case("ecn_ce", "trip", "v6_tc_0x03", rframe(0x04, 16, ipv6=True, frame_kw={"tc": 0x03}),
     {"ecn_ce": 1})
case("ecn_ce", "trip", "v6_tc_0xff", rframe(0x11, ipv6=True, frame_kw={"tc": 0xFF}), {"ecn_ce": 1})
case("ecn_ce", "trip", "cnp_ce", cnp(frame_kw={"tos": 0x03}), {"ecn_ce": 1, "cnp": 1})
case("ecn_ce", "trip", "with_bad_icrc", rframe(0x04, 16, frame_kw={"tos": 0x03, "bad_icrc": True}),
     {"ecn_ce": 1, "icrc": 1})
for tos in (0x00, 0x01, 0x02, 0xFC, 0xFE):
    case("ecn_ce", "near", f"tos_0x{tos:02x}", rframe(0x04, 16, frame_kw={"tos": tos}), {})
for tc in (0x01, 0x02, 0xFC):
    case("ecn_ce", "near", f"v6_tc_0x{tc:02x}",
         rframe(0x04, 16, ipv6=True, frame_kw={"tc": tc}), {})
case("ecn_ce", "near", "v6_flow_label_ones", rframe(0x04, 16, ipv6=True,
                                                    frame_kw={"tc": 0, "fl": 0xFFFFF}), {})
case("ecn_ce", "near", "not_roce_port", rframe(0x04, 16, frame_kw={"tos": 0x03, "dport": 4792}),
     {}, roce=0)

# --- traffic classes: each judged only when its setting asks -------------------------
QOS = ("--set", "dscp=26,46", "--set", "cnp_dscp=48", "--set", "pcp=3", "--set", "cnp_pcp=6",
       "--set", "ect=required")
case("dscp", "trip", "v4_dscp_0", rframe(0x04, 16, frame_kw={"tos": 0 << 2 | 2}), {"dscp": 1}, opts=QOS)
case("dscp", "trip", "v6_ack_dscp_48", rframe(0x11, ipv6=True, frame_kw={"tc": 48 << 2 | 1}), {"dscp": 1},
     opts=QOS)
case("dscp", "near", "listed", [rframe(0x04, 16, frame_kw={"tos": 26 << 2 | 2}),
                                rframe(0x04, 16, ipv6=True, frame_kw={"tc": 46 << 2 | 2})], {}, opts=QOS)
case("dscp", "near", "cnp_and_mad_are_not_data",
     [cnp(frame_kw={"tos": 48 << 2}), rframe(0x64, 16, dqpn=1, frame_kw={"tos": 2})], {"cnp": 1}, opts=QOS)
case("dscp", "near", "setting_off", rframe(0x04, 16, frame_kw={"tos": 2}), {})
case("cnp_dscp", "trip", "dscp_0", cnp(frame_kw={"tos": 0}), {"cnp": 1, "cnp_dscp": 1}, opts=QOS)
case("cnp_dscp", "trip", "v6_dscp_46", cnp(ipv6=True, frame_kw={"tc": 46 << 2}), {"cnp": 1, "cnp_dscp": 1},
     opts=QOS)
case("cnp_dscp", "near", "dscp_48_ect0", cnp(frame_kw={"tos": 48 << 2 | 2}), {"cnp": 1}, opts=QOS)
case("pcp", "trip", "prio_0", rframe(0x04, 16, frame_kw={"vlans": (5,), "tos": 26 << 2 | 2}), {"pcp": 1},
     opts=QOS)
case("pcp", "trip", "outer_of_two", rframe(0x04, 16, frame_kw={"vlans": (5, 6), "prios": (2, 3),
                                                                "tos": 26 << 2 | 2}), {"pcp": 1}, opts=QOS)
case("pcp", "near", "prio_3_or_untagged", [rframe(0x04, 16, frame_kw={"vlans": (5,), "prios": (3,),
                                                                       "tos": 26 << 2 | 2}),
                                            rframe(0x04, 16, frame_kw={"tos": 26 << 2 | 2})], {}, opts=QOS)
case("cnp_pcp", "trip", "prio_3", cnp(frame_kw={"vlans": (5,), "prios": (3,), "tos": 48 << 2}),
     {"cnp": 1, "cnp_pcp": 1}, opts=QOS)
case("cnp_pcp", "near", "prio_6", cnp(frame_kw={"vlans": (5,), "prios": (6,), "tos": 48 << 2}), {"cnp": 1},
     opts=QOS)
case("not_ect", "trip", "v4", rframe(0x0A, 16, frame_kw={"tos": 26 << 2}), {"not_ect": 1}, opts=QOS)
case("not_ect", "trip", "v6", rframe(0x04, 16, ipv6=True, frame_kw={"tc": 26 << 2}), {"not_ect": 1},
     opts=QOS)
case("not_ect", "near", "ect0_ect1_ce", [rframe(0x04, 16, frame_kw={"tos": 26 << 2 | e}) for e in (1, 2, 3)],
     {"ecn_ce": 1}, opts=QOS)
case("not_ect", "near", "not_ect_cnp", cnp(frame_kw={"tos": 48 << 2}), {"cnp": 1}, opts=QOS)

# --- what is and is not RoCEv2 ------------------------------------------------------
case("port", "near", "4792_not_roce", rframe(0x04, 16, frame_kw={"dport": 4792}), {}, roce=0)
case("port", "near", "sport_4791_not_roce", rframe(0x04, 16, frame_kw={"sport": 4791,
                                                                        "dport": 4000}),
     {}, roce=0)
case("port", "trip", "4792_with_port", rframe(0x04, 16, frame_kw={"dport": 4792}), {},
     opts=("--port", "4792"))
case("port", "trip", "two_extra_ports",
     [rframe(0x04, 16, frame_kw={"dport": p}) for p in (4791, 4792, 5000, 5001)] +
     [rframe(0x04, 16, tver=1, frame_kw={"dport": 5000})],
     {"tver": 1}, opts=("--port", "4792", "--port", "5000"), roce=4)
case("port", "trip", "ports_setting_v6",
     [rframe(0x11, ipv6=True, syndrome=0x61, frame_kw={"dport": 65535})],
     {"nak_invalid": 1}, opts=("--set", "ports=65535"))
case("port", "near", "ihl_4", poke(rframe(0x04, 16), 14, 0x44), {}, roce=0)
case("port", "near", "three_vlan_tags", rframe(0x04, 16, frame_kw={"vlans": (1, 2, 3)}), {},
     roce=0)
# next header hop-by-hop: UDP is not right after the fixed header
case("port", "near", "v6_hop_by_hop_first", poke(rframe(0x04, 16, ipv6=True), 14 + 6, 0), {},
     roce=0)
case("port", "near", "short_frames",
     [b"", bytes(13), bytes(14), rframe(0x04, 16)[:30], rframe(0x04, 16)[:41]], {}, roce=0)


# in one process, so that the replays below are made once a run, not once a process
pytestmark = pytest.mark.xdist_group("rules")


@pytest.fixture(scope="module")
def case_results(tmp_path_factory):
    """Every case's replay, the cases of one set of options judged by one run of roceval."""
    # tests/roce.py lays RD-range opcodes out as IBA RD; mlx5 DC, the default, is in test_truth.py
    return replay_batch(tmp_path_factory.mktemp("cases"),
                        {c.id: (c.frames, ("--set", "rd=strict") + tuple(c.opts)) for c in CASES})


@pytest.mark.parametrize("c", CASES, ids=[c.id for c in CASES])
def test_rule_case(c, case_results):
    r = case_results[c.id]
    assert nonzero_rules(r) == c.rules
    bad = c.rules.get("icrc", 0)
    expect = {"frames": len(c.frames), "roce": c.roce, "icrc_ok": c.roce - bad - c.unchecked,
              "icrc_bad": bad, "icrc_unchecked": c.unchecked, "icrc_skipped": 0, "dropped": 0}
    assert {k: r[k] for k in expect} == expect


def test_every_rule_has_trip_and_near_miss():
    ids = {x["id"] for x in json.loads(run("rules", "--json", check=True).stdout)}
    per_packet = ids - STATEFUL
    tripped = {rule for c in CASES if c.kind == "trip" for rule in c.rules}
    assert tripped >= per_packet, per_packet - tripped
    assert tripped <= per_packet
    for rule in per_packet:
        kinds = {c.kind for c in CASES if c.rule == rule}
        assert kinds == {"trip", "near"}, rule


def test_reserved_opcodes_are_exactly_the_undefined_ones():
    """The builder's table agrees with rocev2.md section 3 on the famous ones."""
    assert 0x2C in RESERVED_OPS and 0x60 in RESERVED_OPS  # UC READ_REQUEST, UD SEND_FIRST
    assert 0x56 in RESERVED_OPS and 0x5D in RESERVED_OPS  # RD SEND_LAST_INV, ATOMIC_WRITE
    assert 0xB5 in RESERVED_OPS and 0x15 in RESERVED_OPS and 0x55 not in RESERVED_OPS  # RD RESYNC
    assert 0x64 not in RESERVED_OPS and 0x5C not in RESERVED_OPS  # UD SEND_ONLY, RD FLUSH
    assert CNP_OPCODE not in RESERVED_OPS
    assert len(RESERVED_OPS) == 5 * 32 - (25 + 12 + 23 + 2 + 25)


def test_enforce_drops_errors_only(tmp_path):
    frames = [rframe(0x04, 16), rframe(0x04, 16, tver=1), rframe(0x11, syndrome=0x61), cnp(),
              rframe(0x04, 16, frame_kw={"bad_icrc": True}),
              rframe(0x04, 16, frame_kw={"mf": True, "df": False})]
    r = roce.replay_frames(tmp_path / "e.pcap", frames, "--set", "enforce=on")
    assert r["dropped"] == 2
    assert nonzero_rules(r) == {"tver": 1, "nak_invalid": 1, "cnp": 1, "icrc": 1, "ip_fragment": 1}


def test_icrc_sample_accounts_for_skipped(tmp_path):
    """icrc_sample=3 checks the 3rd, 6th, ... RoCEv2 frame; the others are skipped, not judged."""
    bad = {"bad_icrc": True}
    frames = [rframe(0x04, 16, frame_kw=bad), rframe(0x04, 16, frame_kw=bad),
              rframe(0x04, 16, frame_kw=bad),  # checked
              rframe(0x04, 16, frame_kw={"dport": 4000}),  # not RoCEv2: does not tick
              rframe(0x04, 16), rframe(0x04, 16, tver=1, frame_kw=bad),
              rframe(0x04, 16),  # checked
              rframe(0x04, 16, frame_kw={"cut": 4}),  # truncated: unchecked, does not tick
              rframe(0x04, 16), rframe(0x04, 16), rframe(0x04, 16)]  # the last one checked
    r = roce.replay_frames(tmp_path / "s.pcap", frames, "--set", "icrc_sample=3")
    got = {k: r[k] for k in ("frames", "roce", "icrc_ok", "icrc_bad", "icrc_unchecked",
                             "icrc_skipped")}
    assert got == {"frames": 11, "roce": 10, "icrc_ok": 2, "icrc_bad": 1, "icrc_unchecked": 1,
                   "icrc_skipped": 6}
    assert nonzero_rules(r) == {"icrc": 1, "tver": 1, "truncated": 1}
