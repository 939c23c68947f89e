# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""replay's note on captures whose every ICRC fails both ways (a capture-path artefact)."""
import pytest

import roce
from conftest import run

A, B, C = "192.0.2.1", "192.0.2.2", "192.0.2.3"
NOTE = "ICRCs checked failed, both ways between"


def send(src, dst, qp, bad=True, **frame_kw):
    return roce.roce(roce.opcode(roce.RC, "SEND_ONLY"), 8, dqpn=qp,
                     frame_kw=dict(src=src, dst=dst, bad_icrc=bad, **frame_kw))


def ack(src, dst, qp, bad=True, **frame_kw):
    return roce.roce(roce.opcode(roce.RC, "ACKNOWLEDGE"), dqpn=qp,
                     frame_kw=dict(src=src, dst=dst, bad_icrc=bad, **frame_kw))


def replay_both(tmp_path, frames):
    """(JSON result, table output) of one capture."""
    r = roce.replay_frames(tmp_path / "c.pcap", frames)
    table = run("replay", tmp_path / "c.pcap", check=True).stdout
    return r, table


CASES = {
    # a SEND and the ACK that accepted it both fail: the receiver could not have accepted it
    "send and its ack": ([send(A, B, 0x11), ack(B, A, 0x22)], (2, True)),
    "many qps both ways": ([send(A, B, q) for q in range(1, 6)] + [ack(B, A, 0x40)], (6, True)),
    # one sender's ICRCs are wrong: that sender's fault, exactly what the rule is for
    "one way only": ([send(A, B, q) for q in range(1, 6)], (5, False)),
    # one frame checked good: the capture path does deliver good ICRCs
    "one good frame": ([send(A, B, 0x11), ack(B, A, 0x22), send(A, B, 0x33, bad=False)], (2, False)),
    # failures in two directions, but between different pairs of hosts
    "no pair both ways": ([send(A, B, 0x11), send(B, C, 0x22), send(C, A, 0x33)], (3, False)),
    # frames whose ICRC cannot be computed change nothing
    "with truncated frames": ([send(A, B, 0x11), ack(B, A, 0x22), send(A, B, 0x33, bad=False, cut=9)],
                              (2, True)),
    "nothing bad": ([send(A, B, 0x11, bad=False), ack(B, A, 0x22, bad=False)], (0, False)),
}


@pytest.mark.parametrize("case", CASES)
def test_note_when_every_icrc_fails_both_ways(tmp_path, case):
    frames, (bad, note) = CASES[case]
    r, table = replay_both(tmp_path, frames)
    assert r["icrc_bad"] == bad
    assert r["icrc_all_bad_both_directions"] is note
    lines = table.splitlines()
    if note:
        # one line, right under the summary line, naming the two hosts
        assert lines[1] == (f"note: all {bad} {NOTE} {A} and {B}: usually a capture taken before the "
                            "NIC inserts the ICRC, or a capture path that rewrites frames; the bytes in "
                            "the file are bad, the fabric may be fine")
        assert sum(NOTE in line for line in lines) == 1
    else:
        assert lines[1] == "" and NOTE not in table
    # the verdicts stand either way
    assert r["rules"]["icrc"] == bad


def test_note_over_ipv6(tmp_path):
    a6, b6 = roce.V6_SRC, roce.V6_DST
    frames = [roce.roce(roce.opcode(roce.RC, "SEND_ONLY"), 8, ipv6=True, dqpn=0x11,
                        frame_kw=dict(src=a6, dst=b6, bad_icrc=True)),
              roce.roce(roce.opcode(roce.RC, "ACKNOWLEDGE"), ipv6=True, dqpn=0x22,
                        frame_kw=dict(src=b6, dst=a6, bad_icrc=True))]
    r, table = replay_both(tmp_path, frames)
    assert r["icrc_all_bad_both_directions"] is True
    assert f"both ways between {a6} and {b6}:" in table.splitlines()[1] or \
        f"both ways between {b6} and {a6}:" in table.splitlines()[1]
