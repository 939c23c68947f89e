# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Sequence truth on real fabrics: reordering told from loss, a reused queue pair restarted at its
new Starting PSN, a READ's PSNs counted from what the connection showed, and cm_retry.

Frames are a microsecond apart unless a case says otherwise: reordering happens within
microseconds, and a hole of the reorder window older than reorder_time (1 ms) is a loss.
"""
import json

import pytest

import cm_mad
import roce
from conftest import live_stats, nonzero_rules, replay, run, wait_for

A, B = "192.0.2.1", "192.0.2.2"
US = 1e-6
SEQ = {"psn_gap", "psn_duplicate", "psn_reorder", "opcode_sequence", "msn_regress", "retx_episode",
       "retx_timeout", "retx_uncompared", "retx_changed", "nak_psn_wrong", "go_back_early",
       "go_back_late", "psn_unjudged", "cm_start_psn", "cm_retry"}


def req(name, psn, payload=None, qp=0x11, src=A, dst=B, transport=roce.RC, **kw):
    opc = roce.opcode(transport, name)
    if payload is None:
        payload = 1024 if name.endswith(("FIRST", "MIDDLE")) else 64
    return roce.roce(opc, payload, psn=psn, dqpn=qp, frame_kw={"src": src, "dst": dst}, **kw)


def resp(name, psn, msn=0, payload=None, qp=0x22, **kw):
    return req(name, psn, payload if payload is not None else 0, qp=qp, src=B, dst=A, msn=msn, **kw)


def judge(tmp_path, frames, *opts, gap=US):
    """Replays frames `gap` seconds apart: (the sequence rules counted, the whole result)."""
    r = replay(tmp_path, frames, *opts, times=[i * gap for i in range(len(frames))])
    assert r["icrc_bad"] == 0
    return {k: v for k, v in nonzero_rules(r).items() if k in SEQ}, r


def sends(order, p=1000, **kw):
    return [req("SEND_ONLY", p + i, **kw) for i in order]


def test_pure_reordering(tmp_path):
    # 40 SEND_ONLY, five adjacent pairs swapped, nothing lost: five reordered packets, one PSN late
    order = list(range(40))
    for i in (3, 10, 17, 24, 31):
        order[i], order[i + 1] = order[i + 1], order[i]
    got, r = judge(tmp_path, sends(order))
    assert got == {"psn_reorder": 5}
    assert r["reorder"] == {"count": 5, "sum_psns": 5, "p50_psns": 1, "p99_psns": 1,
                            "buckets": [{"le_psns": 1, "count": 5}]}
    assert r["retransmission"]["packets"] == 0
    # reorder_window=0 keeps the strict judgement: each pair a gap, a duplicate and a timeout retry
    got, r = judge(tmp_path, sends(order), "--set", "reorder_window=0")
    assert got == {"psn_gap": 5, "psn_duplicate": 5, "retx_episode": 5, "retx_timeout": 5,
                   "retx_uncompared": 5}
    assert r["retransmission"]["packets"] == 5 and r["reorder"]["count"] == 0


def test_one_late_packet(tmp_path):
    # PSN 5 arrives 8 places late: behind PSN 13, the newest then
    order = [i for i in range(20) if i != 5]
    order.insert(order.index(13) + 1, 5)
    got, r = judge(tmp_path, sends(order))
    assert got == {"psn_reorder": 1}
    assert (r["reorder"]["sum_psns"], r["reorder"]["buckets"]) == (8, [{"le_psns": 8, "count": 1}])
    assert r["flows"][0]["rules"] == {"psn_reorder": 1} and r["flows"][0]["violations"] == 0
    got, _ = judge(tmp_path, sends(order), "--set", "reorder_window=0")
    assert got == {"psn_gap": 1, "psn_duplicate": 1, "retx_episode": 1, "retx_timeout": 1,
                   "retx_uncompared": 1}


def test_later_than_the_window_is_a_gap_and_a_duplicate(tmp_path):
    # 8 PSNs late with a window of 8 PSNs is inside it; with 7, the hole left before it came
    order = [i for i in range(20) if i != 5]
    order.insert(order.index(13) + 1, 5)
    assert judge(tmp_path, sends(order), "--set", "reorder_window=8")[0] == {"psn_reorder": 1}
    assert judge(tmp_path, sends(order), "--set", "reorder_window=7")[0] == {
        "psn_gap": 1, "psn_duplicate": 1, "retx_episode": 1, "retx_timeout": 1, "retx_uncompared": 1}


def test_a_hole_never_filled(tmp_path):
    # PSNs 5 and 6 never come: one run, one gap, settled at the end of the replay
    got, r = judge(tmp_path, sends([i for i in range(20) if i not in (5, 6)]))
    assert got == {"psn_gap": 1}
    assert r["flows"][0]["rules"] == {"psn_gap": 1} and r["flows"][0]["violations"] == 1
    # two runs, 5 and 8: two gaps; 6 and 7 came late, one of them filling part of a run
    order = [0, 1, 2, 3, 4, 9, 10, 7, 6, 11, 12]
    got, r = judge(tmp_path, sends(order))
    assert got == {"psn_gap": 2, "psn_reorder": 2}
    assert r["reorder"]["sum_psns"] == 3 + 4


def test_a_run_of_holes_leaving_the_window_is_one_gap(tmp_path):
    # with a window of 8 PSNs, PSNs 5-7 leave it one at a time as 20 more come: still one gap
    got, _ = judge(tmp_path, sends([i for i in range(40) if i not in (5, 6, 7)]), "--set", "reorder_window=8")
    assert got == {"psn_gap": 1}
    # a jump further than the window: its holes leave it at once, and the rest of the run later
    got, _ = judge(tmp_path, sends([0, 1, 30, 31, 32] + list(range(33, 50))), "--set", "reorder_window=8")
    assert got == {"psn_gap": 1}


def test_a_hole_that_opened_long_ago_is_a_loss(tmp_path):
    # the same late packet a second after the hole opened: a retransmission, as without a window
    order = [0, 1, 2, 4, 5, 3, 6]
    assert judge(tmp_path, sends(order))[0] == {"psn_reorder": 1}
    assert judge(tmp_path, sends(order), gap=1)[0] == {
        "psn_gap": 1, "psn_duplicate": 1, "retx_episode": 1, "retx_timeout": 1, "retx_uncompared": 1}
    # reorder_time=0 never ages a hole
    assert judge(tmp_path, sends(order), "--set", "reorder_time=0", gap=1)[0] == {"psn_reorder": 1}


def rules_at(tmp_path, frames, times, *opts):
    r = replay(tmp_path, frames, *opts, times=times)
    return {k: v for k, v in nonzero_rules(r).items() if k in SEQ}, r


def late_fill(swaps, **kw):
    """SEND_ONLY every 20 us, PSN 5 100 places late (2 ms after its hole opened), and when `swaps`
    a pair swapped every 10 packets from PSN 12 on: (frames, times)."""
    order = list(range(120))
    if swaps:
        for i in range(12, 118, 10):
            order[i], order[i + 1] = order[i + 1], order[i]
    order.remove(5)
    order.insert(order.index(104) + 1, 5)
    return sends(order, **kw), [i * 20 * US for i in range(len(order))]


LOSS = {"psn_gap": 1, "psn_duplicate": 1, "retx_episode": 1, "retx_timeout": 1, "retx_uncompared": 1}


@pytest.mark.parametrize("ipv6", [False, True], ids=["ipv4", "ipv6"])
def test_an_old_hole_ages_by_its_own_clock(tmp_path, ipv6):
    # the swaps open and fill holes of their own while 5's stays open: they leave it as old as it is
    kw = {"ipv6": True, "src": None, "dst": None} if ipv6 else {}
    got, r = rules_at(tmp_path, *late_fill(False, **kw))
    assert got == LOSS
    got, r = rules_at(tmp_path, *late_fill(True, **kw))
    assert got == LOSS | {"psn_reorder": 11}
    assert r["reorder"]["sum_psns"] == 11


def test_one_swap_before_the_fill_leaves_an_old_hole_old(tmp_path):
    # 25 us apart: 5's hole opens at 125 us, 47 and 48 swap at 1050 us, 5 comes at 1500 us
    order = [i for i in range(70) if i != 5]
    order[42], order[43] = order[43], order[42]
    order.insert(60, 5)
    times = [i * 25 * US for i in range(len(order))]
    assert rules_at(tmp_path, sends(order), times)[0] == LOSS | {"psn_reorder": 1}
    # the swap's own hole, opened after 5's aged, is as young as it is: reordered, and 5 a gap
    order.remove(5)
    order[50], order[51] = order[51], order[50]
    assert rules_at(tmp_path, sends(order), times[:-1])[0] == {"psn_gap": 1, "psn_reorder": 2}
    # three ages at once (losses at 1, 71 and 105 left open): a swap 1 ms after the second loss is
    # not taken for as old as it
    order, at = [0, 70, 104, 194, 196, 195], [0, 1005, 1497, 2535, 2544, 2545]
    assert rules_at(tmp_path, sends(order), [t * US for t in at])[0] == {"psn_gap": 3, "psn_reorder": 1}


def test_reordering_that_never_stops_is_never_a_loss(tmp_path):
    # a pair swapped every 4 packets for 8 ms, 100 us apart: holes always come and go, none ages
    order = list(range(80))
    for i in range(1, 79, 4):
        order[i], order[i + 1] = order[i + 1], order[i]
    got, r = judge(tmp_path, sends(order), gap=100 * US)
    assert got == {"psn_reorder": 20}
    # two holes at a time, each opened by a jump of its own: 2 over 1, 4 over 3, then 1 and 3
    order = []
    for b in range(0, 80, 5):
        order += [b, b + 2, b + 4, b + 1, b + 3]
    got, r = judge(tmp_path, sends(order), gap=100 * US)
    assert got == {"psn_reorder": 32}


def test_a_real_duplicate(tmp_path):
    # PSN 5 seen, then seen again: a retransmission, compared with its first transmission
    got, r = judge(tmp_path, sends([0, 1, 2, 3, 4, 5, 6, 5, 7]))
    assert got == {"psn_duplicate": 1, "retx_episode": 1, "retx_timeout": 1}
    # the same after a reordered packet: still a duplicate
    got, r = judge(tmp_path, sends([0, 1, 3, 2, 4, 3, 5]))
    assert got == {"psn_reorder": 1, "psn_duplicate": 1, "retx_episode": 1, "retx_timeout": 1}


def nak_go_back(c, nak=True):
    """c's requests 0..4 with 2 lost, the responder's NAK for 2 (when seen), the go-back 2..5."""
    p = c.b_psn
    frames = c.handshake() + [c.to_b("SEND_ONLY", p + i, 64) for i in (0, 1, 3, 4)]
    if nak:
        frames.append(c.to_a("ACKNOWLEDGE", p + 2, syndrome=0x60))
    return frames + [c.to_b("SEND_ONLY", p + i, 64) for i in (2, 3, 4, 5)]


def test_nak_driven_go_back(tmp_path):
    c = cm_mad.Conn()
    # the NAK names the hole: a loss at once, and 2 is its retransmission
    got, r = judge(tmp_path, nak_go_back(c))
    assert got == {"psn_gap": 1, "psn_duplicate": 3, "retx_episode": 1, "retx_uncompared": 1}
    assert r["retransmission"] == dict(r["retransmission"], packets=3, episodes_after_nak=1)
    # the NAK not seen (a mirror of one direction): 2 fills the hole, and 3, seen before, right after
    # it shows the go-back that started at 2; 2 was never seen, so it is no duplicate
    got, r = judge(tmp_path, nak_go_back(c, nak=False))
    assert got == {"psn_gap": 1, "psn_duplicate": 2, "retx_episode": 1, "retx_timeout": 1,
                   "retx_uncompared": 1}
    assert r["retransmission"]["packets"] == 3 and r["reorder"]["count"] == 0


def test_a_go_back_over_two_lost_requests_without_its_nak(tmp_path):
    # 2 and 3 lost, the NAK not seen: they come again in a row, then 4, seen before: one go-back
    got, r = judge(tmp_path, sends([0, 1, 4, 5, 2, 3, 4, 5, 6]))
    assert got == {"psn_gap": 1, "psn_duplicate": 2, "retx_episode": 1, "retx_timeout": 1,
                   "retx_uncompared": 2}
    assert r["retransmission"]["packets"] == 4 and r["reorder"]["count"] == 0
    # the go-back's holes are settled, not left open: 2 sent once more is a PSN seen, no fill
    got, r = judge(tmp_path, sends([0, 1, 4, 5, 2, 3, 4, 5, 6, 2]))
    assert got == {"psn_gap": 1, "psn_duplicate": 3, "retx_episode": 2, "retx_timeout": 2,
                   "retx_uncompared": 2}
    assert r["reorder"]["count"] == 0
    # the same two late, then new requests: reordered, 3 and 2 PSNs behind the newest
    got, r = judge(tmp_path, sends([0, 1, 4, 5, 2, 3, 6]))
    assert got == {"psn_reorder": 2} and r["reorder"]["sum_psns"] == 5


def test_reordered_middle_packets(tmp_path):
    # a SEND of five packets whose MIDDLEs come out of order: reordered, not a broken message
    names = ["SEND_FIRST", "SEND_MIDDLE", "SEND_MIDDLE", "SEND_MIDDLE", "SEND_LAST"]
    frames = [req(names[i], 100 + i) for i in (0, 2, 1, 3, 4)]
    assert judge(tmp_path, frames)[0] == {"psn_reorder": 1}
    # across messages: the next message's MIDDLE overtakes its FIRST
    frames = [req("SEND_ONLY", 100), req("SEND_MIDDLE", 102), req("SEND_FIRST", 101),
              req("SEND_LAST", 103)]
    assert judge(tmp_path, frames)[0] == {"psn_reorder": 1}
    assert judge(tmp_path, frames, "--set", "reorder_window=0")[0] == {
        "psn_gap": 1, "opcode_sequence": 1, "psn_duplicate": 1, "retx_episode": 1,
        "retx_timeout": 1, "retx_uncompared": 1}
    # the FIRST lost for good: the MIDDLE after the gap breaks its message, as it always did
    frames = [req("SEND_ONLY", 100), req("SEND_MIDDLE", 102), req("SEND_LAST", 103)]
    assert judge(tmp_path, frames)[0] == {"psn_gap": 1, "opcode_sequence": 1}


def test_reordered_read_responses(tmp_path):
    # a READ of one packet, then one of four whose first MIDDLE overtakes its FIRST
    names = ["FIRST", "MIDDLE", "MIDDLE", "LAST"]
    frames = [req("RDMA_READ_REQUEST", 49, 0, dmalen=64), req("RDMA_READ_REQUEST", 50, 0, dmalen=4096),
              resp("RDMA_READ_RESPONSE_ONLY", 49, msn=1, payload=64)]
    frames += [resp(f"RDMA_READ_RESPONSE_{names[i]}", 50 + i, msn=2, payload=1024) for i in (1, 0, 2, 3)]
    got, r = judge(tmp_path, frames, "--pmtu", "1024")
    assert got == {"psn_reorder": 1}
    # strictly, the MIDDLE came with no READ response open, and the FIRST with one open
    got, r = judge(tmp_path, frames, "--pmtu", "1024", "--set", "reorder_window=0")
    assert got == {"opcode_sequence": 2}


def test_overtaking_acks(tmp_path):
    frames = [resp("ACKNOWLEDGE", 9, msn=4), resp("ACKNOWLEDGE", 11, msn=6), resp("ACKNOWLEDGE", 10, msn=5),
              resp("ACKNOWLEDGE", 12, msn=7)]
    got, r = judge(tmp_path, frames)
    assert got == {"psn_reorder": 1}
    assert r["reorder"]["buckets"] == [{"le_psns": 1, "count": 1}]
    assert judge(tmp_path, frames, "--set", "reorder_window=0")[0] == {"msn_regress": 1}
    # behind the first seen, where the capture began: not known missing, no reordering
    assert judge(tmp_path, [resp("ACKNOWLEDGE", 11, msn=6), resp("ACKNOWLEDGE", 10, msn=5),
                            resp("ACKNOWLEDGE", 12, msn=7)])[0] == {}
    # an ACK repeated (a duplicate request's), newest or not, is no reordering
    frames = [resp("ACKNOWLEDGE", 9, msn=4), resp("ACKNOWLEDGE", 11, msn=6), resp("ACKNOWLEDGE", 11, msn=6),
              resp("ACKNOWLEDGE", 9, msn=6), resp("ACKNOWLEDGE", 12, msn=7)]
    assert judge(tmp_path, frames)[0] == {}


def test_acks_overtaken_further_than_16_psns(tmp_path):
    # ACK 120 overtaken by the 20 after it: reordered, 20 PSNs behind; one seen, 20 behind, again: not
    acks = [resp("ACKNOWLEDGE", 100 + i, msn=i) for i in range(41) if i != 20]
    frames = acks + [resp("ACKNOWLEDGE", 120, msn=20), resp("ACKNOWLEDGE", 121, msn=40)]
    got, r = judge(tmp_path, frames)
    assert got == {"psn_reorder": 1}
    assert r["reorder"]["buckets"] == [{"le_psns": 32, "count": 1}] and r["reorder"]["sum_psns"] == 20
    # further than reorder_window: judged as it comes, an MSN gone back
    assert judge(tmp_path, frames, "--set", "reorder_window=16")[0] == {"msn_regress": 1}
    # coalesced, one every 4 PSNs: 160 overtaken by 164 .. 200, 40 behind; 120 and 122 (never
    # acknowledged, within the window) repeated or late
    acks = [resp("ACKNOWLEDGE", 100 + 4 * i, msn=i) for i in range(26) if i != 15]
    frames = acks + [resp("ACKNOWLEDGE", 160, msn=15), resp("ACKNOWLEDGE", 120, msn=25),
                     resp("ACKNOWLEDGE", 122, msn=5)]
    got, r = judge(tmp_path, frames)
    assert got == {"psn_reorder": 2} and r["reorder"]["sum_psns"] == 40 + 78


def reuse(first_psn=0x9F931B, second_psn=0x123456, wrong=False):
    """Two CM connections on the same QPNs one after the other, each closed by DREQ/DREP."""
    one = cm_mad.Conn(a_psn=first_psn, b_psn=first_psn + 0x1000)
    two = cm_mad.Conn(a_psn=second_psn, b_psn=second_psn + 0x1000, a_comm=0x11111111,
                      b_comm=0x22222222, tid=0xC0FFEE)
    frames = one.handshake()
    for i in range(6):
        frames += [one.to_b("SEND_ONLY", one.b_psn + i, 64), one.to_a("ACKNOWLEDGE", one.b_psn + i, msn=i + 1),
                   one.to_a("SEND_ONLY", one.a_psn + i, 16), one.to_b("ACKNOWLEDGE", one.a_psn + i, msn=i + 1)]
    frames += one.teardown() + two.handshake()
    for i in range(3):
        frames += [two.to_b("SEND_ONLY", two.b_psn + i + (7 if wrong else 0), 64),
                   two.to_a("ACKNOWLEDGE", two.b_psn + i, msn=i + 1),
                   two.to_a("SEND_ONLY", two.a_psn + i, 16), two.to_b("ACKNOWLEDGE", two.a_psn + i, msn=i + 1)]
    return frames + two.teardown()


@pytest.mark.parametrize("second", [0x123456, 0x9F931B + 0x1000 + 3],
                         ids=["far", "behind-the-old-expectation"])
def test_qpn_reuse_across_two_cm_connections(tmp_path, second):
    got, r = judge(tmp_path, reuse(second_psn=second))
    assert got == {}
    assert r["rules"]["cm_established"] == 2 and len(r["connections"]) == 2
    # the second connection's first request off its announced Starting PSN: that, and nothing else
    got, _ = judge(tmp_path, reuse(second_psn=second, wrong=True))
    assert got == {"cm_start_psn": 1}


def read_then(p, after, responses=True, pmtu=()):
    """A READ of 3 packets (3000 bytes at PMTU 1024) at p, its responses, then SENDs at `after`."""
    frames = [req("RDMA_READ_REQUEST", p, 0, dmalen=3000)]
    if responses:
        frames += [resp("RDMA_READ_RESPONSE_FIRST", p, msn=1, payload=1024),
                   resp("RDMA_READ_RESPONSE_MIDDLE", p + 1, msn=1, payload=1024),
                   resp("RDMA_READ_RESPONSE_LAST", p + 2, msn=1, payload=952)]
    return frames + [req("SEND_ONLY", q) for q in after]


def test_a_psn_reused_after_a_read_without_pmtu(tmp_path):
    # the next SEND reuses the READ's last PSN: judged from the READ's responses, as with --pmtu
    frames = read_then(700, [702, 703])
    expect = {"psn_duplicate": 1, "retx_episode": 1, "retx_timeout": 1, "retx_uncompared": 1}
    assert judge(tmp_path, frames)[0] == expect
    assert judge(tmp_path, frames, "--pmtu", "1024")[0] == expect
    # right after it: nothing; one further on: the gap, and the requests after it are in order
    assert judge(tmp_path, read_then(700, [703, 704]))[0] == {}
    assert judge(tmp_path, read_then(700, [704, 705, 706]))[0] == {"psn_gap": 1}


def test_a_read_whose_psns_nothing_tells(tmp_path):
    # no PMTU set, negotiated or shown, no response seen: the next request is counted unjudged
    got, _ = judge(tmp_path, read_then(700, [702, 703], responses=False))
    assert got == {"psn_unjudged": 1}
    # its first responses alone bound it: a request before the PSN after the last reuses one
    frames = read_then(700, [], responses=False)
    frames += [resp("RDMA_READ_RESPONSE_FIRST", 700, msn=1, payload=1024),
               resp("RDMA_READ_RESPONSE_MIDDLE", 701, msn=1, payload=1024), req("SEND_ONLY", 701)]
    assert judge(tmp_path, frames)[0] == {"psn_duplicate": 1, "retx_episode": 1, "retx_timeout": 1,
                                          "retx_uncompared": 1}
    # such a READ past a hole: the hole is a gap at once (the window holds the READ's PSNs not)
    frames = sends([0, 1]) + [req("RDMA_READ_REQUEST", 1003, 0, dmalen=5000)] + sends([8])
    assert judge(tmp_path, frames)[0] == {"psn_gap": 1, "psn_unjudged": 1}
    # the connection's PMTU, negotiated by RDMA CM, counts the READ before any response comes
    c = cm_mad.Conn()
    p = c.b_psn
    frames = c.handshake() + [c.to_b("RDMA_READ_REQUEST", p, 0, dmalen=3000), c.to_b("SEND_ONLY", p + 2, 64)]
    assert judge(tmp_path, frames)[0] == {"psn_duplicate": 1, "retx_episode": 1, "retx_timeout": 1,
                                          "retx_uncompared": 1}


def dreq_collision(c, resend=None):
    """Both ends send a DREQ at once, each in a transaction of its own, and each answers the other's;
    `resend`: the TID the initiator sends its DREQ again with."""
    frames = c.handshake() + c.conversation()
    a_dreq = c.cm(cm_mad.DREQ, cm_mad.dreq_body(c.a_comm, c.b_comm, c.b_qpn), tid=0xA1)
    b_dreq = c.cm(cm_mad.DREQ, cm_mad.dreq_body(c.b_comm, c.a_comm, c.a_qpn), from_a=False, tid=0xB1)
    b_drep = c.cm(cm_mad.DREP, cm_mad.ids_body(c.b_comm, c.a_comm), from_a=False, tid=0xA1)
    a_drep = c.cm(cm_mad.DREP, cm_mad.ids_body(c.a_comm, c.b_comm), tid=0xB1)
    again = [c.cm(cm_mad.DREQ, cm_mad.dreq_body(c.a_comm, c.b_comm, c.b_qpn), tid=resend)] if resend else []
    return frames + [a_dreq, b_dreq] + again + [b_drep, a_drep]


def test_a_dreq_collision_is_no_retry(tmp_path):
    c = cm_mad.Conn()
    r = replay(tmp_path, dreq_collision(c))
    assert nonzero_rules(r) == {"cm": 7, "cm_established": 1}
    assert r["connections"][0]["state"] == "closed"
    # a DREQ its sender sends again, with its TID: one retry
    r = replay(tmp_path, dreq_collision(c, resend=0xA1))
    assert nonzero_rules(r) == {"cm": 8, "cm_established": 1, "cm_retry": 1}
    # with a TID of its own, or the other side's: a transaction of its own, no retry
    for tid in (0xA2, 0xB1):
        r = replay(tmp_path, dreq_collision(c, resend=tid))
        assert nonzero_rules(r) == {"cm": 8, "cm_established": 1}, hex(tid)


def test_reorder_window_setting(tmp_path):
    assert run("replay", "--set", "reorder_window=128", tmp_path / "x.pcap").stderr.splitlines()[0] == (
        "roceval replay: reorder_window=128: expected a number of PSNs, 0-127; see 'roceval help replay'")
    res = run("replay", "--set", "reorder_time=2ms", "--set", "reorder_time=x", tmp_path / "x.pcap")
    assert res.returncode == 2 and "reorder_time=x" in res.stderr


# --- live, through a veth ---------------------------------------------------------------------

def live_sequence(netns, tmp_path, frames, settings=(), want=None):
    """stats --json once frames were all counted and, when given, want(st) holds (10 s at most)."""
    got = {}

    def settled():
        got["st"] = json.loads(run("stats", netns.if_rx, "--json", netns=netns.rx, check=True).stdout)
        return want is None or want(got["st"])

    st, _ = live_stats(netns, tmp_path, frames, lambda: wait_for(settled), settings=settings)
    return {k: v for k, v in nonzero_rules(got["st"]).items() if k in SEQ}, got["st"]


def test_live_reordering_counts_as_replay(netns, tmp_path):
    order = list(range(40))
    for i in (3, 10, 17, 24, 31):
        order[i], order[i + 1] = order[i + 1], order[i]
    order = [i for i in order if i != 36]  # and one lost for good
    frames = sends(order)
    expected = judge(tmp_path, frames)[0]
    assert expected == {"psn_reorder": 5, "psn_gap": 1}
    # live the lost one's hole is settled once the flow has been idle for reorder_time (a timer);
    # 100 ms, as the sender may be preempted between a swapped pair on a loaded machine
    got, st = live_sequence(netns, tmp_path, frames, settings=["reorder_time=100ms"],
                            want=lambda st: st["rules"]["psn_gap"])
    assert got == expected
    assert st["reorder"]["buckets"] == [{"le_psns": 1, "count": 5}]
    # with holes that never age, the hole stays open live until something settles it
    got, _ = live_sequence(netns, tmp_path, frames, settings=["reorder_time=0"])
    assert got == {"psn_reorder": 5}
