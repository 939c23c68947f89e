# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Latencies between requests and their answers, from the capture's own timestamps: request to the
ACK that covers it, READ to its first response, NAK to the retransmission, RNR NAK to the retry;
and the timer rules (a retry sooner than the RNR NAK's timer, a timeout retransmission sooner than
the ACK timeout the CM REQ announced).

Expected buckets are worked out here from the times each test gives its frames.
"""
import json
import struct
import subprocess

import pytest

import cm_mad
import roce
from conftest import live_stats, nonzero_rules, pin_dir, replay, replay_json, run, wait_for

# the totals that say which clock timed the frames, in the order of the total table
CLOCKS = ("timed_capture", "timed_kernel", "timed_nic", "untimed", "latency_skipped")

US = 1e-6
NAK_PSN_SEQ = 0x60


def rnr(code):
    return 0x20 | code


def with_psn(frm, psn):
    """An untagged IPv4 RoCEv2 frame with its BTH PSN changed and its ICRC made to match: many
    frames of one shape, faster than building each."""
    b = bytearray(frm)
    b[14 + 20 + 8 + 9:14 + 20 + 8 + 12] = (psn & 0xFFFFFF).to_bytes(3, "big")
    b[-4:] = roce.icrc(bytes(b[14:]))
    return bytes(b)


def bucket(ns):
    """The upper bound of the log2 bucket a latency of ns falls in (roceval.h)."""
    le = 1024
    while le < ns:
        le *= 2
    return le


def hist(r, kind):
    return {b["le_ns"]: b["count"] for b in r["latency"][kind]["buckets"]}


def timed(tmp_path, frames_at, cm=True, conn=None):
    """Replays (seconds, frame) pairs, with c's handshake first when cm."""
    c = conn or cm_mad.Conn()
    pairs = ([(0.0, f) for f in c.handshake()] if cm else []) + frames_at
    r = replay(tmp_path, [f for _, f in pairs], times=[1 + t for t, _ in pairs])
    assert r["icrc_bad"] == 0
    return r


@pytest.mark.parametrize("cm", [True, False], ids=["cm", "inferred"])
def test_a_coalesced_ack_answers_every_request_it_covers(tmp_path, cm):
    c = cm_mad.Conn()
    p = c.b_psn
    r = timed(tmp_path, [(0, c.to_b("SEND_ONLY", p, 64)), (3 * US, c.to_b("SEND_ONLY", p + 1, 64)),
                         (5 * US, c.to_b("SEND_ONLY", p + 2, 64)),
                         (9 * US, c.to_a("ACKNOWLEDGE", p + 1)),
                         (200 * US, c.to_a("ACKNOWLEDGE", p + 2))], cm=cm, conn=c)
    # p and p+1 answered at 9 us (9 and 6 us), p+2 at 200 us (195 us)
    assert hist(r, "ack") == {bucket(9000): 1, bucket(6000): 1, bucket(195000): 1}
    assert abs(r["latency"]["ack"]["sum_ns"] - 210000) <= 3 * 16
    assert r["latency"]["ack"]["count"] == 3
    assert r["latency"]["ack"]["p50_ns"] == bucket(9000)
    assert r["latency"]["ack"]["p99_ns"] == bucket(195000)
    flow = next(f for f in r["flows"] if f["dqpn"] == c.b_qpn)
    assert flow["latency"] == {"count": 3, "p50_ns": bucket(9000), "p99_ns": bucket(195000)}
    assert all(r["latency"][k]["count"] == 0 for k in ("read", "nak_retx", "rnr_retry"))
    assert "latency" not in next(f for f in r["flows"] if f["dqpn"] == c.a_qpn)


def test_read_is_answered_by_its_first_response(tmp_path):
    c = cm_mad.Conn()
    p = c.b_psn
    frames = [(0, c.to_b("RDMA_READ_REQUEST", p, 0, dmalen=2048)),
              (30 * US, c.to_a("RDMA_READ_RESPONSE_FIRST", p, 1024)),
              (31 * US, c.to_a("RDMA_READ_RESPONSE_LAST", p + 1, 1024)),
              (40 * US, c.to_b("SEND_ONLY", p + 2, 64)),
              (41 * US, c.to_a("ACKNOWLEDGE", p + 2))]
    r = timed(tmp_path, frames, conn=c)
    assert hist(r, "read") == {bucket(30000): 1}
    assert hist(r, "ack") == {bucket(1000): 1}


def test_an_ack_does_not_time_a_read(tmp_path):
    # the capture lost the READ's response: the ACK after covers the READ, which is not an "ack"
    c = cm_mad.Conn()
    p = c.b_psn
    frames = [(0, c.to_b("RDMA_READ_REQUEST", p, 0, dmalen=64)), (1 * US, c.to_b("SEND_ONLY", p + 1, 64)),
              (9 * US, c.to_a("ACKNOWLEDGE", p + 1))]
    r = timed(tmp_path, frames, conn=c)
    assert hist(r, "ack") == {bucket(8000): 1}
    assert r["latency"]["read"]["count"] == 0


def test_an_error_nak_answers_nothing(tmp_path):
    # a remote access error NAK (syndrome 0x62) ends the connection; it is no ACK
    c = cm_mad.Conn()
    p = c.b_psn
    frames = [(0, c.to_b("SEND_ONLY", p, 64)), (2 * US, c.to_a("ACKNOWLEDGE", p, syndrome=0x62))]
    r = timed(tmp_path, frames, conn=c)
    assert r["rules"]["nak_access"] == 1
    assert all(r["latency"][k]["count"] == 0 for k in r["latency"])


def test_an_ack_answers_only_requests_sent_before_it(tmp_path):
    c = cm_mad.Conn()
    p = c.b_psn
    frames = [(0, c.to_b("SEND_ONLY", p, 64)), (1 * US, c.to_b("SEND_ONLY", p + 1, 64)),
              (2 * US, c.to_a("ACKNOWLEDGE", p)),
              (5 * US, c.to_a("ACKNOWLEDGE", p)),  # a repeat answers nothing new
              (70 * US, c.to_a("ACKNOWLEDGE", p + 1))]
    assert hist(timed(tmp_path, frames, conn=c), "ack") == {bucket(2000): 1, bucket(69000): 1}


def test_a_retransmitted_request_is_not_timed(tmp_path):
    # which transmission an ACK answers cannot be told (Karn): p+1 was sent twice
    c = cm_mad.Conn()
    p = c.b_psn
    frames = [(0, c.to_b("SEND_ONLY", p, 64)), (1 * US, c.to_b("SEND_ONLY", p + 1, 64)),
              (3 * US, c.to_a("ACKNOWLEDGE", p)),
              (900 * US, c.to_b("SEND_ONLY", p + 1, 64)),
              (905 * US, c.to_a("ACKNOWLEDGE", p + 1))]
    r = timed(tmp_path, frames, conn=c)
    assert hist(r, "ack") == {bucket(3000): 1}
    assert r["retransmission"]["packets"] == 1
    assert r["retransmission"]["episodes"] == r["retransmission"]["episodes_after_timeout"] == 1


def test_only_the_last_eight_requests_wait_for_an_answer(tmp_path):
    c = cm_mad.Conn()
    p = c.b_psn
    frames = [(i * US, c.to_b("SEND_ONLY", p + i, 8)) for i in range(12)]
    frames.append((100 * US, c.to_a("ACKNOWLEDGE", p + 11)))
    r = timed(tmp_path, frames, conn=c)
    # PSNs 4..11, sent at 4..11 us, answered at 100 us: 89 to 96 us
    assert hist(r, "ack") == {bucket(96000): 8}
    assert r["latency"]["ack"]["count"] == 8


def test_a_flows_histogram_halves_when_a_bucket_fills(tmp_path):
    # 65536 requests answered 8 at a time, all in one bucket: the flow's histogram holds 2 bytes a
    # bucket and halves at the 65536th sample; the interface's counts every one
    c = cm_mad.Conn()
    p, frames = c.b_psn, []
    send, ack = c.to_b("SEND_ONLY", p, 0), c.to_a("ACKNOWLEDGE", p)
    for i in range(0, 65536, 8):
        frames += [(i * US, with_psn(send, p + i + k)) for k in range(8)]
        frames.append(((i + 8) * US, with_psn(ack, p + i + 7)))
    r = timed(tmp_path, frames, conn=c)
    assert r["latency"]["ack"]["count"] == 65536
    flow = next(f for f in r["flows"] if f["dqpn"] == c.b_qpn)
    assert flow["latency"] == {"count": 32768, "p50_ns": bucket(8000), "p99_ns": bucket(8000)}


def test_acks_without_their_requests_time_nothing(tmp_path):
    # a one-way mirror: the responder's ACKs only
    c = cm_mad.Conn()
    frames = [(i * US, c.to_a("ACKNOWLEDGE", c.b_psn + i)) for i in range(5)]
    r = timed(tmp_path, frames, cm=False, conn=c)
    assert r["latency"]["ack"]["count"] == 0
    assert nonzero_rules(r) == {}
    # nor is their own time taken: live, that is a clock read for nothing
    assert [r[k] for k in CLOCKS] == [0, 0, 0, 0, 0]


def test_an_ack_answering_nothing_new_takes_no_time(tmp_path):
    # the ACK repeated finds its request flow, but no request waiting: not timed, as live that
    # would be a clock read for nothing; a READ response answers its READ and takes one
    c = cm_mad.Conn()
    p = c.b_psn
    frames = [(0, c.to_b("SEND_ONLY", p, 64)), (2 * US, c.to_a("ACKNOWLEDGE", p)),
              (3 * US, c.to_a("ACKNOWLEDGE", p)),
              (4 * US, c.to_b("RDMA_READ_REQUEST", p + 1, 0, dmalen=64)),
              (6 * US, c.to_a("RDMA_READ_RESPONSE_ONLY", p + 1, 64))]
    r = timed(tmp_path, frames, cm=False, conn=c)
    assert {k: v["count"] for k, v in r["latency"].items()} == \
        {"ack": 1, "read": 1, "nak_retx": 0, "rnr_retry": 0, "ce_cnp": 0}
    assert [r[k] for k in CLOCKS] == [4, 0, 0, 0, 0]


def test_answers_are_found_after_a_lost_first_request(tmp_path):
    # no CM; the capture lost the flow's first request, so its ACK finds no requests: the
    # requests after it are still timed, and a NAK to them judged
    c = cm_mad.Conn()
    p = c.b_psn
    frames = [(0, c.to_a("ACKNOWLEDGE", p)), (1 * US, c.to_b("SEND_ONLY", p + 1, 64)),
              (2 * US, c.to_b("SEND_ONLY", p + 2, 64)), (6 * US, c.to_a("ACKNOWLEDGE", p + 2)),
              (7 * US, c.to_b("SEND_ONLY", p + 4, 64)),
              (8 * US, c.to_a("ACKNOWLEDGE", p + 4, syndrome=NAK_PSN_SEQ))]
    r = timed(tmp_path, frames, cm=False, conn=c)
    assert hist(r, "ack") == {bucket(5000): 1, bucket(4000): 1}
    assert r["rules"]["nak_psn_wrong"] == 1


def test_a_one_way_mirror_gives_up_on_a_window(tmp_path):
    # ACKs only: looked up 16 times in a row in a window of 4096 PSNs, then not again in it; the
    # next window is tried anew
    c = cm_mad.Conn(b_psn=0x100000)
    frames = [(i * US, c.to_a("ACKNOWLEDGE", c.b_psn + i)) for i in range(20)]
    frames += [(30 * US, c.to_b("SEND_ONLY", c.b_psn + 20, 64)), (31 * US, c.to_a("ACKNOWLEDGE", c.b_psn + 20)),
               (40 * US, c.to_b("SEND_ONLY", 0x101000, 64)), (43 * US, c.to_a("ACKNOWLEDGE", 0x101000))]
    r = timed(tmp_path, frames, cm=False, conn=c)
    # the ACK at 31 us is not looked up; the one at 43 us answers both requests
    assert hist(r, "ack") == {bucket(3000): 1, bucket(13000): 1}


def test_another_qps_acks_are_not_taken_for_this_ones(tmp_path):
    # no CM; a second QP pair between the same hosts, PSNs far from the first one's
    c = cm_mad.Conn()
    other = cm_mad.Conn(a_qpn=0x200, b_qpn=0x201, b_psn=0x123456)
    frames = [(0, c.to_b("SEND_ONLY", c.b_psn, 64)), (1 * US, other.to_b("SEND_ONLY", other.b_psn, 64)),
              (2 * US, other.to_a("ACKNOWLEDGE", other.b_psn)),
              (50 * US, c.to_a("ACKNOWLEDGE", c.b_psn))]
    r = timed(tmp_path, frames, cm=False, conn=c)
    assert hist(r, "ack") == {bucket(1000): 1, bucket(50000): 1}
    by_qp = {f["dqpn"]: f.get("latency", {}).get("count") for f in r["flows"]}
    assert by_qp[c.b_qpn] == 1 and by_qp[other.b_qpn] == 1


def test_a_window_shared_by_two_qps_is_the_later_ones(tmp_path):
    # no CM; two QP pairs between the same hosts send PSNs in one window of 4096, 2048 apart:
    # the later one holds the window, and the earlier one's ACK, not a PSN the later one sent
    # lately, is matched to neither (it would otherwise answer the later one's request)
    c = cm_mad.Conn(b_psn=0x100800)
    other = cm_mad.Conn(a_qpn=0x200, b_qpn=0x201, b_psn=0x100000)
    frames = [(0, c.to_b("SEND_ONLY", c.b_psn, 64)), (1 * US, other.to_b("SEND_ONLY", other.b_psn, 64)),
              (3 * US, c.to_a("ACKNOWLEDGE", c.b_psn)),
              (50 * US, other.to_a("ACKNOWLEDGE", other.b_psn))]
    r = timed(tmp_path, frames, cm=False, conn=c)
    assert hist(r, "ack") == {bucket(49000): 1}
    by_qp = {f["dqpn"]: f.get("latency", {}).get("count") for f in r["flows"]}
    assert by_qp[c.b_qpn] is None and by_qp[other.b_qpn] == 1


def test_an_answer_timed_before_its_request_is_not_counted(tmp_path):
    # a capture merged from two interfaces: the ACK's timestamp is earlier than the request's
    c = cm_mad.Conn()
    p = c.b_psn
    frames = [(5 * US, c.to_b("SEND_ONLY", p, 64)), (2 * US, c.to_a("ACKNOWLEDGE", p)),
              (10 * US, c.to_b("SEND_ONLY", p + 1, 64)), (14 * US, c.to_a("ACKNOWLEDGE", p + 1))]
    r = timed(tmp_path, frames, conn=c)
    assert hist(r, "ack") == {bucket(4000): 1}


@pytest.mark.parametrize("cm", [True, False], ids=["cm", "inferred"])
def test_nak_to_retransmission(tmp_path, cm):
    c = cm_mad.Conn()
    p = c.b_psn
    frames = [(0, c.to_b("SEND_ONLY", p, 64)), (1 * US, c.to_b("SEND_ONLY", p + 2, 64)),
              (4 * US, c.to_a("ACKNOWLEDGE", p + 1, syndrome=NAK_PSN_SEQ)),
              (20 * US, c.to_b("SEND_ONLY", p + 1, 64)), (21 * US, c.to_b("SEND_ONLY", p + 2, 64))]
    r = timed(tmp_path, frames, cm=cm, conn=c)
    assert hist(r, "nak_retx") == {bucket(16000): 1}
    assert r["retransmission"]["episodes_after_nak"] == 1
    assert r["rules"]["nak_psn_wrong"] == 0


@pytest.mark.parametrize("cm", [True, False], ids=["cm", "inferred"])
@pytest.mark.parametrize("code,wait_us,early", [(1, 5, 1), (1, 12, 0), (14, 1000, 1), (14, 1300, 0),
                                                 (0, 600000, 1), (0, 700000, 0)])
def test_rnr_retry_against_its_timer(tmp_path, cm, code, wait_us, early):
    # code 1 is 10 us, 14 is 1.28 ms, 0 is 655.36 ms (IBA table 45)
    c = cm_mad.Conn()
    p = c.b_psn
    frames = [(0, c.to_b("SEND_ONLY", p, 64)), (1 * US, c.to_a("ACKNOWLEDGE", p, syndrome=rnr(code))),
              ((1 + wait_us) * US, c.to_b("SEND_ONLY", p, 64))]
    r = timed(tmp_path, frames, cm=cm, conn=c)
    assert r["rules"]["rnr_retry_early"] == early
    assert hist(r, "rnr_retry") == {bucket(wait_us * 1000): 1}
    assert r["latency"]["nak_retx"]["count"] == 0


@pytest.mark.parametrize("t,after_us,early", [(8, 1000, 1), (8, 1100, 0), (0, 1, 0)])
def test_timeout_retransmission_against_the_ack_timeout(tmp_path, t, after_us, early):
    # t = 8: 4.096 us << 8 = 1.049 ms; t = 0 announces no timeout, which is never judged
    c = cm_mad.Conn()
    p = c.b_psn
    frames = [(0, c.req(ack_timeout=t)), (0, c.rep()), (0, c.rtu()),
              (0, c.to_b("SEND_ONLY", p, 64)), (after_us * US, c.to_b("SEND_ONLY", p, 64))]
    r = timed(tmp_path, frames, cm=False, conn=c)
    assert r["rules"]["retx_timeout"] == 1
    assert r["rules"]["retx_timeout_early"] == early


def test_timeout_is_judged_from_the_latest_transmission(tmp_path):
    # the second retransmission comes 1.1 ms after the first, 2.1 ms after the original
    c = cm_mad.Conn()
    p = c.b_psn
    frames = [(0, c.req(ack_timeout=8)), (0, c.rep()), (0, c.rtu()),
              (0, c.to_b("SEND_ONLY", p, 64)), (1000 * US, c.to_b("SEND_ONLY", p, 64)),
              (1001 * US, c.to_b("SEND_ONLY", p + 1, 64)),
              (1500 * US, c.to_b("SEND_ONLY", p, 64))]
    r = timed(tmp_path, frames, cm=False, conn=c)
    assert r["rules"]["retx_episode"] == 2
    assert r["rules"]["retx_timeout_early"] == 2


def test_the_responders_requests_are_not_held_to_the_reqs_timeout(tmp_path):
    # the REQ announces the initiator's timeout, not the responder's
    c = cm_mad.Conn()
    frames = [(0, c.req(ack_timeout=8)), (0, c.rep()), (0, c.rtu()),
              (0, c.to_a("SEND_ONLY", c.a_psn, 64)), (10 * US, c.to_a("SEND_ONLY", c.a_psn, 64))]
    r = timed(tmp_path, frames, cm=False, conn=c)
    assert r["rules"]["retx_timeout"] == 1
    assert r["rules"]["retx_timeout_early"] == 0


def test_text_report_shows_the_latencies(tmp_path):
    c = cm_mad.Conn()
    p = c.b_psn
    frames = [c.to_b("SEND_ONLY", p, 64), c.to_a("ACKNOWLEDGE", p)]
    pcap = roce.write_pcap(tmp_path / "t.pcap", frames, times=[1, 1 + 3 * US])
    out = run("replay", str(pcap), check=True).stdout
    line = next(x for x in out.splitlines() if x.split()[:1] == ["ack"])
    assert line.split() == ["ack", "1", "4.1", "us", "4.1", "us", "3.0", "us"]


# --- live, through a veth ---------------------------------------------------------------------

def test_live_latency_counts_as_replay(netns, tmp_path):
    # live, the kernel's clock times the frames: the counts match replay, the buckets need not
    # (every request timed, latency_sample=1: live, the default times one a round trip a flow)
    c = cm_mad.Conn()
    p = c.b_psn
    frames = c.handshake() + [c.to_b("SEND_ONLY", p + i, 64) for i in range(4)]
    frames += [c.to_a("ACKNOWLEDGE", p + 1), c.to_a("ACKNOWLEDGE", p + 3),
               c.to_b("RDMA_READ_REQUEST", p + 4, 0, dmalen=64),
               c.to_a("RDMA_READ_RESPONSE_ONLY", p + 4, 64)]
    expected = {"ack": 4, "read": 1, "nak_retx": 0, "rnr_retry": 0, "ce_cnp": 0}
    # the four SENDs, the READ, two ACKs and the READ response each take a time
    timed = 8
    r = replay(tmp_path, frames)
    assert {k: v["count"] for k, v in r["latency"].items()} == expected
    assert [r[k] for k in CLOCKS] == [timed, 0, 0, 0, 0]
    st, status = live_stats(netns, tmp_path, frames, lambda: json.loads(
        run("status", netns.if_rx, "--json", netns=netns.rx, check=True).stdout), settings=["latency_sample=1"])
    assert {k: v["count"] for k, v in st["latency"].items()} == expected
    assert sum(b["count"] for b in st["latency"]["ack"]["buckets"]) == 4
    assert st["retransmission"]["packets"] == 0
    # native XDP on veth: the program asks the NIC, and veth never stamps a frame
    assert [st[k] for k in CLOCKS] == [0, timed, 0, 0, 0]
    status = status[0] if isinstance(status, list) else status
    assert (status["latency_clock"], status["nic_timestamps"], status["mode"]) == ("kernel", True, "native")


def answered_sends(c, n):
    """n SEND_ONLYs of c's requester from its first PSN on, each answered by its ACK before the next."""
    frames = []
    for i in range(n):
        frames += [c.to_b("SEND_ONLY", c.b_psn + i, 64), c.to_a("ACKNOWLEDGE", c.b_psn + i)]
    return frames


def live_stats_and_status(netns, tmp_path, frames, setting):
    """live_stats() with one setting, and `status` while attached."""
    return live_stats(netns, tmp_path, frames, lambda: run(
        "status", netns.if_rx, netns=netns.rx, check=True).stdout, settings=[setting])


def test_latency_sample_times_one_new_request_in_n_live(netns, tmp_path):
    # live, the kernel's clock costs a helper call a request: latency_sample=4 times the 4th and
    # the 8th SEND, and only their ACKs read the clock; a replay's time is free, so all are timed
    c = cm_mad.Conn()
    frames = c.handshake() + answered_sends(c, 8)
    r = replay(tmp_path, frames, "--set", "latency_sample=4")
    assert r["latency"]["ack"]["count"] == 8
    assert [r[k] for k in CLOCKS] == [16, 0, 0, 0, 0]
    st, status = live_stats_and_status(netns, tmp_path, frames, "latency_sample=4")
    assert st["latency"]["ack"]["count"] == 2
    assert [st[k] for k in CLOCKS] == [0, 4, 0, 0, 6]
    assert "1 new request in 4 timed (latency_sample): 6 not" in status.splitlines()[3]
    # what is not timed is judged as the replay judged it
    assert nonzero_rules(st) == nonzero_rules(r)


def test_latency_sample_flow_times_a_request_when_none_of_its_flow_awaits_an_answer(netns, tmp_path):
    c = cm_mad.Conn()
    p = c.b_psn
    # each SEND answered before the next: every one is timed, and every ACK gives a latency
    frames = c.handshake() + answered_sends(c, 4)
    # 10 SENDs in a row: the first is timed and awaits its answer while the next 8 go untimed;
    # the 9th takes the first's retransmission slot (8 slots), so the 10th is timed again, as on
    # a one-way mirror that never sees an answer; one ACK covers them all: one latency more
    frames += [c.to_b("SEND_ONLY", p + 4 + i, 64) for i in range(10)]
    frames += [c.to_a("ACKNOWLEDGE", p + 13)]
    st, status = live_stats_and_status(netns, tmp_path, frames, "latency_sample=flow")
    assert st["latency"]["ack"]["count"] == 5
    # 6 requests and the 5 ACKs that answered them read the clock
    assert [st[k] for k in CLOCKS] == [0, 11, 0, 0, 8]
    assert "latency_sample flow" in status
    assert "1 new request per flow in flight timed (latency_sample=flow): 8 not" in status.splitlines()[3]
    # a replay's time is free: all 14 requests are timed, and the 5 ACKs that answered them
    r = replay(tmp_path, frames, "--set", "latency_sample=flow")
    assert [r[k] for k in CLOCKS] == [19, 0, 0, 0, 0]


def live_ack_latency(netns, settings):
    """The ack histogram and the timed and skipped totals of generated traffic whose ACKs come 3 ms
    late, sent live into an attachment made with settings."""
    run("attach", netns.if_rx, *settings, netns=netns.rx, check=True)
    try:
        res = run("gen", "-i", netns.if_tx, "--rate", "20000", "--count", "1200", "--seed", "4", "--qps", "2",
                  "--traffic", "send,write", "--ack-delay", "3000", "--json", "--quiet",
                  "--mac", f"{netns.mac(netns.tx, netns.if_tx)},{netns.mac(netns.rx, netns.if_rx)}",
                  netns=netns.tx, check=True)
        frames = json.loads(res.stdout)["frames"]
        assert wait_for(lambda: json.loads(run("stats", netns.if_rx, "--json", netns=netns.rx,
                                                check=True).stdout)["roce"] >= frames)
        st = json.loads(run("stats", netns.if_rx, "--json", netns=netns.rx, check=True).stdout)
        status = json.loads(run("status", netns.if_rx, "--json", netns=netns.rx, check=True).stdout)
    finally:
        run("detach", netns.if_rx, netns=netns.rx)
    status = status[0] if isinstance(status, list) else status
    return st["latency"]["ack"], st["timed_kernel"], st["latency_skipped"], status["settings"]["latency_sample"]


@pytest.mark.alone  # ACK latencies measured live: other tests' load would move them out of their bucket
def test_live_defaults_to_flow_sampling_and_its_histogram_agrees(netns):
    # live, a flow's new request is timed only when none of its timed ones awaits an answer: the
    # default, as it costs a clock read a round trip, not a request; its ACK latencies are
    # distributed as those of every request timed (latency_sample=1), the ACKs all 3 ms late
    flow, timed_flow, skipped_flow, default = live_ack_latency(netns, [])
    every, timed_every, skipped_every, one = live_ack_latency(netns, ["latency_sample=1"])
    assert (default, one) == ("flow", "1")
    assert skipped_every == 0 and skipped_flow > 0 and timed_flow < timed_every
    assert 100 < flow["count"] < every["count"]
    share = [{b["le_ns"]: b["count"] / h["count"] for b in h["buckets"]} for h in (flow, every)]
    mode = [max(x, key=x.get) for x in share]
    assert mode[0] == mode[1] == bucket(3000 * 1000 + 1)
    # total variation distance between the two histograms
    assert sum(abs(share[0].get(le, 0) - share[1].get(le, 0)) for le in set(share[0]) | set(share[1])) / 2 < 0.15
    mean = [h["sum_ns"] / h["count"] for h in (flow, every)]
    assert abs(mean[0] - mean[1]) < 0.2 * mean[1]


@pytest.mark.parametrize("mode", ["native", "generic", "tc"])
def test_the_clock_each_attachment_can_use(netns, mode):
    # only native XDP bound to the device may ask the driver for receive timestamps
    run("attach", netns.if_rx, "--mode", mode, netns=netns.rx, check=True)
    try:
        status = json.loads(run("status", netns.if_rx, "--json", netns=netns.rx, check=True).stdout)
        text = run("status", netns.if_rx, netns=netns.rx, check=True).stdout
        prog = json.loads(subprocess.run(["bpftool", "-j", "prog", "show", "pinned",
                                          str(pin_dir(netns.if_rx, netns.rx) / "prog")],
                                         capture_output=True, text=True, check=True).stdout)
    finally:
        run("detach", netns.if_rx, netns=netns.rx)
    status = status[0] if isinstance(status, list) else status
    nic = mode == "native"
    assert (status["nic_timestamps"], status["latency_clock"]) == (nic, "kernel")
    assert prog["name"] == {"native": "roceval_xdp_nic", "generic": "roceval_xdp", "tc": "roceval_tc"}[mode]
    clock = next(x for x in text.splitlines() if x.split()[:1] == ["clock"])
    assert ("hwstamp_ctl -i %s -r 1" % netns.if_rx in clock) == nic
    assert ("need native mode" in clock) == (not nic)


def test_the_hints_are_sized_with_the_flow_table(netns):
    run("attach", netns.if_rx, "--flows", "1024", netns=netns.rx, check=True)
    try:
        pin = pin_dir(netns.if_rx, netns.rx)
        sizes = {name: json.loads(subprocess.run(["bpftool", "-j", "map", "show", "pinned", str(pin / name)],
                                                 capture_output=True, text=True, check=True).stdout)["max_entries"]
                 for name in ("flows", "req_hints")}
    finally:
        run("detach", netns.if_rx, netns=netns.rx)
    # the flow table has 1.5 slots a flow, the hints one a flow
    assert sizes == {"flows": 1536, "req_hints": 1024}


# --- generated traffic, against an oracle written here ------------------------------------------

def pcap_records(path):
    """(time in ns, frame) of each record of a classic pcap, microsecond or nanosecond."""
    data = path.read_bytes()
    magic = struct.unpack_from("<I", data)[0]
    scale = 1000 if magic == 0xA1B2C3D4 else 1
    off, out = 24, []
    while off + 16 <= len(data):
        sec, frac, caplen, _ = struct.unpack_from("<IIII", data, off)
        out.append((sec * 10**9 + frac * scale, data[off + 16:off + 16 + caplen]))
        off += 16 + caplen
    return out


def bth_of(frm):
    """(src, dst, the BTH and what follows) of a RoCEv2 frame, else None."""
    l3 = roce.l3_offset(frm)
    if frm[l3] >> 4 == 4:
        ihl, proto, src, dst = (frm[l3] & 15) * 4, frm[l3 + 9], frm[l3 + 12:l3 + 16], frm[l3 + 16:l3 + 20]
    else:
        ihl, proto, src, dst = 40, frm[l3 + 6], frm[l3 + 8:l3 + 24], frm[l3 + 24:l3 + 40]
    udp = l3 + ihl
    if proto != 17 or struct.unpack_from(">H", frm, udp + 2)[0] != 4791:
        return None
    return src, dst, frm[udp + 8:]


READ_RESP_AETH = {0x0D, 0x0F, 0x10}  # FIRST, LAST, ONLY carry an AETH
ANSWERS = READ_RESP_AETH | {0x11, 0x12}


def oracle(path):
    """Latency buckets {"ack": {le: n}, "read": {le: n}} of RC traffic, as roceval.h defines them:
    each new request waits in its flow's slot (PSN mod 8) until an ACK at or past its PSN; a
    resent one is not timed; a READ is timed to its first response.  A response is matched to
    the flow, from its destination to its source, that sent its PSN or one shortly before it:
    found here by searching every such flow."""
    flows, got = {}, {"ack": {}, "read": {}}
    for t, frm in pcap_records(path):
        parsed = bth_of(frm)
        if not parsed or parsed[2][0] >> 5 != 0:  # RC only
            continue
        src, dst, bth = parsed
        opc, qp, psn = bth[0] & 0x1F, int.from_bytes(bth[5:8], "big"), int.from_bytes(bth[9:12], "big")
        tick = t >> 4
        if opc not in roce.RESPONSES:
            slots, seen = flows.setdefault((src, dst, qp), ([None] * 8, set()))
            slot = slots[psn % 8]
            if psn in seen:  # a retransmission
                if slot and slot["psn"] == psn:
                    slot.update(waiting=False)
                continue
            seen.add(psn)
            slots[psn % 8] = {"psn": psn, "tick": tick, "waiting": True, "read": opc == 0x0C}
            continue
        if opc not in ANSWERS:
            continue
        # the flow that sent this PSN or one shortly before (the capture may have lost this one)
        owners = [k for k, (slots, seen) in flows.items()
                  if k[:2] == (dst, src) and any((psn - x) % (1 << 24) < 1024 for x in seen)]
        assert len(owners) <= 1, "two flows sent PSNs here: the oracle cannot tell them apart"
        if not owners:
            continue
        slots = flows[owners[0]][0]
        if opc in (0x0D, 0x10):
            slot = slots[psn % 8]
            if slot and slot["waiting"] and slot["read"] and slot["psn"] == psn:
                slot["waiting"] = False
                le = bucket((tick - slot["tick"]) << 4)
                got["read"][le] = got["read"].get(le, 0) + 1
        if bth[12] >> 5 != 0:  # a NAK
            continue
        for slot in slots:
            # covered: the slot's PSN is not ahead of the ACK's (IBA 9.7.1's window)
            if slot and slot["waiting"] and (psn - slot["psn"]) % (1 << 24) < (1 << 23):
                slot["waiting"] = False
                if not slot["read"]:
                    le = bucket((tick - slot["tick"]) << 4)
                    got["ack"][le] = got["ack"].get(le, 0) + 1
    return got


@pytest.mark.parametrize("args", [("--ack-delay", "0"), ("--ack-delay", "50"), ("--ack-delay", "3000"),
                                  ("--ack-delay", "20", "--cm", "--duplicate", "2%", "--drop", "1%")],
                         ids=["no-delay", "50us", "3ms", "cm-and-faults"])
def test_generated_latencies_match_the_oracle(tmp_path, args):
    pcap = tmp_path / "gen.pcap"
    run("gen", "-w", pcap, "--quiet", "--seed", "5", "--count", "4000", "--traffic", "send,write,read,atomic",
        "--qps", "6", *args, check=True)
    r = replay_json(pcap)
    want = oracle(pcap)
    assert sum(want["ack"].values()) > 300 and sum(want["read"].values()) > 20
    for kind in ("ack", "read"):
        assert hist(r, kind) == want[kind], kind
    # the ACKs came the delay late (READ responses and atomic ACKs, also in "ack", did not)
    assert r["latency"]["ack"]["p99_ns"] >= bucket(int(args[1]) * 1000 + 1)
