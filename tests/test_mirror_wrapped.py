# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Mirrored frames are judged as bare: every exact-count suite that replays captures runs again
with ROCEVAL_TEST_ENCAP=all, so that each of its replays also judges its capture wrapped in
ERSPAN I, II, III, GRE-TEB and VXLAN, each over IPv4 and IPv6 outer headers, in the same replay
(one load of the program for the eleven files), and holds every wrapped copy to the bare
result (tests/roce.py: replay_wrapped).  Tests of live attachments are left out of those runs;
tests/test_mirror*.py covers mirrors live.
"""
import os
import re
import struct
import subprocess
import sys

import pytest

import encap
import roce
from conftest import ROOT, replay_json

# the suites whose verdicts come from replay_json() (conftest), directly or through replay(),
# the longest first: each is a run of its own, which the others should not wait on at the end
SUITES = ("test_rules.py", "test_retx.py", "test_reorder.py", "test_crc.py", "test_cm.py",
          "test_icrc.py", "test_latency.py", "test_truth.py", "test_flows.py", "test_gen_congestion.py",
          "test_cooked.py", "test_congestion.py", "test_pfc.py")


@pytest.mark.long(3)
@pytest.mark.parametrize("suite", SUITES)
def test_suite_judges_wrapped_frames_as_bare(suite):
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE",
                          str(ROOT / "tests" / suite)], env=dict(os.environ, ROCEVAL_TEST_ENCAP="all"),
                         cwd=ROOT, capture_output=True, text=True, timeout=3600)
    assert res.returncode == 0, res.stdout[-12000:] + res.stderr[-2000:]
    # it ran: a collection that found nothing, or skipped all, would pass the same
    assert int(re.search(r"(\d+) passed", res.stdout).group(1)) > 0, res.stdout[-2000:]


def test_wrapped_copy_holds_the_frames(tmp_path):
    """The copies replay_wrapped() judges: each frame whole after the outer headers, a cut one
    cut as much, its outer lengths those of the whole frame."""
    frames = [roce.cnp(), bytes(13), roce.roce(roce.opcode(roce.RC, "SEND_ONLY"), 100, ipv6=True)]
    path = roce.write_pcap(tmp_path / "f.pcap", frames, snaplen=80)
    for kind, family in roce._wraps("all"):
        copy, n, cut = roce.wrap_capture(path, kind, family)
        data = copy.read_bytes()
        over = encap.outer_len(kind, family)
        assert n == 2 and cut and struct.unpack_from("<I", data, 16)[0] == 80 + over
        off, got = 24, []
        while off < len(data):
            caplen, wire = struct.unpack_from("<II", data, off + 8)
            rec = data[off + 16:off + 16 + caplen]
            got.append((rec[over:], wire - over) if wire >= over + 14 else (rec, wire))
            off += 16 + caplen
        assert got == [(f[:80], len(f)) for f in frames]


def test_wrapped_verdict_that_differs_fails(tmp_path):
    """The check can fail: one rule counted otherwise, one byte more or a frame lost is caught."""
    path = roce.write_pcap(tmp_path / "f.pcap", [roce.cnp()])
    bare = replay_json(path)
    good = dict(bare, mirror_frames=1, mirrors=[{"encap": "erspan2", "frames": 1, "lost": 0, "nested": 0}],
                bytes=bare["bytes"] + encap.outer_len("erspan2", 6))
    roce.assert_wrapped_as_bare(good, bare, "erspan2", 6, 1)
    for bad in (dict(good, rules=dict(good["rules"], cnp=2)), dict(good, bytes=good["bytes"] + 1),
                dict(good, mirror_lost=1), dict(good, mirror_frames=0), dict(good, mirror_nested=1)):
        with pytest.raises(AssertionError):
            roce.assert_wrapped_as_bare(bad, bare, "erspan2", 6, 1)
