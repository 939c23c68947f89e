# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Congestion control and QoS conformance, replayed: the traffic class of data and of CNPs (dscp,
cnp_dscp, pcp, cnp_pcp), ECN capability (ect=required), CNP pacing (cnp_gap, cnp_pacing), CE-marked
requests answered by CNPs (cnp_delay, the ce_cnp latency) and how a sender's rate follows a CNP
(cnp_reaction).

Frames are crafted with tests/roce.py and cm_mad.py and given capture times in microseconds; every
expectation is worked out here from those times, from mirrors-and-congestion.md (ECN code points, what
a CNP is) and from what each setting's help says it judges.
"""
import json

import pytest

import cm_mad
import roce
from conftest import nonzero_rules, real_capture, replay, replay_json, run
from test_truth import DCI, DCT, dc, reth, v1

US = 1e-6
A, B = "192.0.2.1", "192.0.2.2"
A6, B6 = "2001:db8::1", "2001:db8::2"
NOT_ECT, ECT1, ECT0, CE = 0, 1, 2, 3


def tos(dscp, ecn=ECT0):
    return dscp << 2 | ecn


def data(dqpn, psn=0, *, dscp=26, ecn=ECT0, src=A, dst=B, ipv6=False, name="SEND_ONLY", payload=64,
         **frame_kw):
    """An RC request from src to QP dqpn of dst in the traffic class (dscp, ecn)."""
    if ipv6:
        frame_kw.update(tc=tos(dscp, ecn), src=v6(src), dst=v6(dst))
    else:
        frame_kw.update(tos=tos(dscp, ecn), src=src, dst=dst)
    return roce.roce(roce.opcode(roce.RC, name), payload, dqpn=dqpn, psn=psn, ipv6=ipv6, frame_kw=frame_kw)


def v6(addr):
    return {A: A6, B: B6}.get(addr, addr)


def cnp(dqpn, *, dscp=48, ecn=NOT_ECT, src=B, dst=A, ipv6=False, **frame_kw):
    """A CNP from the notification point src to the reaction point's QP dqpn."""
    if ipv6:
        frame_kw.update(tc=tos(dscp, ecn), src=v6(src), dst=v6(dst))
    else:
        frame_kw.update(tos=tos(dscp, ecn), src=src, dst=dst)
    return roce.cnp(dqpn=dqpn, ipv6=ipv6, frame_kw=frame_kw)


def mad(dscp=0, ecn=NOT_ECT):
    """An RDMA CM REQ on QP1, in the default class as rdma_cm sends them (the real captures)."""
    f = bytearray(cm_mad.Conn().req())
    f[15] = tos(dscp, ecn)
    f[-4:] = roce.icrc(bytes(f[14:]))
    return bytes(f)


def at(frames_at, *settings, tmp_path):
    """Replays (microseconds, frame) pairs with the settings (KEY=VALUE)."""
    opts = [a for s in settings for a in ("--set", s)]
    return replay(tmp_path, [f for _, f in frames_at], *opts, times=[1 + t * US for t, _ in frames_at])


def counted(r, *rules):
    return {k: r["rules"][k] for k in rules}


# --- traffic classes --------------------------------------------------------------------------

QOS = ("dscp", "cnp_dscp", "pcp", "cnp_pcp", "not_ect")


@pytest.mark.parametrize("ipv6", [False, True], ids=["ipv4", "ipv6"])
def test_data_outside_the_dscps_allowed(tmp_path, ipv6):
    frames = [data(0x101, dscp=26, ipv6=ipv6), data(0x102, dscp=0, ipv6=ipv6), data(0x103, dscp=24, ipv6=ipv6),
              data(0x104, dscp=26, ecn=CE, ipv6=ipv6),
              # not data: a CNP and a CM MAD in another class
              cnp(0x105, dscp=0, ipv6=ipv6)] + ([] if ipv6 else [mad(dscp=0)])
    frames_at = [(i, f) for i, f in enumerate(frames)]
    assert counted(at(frames_at, tmp_path=tmp_path), *QOS) == dict.fromkeys(QOS, 0)
    assert counted(at(frames_at, "dscp=26", tmp_path=tmp_path), *QOS) == dict(dict.fromkeys(QOS, 0), dscp=2)
    r = at(frames_at, "dscp=24,26", tmp_path=tmp_path)
    assert counted(r, *QOS) == dict(dict.fromkeys(QOS, 0), dscp=1)
    # the frame with DSCP 0 is the one counted on its flow
    assert [f["rules"] for f in r["flows"] if f.get("violations")] == [{"dscp": 1}]


def test_cnps_at_dscp_0_when_48_is_expected(tmp_path):
    frames_at = [(i, cnp(0x200 + i, dscp=0 if i < 3 else 48)) for i in range(5)] + [(9, data(0x300, dscp=0))]
    r = at(frames_at, "cnp_dscp=48", tmp_path=tmp_path)
    assert counted(r, *QOS) == dict(dict.fromkeys(QOS, 0), cnp_dscp=3)
    assert r["rules"]["cnp"] == 5


def test_the_connectx4lx_cnp_is_dscp_48_and_not_judged_for_ecn(tmp_path):
    """The real ConnectX-4 Lx CNP: DSCP 48 (NVIDIA's default), and ECT(0), not Not-ECT."""
    cap = real_capture("cnp-connectx4lx-ipv4.pcap")
    r = replay_json(cap, "--set", "cnp_dscp=48", "--set", "ect=required", "--set", "dscp=26")
    assert nonzero_rules(r) == {"cnp": 1}
    assert nonzero_rules(replay_json(cap, "--set", "cnp_dscp=46")) == {"cnp": 1, "cnp_dscp": 1}


@pytest.mark.parametrize("ipv6", [False, True], ids=["ipv4", "ipv6"])
def test_ect_required(tmp_path, ipv6):
    frames = [data(0x110 + ecn, ecn=ecn, ipv6=ipv6) for ecn in (NOT_ECT, ECT0, ECT1, CE)]
    frames += [cnp(0x120, ecn=NOT_ECT, ipv6=ipv6)] + ([] if ipv6 else [mad(ecn=NOT_ECT)])
    frames_at = [(i, f) for i, f in enumerate(frames)]
    r = at(frames_at, "ect=required", tmp_path=tmp_path)
    assert counted(r, *QOS) == dict(dict.fromkeys(QOS, 0), not_ect=1)
    assert r["rules"]["ecn_ce"] == 1
    assert counted(at(frames_at, "ect=any", tmp_path=tmp_path), *QOS) == dict.fromkeys(QOS, 0)


def test_the_real_captures_mads_and_rxe_under_ect_required():
    """NVMe-oF: its RC traffic is ECT(1), its 5 CM MADs Not-ECT: not data, so nothing counts.  The rxe
    READ request is Not-ECT (rxe sends the traffic class the application sets, 0 here)."""
    r = replay_json(real_capture("realcaps/nvmeof-discover-a.pcap"), "--pmtu", "1024", "--set", "ect=required")
    assert r["rules"]["not_ect"] == 0 and r["rules"]["cm"] == 5
    r = replay_json(real_capture("realcaps/rxe-vmware-rc-read-request.pcap"), "--set", "ect=required")
    assert nonzero_rules(r) == {"not_ect": 1}


def test_the_connectx_hosts_each_use_one_dscp(tmp_path):
    """cx-ibdump-rdmacm-read: .47 sends its data and ACKs at DSCP 0, .56 at 26; every CM MAD at 0."""
    cap = real_capture("realcaps/cx-ibdump-rdmacm-read.pcap")
    assert replay_json(cap, "--set", "dscp=0,26")["rules"]["dscp"] == 0
    # .56's 4 RC frames (tshark: DSCP 26, opcodes 0x10, 0x11, 0x11, 0x04)
    assert replay_json(cap, "--set", "dscp=0")["rules"]["dscp"] == 4


def test_priority_of_tagged_frames(tmp_path):
    frames = [data(0x130, vlans=(5,), prios=(3,)), data(0x131, vlans=(5,), prios=(0,)), data(0x132),
              # the outer tag is the one a switch queues by
              data(0x133, vlans=(5, 6), prios=(3, 0), qinq=True),
              cnp(0x134, vlans=(5,), prios=(6,)), cnp(0x135, vlans=(5,), prios=(3,)), cnp(0x136),
              v1(roce.transport(0x04, 8, dqpn=0x137), vlan=0 << 13 | 5)]
    frames_at = [(i, f) for i, f in enumerate(frames)]
    r = at(frames_at, "pcp=3", "cnp_pcp=6", tmp_path=tmp_path)
    assert counted(r, *QOS) == dict(dict.fromkeys(QOS, 0), pcp=2, cnp_pcp=1)


# --- CNP pacing -------------------------------------------------------------------------------

def test_cnps_closer_than_the_gap(tmp_path):
    """Five CNPs to one QP 1 us apart (4 too close), then five 5 us apart and two 4 us apart (none)."""
    times = [0, 1, 2, 3, 4, 9, 14, 19, 24, 29, 33, 37]
    frames_at = [(t, cnp(0x140)) for t in times]
    for pacing in ("qp", "ip"):
        r = at(frames_at, "cnp_gap=4us", f"cnp_pacing={pacing}", tmp_path=tmp_path)
        assert nonzero_rules(r) == {"cnp": 12, "cnp_gap": 4}, pacing
        # counted on the CNPs' flow
        assert [f["rules"] for f in r["flows"]] == [{"cnp": 12, "cnp_gap": 4}]
    assert nonzero_rules(at(frames_at, "cnp_gap=1us", tmp_path=tmp_path)) == {"cnp": 12}
    assert nonzero_rules(at(frames_at, tmp_path=tmp_path)) == {"cnp": 12}


@pytest.mark.parametrize("ipv6", [False, True], ids=["ipv4", "ipv6"])
def test_the_pacing_scope(tmp_path, ipv6):
    """Five CNPs 1 us apart to five QPs of one host: apart per QP, too close per IP pair; and
    CNPs from another notification point are paced apart in either scope."""
    other = "2001:db8::3" if ipv6 else "192.0.2.3"
    frames_at = [(i, cnp(0x150 + i, ipv6=ipv6)) for i in range(5)] + [(1, cnp(0x150, src=other, ipv6=ipv6))]
    qp = at(frames_at, "cnp_gap=4us", "cnp_pacing=qp", tmp_path=tmp_path)
    ip = at(frames_at, "cnp_gap=4us", "cnp_pacing=ip", tmp_path=tmp_path)
    assert qp["rules"]["cnp_gap"] == 0
    assert ip["rules"]["cnp_gap"] == 4


def test_a_flow_made_by_its_frame_takes_no_rule_judged_after_its_books(tmp_path):
    """Five CNPs of the pacing scope above, each making its flow: the IP pair's cnp_gap, judged
    after the flow's books, goes on no flow, in whichever slot the flow was made.  A flow made in
    the slot the last-flow cache pointed at (slot 0 of a fresh table) was taken for one counted
    before: with 32 flows one of the five flows had it."""
    frames_at = [(i, cnp(0x150 + i)) for i in range(5)]
    opts = [a for s in ("cnp_gap=4us", "cnp_pacing=ip") for a in ("--set", s)]
    times = [1 + t * US for t, _ in frames_at]
    for flows in (16, 32, 64, 65536):
        r = replay(tmp_path, [f for _, f in frames_at], *opts, "--flows", str(flows), times=times)
        assert r["rules"]["cnp_gap"] == 4, flows
        assert [f["rules"] for f in r["flows"]] == [{"cnp": 1}] * 5, flows


# --- CE answered by CNPs ----------------------------------------------------------------------

def bucket(ns):
    le = 1024
    while le < ns:
        le *= 2
    return le


def ce_hist(r):
    return {b["le_ns"]: b["count"] for b in r["latency"]["ce_cnp"]["buckets"]}


def test_ce_answered_and_unanswered_by_ip_pair(tmp_path):
    """No CM, no ACKs: every CNP from B to A answers every CE-marked request from A to B."""
    frames_at = [(0, data(0x160, 1, ecn=CE)), (10, cnp(0x999)),  # answered in 10 us
                 (100, data(0x160, 2, ecn=CE)), (120, data(0x160, 3, ecn=CE)),  # one window, unanswered
                 (200, data(0x160, 4, ecn=CE)),  # 100 us after it: counted here; waits anew
                 (210, cnp(0x999)),  # answers the one at 200 in 10 us
                 (300, data(0x160, 5, ecn=CE)), (400, cnp(0x999))]  # answered 100 us late: counted
    r = at(frames_at, "cnp_delay=50us", tmp_path=tmp_path)
    assert nonzero_rules(r) == {"ecn_ce": 5, "cnp": 3, "ce_unanswered": 2}
    assert ce_hist(r) == {bucket(10000): 2, bucket(100000): 1}
    assert r["latency"]["ce_cnp"]["count"] == 3
    # the one counted on a request is on the request flow, the late CNP's on the CNP's flow
    assert sorted(f["rules"].get("ce_unanswered", 0) for f in r["flows"]) == [1, 1]
    assert nonzero_rules(at(frames_at, tmp_path=tmp_path)) == {"ecn_ce": 5, "cnp": 3}


def test_a_window_a_cnp_covers_needs_no_cnp_of_its_own(tmp_path):
    """A CE-marked request within cnp_gap (here longer than cnp_delay) of the scope's last CNP is
    answered by it: the notification point may not send another sooner."""
    frames_at = [(0, cnp(0x999)), (50, data(0x170, 1, ecn=CE)), (99, data(0x170, 2, ecn=CE)),
                 (100, data(0x170, 3, ecn=CE)),  # past the gap: waits
                 (200, data(0x170, 4, ecn=CE))]  # 100 us later, nothing came: counted
    r = at(frames_at, "cnp_delay=20us", "cnp_gap=100us", tmp_path=tmp_path)
    assert nonzero_rules(r) == {"ecn_ce": 4, "cnp": 1, "ce_unanswered": 1}


def two_conns():
    """Two RC connections between A and B, A the initiator of both."""
    return (cm_mad.Conn(a_qpn=0x211, b_qpn=0x311, a_comm=0x1111, b_comm=0x2111),
            cm_mad.Conn(a_qpn=0x222, b_qpn=0x322, a_comm=0x1222, b_comm=0x2222, tid=0x77))


def ce_frames(c1, c2):
    """A CE mark on connection 1 and a CNP to connection 2's sender; a CE mark on 1 past the deadline,
    and a CNP to 1's sender.  Paired by QP, the first CNP answers nothing and the first mark goes
    unanswered; by IP pair, each CNP answers the mark before it."""
    return [(0, data(c1.b_qpn, c1.b_psn, ecn=CE)), (5, cnp(c2.a_qpn)),
            (100, data(c1.b_qpn, c1.b_psn + 1, ecn=CE)), (101, cnp(c1.a_qpn))]


def test_ce_matched_by_the_qp_pairing_cm_learned(tmp_path):
    c1, c2 = two_conns()
    handshakes = [(-10, f) for f in c1.handshake() + c2.handshake()]
    frames_at = handshakes + ce_frames(c1, c2)
    # CM pairs b1 with a1: the CNP to a2 does not answer the CE mark on connection 1
    r = at(frames_at, "cnp_delay=50us", tmp_path=tmp_path)
    assert r["rules"]["ce_unanswered"] == 1 and r["rules"]["cm_established"] == 2
    assert r["latency"]["ce_cnp"]["count"] == 1
    # without CM, by IP pair, it does
    r = at(ce_frames(c1, c2), "cnp_delay=50us", tmp_path=tmp_path)
    assert r["rules"]["ce_unanswered"] == 0 and r["latency"]["ce_cnp"]["count"] == 2
    # and with cnp_pacing=ip every scope is the IP pair
    r = at(frames_at, "cnp_delay=50us", "cnp_pacing=ip", tmp_path=tmp_path)
    assert r["rules"]["ce_unanswered"] == 0 and r["latency"]["ce_cnp"]["count"] == 2


def test_ce_matched_by_the_qp_pairing_acks_and_a_cnp_showed(tmp_path):
    """No CM: A's request to b1 is ACKed to a1, and a CNP to a1 then pairs b1 with a1."""
    c1, c2 = two_conns()
    learn = [(-300, data(c1.b_qpn, c1.b_psn - 1)),
             (-299, roce.roce(0x11, dqpn=c1.a_qpn, psn=c1.b_psn - 1, frame_kw={"src": B, "dst": A})),
             (-290, cnp(c1.a_qpn))]
    r = at(learn + ce_frames(c1, c2), "cnp_delay=50us", tmp_path=tmp_path)
    assert r["rules"]["ce_unanswered"] == 1
    # the same without the ACK: nothing pairs them, the CNP to a2 answers by IP pair
    r = at([learn[0], learn[2]] + ce_frames(c1, c2), "cnp_delay=50us", tmp_path=tmp_path)
    assert r["rules"]["ce_unanswered"] == 0


def ack(dqpn, psn, *, ecn=ECT0, src=B, dst=A, opc=0x11):
    """An RC ACK (or another response) from src to the requester's QP dqpn."""
    return roce.roce(opc, dqpn=dqpn, psn=psn, frame_kw={"tos": tos(26, ecn), "src": src, "dst": dst})


def read_req(dqpn, psn, *, src=A, dst=B):
    return roce.roce(roce.opcode(roce.RC, "RDMA_READ_REQUEST"), 0, dqpn=dqpn, psn=psn, dmalen=64,
                     frame_kw={"tos": tos(26), "src": src, "dst": dst})


def ud(dqpn, srcqp, *, ecn=ECT0, src=A, dst=B):
    """A UD SEND from src's QP srcqp (its DETH) to QP dqpn of dst."""
    return roce.roce(roce.opcode(roce.UD, "SEND_ONLY"), 64, dqpn=dqpn, srcqp=srcqp,
                     frame_kw={"tos": tos(26, ecn), "src": src, "dst": dst})


def flow_rules(r, src, dqpn):
    return [f["rules"] for f in r["flows"] if f["src"] == src and f["dqpn"] == dqpn][0]


def test_a_window_only_later_traffic_judges(tmp_path):
    """A CE-marked SEND no CNP answers, then ordinary SENDs and ACKs on the same QPs 100-200 us on:
    the first frame of its scope past cnp_delay counts it, and nothing more is owed."""
    frames_at = [(0, data(0x160, 1, ecn=CE)), (1, ack(0x260, 1)),
                 (100, data(0x160, 2)), (101, ack(0x260, 2)), (200, data(0x160, 3)), (201, ack(0x260, 3))]
    r = at(frames_at, "cnp_delay=50us", tmp_path=tmp_path)
    assert nonzero_rules(r) == {"ecn_ce": 1, "ce_unanswered": 1}
    # on the SEND at 100 us, the flow it waits in (by IP pair: nothing pairs a with b)
    assert flow_rules(r, A, 0x160) == {"ecn_ce": 1, "ce_unanswered": 1}
    assert r["latency"]["ce_cnp"]["count"] == 0
    assert nonzero_rules(at(frames_at, tmp_path=tmp_path)) == {"ecn_ce": 1}
    # traffic within cnp_delay of the mark judges nothing yet, nor does a capture that ends there
    assert nonzero_rules(at(frames_at[:2] + [(40, data(0x160, 2))], "cnp_delay=50us", tmp_path=tmp_path)) == \
        {"ecn_ce": 1}


def test_a_window_paired_by_cm_is_judged_by_its_acks(tmp_path):
    """With CM the scope is a1's: the ACKs from B to a1 are frames of it, the requester quiet."""
    c1, _ = two_conns()
    frames_at = [(-10, f) for f in c1.handshake()] + [
        (-5, data(c1.b_qpn, c1.b_psn)), (-4, ack(c1.a_qpn, c1.b_psn)),
        (0, data(c1.b_qpn, c1.b_psn + 1, ecn=CE)), (100, ack(c1.a_qpn, c1.b_psn + 1)),
        (200, ack(c1.a_qpn, c1.b_psn + 1))]
    r = at(frames_at, "cnp_delay=50us", tmp_path=tmp_path)
    assert r["rules"]["ce_unanswered"] == 1
    assert flow_rules(r, B, c1.a_qpn).get("ce_unanswered") == 1


def test_a_window_the_capture_outlives_is_judged_at_its_end(tmp_path):
    """The last CE mark of its scope, then only other hosts' traffic: the replay's end judges it when the
    capture goes on past cnp_delay after it, and leaves it when the capture ends sooner."""
    other = [(t, data(0x170, psn, src="192.0.2.7", dst="192.0.2.8")) for psn, t in enumerate((30, 100))]
    frames_at = [(0, data(0x160, 1, ecn=CE))] + other
    r = at(frames_at, "cnp_delay=50us", tmp_path=tmp_path)
    assert nonzero_rules(r) == {"ecn_ce": 1, "ce_unanswered": 1}
    assert flow_rules(r, A, 0x160) == {"ecn_ce": 1, "ce_unanswered": 1}
    assert nonzero_rules(at(frames_at[:2], "cnp_delay=50us", tmp_path=tmp_path)) == {"ecn_ce": 1}
    # answered in time, nothing is owed at the end
    r = at(sorted(frames_at + [(5, cnp(0x999))], key=lambda x: x[0]), "cnp_delay=50us", tmp_path=tmp_path)
    assert nonzero_rules(r) == {"ecn_ce": 1, "cnp": 1}


def read_frames(cnp_qp=None):
    """A's READ to b 0x180, its response CE-marked, more traffic; the requester A is the notification
    point, and its CNP, if any, names the responder's QP 5 us after the mark."""
    frames_at = [(0, read_req(0x180, 10)), (1, ack(0x280, 10, ecn=CE, opc=0x10)),
                 (100, read_req(0x180, 11)), (101, ack(0x280, 11, opc=0x10)),
                 (200, data(0x180, 12)), (201, ack(0x280, 12))]
    if cnp_qp is not None:
        frames_at.insert(2, (6, cnp(cnp_qp, src=A, dst=B)))
    return frames_at


def test_ce_on_read_responses(tmp_path):
    r = at(read_frames(), "cnp_delay=50us", tmp_path=tmp_path)
    assert nonzero_rules(r) == {"ecn_ce": 1, "ce_unanswered": 1}
    # by the READ at 100 us, the first frame past cnp_delay of the scope of the responder's QP
    assert flow_rules(r, A, 0x180) == {"ce_unanswered": 1}
    r = at(read_frames(0x180), "cnp_delay=50us", tmp_path=tmp_path)
    assert nonzero_rules(r) == {"ecn_ce": 1, "cnp": 1} and r["latency"]["ce_cnp"]["count"] == 1
    # the response answers A's requests to 0x180: a CNP naming another QP of B is not its answer
    r = at(read_frames(0x181), "cnp_delay=50us", tmp_path=tmp_path)
    assert nonzero_rules(r) == {"ecn_ce": 1, "cnp": 1, "ce_unanswered": 1}
    # nor is one from B, the responder
    r = at(sorted(read_frames() + [(6, cnp(0x280))], key=lambda x: x[0]), "cnp_delay=50us", tmp_path=tmp_path)
    assert r["rules"]["ce_unanswered"] == 1


def test_ce_on_ud_requests_waits_for_a_cnp_to_its_source_qp(tmp_path):
    """A UD SEND names its sender's QP in its DETH: the CNP must name that QP."""
    def frames(answer):
        out = [(0, ud(0x190, 0x77, ecn=CE)), (100, ud(0x190, 0x77)), (200, ud(0x190, 0x77))]
        return sorted(out + ([(5, answer)] if answer else []), key=lambda x: x[0])
    assert nonzero_rules(at(frames(None), "cnp_delay=50us", tmp_path=tmp_path)) == \
        {"ecn_ce": 1, "ce_unanswered": 1}
    assert nonzero_rules(at(frames(cnp(0x77)), "cnp_delay=50us", tmp_path=tmp_path)) == {"ecn_ce": 1, "cnp": 1}
    assert nonzero_rules(at(frames(cnp(0x78)), "cnp_delay=50us", tmp_path=tmp_path)) == \
        {"ecn_ce": 1, "cnp": 1, "ce_unanswered": 1}


def test_ce_on_dc_requests_waits_for_a_cnp_to_the_dci(tmp_path):
    """mlx5 DC: the DCI is the sender's QP (the DC header's), the QP its ACKs go back to."""
    def write(psn, ecn=ECT0):
        return dc(0x4A, DCT, psn, reth(8) + bytes(8), src=A, dst=B, tos=tos(26, ecn))

    def frames(answer):
        out = [(0, write(1, CE)), (100, write(2)), (200, write(3))]
        return sorted(out + ([(5, answer)] if answer else []), key=lambda x: x[0])
    assert nonzero_rules(at(frames(None), "cnp_delay=50us", tmp_path=tmp_path)) == \
        {"ecn_ce": 1, "ce_unanswered": 1}
    assert nonzero_rules(at(frames(cnp(DCI)), "cnp_delay=50us", tmp_path=tmp_path)) == {"ecn_ce": 1, "cnp": 1}
    assert nonzero_rules(at(frames(cnp(DCT)), "cnp_delay=50us", tmp_path=tmp_path)) == \
        {"ecn_ce": 1, "cnp": 1, "ce_unanswered": 1}


def test_ce_marked_acks_and_mads_are_not_judged(tmp_path):
    """An ACK is no data an NP answers; a CM MAD on QP1 travels outside the data's class."""
    frames_at = [(0, ack(0x180, 1, ecn=CE)), (200, ack(0x180, 2, ecn=CE)), (300, ack(0x180, 3))]
    r = at(frames_at, "cnp_delay=50us", tmp_path=tmp_path)
    assert nonzero_rules(r) == {"ecn_ce": 2}
    frames_at = [(0, mad(ecn=CE)), (200, mad(ecn=CE)), (300, data(0x160, 1))]
    assert at(frames_at, "cnp_delay=50us", tmp_path=tmp_path)["rules"]["ce_unanswered"] == 0


# --- the sender's reaction --------------------------------------------------------------------

def steady(c, start, end, step, psn):
    """Requests from A to c's b QP, one every `step` us in [start, end); returns (pairs, next psn).
    A flow is followed from its second frame (its first makes it): start a flow at -1 for its
    checkpoints to fall at 0, T, 2T..."""
    out = []
    for t in range(start, end, step):
        out.append((t, data(c.b_qpn, psn, payload=1000)))
        psn += 1
    return out, psn


def test_reaction_ratio_of_a_sender_that_slows_and_one_that_does_not(tmp_path):
    """Both send 1 frame a us; at 199 us each gets a CNP; one then sends 1 frame in 2 us, the other
    goes on.  With a 50 us window the rate before is over 100..199 us (the checkpoint at 100 is the
    one at least 50 us back): 100 frames in 99 us; after, 25 frames in 50 us: 0.495 (bucket 0.5); the
    other 50 frames: 0.99 (bucket 1)."""
    c1, c2 = two_conns()
    pairs = [(-10, f) for f in c1.handshake() + c2.handshake()]
    p1, n1 = steady(c1, -1, 200, 1, c1.b_psn)
    p2, n2 = steady(c2, -1, 200, 1, c2.b_psn)
    q1, _ = steady(c1, 200, 400, 2, n1)
    q2, _ = steady(c2, 200, 400, 1, n2)
    frames_at = sorted(pairs + p1 + p2 + [(199, cnp(c1.a_qpn)), (199, cnp(c2.a_qpn))] + q1 + q2,
                       key=lambda x: x[0])
    r = at(frames_at, "cnp_reaction=50us", tmp_path=tmp_path)
    rx = r["cnp_reaction"]
    assert rx["window_ns"] == 50000 and rx["count"] == 2
    assert {b["le"]: b["count"] for b in rx["buckets"]} == {0.5: 1, 1.0: 1}
    # ratios are held in 64ths, each rounded down
    assert abs(rx["sum"] - (0.495 + 0.99)) < 2 * 2 / 64
    assert (rx["within_window"], rx["unmeasured"], rx["unpaired"]) == (0, 0, 0)
    assert rx["p50"] == 0.5 and rx["p99"] == 1.0
    assert nonzero_rules(r) == {"cm": 6, "cm_established": 2, "cnp": 2}


def test_reaction_rate_before_is_over_the_latest_window(tmp_path):
    """The rate before a CNP is over the span since the newer checkpoint once it is a window back:
    1 frame a us to 100 us, 2 a us to 150, 1 a us to 200; the CNP at 200 takes 150..200 (1 a us),
    not 100..200 (1.5 a us).  After it, 1 a us: a ratio of exactly 1, not 0.67."""
    c1, _ = two_conns()
    p1, n1 = steady(c1, -1, 100, 1, c1.b_psn)
    p2, n2 = steady(c1, 100, 150, 1, n1)
    p3, n3 = steady(c1, 100, 150, 1, n2)
    p4, n4 = steady(c1, 150, 200, 1, n3)
    q1, _ = steady(c1, 200, 300, 1, n4)
    busy = sorted(p2 + p3, key=lambda x: x[0])
    frames_at = [(-10, f) for f in c1.handshake()] + p1 + busy + p4 + [(200, cnp(c1.a_qpn))] + q1
    rx = at(frames_at, "cnp_reaction=50us", tmp_path=tmp_path)["cnp_reaction"]
    assert rx["count"] == 1 and {b["le"]: b["count"] for b in rx["buckets"]} == {1.0: 1}
    assert rx["sum"] == 1.0


def test_reaction_cnps_within_a_window_unmeasured_and_unpaired(tmp_path):
    c1, _ = two_conns()
    p1, n1 = steady(c1, 0, 200, 1, c1.b_psn)
    q1, _ = steady(c1, 200, 300, 1, n1)
    frames_at = [(-10, f) for f in c1.handshake()] + p1 + [
        (199, cnp(c1.a_qpn)), (205, cnp(c1.a_qpn)),  # the second inside the first's window
        (206, cnp(0x777))] + q1  # no flow is known to send from QP 0x777
    frames_at = sorted(frames_at, key=lambda x: x[0])
    early = [(-10, f) for f in c1.handshake()] + [(0, data(c1.b_qpn, c1.b_psn)), (10, cnp(c1.a_qpn))]
    rx = at(frames_at, "cnp_reaction=50us", tmp_path=tmp_path)["cnp_reaction"]
    assert (rx["count"], rx["within_window"], rx["unmeasured"], rx["unpaired"]) == (1, 1, 0, 1)
    # a flow followed for 10 us has no window's rate before its CNP
    rx = at(early, "cnp_reaction=50us", tmp_path=tmp_path)["cnp_reaction"]
    assert (rx["count"], rx["unmeasured"]) == (0, 1)
    assert at(frames_at, tmp_path=tmp_path)["cnp_reaction"]["count"] == 0


# --- settings ---------------------------------------------------------------------------------

@pytest.mark.parametrize("assignment", [
    "dscp=64", "dscp=1,2,3,4,5,6,7,8,9", "dscp=", "cnp_dscp=x", "cnp_dscp=64", "pcp=8", "cnp_pcp=-1",
    "ect=yes", "cnp_gap=500ns", "cnp_gap=61s", "cnp_gap=4 us", "cnp_pacing=port", "cnp_delay=abc",
    "cnp_reaction=20ms", "link_speed=fast", "link_speed=1600001"])
def test_a_bad_value_is_refused_naming_the_setting(cnp_capture, assignment):
    res = run("replay", "--set", assignment, cnp_capture)
    key = assignment.split("=")[0]
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.startswith(f"roceval replay: {assignment}: expected") and key in res.stderr
    assert res.stderr.endswith("; see 'roceval help replay'\n") and res.stderr.count("\n") == 1


@pytest.mark.parametrize("assignment", ["dscp=any", "dscp=0,63", "cnp_dscp=48", "pcp=7", "ect=required",
                                        "cnp_gap=4us", "cnp_gap=4", "cnp_gap=2s", "cnp_delay=1ms",
                                        "cnp_pacing=ip", "cnp_reaction=10ms", "link_speed=25000"])
def test_good_values_are_taken(cnp_capture, assignment):
    run("replay", "--set", assignment, cnp_capture, check=True)


def test_the_settings_are_documented():
    text = run("help", "config", check=True).stdout
    for key in ("dscp=any|DSCP[,DSCP...]", "cnp_dscp=any|DSCP", "pcp=any|PCP", "cnp_pcp=any|PCP",
                "ect=any|required", "cnp_gap=DURATION", "cnp_pacing=qp|ip", "cnp_delay=DURATION",
                "cnp_reaction=DURATION", "link_speed=MBITS|unknown"):
        assert f"  {key}\n" in text, key
    rules = {r["id"]: r for r in json.loads(run("rules", "--json", check=True).stdout)}
    for rule in ("dscp", "cnp_dscp", "pcp", "cnp_pcp", "not_ect", "cnp_gap", "ce_unanswered"):
        assert rules[rule]["severity"] == "warning", rule
