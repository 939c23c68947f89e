# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The real captures in shared/captures: every ICRC valid, no rule broken, counts as documented."""
from conftest import CAPTURES, nonzero_rules, replay_json


def test_rc_send_ack_capture():
    r = replay_json(CAPTURES / "rc-send-ack-ipv4.pcap")
    assert r["frames"] == 123
    assert r["roce"] == 105
    assert r["icrc_ok"] == 105
    assert r["icrc_bad"] == 0
    assert r["icrc_unchecked"] == 0
    assert nonzero_rules(r) == {}


def test_rc_send_ack_capture_with_its_pmtu():
    r = replay_json(CAPTURES / "rc-send-ack-ipv4.pcap", "--pmtu", "1024")
    assert nonzero_rules(r) == {}
    # the wrong PMTU makes all 33 SEND_FIRST packets illegal
    r = replay_json(CAPTURES / "rc-send-ack-ipv4.pcap", "--pmtu", "2048")
    assert nonzero_rules(r) == {"payload_length": 33}


def test_cnp_capture():
    r = replay_json(CAPTURES / "cnp-connectx4lx-ipv4.pcap")
    assert (r["frames"], r["roce"], r["icrc_ok"], r["icrc_bad"]) == (1, 1, 1, 0)
    assert nonzero_rules(r) == {"cnp": 1}
