# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""PFC pause frames (IEEE 802.1Qbb, mirrors-and-congestion.md): MAC control frames, EtherType 0x8808,
opcode 0x0101, a class-enable vector (bit n = priority n), eight pause times in quanta of 512 bit
times, 0 resuming.  Counted per priority (frames, xoff, xon, quanta), other opcodes and malformed
frames counted and not read.  Expected counts are worked out here from the frames built."""
import pytest

import roce
from conftest import nonzero_rules, replay

MAC_CONTROL = ("pfc_frames", "mac_control_other", "mac_control_malformed")


def per_priority(r):
    return {p["priority"]: (p["frames"], p["xoff"], p["xon"], p["quanta"]) for p in r["pfc"] if p["frames"]}


def test_xoff_and_xon_on_two_priorities(tmp_path):
    frames = [roce.pfc({3: 0xFFFF}), roce.pfc({3: 0}),  # priority 3 paused, then resumed
              roce.pfc({3: 100, 7: 0}),  # one frame, two priorities
              roce.pfc({7: 500}), roce.pfc({7: 1}),  # the shortest pause is a pause
              # a time given to a priority the vector does not enable is ignored
              roce.pfc({3: 10, 0: 999}, vector=1 << 3)]
    r = replay(tmp_path, frames)
    assert per_priority(r) == {3: (4, 3, 1, 0xFFFF + 100 + 10), 7: (3, 2, 1, 501)}
    assert {k: r[k] for k in MAC_CONTROL} == {"pfc_frames": 6, "mac_control_other": 0, "mac_control_malformed": 0}
    # frames, not RoCE; no rule counts them
    assert (r["frames"], r["roce"], nonzero_rules(r)) == (6, 0, {})
    assert [p["priority"] for p in r["pfc"]] == list(range(8))
    assert all("pause_ns" not in p for p in r["pfc"])


def test_pause_time_from_the_link_speed(tmp_path):
    r = replay(tmp_path, [roce.pfc({3: 1000}), roce.pfc({3: 24})], "--set", "link_speed=25000")
    # 1024 quanta of 512 bit times at 25 Gb/s: 1024 * 512 / 25e9 s
    assert r["pfc"][3]["pause_ns"] == round(1024 * 512 / 25e9 * 1e9)
    assert r["pfc"][0]["pause_ns"] == 0


def test_tagged_pfc_frames_count(tmp_path):
    """A mirror may carry what it copies in a VLAN (RSPAN): the frame is still PFC."""
    r = replay(tmp_path, [roce.pfc({5: 7}, vlans=(100,)), roce.pfc({5: 0}, vlans=(100, 200))])
    assert per_priority(r) == {5: (2, 1, 1, 7)}


@pytest.mark.parametrize("name,frame,kind", [
    ("reserved_vector_bits", roce.pfc({3: 1}, vector=0x0108), "mac_control_malformed"),
    ("cut_before_the_times", roce.pfc({3: 1})[:14 + 2 + 2 + 15], "mac_control_malformed"),
    ("cut_in_the_opcode", roce.pfc({3: 1})[:15], "mac_control_malformed"),
    ("8023x_pause", roce.pfc({3: 1}, opcode=0x0001), "mac_control_other"),
])
def test_other_and_malformed_mac_control_frames_are_not_read(tmp_path, name, frame, kind):
    r = replay(tmp_path, [frame, roce.pfc({2: 9})])
    assert {k: r[k] for k in MAC_CONTROL} == dict(dict.fromkeys(MAC_CONTROL, 0), **{kind: 1, "pfc_frames": 1})
    assert per_priority(r) == {2: (1, 1, 0, 9)}


def test_the_whole_pfc_frame_is_needed_to_read_it(tmp_path):
    """Exactly the 20 bytes after the EtherType: read; one fewer: malformed."""
    whole = roce.pfc({1: 3})
    r = replay(tmp_path, [whole[:14 + 20], whole[:14 + 19]])
    assert (r["pfc_frames"], r["mac_control_malformed"]) == (1, 1)
    assert per_priority(r) == {1: (1, 1, 0, 3)}
