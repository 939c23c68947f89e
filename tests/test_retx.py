# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Retransmissions on reliable connections: episodes, and whether a resent request is the same.

Each frame carries a correct ICRC computed by the test's own implementation (roce.icrc, zlib),
so a changed retransmission is told only by comparing it with its first transmission.
"""
import struct

import pytest

import roce
from conftest import nonzero_rules, replay, replay_json

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
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 128, 1)
    for i, f in enumerate(frames):
        out += struct.pack("<IIII", roce.PCAP_EPOCH + i, 0, 128, len(f)) + f[:128]
    path = tmp_path / "snapped.pcap"
    path.write_bytes(out)
    r = replay_json(path)
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
