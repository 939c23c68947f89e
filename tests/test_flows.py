# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Per-queue-pair sequence rules, judged across the frames of one capture."""
import random

import pytest

import roce
from conftest import nonzero_rules, real_capture, replay, replay_json

A, B = "192.0.2.1", "192.0.2.2"
PMTU = 1024
STATEFUL = {"psn_gap", "psn_duplicate", "opcode_sequence", "msn_regress", "pmtu_inconsistent",
            "flow_evicted"}


def req(name, psn, qp=0x11, payload=None, src=A, dst=B, transport=roce.RC, **kw):
    """A request from src to dst's QP `qp`."""
    opc = roce.opcode(transport, name)
    if payload is None and name.endswith(("FIRST", "MIDDLE")):
        payload = PMTU
    return roce.roce(opc, payload, psn=psn, dqpn=qp, frame_kw={"src": src, "dst": dst}, **kw)


def resp(name, psn, qp=0x22, msn=0, payload=None, syndrome=0, **kw):
    """A response from B back to A's QP `qp`."""
    return req(name, psn, qp, payload, src=B, dst=A, msn=msn, syndrome=syndrome, **kw)




def stateful(result):
    return {k: v for k, v in nonzero_rules(result).items() if k in STATEFUL}


def test_clean_interleaved_conversations(tmp_path):
    frames = [
        req("RDMA_WRITE_FIRST", 100, qp=1, dmalen=3 * PMTU - 24),
        req("SEND_FIRST", 500, qp=2),
        req("RDMA_READ_REQUEST", 10, qp=3, dmalen=3 * PMTU - 100),
        req("RDMA_WRITE_MIDDLE", 101, qp=1),
        resp("RDMA_READ_RESPONSE_FIRST", 10, qp=4, msn=1),
        req("SEND_MIDDLE", 501, qp=2),
        resp("RDMA_READ_RESPONSE_MIDDLE", 11, qp=4),
        req("RDMA_WRITE_LAST", 102, qp=1, payload=PMTU - 24),
        resp("ACKNOWLEDGE", 102, qp=5, msn=1),  # coalesced ACK for the whole WRITE
        req("SEND_LAST", 502, qp=2, payload=100),
        resp("RDMA_READ_RESPONSE_LAST", 12, qp=4, msn=1, payload=PMTU - 100),
        req("SEND_ONLY", 13, qp=3, payload=8),  # the READ consumed PSNs 10, 11 and 12
        resp("ACKNOWLEDGE", 502, qp=6, msn=7),
        resp("ACKNOWLEDGE", 13, qp=4, msn=2),
    ]
    r = replay(tmp_path, frames, "--pmtu", str(PMTU))
    assert nonzero_rules(r) == {}
    assert r["icrc_ok"] == len(frames)
    flows = {(f["src"], f["dst"], f["dqpn"]): f for f in r["flows"]}
    assert flows[(A, B, 1)]["packets"] == 3
    assert flows[(B, A, 4)]["packets"] == 4
    assert all(f["violations"] == 0 and f["rules"] == {} for f in r["flows"])


def test_read_learns_next_psn_when_pmtu_unknown(tmp_path):
    # No PMTU configured or learned: the READ's length in PSNs cannot be judged, so the next
    # request's PSN is learned, whatever it is.
    frames = [req("RDMA_READ_REQUEST", 10, dmalen=5000), req("SEND_ONLY", 15, payload=8),
              req("SEND_ONLY", 16, payload=8)]
    assert stateful(replay(tmp_path, frames)) == {}
    # with the PMTU known, PSN 15 is exactly right for 5000 bytes at 1024 (5 responses)
    assert stateful(replay(tmp_path, frames, "--pmtu", "1024")) == {}
    # ... and PSN 15 is a gap at PMTU 4096 (2 responses: next is 12)
    assert stateful(replay(tmp_path, frames, "--pmtu", "4096")) == {"psn_gap": 1}


def test_one_lost_packet(tmp_path):
    frames = [req("SEND_FIRST", 1), req("SEND_MIDDLE", 2), req("SEND_LAST", 4, payload=4)]
    r = replay(tmp_path, frames)
    assert stateful(r) == {"psn_gap": 1}
    assert r["flows"][0]["rules"] == {"psn_gap": 1}
    assert r["flows"][0]["violations"] == 1


def test_retransmitted_packet(tmp_path):
    frames = [req("SEND_FIRST", 1), req("SEND_MIDDLE", 2), req("SEND_MIDDLE", 2),
              req("SEND_LAST", 3, payload=4)]
    # the duplicate neither reopens the message nor moves the expectation back
    assert stateful(replay(tmp_path, frames)) == {"psn_duplicate": 1}


def test_far_behind_is_a_gap_not_a_duplicate(tmp_path):
    # 2^23 or more behind is, modulo 2^24, ahead: the window decides
    frames = [req("SEND_ONLY", 0x900000, payload=4), req("SEND_ONLY", 0x100000, payload=4)]
    assert stateful(replay(tmp_path, frames)) == {"psn_gap": 1}


def test_psn_wraps_at_2_24(tmp_path):
    frames = [req("SEND_FIRST", 0xFFFFFE), req("SEND_MIDDLE", 0xFFFFFF), req("SEND_LAST", 0, payload=4),
              req("SEND_ONLY", 1, payload=4)]
    assert nonzero_rules(replay(tmp_path, frames)) == {}


def test_middle_without_first(tmp_path):
    frames = [req("SEND_ONLY", 1, payload=4), req("SEND_MIDDLE", 2)]
    assert stateful(replay(tmp_path, frames)) == {"opcode_sequence": 1}


def test_last_of_another_operation(tmp_path):
    frames = [req("SEND_FIRST", 1), req("RDMA_WRITE_LAST", 2, payload=4)]
    assert stateful(replay(tmp_path, frames)) == {"opcode_sequence": 1}


def test_first_twice(tmp_path):
    frames = [req("SEND_FIRST", 1), req("SEND_FIRST", 2)]
    assert stateful(replay(tmp_path, frames)) == {"opcode_sequence": 1}


def test_only_while_a_message_is_open(tmp_path):
    frames = [req("RDMA_WRITE_FIRST", 1, dmalen=4096), req("RDMA_READ_REQUEST", 2, dmalen=8)]
    assert stateful(replay(tmp_path, frames)) == {"opcode_sequence": 1}


def test_capture_starting_mid_message_is_not_a_violation(tmp_path):
    # The first packet of a flow only sets expectations, whatever it is.
    for first in ("SEND_MIDDLE", "SEND_LAST", "RDMA_WRITE_MIDDLE"):
        payload = None if first.endswith("MIDDLE") else 4
        frames = [req(first, 7, payload=payload)]
        if first.endswith("MIDDLE"):
            frames.append(req(first.replace("MIDDLE", "LAST"), 8, payload=4))
        frames.append(req("SEND_ONLY", 9 if first.endswith("MIDDLE") else 8, payload=4))
        assert nonzero_rules(replay(tmp_path, frames)) == {}, first


def test_msn_going_back(tmp_path):
    frames = [resp("ACKNOWLEDGE", 5, msn=5), resp("ACKNOWLEDGE", 6, msn=4), resp("ACKNOWLEDGE", 7, msn=6)]
    assert stateful(replay(tmp_path, frames)) == {"msn_regress": 1}


def test_msn_wraps_and_repeats(tmp_path):
    # a duplicate request re-sends the cached MSN: equal is fine; 2^24-1 -> 0 is growth
    frames = [resp("ACKNOWLEDGE", 5, msn=0xFFFFFF), resp("ACKNOWLEDGE", 6, msn=0xFFFFFF),
              resp("ACKNOWLEDGE", 7, msn=0)]
    assert nonzero_rules(replay(tmp_path, frames)) == {}


def test_ack_psns_jump(tmp_path):
    frames = [resp("ACKNOWLEDGE", 5, msn=1), resp("ACKNOWLEDGE", 40, msn=9), resp("ACKNOWLEDGE", 41, msn=10)]
    assert nonzero_rules(replay(tmp_path, frames)) == {}


def test_pmtu_inconsistent(tmp_path):
    frames = [req("SEND_FIRST", 1, payload=1024), req("SEND_MIDDLE", 2, payload=2048),
              req("SEND_LAST", 3, payload=4)]
    assert stateful(replay(tmp_path, frames)) == {"pmtu_inconsistent": 1}


def test_requests_and_responses_are_separate_spaces(tmp_path):
    # One (src, dst, QP) carrying a READ response stream and its own requests: neither judges
    # the other's PSNs.
    frames = [
        req("SEND_ONLY", 1000, qp=9, payload=4),
        req("RDMA_READ_RESPONSE_FIRST", 50, qp=9, msn=3),
        req("SEND_ONLY", 1001, qp=9, payload=4),
        req("RDMA_READ_RESPONSE_LAST", 51, qp=9, msn=3, payload=4),
    ]
    assert nonzero_rules(replay(tmp_path, frames)) == {}


def test_ud_has_no_sequence(tmp_path):
    rng = random.Random(7)
    frames = [req("SEND_ONLY", rng.randrange(1 << 24), qp=0x33, transport=roce.UD, payload=16)
              for _ in range(50)]
    r = replay(tmp_path, frames)
    assert nonzero_rules(r) == {}
    assert r["flows"][0]["packets"] == 50


def test_uc_and_xrc_are_judged(tmp_path):
    for transport in (roce.UC, roce.XRC):
        frames = [req("SEND_ONLY", 1, transport=transport, payload=4),
                  req("SEND_ONLY", 3, transport=transport, payload=4)]
        assert stateful(replay(tmp_path, frames)) == {"psn_gap": 1}, transport


def test_table_smaller_than_the_flows(tmp_path):
    # 10 QPs, two packets each, in a table sized for 4: one set of 8 slots (1.5 a flow, at least
    # a set), so each new flow past the eighth evicts the oldest
    frames = [req("SEND_ONLY", 1, qp=q, payload=4) for q in range(10)]
    frames += [req("SEND_ONLY", 2, qp=q, payload=4) for q in range(10)]
    r = replay(tmp_path, frames, "--flows", "4", "--top", "100")
    # first round: QPs 8 and 9 evict 0 and 1; second round: 0 and 1 are new again and evict
    # 2 and 3 before their turn, and so on: every QP is new again, 10 more
    assert nonzero_rules(r) == {"flow_evicted": 12}
    assert len(r["flows"]) == 8
    assert r["frames"] == r["icrc_ok"] == 20


@pytest.mark.long
def test_a_table_holds_the_flows_it_is_sized_for(tmp_path):
    # 3000 flows with scattered keys in a table sized for 3000: with two choices of set none is
    # crowded out (with one, about 3% would be: sets of 8 filled 2/3 on average overflow)
    rng = random.Random(5)
    keys = [(f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}", rng.randrange(1 << 24))
            for _ in range(3000)]
    assert len(set(keys)) == 3000
    frames = [req("SEND_ONLY", psn, qp=qp, src=src, payload=4) for psn in (1, 2) for src, qp in keys]
    r = replay(tmp_path, frames, "--flows", "3000", "--top", "5000")
    assert nonzero_rules(r) == {}
    assert len(r["flows"]) == 3000 and {f["packets"] for f in r["flows"]} == {2}


def test_a_new_flow_in_an_evicted_flows_slot_starts_clean(tmp_path):
    # QP 0 breaks rules, then eight more flows in a table of one set evict it: the flow that takes
    # its slot (and the cold part there) keeps none of its counters
    frames = [req("SEND_ONLY", 1, qp=0, payload=4), req("SEND_ONLY", 1, qp=0, payload=4),
              req("SEND_ONLY", 5, qp=0, payload=4)]
    frames += [req("SEND_ONLY", 1, qp=q, payload=4) for q in range(1, 9)]
    r = replay(tmp_path, frames, "--flows", "4", "--top", "100")
    assert r["rules"]["flow_evicted"] == 1 and r["rules"]["psn_gap"] == 1
    assert sorted(f["dqpn"] for f in r["flows"]) == list(range(1, 9))
    assert [(f["violations"], f["rules"]) for f in r["flows"]] == [(0, {})] * 8


def test_flows_sharing_a_qp_number_in_runs_stay_apart(tmp_path):
    # The same DestQP from two hosts, in runs of frames and alternating, then the first host's
    # flow evicted between two of its frames: each frame is judged on its own flow every time
    c = "192.0.2.3"
    frames = [req("SEND_ONLY", p, qp=7, payload=4) for p in (1, 2)]
    frames += [req("SEND_ONLY", p, qp=7, src=c, payload=4) for p in (100, 101)]
    frames += [req("SEND_ONLY", 3, qp=7, payload=4), req("SEND_ONLY", 102, qp=7, src=c, payload=4)]
    r = replay(tmp_path, frames, "--top", "10")
    assert nonzero_rules(r) == {}
    assert sorted((f["src"], f["packets"]) for f in r["flows"]) == [(A, 3), (c, 3)]
    # a table of one set: A's flow found (its second frame), then eight other flows take every
    # slot, A's too, so A's next frame starts a new flow wherever the last lookup found A
    frames = [req("SEND_ONLY", p, qp=7, payload=4) for p in (1, 2)]
    frames += [req("SEND_ONLY", 1, qp=7, src=f"192.0.2.{10 + i}", payload=4) for i in range(8)]
    frames += [req("SEND_ONLY", 9, qp=7, payload=4)]
    r = replay(tmp_path, frames, "--flows", "4", "--top", "10")
    assert nonzero_rules(r) == {"flow_evicted": 2}
    assert sorted((f["src"], f["packets"]) for f in r["flows"])[0] == (A, 1)
    assert [f["packets"] for f in r["flows"]] == [1] * 8
    # a flow whose key is all zeros is not the empty slot an all-zero entry is
    r = replay(tmp_path, [req("SEND_ONLY", p, qp=0, src="0.0.0.0", dst="0.0.0.0", payload=4) for p in (1, 2)])
    assert [(f["src"], f["dqpn"], f["packets"]) for f in r["flows"]] == [("0.0.0.0", 0, 2)]


def test_flows_sorted_and_limited(tmp_path):
    frames = [req("SEND_ONLY", 1, qp=q, payload=4) for q in range(5)]
    frames += [req("SEND_ONLY", 1, qp=3, payload=4)]  # a duplicate on QP 3
    frames += [req("SEND_ONLY", 2, qp=4, payload=4), req("SEND_ONLY", 3, qp=4, payload=4)]
    r = replay(tmp_path, frames, "--top", "2")
    assert [f["dqpn"] for f in r["flows"]] == [3, 4]
    assert r["flows"][0]["rules"] == {"psn_duplicate": 1, "retx_episode": 1, "retx_timeout": 1}
    assert set(r["flows"][0]) == {"src", "dst", "dqpn", "packets", "bytes", "violations", "rules"}
    assert r["flows"][0]["bytes"] == 2 * len(frames[0])


def test_ipv6_flows(tmp_path):
    frames = [roce.roce(roce.opcode(roce.RC, "SEND_ONLY"), 4, ipv6=True, psn=p, dqpn=0x77)
              for p in (1, 2, 4)]
    r = replay(tmp_path, frames)
    assert stateful(r) == {"psn_gap": 1}
    assert r["flows"][0]["src"] == roce.V6_SRC


def test_shared_captures_have_no_sequence_violations():
    r = replay_json(real_capture("rc-send-ack-ipv4.pcap"), "--pmtu", "1024")
    assert nonzero_rules(r) == {}
    assert sorted((f["dqpn"], f["packets"]) for f in r["flows"]) == [(69, 68), (72, 37)]
