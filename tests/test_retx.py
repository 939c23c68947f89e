# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Retransmissions on reliable connections: episodes, whether a resent request is the same, and
NAKs: whether one names the first PSN missing, and whether the requester goes back to it.

Each frame carries a correct ICRC computed by the test's own implementation (roce.icrc, zlib),
so a changed retransmission is told only by comparing it with its first transmission.
"""
import json
import subprocess

import pytest

import cm_mad
import roce
from conftest import ROCEVAL, live_stats, nonzero_rules, replay, replay_json, run, send_pcap

A, B = "192.0.2.1", "192.0.2.2"
RETX = {"psn_duplicate", "retx_episode", "retx_changed", "retx_uncompared"}


def req(name, psn, payload=64, transport=roce.RC, qp=0x11, ipv6=False, ip_id=1, sport=0xC000,
        **kw):
    opc = roce.opcode(transport, name)
    fkw = {"sport": sport}
    if ipv6:
        fkw["fl"] = 0x12345
    else:
        fkw.update(src=A, dst=B, ip_id=ip_id)
    return roce.roce(opc, payload, psn=psn, dqpn=qp, ipv6=ipv6, frame_kw=fkw, **kw)


def retx(tmp_path, frames, *opts):
    r = replay(tmp_path, frames, *opts)
    assert r["icrc_bad"] == 0
    return {k: v for k, v in nonzero_rules(r).items() if k in RETX}


@pytest.mark.parametrize("ipv6", [False, True])
@pytest.mark.parametrize("sample", ["1", "64"])
def test_identical_retransmission_is_not_changed(tmp_path, ipv6, sample):
    frames = [req("SEND_ONLY", 5, ipv6=ipv6), req("SEND_ONLY", 6, ipv6=ipv6),
              req("SEND_ONLY", 5, ipv6=ipv6), req("SEND_ONLY", 6, ipv6=ipv6),
              req("SEND_ONLY", 7, ipv6=ipv6)]
    assert retx(tmp_path, frames, "--set", f"icrc_sample={sample}") == {
        "psn_duplicate": 2, "retx_episode": 1}


@pytest.mark.parametrize("resend", [
    {"ackreq": True}, {"ip_id": 0x7A31}, {"sport": 0xD00D},
    {"ackreq": True, "ip_id": 2, "sport": 0xC001},
], ids=["ackreq", "ip_id", "sport", "all_three"])
@pytest.mark.parametrize("payload", [0, 64, 4000])
def test_fields_a_sender_may_change(tmp_path, resend, payload):
    first = req("SEND_ONLY", 9, payload=payload)
    again = req("SEND_ONLY", 9, payload=payload, **resend)
    assert first != again
    assert retx(tmp_path, [first, again]) == {"psn_duplicate": 1, "retx_episode": 1}


def test_fields_a_sender_may_change_over_ipv6(tmp_path):
    first = req("SEND_ONLY", 9, payload=300, ipv6=True)
    again = req("SEND_ONLY", 9, payload=300, ipv6=True, ackreq=True, sport=0xD00D)
    assert retx(tmp_path, [first, again]) == {"psn_duplicate": 1, "retx_episode": 1}


@pytest.mark.parametrize("change", ["payload", "rkey", "pkey", "se", "length"])
def test_changed_retransmission(tmp_path, change):
    base = {"payload": roce.pattern(256)}
    other = dict(base)
    if change == "payload":
        other["payload"] = base["payload"][:100] + b"\x00" + base["payload"][101:]
    elif change == "rkey":
        other["rkey"] = 0x0BADC0DE
    elif change == "pkey":
        other["pkey"] = 0xFFFE
    elif change == "se":
        other["se"] = True
    else:
        other["payload"] = base["payload"][:252]
    name = "SEND_ONLY" if change in ("se", "pkey") else "RDMA_WRITE_ONLY"
    frames = [req(name, 3, **base), req(name, 3, **other)]
    assert retx(tmp_path, frames) == {"psn_duplicate": 1, "retx_episode": 1, "retx_changed": 1}


def test_changed_retransmission_with_ackreq_also_changed(tmp_path):
    frames = [req("SEND_ONLY", 3, payload=roce.pattern(256)),
              req("SEND_ONLY", 3, payload=roce.pattern(256, 1), ackreq=True)]
    assert retx(tmp_path, frames) == {"psn_duplicate": 1, "retx_episode": 1, "retx_changed": 1}


def test_episodes_are_separated_by_new_data(tmp_path):
    # go back twice: 10 11 12 | 11 12 | 13 | 12 13 | 14
    psns = [10, 11, 12, 11, 12, 13, 12, 13, 14]
    frames = [req("SEND_ONLY", p) for p in psns]
    assert retx(tmp_path, frames) == {"psn_duplicate": 4, "retx_episode": 2}


def test_only_the_last_slots_are_held(tmp_path):
    # 20 newer PSNs later, PSN 1's first transmission is no longer held
    frames = [req("SEND_ONLY", p) for p in range(1, 22)] + [req("SEND_ONLY", 1, payload=60)]
    assert retx(tmp_path, frames) == {"psn_duplicate": 1, "retx_episode": 1,
                                      "retx_uncompared": 1}


def test_read_rerequest_is_not_compared(tmp_path):
    frames = [req("RDMA_READ_REQUEST", 4, payload=0, dmalen=256),
              req("RDMA_READ_REQUEST", 4, payload=0, dmalen=128)]
    assert retx(tmp_path, frames, "--pmtu", "1024") == {
        "psn_duplicate": 1, "retx_episode": 1, "retx_uncompared": 1}


def test_unreliable_duplicates_are_not_retransmissions(tmp_path):
    frames = [req("SEND_ONLY", 4, transport=roce.UC),
              req("SEND_ONLY", 4, transport=roce.UC, payload=32)]
    assert retx(tmp_path, frames) == {"psn_duplicate": 1}


def test_snapped_frames_are_not_compared(tmp_path):
    # a 128-byte snaplen, as mirror-port checkers use: the ICRC is not in the capture
    frames = [req("SEND_ONLY", 2, payload=512), req("SEND_ONLY", 2, payload=500)]
    r = replay_json(roce.write_pcap(tmp_path / "snapped.pcap", frames, snaplen=128))
    assert r["snapped"] == 2
    assert {k: v for k, v in nonzero_rules(r).items() if k in RETX} == {
        "psn_duplicate": 1, "retx_episode": 1, "retx_uncompared": 1}


@pytest.mark.parametrize("payload,compared", [(64, True), (1000, False)])
def test_under_icrc_sample_only_small_requests_are_held(tmp_path, payload, compared):
    # an unchecked frame's ICRC is held only when its datagram was copied whole (192 bytes)
    frames = [req("SEND_ONLY", 8, payload=payload),
              req("SEND_ONLY", 8, payload=roce.pattern(payload, 1))]
    got = retx(tmp_path, frames, "--set", "icrc_sample=1000")
    assert got == {"psn_duplicate": 1, "retx_episode": 1,
                   "retx_changed" if compared else "retx_uncompared": 1}


# --- NAKs and going back ----------------------------------------------------------------------

NAK_PSN_SEQ, NAK_RNR = 0x60, 0x21
GO_BACK = RETX | {"retx_timeout", "nak_psn_wrong", "go_back_early", "go_back_late", "psn_gap"}


def lossy(c, nak_psn, resend, syndrome=NAK_PSN_SEQ, lose=True, cm=True):
    """c's requests p0..p3 to b, p2 lost on the way; b NAKs nak_psn; a resends `resend` PSNs."""
    p0 = c.b_psn
    sent = [0, 1, 3] if lose else [0, 1, 2, 3]
    frames = (c.handshake() if cm else []) + [c.to_b("SEND_ONLY", p0 + i, 64) for i in sent]
    frames.append(c.to_a("ACKNOWLEDGE", p0 + nak_psn, syndrome=syndrome))
    frames += [c.to_b("SEND_ONLY", p0 + i, 64) for i in resend]
    return frames


def go_back(tmp_path, frames):
    r = replay(tmp_path, frames)
    assert r["icrc_bad"] == 0
    return {k: v for k, v in nonzero_rules(r).items() if k in GO_BACK}


@pytest.mark.parametrize("cm", [True, False], ids=["cm", "inferred"])
def test_nak_names_the_first_missing_psn(tmp_path, cm):
    c = cm_mad.Conn()
    got = go_back(tmp_path, lossy(c, 2, [2, 3, 4], cm=cm))
    # PSN 2 was never seen, so its retransmission has nothing to be compared with
    assert got == {"psn_gap": 1, "psn_duplicate": 2, "retx_episode": 1, "retx_uncompared": 1}


@pytest.mark.parametrize("cm", [True, False], ids=["cm", "inferred"])
def test_nak_naming_another_psn(tmp_path, cm):
    c = cm_mad.Conn()
    got = go_back(tmp_path, lossy(c, 3, [3, 4], cm=cm))
    assert got == {"psn_gap": 1, "psn_duplicate": 1, "retx_episode": 1, "nak_psn_wrong": 1}


@pytest.mark.parametrize("cm", [True, False], ids=["cm", "inferred"])
def test_go_back_0(tmp_path, cm):
    c = cm_mad.Conn()
    got = go_back(tmp_path, lossy(c, 2, [0, 1, 2, 3, 4], cm=cm))
    assert got == {"psn_gap": 1, "psn_duplicate": 4, "retx_episode": 1, "retx_uncompared": 1,
                   "go_back_early": 1}


def test_go_back_skipping_data(tmp_path):
    c = cm_mad.Conn()
    got = go_back(tmp_path, lossy(c, 2, [3, 4]))
    assert got == {"psn_gap": 1, "psn_duplicate": 1, "retx_episode": 1, "go_back_late": 1}


@pytest.mark.parametrize("resend, behind", [((3, 2, 4, 5, 6, 7), 1), ((3, 4, 2, 5, 6, 7), 2),
                                             ((2, 3, 4, 5, 6, 7), 0)])
def test_a_go_back_reordered_on_the_way(tmp_path, resend, behind):
    # 0 1 3 4 5 sent, 2 lost, NAK(2): the go-back's first packets take the paths the first ones did
    c = cm_mad.Conn()
    p0 = c.b_psn
    frames = c.handshake() + [c.to_b("SEND_ONLY", p0 + i, 64) for i in (0, 1, 3, 4, 5)]
    frames.append(c.to_a("ACKNOWLEDGE", p0 + 2, syndrome=NAK_PSN_SEQ))
    frames += [c.to_b("SEND_ONLY", p0 + i, 64) for i in resend]
    frames.append(c.to_a("ACKNOWLEDGE", p0 + 7, msn=7))
    r = replay(tmp_path, frames)
    assert {k: v for k, v in nonzero_rules(r).items() if k in GO_BACK} == {
        "psn_gap": 1, "psn_duplicate": 4, "retx_episode": 1, "retx_uncompared": 1}
    assert (r["rules"]["psn_reorder"], r["reorder"]["sum_psns"]) == (1 if behind else 0, behind)
    # 2 never resent, up to the end of the capture: skipped
    r = replay(tmp_path, frames[:-7] + [c.to_b("SEND_ONLY", p0 + i, 64) for i in (3, 4, 5)])
    assert {k: v for k, v in nonzero_rules(r).items() if k in GO_BACK} == {
        "psn_gap": 1, "psn_duplicate": 3, "retx_episode": 1, "go_back_late": 1}
    # 2 not resent before the first new request: skipped, and its late copy starts an episode
    frames = frames[:-7] + [c.to_b("SEND_ONLY", p0 + i, 64) for i in (3, 4, 5, 6, 2, 7)]
    r = replay(tmp_path, frames)
    assert {k: v for k, v in nonzero_rules(r).items() if k in GO_BACK} == {
        "psn_gap": 1, "psn_duplicate": 4, "retx_episode": 2, "retx_uncompared": 1, "retx_timeout": 1,
        "go_back_late": 1}


def test_rnr_nak_retry_starts_at_its_psn(tmp_path):
    c = cm_mad.Conn()
    assert go_back(tmp_path, lossy(c, 1, [1, 2, 3, 4], NAK_RNR, lose=False)) == {
        "psn_duplicate": 3, "retx_episode": 1}
    assert go_back(tmp_path, lossy(c, 1, [0, 1, 2, 3, 4], NAK_RNR, lose=False)) == {
        "psn_duplicate": 4, "retx_episode": 1, "go_back_early": 1}


def test_retransmission_without_a_nak_is_a_timeout(tmp_path):
    c = cm_mad.Conn()
    frames = c.handshake() + [c.to_b("SEND_ONLY", c.b_psn + i, 64) for i in (0, 1, 2, 1, 2, 3)]
    assert go_back(tmp_path, frames) == {"psn_duplicate": 2, "retx_episode": 1,
                                         "retx_timeout": 1}


def test_observer_before_the_loss_does_not_judge_the_nak(tmp_path):
    # the observer saw every request: the NAK cannot be checked, the go-back still is (CM pairs)
    c = cm_mad.Conn()
    got = go_back(tmp_path, lossy(c, 2, [1, 2, 3, 4], lose=False))
    assert got == {"psn_duplicate": 3, "retx_episode": 1, "go_back_early": 1}
    # without CM, nothing pairs the NAK with its requests: no go-back judgement either
    got = go_back(tmp_path, lossy(c, 2, [1, 2, 3, 4], lose=False, cm=False))
    assert got == {"psn_duplicate": 3, "retx_episode": 1, "retx_timeout": 1}


def test_inferred_pairing_ignores_another_qps_nak(tmp_path):
    # a second QP pair between the same hosts NAKs a PSN nowhere near the gapped flow's
    c, other = cm_mad.Conn(), cm_mad.Conn(a_qpn=0x200, b_qpn=0x201, b_psn=0x123456)
    frames = lossy(c, 2, [], cm=False)[:-1]
    frames += [other.to_b("SEND_ONLY", other.b_psn, 64),
               other.to_a("ACKNOWLEDGE", other.b_psn + 7, syndrome=NAK_PSN_SEQ)]
    frames += [c.to_b("SEND_ONLY", c.b_psn + i, 64) for i in (2, 3, 4)]
    assert go_back(tmp_path, frames) == {"psn_gap": 1, "psn_duplicate": 2, "retx_episode": 1,
                                         "retx_uncompared": 1, "retx_timeout": 1}


def test_a_gap_long_past_is_not_judged_against(tmp_path):
    # PSN 2 missed by the capture only: 2000 requests later, a real loss at 2003 and its NAK
    c = cm_mad.Conn()
    p0 = c.b_psn
    frames = c.handshake() + [c.to_b("SEND_ONLY", p0 + i, 8) for i in [0, 1, *range(3, 2003)]]
    frames += [c.to_b("SEND_ONLY", p0 + 2004, 8),
               c.to_a("ACKNOWLEDGE", p0 + 2003, syndrome=NAK_PSN_SEQ)]
    frames += [c.to_b("SEND_ONLY", p0 + i, 8) for i in (2003, 2004, 2005)]
    assert go_back(tmp_path, frames) == {"psn_gap": 2, "psn_duplicate": 2, "retx_episode": 1,
                                         "retx_uncompared": 1}


@pytest.mark.parametrize("cm", [True, False], ids=["cm", "inferred"])
def test_second_loss_after_recovery(tmp_path, cm):
    # loss at 2, NAK, recovery; loss at 6, NAK: each NAK names its own gap
    c = cm_mad.Conn()
    frames = lossy(c, 2, [2, 3, 4, 5, 7], cm=cm)
    frames += [c.to_a("ACKNOWLEDGE", c.b_psn + 6, syndrome=NAK_PSN_SEQ)]
    frames += [c.to_b("SEND_ONLY", c.b_psn + i, 64) for i in (6, 7, 8)]
    assert go_back(tmp_path, frames) == {"psn_gap": 2, "psn_duplicate": 4, "retx_episode": 2,
                                         "retx_uncompared": 2}


def test_a_nak_answers_one_episode(tmp_path):
    # after the NAK's episode, the next retransmission without a NAK is a timeout
    c = cm_mad.Conn()
    frames = lossy(c, 2, [2, 3, 4, 5, 6, 5, 6, 7])
    assert go_back(tmp_path, frames) == {"psn_gap": 1, "psn_duplicate": 4, "retx_episode": 2,
                                         "retx_uncompared": 1, "retx_timeout": 1}


# --- READ re-requests ---------------------------------------------------------------------------

def read_stream(c, got, rerequest, cm=True):
    """c's READ of 4 PMTUs (4096 bytes at CM's 1024) at p; the responses at the offsets in `got`
    reach the requester, which re-requests from p + rerequest (the rest of the READ)."""
    p = c.b_psn
    frames = (c.handshake() if cm else []) + [c.to_b("RDMA_READ_REQUEST", p, 0, dmalen=4096)]
    names = {0: "FIRST", 1: "MIDDLE", 2: "MIDDLE", 3: "LAST"}
    frames += [c.to_a(f"RDMA_READ_RESPONSE_{names[i]}", p + i, 1024) for i in got]
    frames.append(c.to_b("RDMA_READ_REQUEST", p + rerequest, 0, dmalen=1024 * (4 - rerequest)))
    return frames


def read_rules(tmp_path, frames, *opts):
    r = replay(tmp_path, frames, "--pmtu", "1024", *opts)
    return {k: v for k, v in nonzero_rules(r).items() if k in RETX | {"read_rerequest", "retx_timeout"}}


@pytest.mark.parametrize("cm", [True, False], ids=["cm", "inferred"])
# a re-request further on than the responses reached is judged only up to the READ's LAST, once
# seen: past a LAST not seen it may be another READ's
@pytest.mark.parametrize("got,rerequest,wrong", [((0, 1), 2, 0), ((0, 1), 0, 1), ((0, 1), 1, 1),
                                                  ((0, 1), 3, 0), ((0, 1, 3), 2, 0), ((0, 1, 3), 1, 1),
                                                  ((0, 1, 3), 3, 1), ((0, 3), 2, 1), ((0, 3), 3, 1),
                                                  ((0, 3), 1, 0), ((0, 2), 3, 0), ((), 0, 0)],
                         ids=["after-the-last", "from-the-start", "one-received-again", "further-on",
                              "after-a-gap", "before-a-gap", "past-a-gap", "skips-one", "skips-two",
                              "at-the-first-gap", "past-a-last-not-seen", "none-received"])
def test_read_rerequest_starts_after_the_last_response(tmp_path, cm, got, rerequest, wrong):
    c = cm_mad.Conn()
    rules = read_rules(tmp_path, read_stream(c, got, rerequest, cm))
    assert rules.get("read_rerequest", 0) == wrong
    assert (rules["retx_episode"], rules["retx_timeout"], rules["retx_uncompared"]) == (1, 1, 1)


def two_reads(c, first, second, then):
    """c's READ of 2 PMTUs at p with the responses at offsets `first`, then its READ of 4 PMTUs at
    p + 2 with those at `second` (offsets from p + 2), then the frames then(p)."""
    p = c.b_psn
    names2 = {0: "FIRST", 1: "LAST"}
    names4 = {0: "FIRST", 1: "MIDDLE", 2: "MIDDLE", 3: "LAST"}
    frames = c.handshake() + [c.to_b("RDMA_READ_REQUEST", p, 0, dmalen=2048)]
    frames += [c.to_a(f"RDMA_READ_RESPONSE_{names2[i]}", p + i, 1024) for i in first]
    frames.append(c.to_b("RDMA_READ_REQUEST", p + 2, 0, dmalen=4096))
    frames += [c.to_a(f"RDMA_READ_RESPONSE_{names4[i]}", p + 2 + i, 1024) for i in second]
    return frames + then(p)


def test_a_later_reads_stream_does_not_judge_an_earlier_reads_rerequest(tmp_path):
    # the first READ's responses lost, the second's all seen: the first is re-requested from its start
    c = cm_mad.Conn()
    frames = two_reads(c, (), (0, 1, 2, 3), lambda p: [c.to_b("SEND_ONLY", p + 6, 64),
                                                       c.to_b("RDMA_READ_REQUEST", p, 0, dmalen=2048)])
    assert "read_rerequest" not in read_rules(tmp_path, frames)


def test_a_stale_last_does_not_end_a_later_read(tmp_path):
    # the first READ's LAST seen again while the second READ streams: the second's end is unknown
    c = cm_mad.Conn()
    frames = two_reads(c, (0, 1), (0,), lambda p: [c.to_a("RDMA_READ_RESPONSE_LAST", p + 1, 1024),
                                                   c.to_b("RDMA_READ_REQUEST", p + 4, 0, dmalen=2048)])
    assert "read_rerequest" not in read_rules(tmp_path, frames)


def test_each_read_starts_without_an_end(tmp_path):
    # the first READ's LAST is no end of the second, whose LAST was not seen
    c = cm_mad.Conn()
    frames = two_reads(c, (0, 1), (0, 1), lambda p: [c.to_b("RDMA_READ_REQUEST", p + 5, 0, dmalen=1024)])
    assert "read_rerequest" not in read_rules(tmp_path, frames)
    # and with the second READ's LAST seen, that re-request skipped p + 4
    frames = two_reads(c, (0, 1), (0, 1, 3), lambda p: [c.to_b("RDMA_READ_REQUEST", p + 5, 0, dmalen=1024)])
    assert read_rules(tmp_path, frames)["read_rerequest"] == 1


def test_a_read_answered_in_full_is_not_judged_again(tmp_path):
    # every response seen: a re-request means some were lost past the observer, which it cannot see
    c = cm_mad.Conn()
    assert "read_rerequest" not in read_rules(tmp_path, read_stream(c, (0, 1, 2, 3), 0))


def test_an_ack_past_the_read_ends_its_stream(tmp_path):
    # the READ answered in full and a SEND after it ACKed: a later READ's re-request is its own
    c = cm_mad.Conn()
    p = c.b_psn
    frames = c.handshake() + [c.to_b("RDMA_READ_REQUEST", p, 0, dmalen=2048),
                              c.to_a("RDMA_READ_RESPONSE_FIRST", p, 1024),
                              c.to_a("RDMA_READ_RESPONSE_LAST", p + 1, 1024),
                              c.to_b("SEND_ONLY", p + 2, 64), c.to_a("ACKNOWLEDGE", p + 2),
                              c.to_b("RDMA_READ_REQUEST", p + 3, 0, dmalen=1024),
                              c.to_b("RDMA_READ_REQUEST", p + 3, 0, dmalen=1024)]
    assert "read_rerequest" not in read_rules(tmp_path, frames)


def test_a_read_rerequest_after_a_nak_is_judged_by_the_nak(tmp_path):
    c = cm_mad.Conn()
    frames = read_stream(c, (0, 1), 0)
    frames.insert(-1, c.to_a("ACKNOWLEDGE", c.b_psn + 2, syndrome=NAK_PSN_SEQ))
    r = replay(tmp_path, frames, "--pmtu", "1024")
    assert r["rules"]["read_rerequest"] == 0 and r["rules"]["go_back_early"] == 1


# --- live, through a veth ---------------------------------------------------------------------

def live_rules(netns, tmp_path, frames):
    st, _ = live_stats(netns, tmp_path, frames)
    return {k: v for k, v in st["rules"].items() if v and k in GO_BACK}


def test_live_counts_as_replay(netns, tmp_path):
    c = cm_mad.Conn()
    changed = [c.to_b("SEND_ONLY", c.b_psn + 9, roce.pattern(300)),
               c.to_b("SEND_ONLY", c.b_psn + 9, roce.pattern(300, 1), ackreq=True)]
    frames = lossy(c, 3, [0, 1, 2, 3, 4]) + [c.to_b("SEND_ONLY", c.b_psn + 5, 64)] + changed
    expected = {"psn_gap": 2, "psn_duplicate": 5, "retx_episode": 2, "retx_uncompared": 1,
                "nak_psn_wrong": 1, "go_back_early": 1, "retx_changed": 1, "retx_timeout": 1}
    assert go_back(tmp_path, frames) == expected
    assert live_rules(netns, tmp_path, frames) == expected


def test_trace_samples_carry_their_episode(netns, tmp_path):
    c = cm_mad.Conn()
    frames = lossy(c, 2, [2, 3, 4]) + [c.to_b("SEND_ONLY", c.b_psn + i, 64) for i in (3, 4, 5)]
    run("attach", netns.if_rx, netns=netns.rx, check=True)
    try:
        for form in ("--json", None):
            trace = subprocess.Popen(
                ["nsenter", f"--net=/run/netns/{netns.rx}", str(ROCEVAL), "trace", netns.if_rx,
                 "--qpn", str(c.b_qpn), "--count", "4"] + ([form] if form else []),
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            assert "tracing" in trace.stderr.readline()
            send_pcap(netns.tx, netns.if_tx, roce.write_pcap(tmp_path / "t.pcap", frames),
                      one_cpu=True)
            stdout, _ = trace.communicate(timeout=10)
            assert trace.returncode == 0
            lines = stdout.splitlines()
            if form:
                got = [(json.loads(x)["psn"] - c.b_psn, json.loads(x).get("retx_episode"))
                       for x in lines]
                nak = {"from_psn": c.b_psn + 2, "after": "nak"}
                timeout = {"from_psn": c.b_psn + 3, "after": "timeout"}
                # the NAK's episode (2 and 3), then a timeout's (3 and 4); the gap is no frame's own:
                # the reorder window settled it when the NAK named it
                assert got == [(2, nak), (3, nak), (3, timeout), (4, timeout)]
            else:
                assert lines[0].endswith(
                    f"; retransmission episode from psn {c.b_psn + 2} after a NAK")
                assert lines[2].endswith(
                    f"; retransmission episode from psn {c.b_psn + 3} after a timeout")
            # the next round starts on a fresh flow table
            run("detach", netns.if_rx, netns=netns.rx, check=True)
            run("attach", netns.if_rx, netns=netns.rx, check=True)
    finally:
        run("detach", netns.if_rx, netns=netns.rx)
