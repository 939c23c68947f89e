# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Live ERSPAN over a veth: mirror copies sent from the peer namespace to an attached roceval
(native XDP and tc) are judged as their bare frames, and their sessions are listed by stats,
status, top and the daemon's /metrics, a sequence gap counted as mirror loss.  A feed of the same
copies lists the same sessions."""
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import encap
import roce
from conftest import ROCEVAL, nonzero_rules, replay_json, run, send_pcap, wait_for

SEND_ONLY = 0x04
WRITE_ONLY = 0x0A
# the IPv4 session: frames numbered 1..GAP-1, then GAP+1 on; GAP itself never comes
V4_FRAMES, GAP = 12, 6
V6_FRAMES = 4
# a second switch mirroring into the IPv4 session's ID, its GRE sequence numbers always 0: unnumbered
ZERO_FRAMES, ZERO_SOURCE = 3, "192.0.2.11"
SESSION_V4, SESSION_V6 = 100, 7
ALL = V4_FRAMES + V6_FRAMES + ZERO_FRAMES
# longer than top's source column (23): it goes on a line of its own
V6_SOURCE = "2001:db8:5:0:abcd:ef01:2345:6789"  # as inet_ntop writes it
PORT = 9466  # inside the test's own namespace


def flow(n, dqpn, opc, payload):
    """n frames of one flow, PSNs 1..n: valid, in order, as a one-way mirror sees them."""
    return [roce.roce(opc, payload, dqpn=dqpn, psn=1 + i) for i in range(n)]


@pytest.fixture
def traffic(tmp_path):
    """The bare frames (an IPv4 session's flow and a frame with a bad ICRC, an IPv6 session's
    flow, an unnumbered session's), their mirrored copies as sent, and what replay counts for the
    bare ones."""
    v4 = flow(V4_FRAMES - 1, 0x300, WRITE_ONLY, 256) + \
        [roce.roce(SEND_ONLY, 64, dqpn=0x301, frame_kw={"bad_icrc": True})]
    v6 = flow(V6_FRAMES, 0x302, SEND_ONLY, 128)
    zero = flow(ZERO_FRAMES, 0x303, SEND_ONLY, 32)
    seqs = [s if s < GAP else s + 1 for s in range(1, V4_FRAMES + 1)]
    wrapped = [encap.wrap(f, "erspan2", 4, session=SESSION_V4, seq=s) for f, s in zip(v4, seqs)] + \
        encap.wrap_all(v6, "erspan2", 6, session=SESSION_V6, src=V6_SOURCE) + \
        [encap.wrap(f, "erspan2", 4, session=SESSION_V4, seq=0, src=ZERO_SOURCE) for f in zero]
    bare = roce.write_pcap(tmp_path / "bare.pcap", v4 + v6 + zero)
    sent = roce.write_pcap(tmp_path / "mirrored.pcap", wrapped)
    want = replay_json(bare)
    assert want["roce"] == ALL
    assert nonzero_rules(want) == {"icrc": 1}
    return {"pcap": sent, "want": want, "wrapped": wrapped, "last_v4": seqs[-1]}


def session(source, sess, frames, nbytes, lost, last_seq, numbered=True):
    return {"source": source, "encap": "erspan2", "session": sess, "frames": frames, "bytes": nbytes,
            "lost": lost, "numbered": numbered, "truncated": 0, "nested": 0, "last_seq": last_seq}


def sessions(traffic):
    """The three sessions as stats and replay list them: by source."""
    v4, v6, zero = split(traffic)
    return [session(V6_SOURCE, SESSION_V6, V6_FRAMES, sum(map(len, v6)), 0, V6_FRAMES),
            session("192.0.2.10", SESSION_V4, V4_FRAMES, sum(map(len, v4)), 1, traffic["last_v4"]),
            session(ZERO_SOURCE, SESSION_V4, ZERO_FRAMES, sum(map(len, zero)), 0, 0, numbered=False)]


def split(traffic):
    w = traffic["wrapped"]
    return w[:V4_FRAMES], w[V4_FRAMES:V4_FRAMES + V6_FRAMES], w[V4_FRAMES + V6_FRAMES:]


def stats_json(ns):
    out = run("stats", ns.if_rx, "--json", netns=ns.rx, check=True).stdout.splitlines()
    assert len(out) == 1
    return json.loads(out[0])


def metrics(ns, port):
    """GET /metrics inside the rx namespace, as a scraper would (urllib)."""
    code = ("import sys, urllib.request\n"
            "print(urllib.request.urlopen(f'http://127.0.0.1:{sys.argv[1]}/metrics', timeout=10).read().decode(),"
            " end='')\n")
    return subprocess.run(["nsenter", f"--net=/run/netns/{ns.rx}", sys.executable, "-c", code, str(port)],
                          check=True, capture_output=True, text=True, timeout=30).stdout


class Daemon:
    """roceval daemon serving the rx interface (adopting its attachment) on 127.0.0.1:PORT."""

    def __init__(self, ns, tmp_path):
        conf = tmp_path / "daemon.conf"
        conf.write_text(f"interface = {ns.if_rx}\nlisten = 127.0.0.1:{PORT}\ninterval = 1\n")
        self.err = open(tmp_path / "daemon.err", "w+")
        self.proc = subprocess.Popen(["nsenter", f"--net=/run/netns/{ns.rx}", str(ROCEVAL), "daemon",
                                      "--config", str(conf)], stdout=subprocess.DEVNULL, stderr=self.err)
        self.ns = ns

    def stderr(self):
        self.err.flush()
        self.err.seek(0)
        return self.err.read()

    def wait_ready(self):
        assert wait_for(lambda: self.proc.poll() is not None or "daemon running" in self.stderr(), 20), \
            self.stderr()
        assert self.proc.poll() is None, self.stderr()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=20)
        for lock in Path("/run/roceval").glob(f"daemon-*{self.ns.if_rx}.lock"):
            lock.unlink()


def check_metrics(body, ifname, traffic):
    v4, v6, zero = split(traffic)
    labels = [(f'source="{V6_SOURCE}",encap="erspan2",session="{SESSION_V6}"', v6, 0),
              (f'source="192.0.2.10",encap="erspan2",session="{SESSION_V4}"', v4, 1),
              (f'source="{ZERO_SOURCE}",encap="erspan2",session="{SESSION_V4}"', zero, 0)]
    for family, kind in (("roceval_mirror_sessions", "gauge"), ("roceval_mirror_sessions_max", "gauge"),
                         ("roceval_mirror_session_frames_total", "counter"),
                         ("roceval_mirror_session_bytes_total", "counter"),
                         ("roceval_mirror_session_lost_frames_total", "counter")):
        assert body.count(f"# TYPE {family} {kind}\n") == 1, family
        assert body.count(f"# HELP {family} ") == 1, family
    want = [f'roceval_mirror_sessions{{interface="{ifname}"}} 3',
            f'roceval_mirror_sessions_max{{interface="{ifname}"}} 1024',
            f'roceval_mirror_frames_total{{interface="{ifname}"}} {ALL}',
            f'roceval_mirror_lost_frames_total{{interface="{ifname}"}} 1']
    for lab, frames, lost in labels:
        want += [f'roceval_mirror_session_frames_total{{interface="{ifname}",{lab}}} {len(frames)}',
                 f'roceval_mirror_session_bytes_total{{interface="{ifname}",{lab}}} {sum(map(len, frames))}',
                 f'roceval_mirror_session_lost_frames_total{{interface="{ifname}",{lab}}} {lost}']
    lines = body.splitlines()
    for line in want:
        assert line in lines, line
    assert len([x for x in lines if x.startswith("roceval_mirror_session_frames_total{")]) == 3


def check_texts(ns, traffic):
    """stats' sessions table, status' line, and top's table: losing first, in 80 columns."""
    v4, v6, zero = split(traffic)
    text = run("stats", ns.if_rx, netns=ns.rx, check=True).stdout
    assert re.search(rf"^  192\.0\.2\.10 +erspan2 +{SESSION_V4} +{V4_FRAMES} +{sum(map(len, v4))} +1 +0 +yes$",
                     text, re.M), text
    assert re.search(rf"^  192\.0\.2\.11 +erspan2 +{SESSION_V4} +{ZERO_FRAMES} +{sum(map(len, zero))} +0 +0 "
                     r"+no \(always 0\)$", text, re.M), text
    status = json.loads(run("status", ns.if_rx, "--json", netns=ns.rx, check=True).stdout)[0]
    assert (status["mirror_sessions"], status["mirror_frames"], status["mirror_lost"]) == (3, ALL, 1)
    text = run("status", ns.if_rx, netns=ns.rx, check=True).stdout
    assert f"  mirrors      3 sessions, {ALL} frames decapsulated, 1 lost before this host\n" in text

    top = run("top", ns.if_rx, "-n", "1", netns=ns.rx, check=True).stdout.splitlines()
    at = top.index("  MIRROR SESSIONS         ENCAP      SESSION      FRAMES         BYTES     LOST")
    # the session that lost frames first, then the busiest; the IPv6 source on a line of its own;
    # no loss can be told of the unnumbered one
    assert top[at + 1:at + 6] == [
        f"  192.0.2.10              erspan2        100 {V4_FRAMES:11} {sum(map(len, v4)):13} {1:8}",
        f"  {V6_SOURCE}",
        f"  {'':23} erspan2          7 {V6_FRAMES:11} {sum(map(len, v6)):13} {0:8}",
        f"  192.0.2.11              erspan2        100 {ZERO_FRAMES:11} {sum(map(len, zero)):13} {'-':>8}",
        "  (3 mirror sessions)"]
    assert max(len(x) for x in top[at:at + 6]) <= 80


@pytest.mark.parametrize("mode", ["native", "tc"])
def test_live_erspan_over_veth(netns, tmp_path, traffic, mode):
    want = traffic["want"]
    run("attach", netns.if_rx, "--mode", mode, netns=netns.rx, check=True)
    daemon = Daemon(netns, tmp_path)
    try:
        daemon.wait_ready()
        send_pcap(netns.tx, netns.if_tx, traffic["pcap"], one_cpu=True)
        assert wait_for(lambda: stats_json(netns)["roce"] >= want["roce"], 10)
        st = stats_json(netns)
        for key in ("roce", "icrc_ok", "icrc_bad", "icrc_unchecked", "rocev2_ipv4", "rocev2_ipv6"):
            assert st[key] == want[key], key
        assert nonzero_rules(st) == {"icrc": 1}
        assert (st["mirror_frames"], st["mirror_lost"], st["mirror_truncated"], st["mirror_malformed"]) == \
            (ALL, 1, 0, 0)
        assert st["mirrors"] == sessions(traffic)
        check_texts(netns, traffic)
        check_metrics(metrics(netns, PORT), netns.if_rx, traffic)
    finally:
        daemon.stop()
        run("detach", netns.if_rx, netns=netns.rx)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to hand a session's frames between")
@pytest.mark.parametrize("mode", ["native", "tc"])
def test_a_session_handed_between_cpus_loses_nothing(netns, tmp_path, mode):
    """One session's copies reach the program on CPU 0, then CPU 1, then CPU 0 again (RSS, RPS
    and veths move a flow so): every number came, so nothing is lost.  Followed per CPU, CPU 0
    took the ten CPU 1 saw for lost."""
    frames = encap.wrap_all(flow(30, 0x310, SEND_ONLY, 64), "erspan2", 4, session=SESSION_V4)
    run("attach", netns.if_rx, "--mode", mode, netns=netns.rx, check=True)
    try:
        for part, cpu in ((frames[:10], 0), (frames[10:20], 1), (frames[20:], 0)):
            pcap = roce.write_pcap(tmp_path / f"part{len(part)}-{cpu}.pcap", part)
            send_pcap(netns.tx, netns.if_tx, pcap, cpu=cpu)
            want = frames.index(part[-1]) + 1
            assert wait_for(lambda: stats_json(netns)["mirror_frames"] >= want, 10)
        st = stats_json(netns)
        assert (st["roce"], st["mirror_frames"], st["mirror_lost"]) == (30, 30, 0)
        assert [(m["frames"], m["lost"], m["last_seq"], m["numbered"]) for m in st["mirrors"]] == [(30, 0, 30, True)]
    finally:
        run("detach", netns.if_rx, netns=netns.rx)


def test_a_feed_lists_the_sessions(netns, traffic):
    """The same copies piped into `roceval feed`: the same program, so the same sessions."""
    name = f"mirfeed{netns.if_rx[-6:]}"
    res = subprocess.run(["nsenter", f"--net=/run/netns/{netns.rx}", str(ROCEVAL), "feed", name, "-"],
                         input=traffic["pcap"].read_bytes(), capture_output=True, timeout=120)
    try:
        assert res.returncode == 0, res.stderr
        st = json.loads(run("stats", name, "--json", netns=netns.rx, check=True).stdout)
        assert (st["roce"], nonzero_rules(st), st["mirror_frames"], st["mirror_lost"]) == (ALL, {"icrc": 1}, ALL, 1)
        assert st["mirrors"] == sessions(traffic)
        top = run("top", name, "-n", "1", netns=netns.rx, check=True).stdout
        assert "  (3 mirror sessions)\n" in top
    finally:
        run("detach", name, netns=netns.rx)
