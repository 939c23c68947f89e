# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""roceval gen --encap: the frames as a mirror session sends them, predicted exactly.

Each wrapped capture is held to gen's own prediction, to the bare capture of the same seed
(the wrapping changes nothing but the mirror counts and the outer bytes), and to tshark's
reading of the outer headers, which shares nothing with the C side.
"""
import json
import subprocess

import pytest

from conftest import pcap_frames, replay_json, run

KINDS = ("erspan1", "erspan2", "erspan3", "gre", "vxlan")
NUMBERED = ("erspan2", "erspan3", "gre")
# what each puts after the outer IP header: GRE (with its sequence number, and gre's key), the
# ERSPAN II or III header (III without its sub-header), or UDP and VXLAN
TUNNEL = {"erspan1": 4, "erspan2": 8 + 8, "erspan3": 8 + 12, "gre": 12, "vxlan": 8 + 8}
SOURCE = {4: "198.51.100.1", 6: "2001:db8:ffff::1"}
# every fault gen predicts exactly in a capture, at rates small enough to leave traffic between
FAULTS = ("--corrupt-icrc", "0.5%", "--drop", "1%", "--duplicate", "1%", "--bad-pad", "0.5%",
          "--reorder", "1%", "--pfc", "0.5%", "--dscp", "0.5%")


def overhead(kind, family):
    return 14 + (20 if family == 4 else 40) + TUNNEL[kind]


def gen(tmp_path, name, *args):
    path = tmp_path / name
    res = run("gen", "-w", path, "--json", "--quiet", *args, check=True)
    return path, json.loads(res.stdout)


def assert_predicted(summary, r):
    """Every count the summary predicts, replay counts: totals, rules, PFC, mirrors, reorder."""
    exp = summary["expected"]
    for k, v in exp.items():
        if k == "rules":
            assert {rule: r["rules"][rule] for rule in v} == v
        elif k == "reorder":
            assert {x: r["reorder"][x] for x in v} == v
        elif k != "settings":
            assert r[k] == v, k


def bare_view(r):
    """What the same frames give bare: no mirror counts, bytes of the inner frames."""
    return {k: v for k, v in r.items() if not k.startswith("mirror") and k != "bytes"}


@pytest.mark.parametrize("family", (4, 6))
@pytest.mark.parametrize("kind", KINDS)
def test_wrapped_traffic_judged_as_bare(tmp_path, kind, family):
    common = ("--seed", "11", "--count", "1500", "-f", "mixed", "--vlan", "30", *FAULTS)
    settings = []
    bare, sb = gen(tmp_path, "bare.pcap", *common)
    path, s = gen(tmp_path, "wrapped.pcap", *common, "--encap", kind, "--encap-family", str(family))
    for k, v in s["expected"].get("settings", {}).items():
        settings += ["--set", f"{k}={v}"]
    r, rb = replay_json(path, *settings), replay_json(bare, *settings)
    assert_predicted(s, r)
    n = s["frames"]
    assert s["injected"] == dict(sb["injected"], mirror_loss=0)
    assert r["mirror_frames"] == n == sb["frames"] and rb["mirror_frames"] == 0 and rb["mirrors"] == []
    assert r["mirrors"] == [{"source": SOURCE[family], "encap": kind, "session": 0 if kind == "erspan1" else 1,
                             "frames": n, "bytes": r["bytes"], "lost": 0, "numbered": kind in NUMBERED,
                             "truncated": 0, "nested": 0, "last_seq": n - 1 if kind in NUMBERED else None}]
    assert r["bytes"] == rb["bytes"] + n * overhead(kind, family)
    assert bare_view(r) == bare_view(rb)
    # the inner frames are the bare capture's, byte for byte
    assert [f[overhead(kind, family):] for f in pcap_frames(path)] == pcap_frames(bare)


def tshark_fields(path, *fields):
    cmd = ["tshark", "-r", str(path), "-T", "fields", "-E", "separator=\t"]
    for f in fields:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return [line.split("\t") for line in out.splitlines()]


@pytest.mark.parametrize("kind,family", [("erspan2", 4), ("erspan3", 6), ("gre", 4), ("gre", 6)])
def test_mirror_loss_predicted_exactly(tmp_path, kind, family):
    path, s = gen(tmp_path, "loss.pcap", "--seed", "4", "--count", "3000", "--qps", "6", "--encap", kind,
                  "--encap-family", str(family), "--session", "77", "--mirror-loss", "2%", "--corrupt-icrc", "1%")
    lost = s["injected"]["mirror_loss"]
    assert lost > 20
    assert s["expected"]["mirror_lost"] == s["expected"]["mirrors"][0]["lost"] == lost
    r = replay_json(path)
    assert_predicted(s, r)
    assert r["mirror_lost"] == lost and r["rules"]["psn_gap"] == lost
    # tshark's reading: one session, its numbers from 0 with `lost` of them skipped
    rows = tshark_fields(path, "frame.protocols", "gre.sequence_number", "gre.key", "erspan.spanid")
    assert len(rows) == s["frames"] and all(":udp:infiniband" in row[0] for row in rows)
    seqs = [int(row[1]) for row in rows]
    assert seqs[0] == 0 and seqs == sorted(seqs) and seqs[-1] == len(seqs) - 1 + lost
    assert {row[2] if kind == "gre" else row[3] for row in rows} == {"0x0000004d" if kind == "gre" else "77"}


def test_vxlan_vni_and_erspan_session_carried(tmp_path):
    path, s = gen(tmp_path, "v.pcap", "--seed", "2", "--count", "50", "--encap", "vxlan", "--session", "16777215")
    assert {row[0] for row in tshark_fields(path, "vxlan.vni")} == {"16777215"}
    assert replay_json(path)["mirrors"] == s["expected"]["mirrors"]
    assert s["expected"]["mirrors"][0]["session"] == 16777215


def test_same_seed_same_bytes(tmp_path):
    args = ("--seed", "9", "--count", "500", "--encap", "erspan3", "--encap-family", "6", "--mirror-loss", "3%")
    a, sa = gen(tmp_path, "a.pcap", *args)
    b, sb = gen(tmp_path, "b.pcap", *args)
    assert a.read_bytes() == b.read_bytes() and sa == sb


def test_text_summary_names_the_session(tmp_path):
    res = run("gen", "-w", tmp_path / "t.pcap", "--seed", "4", "--count", "400", "--encap", "gre",
              "--session", "77", "--mirror-loss", "5%", check=True)
    line = next(x for x in res.stdout.splitlines() if x.startswith("Mirror session:"))
    lost = next(int(x.split()[1]) for x in res.stdout.splitlines() if x.startswith("mirror-loss "))
    assert line == f"Mirror session: gre from 198.51.100.1, session 77: mirror_frames " \
                   f"{len(pcap_frames(tmp_path / 't.pcap'))}, mirror_lost {lost}"
    assert lost > 0


@pytest.mark.parametrize("args,message", [
    (("--encap", "geneve"), "--encap is erspan1, erspan2, erspan3, gre or vxlan: 'geneve'"),
    (("--encap", "vxlan", "--session", "16777216"), "--session: a VXLAN VNI is 0 to 16777215"),
    (("--encap", "erspan2", "--session", "1024"), "--session: an ERSPAN session ID is 0 to 1023"),
    (("--encap", "erspan1", "--session", "1"), "--session: ERSPAN type I carries no session ID"),
    (("--encap", "gre", "--session", "4294967296"), "--session wants 0 to 4294967295: '4294967296'"),
    (("--encap", "vxlan", "--mirror-loss", "1%"),
     "--mirror-loss needs sequence numbers to count the loss by: --encap erspan2, erspan3 or gre"),
    (("--encap", "erspan1", "--mirror-loss", "1%"),
     "--mirror-loss needs sequence numbers to count the loss by: --encap erspan2, erspan3 or gre"),
    (("--mirror-loss", "1%"), "--encap-family, --session and --mirror-loss shape a mirror: add --encap"),
    (("--encap-family", "6"), "--encap-family, --session and --mirror-loss shape a mirror: add --encap"),
    (("--encap", "gre", "--encap-family", "5"), "--encap-family is 4 or 6: '5'"),
    (("--encap", "gre", "--mirror-loss", "1.5"), "--mirror-loss wants a rate from 0 to 1 (or 0% to 100%): '1.5'"),
    (("--encap", "gre", "--mirror-loss", "60%", "--drop", "60%"),
     "the fault rates add up to more than 1 (each frame gets one fault at most)"),
])
def test_bad_encap_options(tmp_path, args, message):
    res = run("gen", "-w", tmp_path / "x.pcap", *args)
    assert res.returncode == 2
    assert res.stdout == ""
    assert res.stderr == f"roceval gen: {message}; see 'roceval help gen'\n"
