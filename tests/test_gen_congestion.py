# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""roceval gen's congestion faults (--dscp, --cnp-dscp, --not-ect, --cnp-burst, --ce-unanswered,
--pfc): each predicted exactly, under the settings the summary names, by replay and live; and the
frames checked with scapy, which shares nothing with the C side."""
import json
import logging
import time

import pytest

from conftest import nonzero_rules, replay_json, run
from test_gen import TOTALS, assert_agrees, gen

logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.layers.inet6 import IPv6  # noqa: E402
from scapy.utils import rdpcap  # noqa: E402

CC = [("dscp", "dscp", "dscp"), ("cnp-dscp", "cnp_dscp", "cnp_dscp"), ("not-ect", "not_ect", "not_ect"),
      ("cnp-burst", "cnp_burst", "cnp_gap"), ("ce-unanswered", "ce_unanswered", "ce_unanswered")]
QOS_RULES = ("dscp", "cnp_dscp", "pcp", "cnp_pcp", "not_ect", "cnp_gap", "ce_unanswered")


def with_settings(s):
    return [a for k, v in s["expected"]["settings"].items() for a in ("--set", f"{k}={v}")]


def assert_pfc(s, r):
    exp = s["expected"]
    assert r["pfc_frames"] == exp["pfc_frames"]
    assert [{k: p[k] for k in ("priority", "frames", "xoff", "xon", "quanta")} for p in r["pfc"]] == exp["pfc"]


@pytest.mark.parametrize("opt,key,rule", CC, ids=[c[0] for c in CC])
@pytest.mark.parametrize("extra", [(), ("--cm",)], ids=["", "cm"])
def test_each_congestion_fault_is_counted_exactly(tmp_path, opt, key, rule, extra):
    # CNPs are 1 message in 16: the CNP faults need a high rate to inject enough
    rate = "40%" if opt.startswith("cnp") else "5%"
    path, s = gen(tmp_path, "--seed", "41", "--count", "4000", "-f", "mixed", f"--{opt}", rate, *extra)
    n = s["injected"][key]
    assert n >= 10
    assert {k: v for k, v in s["injected"].items() if v} == {key: n}
    assert s["expected"]["settings"] == {"dscp": "26", "cnp_dscp": "48", "ect": "required", "cnp_gap": "4us",
                                         "cnp_delay": "50us"}
    r = replay_json(path, *with_settings(s))
    assert_agrees(s, r)
    assert r["rules"][rule] >= n
    if opt != "cnp-burst":  # CNPs of the traffic can be closer than 4 us too: predicted, not injected
        assert r["rules"][rule] == n
    if opt == "ce-unanswered":
        assert r["latency"]["ce_cnp"]["count"] == n
    # without the settings, nothing of it is judged
    plain = replay_json(path)
    assert all(plain["rules"][q] == 0 for q in QOS_RULES)


def test_all_congestion_faults_with_the_others(tmp_path):
    args = ["--dscp", "1%", "--cnp-dscp", "10%", "--not-ect", "1%", "--cnp-burst", "10%", "--ce-unanswered", "1%",
            "--pfc", "1%", "--mutate-variant", "2%", "--drop", "0.5%", "--duplicate", "1%", "--corrupt-icrc", "1%"]
    path, s = gen(tmp_path, "--seed", "43", "--count", "8000", "-f", "mixed", "--vlan", "9", *args)
    asked = [a[2:].replace("-", "_") for a in args[::2]]
    assert all(s["injected"][k] > 0 for k in asked), s["injected"]
    r = replay_json(path, *with_settings(s))
    assert_agrees(s, r)
    assert_pfc(s, r)
    # --mutate-variant's DSCP changes count too, under the settings
    assert r["rules"]["dscp"] > s["injected"]["dscp"]
    assert r["rules"]["ecn_ce"] == s["mutations"]["ecn_ce"] + s["injected"]["ce_unanswered"]


def test_pfc_frames_before_the_traffic(tmp_path):
    path, s = gen(tmp_path, "--seed", "44", "--count", "3000", "--pfc", "3%")
    exp = s["expected"]
    n = s["injected"]["pfc"]
    assert n >= 50 and exp["pfc_frames"] == n and "settings" not in exp
    assert exp["frames"] == s["frames"] and exp["roce"] == s["frames"] - n
    assert {p["priority"] for p in exp["pfc"] if p["frames"]} == set(range(8))
    assert sum(p["xon"] for p in exp["pfc"]) > 0 and sum(p["xoff"] for p in exp["pfc"]) > 0
    r = replay_json(path)
    assert_agrees(s, r)
    assert_pfc(s, r)
    assert r["mac_control_malformed"] == r["mac_control_other"] == 0


def test_scapy_sees_the_traffic_classes(tmp_path):
    """Every data frame DSCP 26 ECT(0) but those faulted (DSCP 0, or Not-ECT, or CE), every CNP DSCP 48
    Not-ECT but those faulted (DSCP 0)."""
    path, s = gen(tmp_path, "--seed", "45", "--count", "3000", "-f", "mixed", "--dscp", "2%", "--not-ect", "2%",
                  "--cnp-dscp", "30%", "--ce-unanswered", "2%")
    classes = {}
    for p in rdpcap(str(path)):
        ip = p[IP] if IP in p else p[IPv6]
        tc = ip.tos if IP in p else ip.tc
        cnp = bytes(p[UDP].payload)[0] == 0x81
        key = ("cnp" if cnp else "data", tc >> 2, tc & 3)
        classes[key] = classes.get(key, 0) + 1
    inj = s["injected"]
    assert classes.get(("data", 0, 2), 0) == inj["dscp"]
    assert classes.get(("data", 26, 0), 0) == inj["not_ect"]
    assert classes.get(("data", 26, 3), 0) == inj["ce_unanswered"]
    assert classes.get(("cnp", 0, 0), 0) == inj["cnp_dscp"]
    assert set(classes) == {("data", 26, 2), ("data", 0, 2), ("data", 26, 0), ("data", 26, 3), ("cnp", 48, 0),
                            ("cnp", 0, 0)}


def test_ce_unanswered_marks_every_kind_an_np_answers(tmp_path):
    """RC and UC requests, UD SENDs and READ responses (whose CNP goes from the requester to the
    responder's QP): each mark counted once, and each late CNP its answer (the ce_cnp samples)."""
    path, s = gen(tmp_path, "--seed", "48", "--count", "4000", "-f", "mixed", "--ce-unanswered", "5%")
    n = s["injected"]["ce_unanswered"]
    kinds = {}
    for p in rdpcap(str(path)):
        ip = p[IP] if IP in p else p[IPv6]
        if (ip.tos if IP in p else ip.tc) & 3 != 3:
            continue
        op = bytes(p[UDP].payload)[0]
        kind = "ud" if op >> 5 == 3 else "read_response" if 0x0D <= op & 0x1F <= 0x10 else "request"
        kinds[kind] = kinds.get(kind, 0) + 1
    assert set(kinds) == {"request", "read_response", "ud"} and sum(kinds.values()) == n, kinds
    r = replay_json(path, *with_settings(s))
    assert_agrees(s, r)
    assert r["rules"]["ce_unanswered"] == n and r["latency"]["ce_cnp"]["count"] == n


def test_the_summary_hides_the_congestion_faults_unless_asked(tmp_path):
    _, s = gen(tmp_path, "--seed", "46", "--count", "500")
    assert not {"dscp", "cnp_dscp", "not_ect", "cnp_burst", "ce_unanswered", "pfc"} & set(s["injected"])
    assert "settings" not in s["expected"] and s["expected"]["pfc_frames"] == 0
    text = run("gen", "-w", tmp_path / "t.pcap", "--seed", "46", "--count", "500", "--cnp-burst", "20%",
               check=True).stdout
    assert "With the settings dscp=26 cnp_dscp=48 ect=required cnp_gap=4us cnp_delay=50us\n" in text
    assert "\ncnp-burst " in text and "cnp_gap\n" in text


def test_help_names_each_congestion_fault():
    out = run("help", "gen", check=True).stdout
    for opt, _, rule in CC + [("pfc", "pfc", "pfc_frames")]:
        assert f"--{opt} RATE" in out and f"-> {rule}" in out, opt


def test_live_congestion_faults_match_the_summary(netns):
    """Into an interface the times are the kernel's: pacing and CE are not predicted, the rest is."""
    run("attach", netns.if_rx, "dscp=26", "cnp_dscp=48", "ect=required", netns=netns.rx, check=True)
    try:
        res = run("gen", "-i", netns.if_tx, "--rate", "20000", "--count", "3000", "--seed", "47", "-f", "mixed",
                  "--dscp", "2%", "--cnp-dscp", "20%", "--not-ect", "2%", "--pfc", "1%", "--json", "--quiet",
                  "--mac", f"{netns.mac(netns.tx, netns.if_tx)},{netns.mac(netns.rx, netns.if_rx)}",
                  netns=netns.tx, check=True)
        s = json.loads(res.stdout)
        assert "cnp_gap" not in s["expected"]["rules"] and "ce_unanswered" not in s["expected"]["rules"]
        deadline = time.monotonic() + 10
        while True:
            st = json.loads(run("stats", netns.if_rx, "--json", netns=netns.rx, check=True).stdout)
            if (st["roce"] >= s["expected"]["roce"] and st["pfc_frames"] >= s["expected"]["pfc_frames"]) or \
                    time.monotonic() > deadline:
                break
            time.sleep(0.2)
    finally:
        run("detach", netns.if_rx, netns=netns.rx)
    assert_agrees(s, st, totals=TOTALS[1:])
    assert_pfc(s, st)
    assert nonzero_rules(st)["dscp"] == s["injected"]["dscp"] > 0
