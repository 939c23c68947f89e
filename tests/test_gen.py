# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""roceval gen: valid traffic is valid, every injected fault is counted exactly once, seeds repeat.

The generator's summary predicts the counters ("expected", in the replay schema); each test
replays what it wrote and holds roceval to that prediction, and checks the frames with code
that shares nothing with the C side: scapy's dissector and ICRC, and tests/roce.py's ICRC.
"""
import json
import logging
import os
import re
import signal
import struct
import subprocess
import time

import pytest

from conftest import PIN_ROOT, ROCEVAL, ROOT, nonzero_rules, replay_files, replay_json, run
import roce

logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
from scapy.contrib.roce import BTH  # noqa: E402
from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.layers.inet6 import IPv6  # noqa: E402
from scapy.layers.l2 import Dot1Q  # noqa: E402
from scapy.utils import rdpcap  # noqa: E402

TOTALS = ("frames", "roce", "icrc_ok", "icrc_bad", "icrc_unchecked")


def gen(tmp_path, *args, name="gen.pcap"):
    path = tmp_path / name
    res = run("gen", "-w", path, "--json", "--quiet", *args, check=True)
    return path, json.loads(res.stdout)


def assert_agrees(summary, counters, totals=TOTALS):
    exp = summary["expected"]
    for k in totals:
        assert counters[k] == exp[k], k
    for rule, n in exp["rules"].items():
        assert counters["rules"][rule] == n, rule


@pytest.mark.parametrize("args", [
    ("-4",),
    ("-6",),
    ("-f", "mixed", "--vlan", "100"),
    ("--pmtu", "256", "--max-size", "2000"),
    ("--pmtu", "4096", "-6"),
    ("--traffic", "read,atomic", "--qps", "3"),
    ("--traffic", "uc,ud", "--qps", "6"),
])
def test_valid_traffic_has_no_violation(tmp_path, args):
    path, s = gen(tmp_path, "--seed", "3", "--count", "2000", *args)
    assert s["frames"] >= 2000
    r = replay_json(path)
    assert_agrees(s, r)
    assert r["frames"] == r["roce"] == r["icrc_ok"] == s["frames"]
    cnp = s["expected"]["rules"]["cnp"]
    assert nonzero_rules(r) == ({"cnp": cnp} if cnp else {})
    # judged against the exact PMTU the generator used, too
    pmtu = args[args.index("--pmtu") + 1] if "--pmtu" in args else "1024"
    assert nonzero_rules(replay_json(path, "--pmtu", pmtu)) == nonzero_rules(r)


def test_traffic_covers_every_conversation_kind(tmp_path):
    path, s = gen(tmp_path, "--seed", "5", "--count", "3000", "--qps", "6")
    ops = {bytes(p[UDP].payload)[0] for p in rdpcap(str(path))}
    rc = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D,
          0x0E, 0x0F, 0x10, 0x11, 0x12, 0x13, 0x14, 0x16, 0x17}
    uc = {0x20 | op for op in range(0x0C)}
    ud = {0x64, 0x65}
    assert ops == rc | uc | ud | {0x81}
    assert s["expected"]["rules"]["cnp"] > 0


FAULTS = [
    ("corrupt-icrc", "corrupt_icrc", "icrc"),
    ("flip-invariant", "flip_invariant", "icrc"),
    ("drop", "drop", "psn_gap"),
    ("duplicate", "duplicate", "psn_duplicate"),
    ("retx-changed", "retx_changed", "retx_changed"),
    ("rnr-early", "rnr_early", "rnr_retry_early"),
    ("nak-wrong-psn", "nak_wrong_psn", "nak_psn_wrong"),
    ("go-back-0", "go_back_0", "go_back_early"),
    ("bad-opcode", "bad_opcode", "opcode"),
    ("bad-pad", "bad_pad", "pad"),
    ("se-misuse", "se_misuse", "se"),
]


# faults few frames are eligible for (RC SEND/WRITE ONLY), at rates that still inject some
RARE = {"--retx-changed": "5%", "--rnr-early": "8%", "--nak-wrong-psn": "8%", "--go-back-0": "15%"}
ALONE = {"retx-changed": "30%", "rnr-early": "30%", "nak-wrong-psn": "60%", "go-back-0": "60%"}


@pytest.mark.parametrize("opt,key,rule", FAULTS, ids=[f[0] for f in FAULTS])
def test_each_fault_is_counted_exactly(tmp_path, opt, key, rule):
    rate = ALONE.get(opt, "3%")
    path, s = gen(tmp_path, "--seed", "11", "--count", "3000", "-f", "mixed", f"--{opt}", rate)
    n = s["injected"][key]
    assert n >= 10
    assert {k: v for k, v in s["injected"].items() if v} == {key: n}
    r = replay_json(path)
    assert r["rules"][rule] == n
    assert_agrees(s, r)
    broken = {k for k, v in nonzero_rules(r).items() if k != "cnp"}
    predicted = {k for k, v in s["expected"]["rules"].items() if v and k != "cnp"}
    assert rule in predicted
    if opt == "drop" and s["dropped_first_or_last"]:
        # a lost FIRST or LAST also breaks its message: expected, and not predicted
        assert broken == {rule, "opcode_sequence"}
    else:
        assert broken == predicted


@pytest.mark.parametrize("opt,args", [
    ("duplicate", ()),
    # messages under the PMTU: no FIRST or MIDDLE ever shows it
    ("drop", ("--traffic", "read,send", "--max-size", "512")),
], ids=["duplicate", "drop"])
def test_prediction_holds_whether_replay_is_told_the_pmtu_or_learns_it(tmp_path, opt, args):
    # A READ's PSN count needs the PMTU: until the flow has shown it (a FIRST or MIDDLE
    # packet), replay without --pmtu cannot tell a repeated READ from the next request,
    # nor see a loss right after a READ.  Seed 3 duplicates such a READ.
    made = [gen(tmp_path, "--seed", str(seed), "--count", "2000", f"--{opt}", "5%", *args, name=f"{seed}.pcap")
            for seed in range(1, 9)]
    assert all(s["injected"][opt] > 0 for _, s in made)
    paths = [path for path, _ in made]
    for opts in ((), ("--pmtu", "1024")):
        for (_, s), r in zip(made, replay_files(paths, *opts), strict=True):
            assert_agrees(s, r)


@pytest.mark.parametrize("depth", ["", ":1", ":6", ":127"])
def test_reordered_requests_are_counted_exactly(tmp_path, depth):
    # a swap over k requests of a flow makes k of them late, 1 to k PSNs behind the newest
    path, s = gen(tmp_path, "--seed", "9", "--count", "3000", "-f", "mixed", "--reorder", f"5%{depth}")
    swaps, exp = s["injected"]["reorder"], s["expected"]
    assert swaps >= 20 and {k: v for k, v in s["injected"].items() if v} == {"reorder": swaps}
    k = int(depth[1:]) if depth else 3
    assert swaps <= exp["rules"]["psn_reorder"] <= k * swaps
    assert max(b["le_psns"] for b in exp["reorder"]["buckets"]) >= min(k, 2)
    r = replay_json(path)
    assert_agrees(s, r)
    assert {k: r["reorder"][k] for k in ("count", "sum_psns", "buckets")} == exp["reorder"]
    assert nonzero_rules(r) == {"psn_reorder": exp["rules"]["psn_reorder"], "cnp": exp["rules"]["cnp"]}
    # strictly (reorder_window=0) the same frames read as losses, duplicates and timeouts
    strict = nonzero_rules(replay_json(path, "--set", "reorder_window=0"))
    assert strict["psn_gap"] == swaps and strict["psn_duplicate"] == exp["rules"]["psn_reorder"]


def test_reorder_option(tmp_path):
    for bad in ("5%:0", "5%:128", "5%:x", "x", "5%:3:4"):
        res = run("gen", "-w", tmp_path / "x.pcap", "--reorder", bad)
        assert res.returncode == 2 and "--reorder wants a rate" in res.stderr, bad


def test_variant_mutations_are_never_flagged(tmp_path):
    path, s = gen(tmp_path, "--seed", "12", "--count", "3000", "-f", "mixed",
                  "--mutate-variant", "0.3")
    muts = s["mutations"]
    assert all(muts[k] > 0 for k in muts), muts  # every kind, IPv6 flow label included
    assert sum(muts.values()) == s["injected"]["mutate_variant"]
    r = replay_json(path)
    assert_agrees(s, r)
    assert r["icrc_bad"] == 0 and r["icrc_ok"] == s["frames"]
    # CE marks are telemetry: counted under ecn_ce, not as violations
    assert nonzero_rules(r) == {"cnp": s["expected"]["rules"]["cnp"], "ecn_ce": muts["ecn_ce"]}


def test_all_faults_together(tmp_path):
    rates = [f"--{opt}" for opt, _, _ in FAULTS] + ["--mutate-variant"]
    args = [a for opt in rates for a in (opt, RARE.get(opt, "1%"))]
    path, s = gen(tmp_path, "--seed", "15", "--count", "8000", "-f", "mixed", "--vlan", "7", *args,
                  "--reorder", "2%:5")
    assert all(v > 0 for v in s["injected"].values()), s["injected"]
    r = replay_json(path)
    assert_agrees(s, r)
    assert {k: r["reorder"][k] for k in ("count", "sum_psns", "buckets")} == s["expected"]["reorder"]
    assert r["rules"]["icrc"] == s["injected"]["corrupt_icrc"] + s["injected"]["flip_invariant"]


@pytest.mark.parametrize("family", ["4", "6"])
def test_scapy_dissects_the_traffic_and_agrees_on_the_icrc(tmp_path, family):
    path, s = gen(tmp_path, "--seed", "21", "--count", "1500", "-f", family, "--vlan", "42")
    pkts = rdpcap(str(path))
    assert len(pkts) == s["frames"]
    for p in pkts:
        assert p[Dot1Q].vlan == 42
        ip = p[IP] if family == "4" else p[IPv6]
        bth = p[BTH]
        assert bth.version == 0 and bth.resv7 == 0 and bth.pkey == 0xFFFF
        wire = struct.pack("!I", bth.icrc)
        assert roce.icrc(bytes(ip)) == wire
        if family == "4":  # Debian's scapy computes IPv4 ICRCs only
            assert bth.compute_icrc(b"") == wire
            assert ip.flags == "DF"
        else:
            assert p[UDP].chksum != 0  # IPv6 forbids a zero UDP checksum


def test_icrc_known_answers_through_scapy():
    """The Python ICRC the tests trust reproduces the public vectors of rocev2.md section 5."""
    body = bytes.fromhex("4630818be28935d90e9a95505401be885e500000")
    bth = bytes([0x24, 0x60, 0xFF, 0xFF, 0, 0, 0, 211, 0]) + (13571856).to_bytes(3, "big")
    udp = struct.pack(">HHHH", 49152, 4791, 44, 0) + bth + body + b"\0" * 4
    ip4 = IP(src="192.168.0.7", dst="192.168.0.7", tos=1, id=1144, flags="DF", ttl=64, len=64,
             proto=17)
    assert roce.icrc(bytes(ip4)[:20] + udp) == bytes.fromhex("78f353f3")
    ip6 = IPv6(src="2022::1023", dst="2023::1024", tc=226, fl=0x1FACE, hlim=255, plen=44, nh=17)
    assert roce.icrc(bytes(ip6)[:40] + udp) == bytes.fromhex("3e5b743b")


def test_seed_repeats_byte_for_byte(tmp_path):
    faults = ["--drop", "2%", "--corrupt-icrc", "2%", "--mutate-variant", "2%"]
    a, sa = gen(tmp_path, "--seed", "99", *faults, name="a.pcap")
    b, sb = gen(tmp_path, "--seed", "99", *faults, name="b.pcap")
    c, _ = gen(tmp_path, "--seed", "100", *faults, name="c.pcap")
    assert a.read_bytes() == b.read_bytes() and sa == sb
    assert a.read_bytes() != c.read_bytes()
    # no seed: one is chosen and printed, and it reproduces the run
    d, sd = gen(tmp_path, *faults, name="d.pcap")
    e, _ = gen(tmp_path, "--seed", str(sd["seed"]), *faults, name="e.pcap")
    assert d.read_bytes() == e.read_bytes()


@pytest.mark.parametrize("opt,key", [("corrupt-icrc", "corrupt_icrc"),
                                     ("flip-invariant", "flip_invariant")])
def test_corruption_touches_only_what_it_says(tmp_path, opt, key):
    """Faults draw from their own random stream: the conversation underneath is the same."""
    clean, _ = gen(tmp_path, "--seed", "8", "-f", "mixed", name="clean.pcap")
    bad, s = gen(tmp_path, "--seed", "8", "-f", "mixed", f"--{opt}", "5%", name="bad.pcap")
    pairs = list(zip(rdpcap(str(clean)), rdpcap(str(bad))))
    assert len(pairs) == s["frames"]
    changed = [(bytes(a), bytes(b)) for a, b in pairs if bytes(a) != bytes(b)]
    assert len(changed) == s["injected"][key] > 10
    for a, b in changed:
        assert len(a) == len(b)
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if opt == "corrupt-icrc":
            assert min(diff) >= len(a) - 4
        else:
            assert len(diff) == 1 and bin(a[diff[0]] ^ b[diff[0]]).count("1") == 1
            assert diff[0] < len(a) - 4


def test_pcapng_and_stdout(tmp_path):
    p, s = gen(tmp_path, "--seed", "4", "--count", "500", name="x.pcapng")
    assert p.read_bytes()[:4] == b"\x0a\x0d\x0d\x0a"
    tshark = run("tshark", "-r", p, "-T", "fields", "-e", "frame.number", check=True)
    assert len(tshark.stdout.split()) == s["frames"]
    assert replay_json(p)["icrc_ok"] == s["frames"]
    q, _ = gen(tmp_path, "--seed", "4", "--count", "500", name="x.pcap")
    res = subprocess.run([str(ROCEVAL), "gen", "-w", "-", "--seed", "4", "--count", "500",
                          "--json", "--quiet"], capture_output=True, timeout=60)
    assert res.returncode == 0 and res.stdout == q.read_bytes()
    assert json.loads(res.stderr) == s


def test_messages_sizing(tmp_path):
    _, s = gen(tmp_path, "--seed", "1", "--traffic", "ud", "--messages", "37")
    assert s["frames"] == 37
    _, s = gen(tmp_path, "--seed", "1", "--traffic", "send", "--qps", "1", "--messages", "10",
               "--max-size", "0")
    # ten empty RC SEND_ONLYs, each ACKed at once or later in one coalesced ACK
    assert 11 <= s["frames"] <= 20


@pytest.mark.parametrize("args,msg", [
    ((), "give one of -w FILE or -i IFACE"),
    (("-w", "x", "-i", "lo"), "give one of -w FILE or -i IFACE"),
    (("-w", "x", "--drop", "2"), "--drop wants a rate from 0 to 1"),
    (("-w", "x", "--drop", "60%", "--duplicate", "0.5"), "add up to more than 1"),
    (("-w", "x", "--pmtu", "1000"), "--pmtu must be 256, 512, 1024, 2048 or 4096"),
    (("-w", "x", "--traffic", "cnp"), "--traffic needs one of"),
    (("-w", "x", "--traffic", "bogus"), "--traffic takes a list"),
    (("-w", "x", "--rate", "100"), "--rate applies to -i IFACE only"),
    (("-w", "x", "--addr", "1.2.3.4"), "--addr wants two IPv4 addresses"),
])
def test_usage_errors(tmp_path, args, msg):
    res = run("gen", *args, cwd=tmp_path)
    assert res.returncode == 2
    assert res.stdout == ""
    assert res.stderr.startswith("roceval gen: ") and msg in res.stderr
    assert res.stderr.count("\n") == 1


def test_missing_interface_is_one_line():
    res = run("gen", "-i", "rvnosuch0", "--count", "10")
    assert res.returncode == 1
    assert res.stderr == "roceval: rvnosuch0: no such interface\n"


def test_help_is_complete():
    out = run("help", "gen", check=True).stdout
    for opt, _, rule in FAULTS:
        assert f"--{opt} RATE" in out and rule in out
    for opt in ("--mutate-variant", "--seed", "--count", "--messages", "--pmtu", "--vlan",
                "--rate", "--json", "--family", "--traffic", "Exit status"):
        assert opt in out


def live_available():
    return all(run("help", c).returncode == 0 for c in ("attach", "stats", "detach"))


@pytest.mark.skipif(not live_available(), reason="roceval attach/stats not built in")
@pytest.mark.parametrize("mode", ["native", "generic"])
def test_live_counts_match_the_summary(netns, mode):
    # a swapped pair is predicted reordered, which holds only if it arrives within reorder_time: on
    # a loaded machine the sender can be preempted between the two for longer than the default 1 ms
    run("attach", netns.if_rx, "--mode", mode, "reorder_time=100ms", netns=netns.rx, check=True)
    rates = [a for opt, _, _ in FAULTS for a in (f"--{opt}", RARE.get(f"--{opt}", "1%"))]
    res = run("gen", "-i", netns.if_tx, "--rate", "20000", "--count", "3000", "--seed", "33",
              "-f", "mixed", "--mutate-variant", "1%", "--reorder", "2%", *rates, "--json", "--quiet",
              "--mac", f"{netns.mac(netns.tx, netns.if_tx)},{netns.mac(netns.rx, netns.if_rx)}",
              netns=netns.tx, check=True)
    s = json.loads(res.stdout)
    assert all(v > 0 for v in s["injected"].values()), s["injected"]
    deadline = time.monotonic() + 10
    while True:
        st = json.loads(run("stats", netns.if_rx, "--json", netns=netns.rx, check=True).stdout)
        # a loss is settled once its flow has been idle for reorder_time, by a timer
        settled = st["rules"]["psn_gap"] >= s["expected"]["rules"]["psn_gap"]
        if (st["roce"] >= s["expected"]["roce"] and settled) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    # "frames" also counts the IPv6 neighbour discovery the veth carries
    assert_agrees(s, st, totals=TOTALS[1:])
    assert {k: st["reorder"][k] for k in ("count", "sum_psns", "buckets")} == s["expected"]["reorder"]
    run("detach", netns.if_rx, netns=netns.rx, check=True)


DEMO = ROOT / "demo" / "demo.sh"


def demo_pins():
    return {p.name for p in PIN_ROOT.glob("netns-*/rvdemo*")}


def demo_state():
    """The demo's namespaces, links and pins present now (other runs' included)."""
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    links = subprocess.run(["ip", "-br", "link"], capture_output=True, text=True).stdout
    return ({w for w in netns.split() if w.startswith("roceval-demo")},
            {w.split("@")[0] for w in links.split() if w.startswith("rvdemo")}, demo_pins())


# each counts what the demo left behind, which another demo running meanwhile would add to
one_demo_at_a_time = pytest.mark.xdist_group("demo")


def demo_leftovers(before):
    """Namespaces, links and pins a demo run left behind: another run's do not count."""
    return tuple(now - then for now, then in zip(demo_state(), before))


@one_demo_at_a_time
@pytest.mark.skipif(not live_available(), reason="roceval attach/stats not built in")
def test_demo_checks_its_agreement_and_cleans_up():
    before = demo_state()
    env = dict(os.environ, ROCEVAL=str(ROCEVAL), DEMO_FRAMES="1500", DEMO_RATE="1500")
    res = subprocess.run(["bash", str(DEMO)], capture_output=True, text=True, timeout=120, env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "AGREEMENT: all " in res.stdout and "DISAGREEMENT" not in res.stdout
    assert "Where to go next" in res.stdout
    assert demo_leftovers(before) == (set(), set(), set())


@one_demo_at_a_time
@pytest.mark.skipif(not live_available(), reason="roceval attach/stats not built in")
def test_demo_cleans_up_when_interrupted():
    before = demo_state()
    env = dict(os.environ, ROCEVAL=str(ROCEVAL), DEMO_FRAMES="100000", DEMO_RATE="1000")
    # a shell cannot trap a signal ignored when it starts, and a suite run in the background (as a
    # non-interactive shell runs jobs) hands SIGINT down ignored: give the demo what a terminal gives
    p = subprocess.Popen(["bash", str(DEMO)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 30
    while "roce=" not in (line := p.stdout.readline()) and time.monotonic() < deadline:
        pass
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    assert p.returncode == 130 and "interrupted" in err
    assert demo_leftovers(before) == (set(), set(), set())


def test_fault_table_after_a_failed_send(netns):
    """A send that fails part way still reports what was sent and injected, then the error."""
    netns.ip("link", "set", netns.if_rx, "down", netns=netns.rx)  # the peer down: sends fail
    netns.ip("link", "set", netns.if_tx, "down", netns=netns.tx)
    res = run("gen", "-i", netns.if_tx, "--count", "50", "--corrupt-icrc", "50%", "--seed", "3",
              netns=netns.tx)
    assert res.returncode == 1
    assert res.stderr == f"roceval: {netns.if_tx}: couldn't send a frame: Network is down\n"
    assert re.match(rf"^0 frames to {netns.if_tx} \(seed 3\)\n\nFAULT +INJECTED +COUNTED AS\n", res.stdout)
    assert re.search(r"^corrupt-icrc +0  icrc$", res.stdout, re.M)
    assert "Expected: frames 0, roce 0, icrc_ok 0, icrc_bad 0" in res.stdout

    res = run("gen", "-i", netns.if_tx, "--count", "50", "--json", netns=netns.tx)
    assert res.returncode == 1
    assert json.loads(res.stdout)["frames"] == 0
