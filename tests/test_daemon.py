# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""roceval daemon: Prometheus endpoint, JSON log, restart, locking, SIGHUP and SIGTERM."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse
from decimal import Decimal
from pathlib import Path

import pytest

import cm_mad
import roce
from conftest import (ROCEVAL, ROOT, nonzero_rules, pcap_frames, pin_dir, replay_json, run, send_pcap, wait_for,
                      xdp_prog_id)

# One HTTP exchange inside a namespace; prints status, headers and body as JSON.
FETCH = r"""
import json, socket, sys
port, request = int(sys.argv[1]), sys.argv[2].encode().decode("unicode_escape").encode()
s = socket.create_connection(("127.0.0.1", port), timeout=10)
s.sendall(request)
buf = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    buf += chunk
head, _, body = buf.partition(b"\r\n\r\n")
lines = head.decode().split("\r\n")
print(json.dumps({"status": lines[0], "headers": lines[1:], "body": body.decode()}))
"""


def bad_icrc_frame(capture):
    """The capture's first RoCEv2 frame sent to another QP: DestQP is covered by the ICRC, which
    no longer matches (a new flow, so no sequence rule fires)."""
    for fr in pcap_frames(capture):
        if fr[12:14] == b"\x08\x00" and fr[23] == 17 and fr[36:38] == b"\x12\xb7":
            bth = 14 + 20 + 8
            return fr[:bth + 5] + bytes([fr[bth + 5] ^ 0x80]) + fr[bth + 6:]
    raise AssertionError("no RoCEv2 frame in the capture")


@pytest.fixture(scope="module")
def traffic(tmp_path_factory, good_capture):
    """A fault-free capture plus one frame with a bad ICRC, and what replay counts for it (made
    once: the tests only read them)."""
    capture, summary = good_capture
    pcap = tmp_path_factory.mktemp("traffic") / "traffic.pcap"
    roce.write_pcap(pcap, pcap_frames(capture) + [bad_icrc_frame(capture)])
    want = replay_json(pcap)
    assert want["roce"] == summary["expected"]["roce"] + 1 and want["rules"]["icrc"] == 1
    return pcap, want


def send(ns, pcap):
    send_pcap(ns.tx, ns.if_tx, pcap, one_cpu=True)


def http(ns, port, request):
    res = subprocess.run(["nsenter", f"--net=/run/netns/{ns.rx}", sys.executable, "-c", FETCH,
                          str(port), request], capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def get(ns, port, path="/metrics", version="1.1"):
    return http(ns, port, f"GET {path} HTTP/{version}\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n")


def prom_get(ns, port, path):
    """Prometheus' API, in HTTP/1.0 so that the body comes unchunked."""
    return get(ns, port, path, version="1.0")


SAMPLE = re.compile(r'^([a-z_]+)\{(.*)\} (\d+)$')
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def total_series():
    """{total id: series} from the frame totals table of docs/rules.md, without {interface}."""
    md = run("rules", "--markdown", check=True).stdout
    rows = re.findall(r"^\| `(\w+)` \| `(roceval_\w+)\{interface(?:, )?(.*?)\}` \|",
                      md.split("## Frame totals")[1].split("##")[0], re.M)
    return {tid: name + (f"{{{label}}}" if label else "") for tid, name, label in rows}


def metrics(ns, port, ifname=None):
    """{series: value} of one interface's samples: the name and its labels other than interface
    and severity, e.g. 'roceval_violations_total{rule="icrc"}'; the frame totals also by id."""
    r = get(ns, port)
    assert r["status"] == "HTTP/1.1 200 OK"
    out = {}
    for line in r["body"].splitlines():
        m = SAMPLE.match(line)
        if not m:
            continue
        labels = dict(LABEL.findall(m.group(2)))
        if labels.pop("interface", None) != (ifname or ns.if_rx):
            continue
        labels.pop("severity", None)
        rest = ",".join(f'{k}="{v}"' for k, v in labels.items())
        out[m.group(1) + (f"{{{rest}}}" if rest else "")] = int(m.group(3))
    for tid, series in total_series().items():
        if series in out:
            out[tid] = out[series]
    # a family split by a label also answers by its bare name, with the sum of its series
    for key in list(out):
        if "{" in key and key.split("{")[0] not in out:
            name = key.split("{")[0]
            out[name] = sum(v for k, v in out.items() if k.startswith(name + "{"))
    return out


# RoCEv2 frames: the family, whatever labels may split it
ROCE = "roceval_roce_frames_total"


def rule(rid):
    return f'roceval_violations_total{{rule="{rid}"}}'


class Daemon:
    count = 0

    def __init__(self, ns, conf, port, *args, where=None, wrap=()):
        Daemon.count += 1
        self.ns, self.port = ns, port
        self.out = open(conf.parent / f"daemon{Daemon.count}.out", "w+")
        self.err = open(conf.parent / f"daemon{Daemon.count}.err", "w+")
        self.proc = subprocess.Popen(["nsenter", f"--net=/run/netns/{where or ns.rx}", *wrap, str(ROCEVAL),
                                      "daemon", "--config", str(conf), *args],
                                     stdout=self.out, stderr=self.err)

    def wait_ready(self):
        deadline = time.time() + 20
        while time.time() < deadline:
            assert self.proc.poll() is None, f"daemon exited {self.proc.returncode}: {self.stderr()}"
            if "daemon running" in self.stderr():
                return self
            time.sleep(0.05)
        raise AssertionError(f"daemon not ready: {self.stderr()}")

    def stderr(self):
        self.err.flush()
        self.err.seek(0)
        return self.err.read()

    def json_lines(self):
        self.out.flush()
        self.out.seek(0)
        return [json.loads(line) for line in self.out.read().splitlines()]

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=20)
        return self.proc.returncode


@pytest.fixture
def daemons(netns):
    started = []
    yield started
    for d in started:
        d.stop(signal.SIGKILL)
    # every interface a test makes carries the namespace pair's tag
    for lock in Path("/run/roceval").glob(f"daemon-*{netns.if_rx[-6:]}.lock"):
        lock.unlink()


def write_conf(path, ns, port, *extra):
    path.write_text("# written by test_daemon.py\n"
                    f"interface = {ns.if_rx}\n"
                    f"listen = 127.0.0.1:{port}   # only inside the test namespace\n"
                    "interval = 1\n" + "".join(line + "\n" for line in extra))
    return path


def start(daemons, ns, conf, port, *args, where=None, wrap=()):
    d = Daemon(ns, conf, port, *args, where=where, wrap=wrap)
    daemons.append(d)
    return d.wait_ready()


def test_rejections_by_reason_and_connections(netns, daemons, tmp_path):
    """REJ reasons as a labelled family, and stats --json listing the connections and reasons."""
    c0, c1, c2, c3 = (cm_mad.Conn(a_comm=0x100 + i, a_qpn=0x1000 + i) for i in range(4))
    frames = (c0.handshake() + [c1.req(), c1.rej(28), c2.req(), c2.rej(28), c3.req(), c3.rej(1)])
    port = 9435 + os.getpid() % 1000
    start(daemons, netns, write_conf(tmp_path / "a.conf", netns, port), port)
    send(netns, roce.write_pcap(tmp_path / "cm.pcap", frames))
    assert wait_for(lambda: metrics(netns, port).get("roceval_violations_total{rule=\"cm\"}")
                    == len(frames))
    m = metrics(netns, port)
    rej = {k: v for k, v in m.items() if k.startswith("roceval_cm_rejections_total{")}
    assert rej == {'roceval_cm_rejections_total{reason="consumer"}': 2,
                   'roceval_cm_rejections_total{reason="no_qp"}': 1}
    st = json.loads(run("stats", netns.if_rx, "--json", netns=netns.rx, check=True).stdout)
    assert st["cm_rej_reasons"] == {"no_qp": 1, "consumer": 2}
    (conn,) = st["connections"]
    assert (conn["state"], conn["initiator"]["qpn"], conn["responder"]["qpn"]) == \
        ("established", c0.a_qpn, c0.b_qpn)


def test_latency_histograms(netns, daemons, tmp_path):
    """Each kind a Prometheus histogram: cumulative buckets up to +Inf, _count and _sum, the
    same samples as stats --json shows."""
    c = cm_mad.Conn()
    p = c.b_psn
    frames = c.handshake() + [c.to_b("SEND_ONLY", p + i, 64) for i in range(3)]
    frames += [c.to_a("ACKNOWLEDGE", p + 2), c.to_b("RDMA_READ_REQUEST", p + 3, 0, dmalen=64),
               c.to_a("RDMA_READ_RESPONSE_ONLY", p + 3, 64)]
    # and two SENDs the other way round: one reordered, one PSN late
    frames += [c.to_b("SEND_ONLY", p + 5, 64), c.to_b("SEND_ONLY", p + 4, 64)]
    pcap = roce.write_pcap(tmp_path / "lat.pcap", frames)
    port = 9435 + os.getpid() % 1000
    start(daemons, netns, write_conf(tmp_path / "a.conf", netns, port), port)
    send(netns, pcap)
    # the late SEND is counted once its flow has been idle for reorder_time (a timer)
    assert wait_for(lambda: metrics(netns, port).get(ROCE) == len(frames) and
                    f'roceval_reorder_distance_psns_count{{interface="{netns.if_rx}"}} 1\n' in get(netns, port)["body"])
    body = get(netns, port)["body"]
    assert body.count("# TYPE roceval_latency_seconds histogram") == 1
    assert body.count("# TYPE roceval_reorder_distance_psns histogram") == 1
    reorder = [f'roceval_reorder_distance_psns_bucket{{interface="{netns.if_rx}",le="{le}"}} 1\n' for le in
               ("1", "2", "128", "+Inf")]
    assert all(x in body for x in reorder)
    assert f'roceval_reorder_distance_psns_sum{{interface="{netns.if_rx}"}} 1\n' in body
    st = json.loads(run("stats", netns.if_rx, "--json", netns=netns.rx, check=True).stdout)
    # live, the default (latency_sample=flow) times the first of the three SENDs: the two after it
    # came while it awaited its ACK; the READ, the SEND after it (the late one is never timed)
    for kind, n in (("ack", 1), ("read", 1), ("nak_retx", 0), ("rnr_retry", 0)):
        series = f'roceval_latency_seconds_bucket{{interface="{netns.if_rx}",kind="{kind}",le="'
        buckets = [(le, int(v)) for le, v in re.findall(re.escape(series) + r'([^"]+)"\} (\d+)$', body, re.M)]
        assert buckets[-1] == ("+Inf", n) and len(buckets) == 27, kind
        counts = [v for _, v in buckets]
        assert counts == sorted(counts), kind  # cumulative
        assert [float(le) for le, _ in buckets[:-1]] == [2 ** (10 + b) / 1e9 for b in range(26)]
        # the same samples as the JSON's buckets, each counted up to its upper bound
        assert [sum(b["count"] for b in st["latency"][kind]["buckets"] if b["le_ns"] <= 2 ** (10 + i))
                for i in range(26)] == counts[:-1]
        assert f'roceval_latency_seconds_count{{interface="{netns.if_rx}",kind="{kind}"}} {n}\n' in body
        total = re.search(rf'^roceval_latency_seconds_sum\{{interface="{netns.if_rx}",kind="{kind}"\}} (\S+)$',
                          body, re.M).group(1)
        # printed to the nanosecond (%.9f of whole nanoseconds over 1e9): exactly the JSON's sum
        assert Decimal(total) * 10**9 == st["latency"][kind]["sum_ns"], (total, st["latency"][kind])
    check = subprocess.run(["promtool", "check", "metrics"], input=body, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def test_metrics_after_traffic(netns, daemons, tmp_path, traffic):
    pcap, want = traffic
    port = 9435 + os.getpid() % 1000
    starting = time.time()
    d = start(daemons, netns, write_conf(tmp_path / "a.conf", netns, port), port)
    send(netns, pcap)

    r = get(netns, port)
    scraped = time.time()
    assert r["status"] == "HTTP/1.1 200 OK"
    assert "Content-Type: text/plain; version=0.0.4; charset=utf-8" in r["headers"]
    check = subprocess.run(["promtool", "check", "metrics"], input=r["body"], capture_output=True,
                           text=True)
    assert check.returncode == 0, check.stdout + check.stderr

    m = metrics(netns, port)
    assert m[ROCE] == want["roce"]
    for key in ("icrc_ok", "icrc_bad", "icrc_unchecked", "icrc_skipped", "dropped"):
        assert m[key] == want[key], key
    assert m['roceval_icrc_frames_total{result="bad"}'] == want["icrc_bad"] == 1
    # the senders' own IPv6 chatter may add frames, never remove any
    assert m["roceval_frames_total"] >= want["frames"]
    got_rules = {k[len('roceval_violations_total{rule="'):-2]: v for k, v in m.items()
                 if k.startswith('roceval_violations_total{rule="') and v}
    assert got_rules == nonzero_rules(want) == {"icrc": 1}
    # every total the table exports is served, each as its own series
    assert total_series() and set(total_series()) <= set(want)
    assert all(tid in m for tid in total_series())
    # a table sized for 65536 flows has 1.5 slots a flow
    assert m["roceval_flows"] >= 1 and m["roceval_flows_max"] == 98304
    # byte counters: the RoCEv2 frames' lengths, summed here from the pcap
    roce_frames = [f for f in pcap_frames(pcap) if len(f) > 37 and
                   ((f[12:14] == b"\x08\x00" and f[23] == 17 and f[36:38] == b"\x12\xb7") or
                    (f[12:14] == b"\x86\xdd" and f[20] == 17 and f[56:58] == b"\x12\xb7"))]
    assert len(roce_frames) == want["roce"]
    assert m["roceval_roce_bytes_total"] == want["roce_bytes"] == sum(map(len, roce_frames))
    assert m["roceval_bytes_total"] >= want["bytes"]

    # one family for every rule: the rule and its severity are labels
    body = r["body"]
    # every family served is documented in the daemon's help (and so in the man page)
    served = set(re.findall(r"^# TYPE (roceval_\w+) ", body, re.M))
    documented = {re.sub(r"_bucket$", "", f) for f in served_families()}
    assert served and served <= documented, served - documented
    assert body.count("# TYPE roceval_violations_total counter") == 1
    assert "roceval_rule_" not in body
    for rl in json.loads(run("rules", "--json", check=True).stdout):
        assert f'roceval_violations_total{{interface="{netns.if_rx}",rule="{rl["id"]}",' \
            f'severity="{rl["severity"]}"}}' in body
    # the daemon's start on the wall clock, to the millisecond: between starting it and the scrape
    start_time = float(re.search(r"^roceval_start_time_seconds (\S+)$", body, re.M).group(1))
    assert starting - 0.0005 <= start_time <= scraped + 0.0005, (starting, start_time, scraped)
    assert f'roceval_attached_info{{interface="{netns.if_rx}",mode="native",hook="xdp",' \
        f'prog_id="{xdp_prog_id(netns)}"}} 1' in r["body"]

    # the JSON lines' deltas add up to what was sent
    assert wait_for(lambda: sum(j["delta"].get("roce", 0) for j in d.json_lines()) == want["roce"])
    lines = d.json_lines()
    assert all(j["interface"] == netns.if_rx for j in lines)
    assert sum(j["delta"]["rules"].get("icrc", 0) for j in lines) == 1
    assert lines[-1]["total"]["roce"] == want["roce"]
    assert "psn_gap" not in lines[-1]["total"]["rules"]  # only what moved

    assert get(netns, port, "/nope")["status"] == "HTTP/1.1 404 Not Found"
    assert get(netns, port, "/metrics?x=1")["status"] == "HTTP/1.1 200 OK"
    assert http(netns, port, "POST /metrics HTTP/1.1\\r\\n\\r\\n")["status"] == \
        "HTTP/1.1 405 Method Not Allowed"
    # a request line the server cannot parse: 400, or the connection closed unanswered
    assert http(netns, port, "garbage\\r\\n\\r\\n")["status"] in ("HTTP/1.1 400 Bad Request", "")
    head = http(netns, port, "HEAD /metrics HTTP/1.0\\r\\n\\r\\n")
    assert head["status"] == "HTTP/1.1 200 OK" and head["body"] == ""

    # SIGTERM: exits 0, the program stays attached and counting
    prog = xdp_prog_id(netns)
    assert d.stop() == 0
    assert "left attached" in d.stderr()
    assert xdp_prog_id(netns) == prog
    assert os.path.isdir(pin_dir(netns.if_rx, netns.rx))


# 100 idle connections and 10 slow-loris clients (a header byte every 0.2 s), then timed
# scrapes while they hold on; prints the scrape times as JSON.  Bounded: ends in ~4 s.
CROWD = r"""
import json, socket, sys, threading, time
port, timeout = int(sys.argv[1]), float(sys.argv[2])
idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(100)]
stop = threading.Event()
def loris():
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /metrics HTTP/1.1\r\n")
    while not stop.wait(0.2):
        s.sendall(b"X")
slow = [threading.Thread(target=loris) for _ in range(10)]
for t in slow:
    t.start()
time.sleep(1)
times = []
for _ in range(5):
    t0 = time.time()
    c = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    c.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    buf = b""
    while chunk := c.recv(65536):
        buf += chunk
    times.append((time.time() - t0, buf.split(b"\r\n")[0].decode()))
    c.close()
    time.sleep(0.2)
print(json.dumps(times), flush=True)
sys.stdin.read()  # hold the crowd until the test has looked at the daemon
stop.set()
"""


# How long the daemon keeps an idle connection (user/lib/daemon/http.h).
HTTP_CONN_TIMEOUT_S = int(re.search(r"^#define HTTP_CONN_TIMEOUT_S (\d+)$",
                                    (ROOT / "user" / "lib" / "daemon" / "http.h").read_text(), re.M).group(1))


def proc_status(pid):
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    rss = int(re.search(r"^VmRSS:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text(), re.M).group(1))
    return fds, rss


def test_idle_and_slow_clients_do_not_delay_a_scrape(netns, daemons, tmp_path):
    port = 9435 + os.getpid() % 1000
    d = start(daemons, netns, write_conf(tmp_path / "a.conf", netns, port), port)
    assert get(netns, port)["status"] == "HTTP/1.1 200 OK"
    fds0, rss0 = proc_status(d.proc.pid)
    crowd = subprocess.Popen(["nsenter", f"--net=/run/netns/{netns.rx}", sys.executable, "-c", CROWD,
                              str(port), str(2 * HTTP_CONN_TIMEOUT_S)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        times = json.loads(crowd.stdout.readline())
        fds1, rss1 = proc_status(d.proc.pid)
        print(f"scrapes with 110 clients open: {[round(t, 4) for t, _ in times]} s; "
              f"fds {fds0} -> {fds1}, VmRSS {rss0} -> {rss1} kB")
        assert len(times) == 5
        # A scrape the crowd held up would wait for one of its connections to end: an idle one
        # after the daemon's HTTP_CONN_TIMEOUT_S, a slow one never (the client gives up at twice
        # that).  Anything shorter was not held up, however busy the machine.
        for secs, status in times:
            assert status == "HTTP/1.1 200 OK" and secs < HTTP_CONN_TIMEOUT_S, times
        # one descriptor per open connection, and a few MB at most for 110 of them
        assert fds1 - fds0 <= 110 + 5, (fds0, fds1)
        assert rss1 - rss0 < 16 * 1024, (rss0, rss1)
    finally:
        crowd.communicate("", timeout=30)
    # the crowd gone, its descriptors are released
    assert wait_for(lambda: proc_status(d.proc.pid)[0] <= fds0 + 2, timeout=15), \
        (fds0, proc_status(d.proc.pid))


def test_kill9_restart_continues(netns, daemons, tmp_path, traffic):
    pcap, want = traffic
    port = 9435 + os.getpid() % 1000
    conf = write_conf(tmp_path / "a.conf", netns, port)
    d = start(daemons, netns, conf, port)
    send(netns, pcap)
    before = metrics(netns, port)
    assert before[ROCE] == want["roce"]
    prog = xdp_prog_id(netns)

    d.stop(signal.SIGKILL)
    d2 = start(daemons, netns, conf, port)
    assert "adopted the existing attachment" in d2.stderr()
    assert xdp_prog_id(netns) == prog  # not attached a second time
    after = metrics(netns, port)
    assert after[ROCE] == want["roce"]
    assert after[rule("icrc")] == 1

    send(netns, pcap)
    again = metrics(netns, port)
    assert again[ROCE] == 2 * want["roce"]
    assert again["icrc_ok"] == 2 * want["icrc_ok"]
    assert again[rule("icrc")] == 2
    # the restarted daemon's deltas start from the pinned counters, not from zero
    assert wait_for(lambda: sum(j["delta"].get("roce", 0) for j in d2.json_lines()) == want["roce"])


def test_second_daemon_refuses(netns, daemons, tmp_path):
    port = 9435 + os.getpid() % 1000
    d = start(daemons, netns, write_conf(tmp_path / "a.conf", netns, port), port)
    res = run("daemon", "--config", write_conf(tmp_path / "b.conf", netns, port + 1), netns=netns.rx,
              timeout=20)
    assert res.returncode == 1
    assert res.stderr.strip() == (f"roceval: {netns.if_rx}: already served by another roceval daemon "
                                  f"(pid {d.proc.pid}, lock /run/roceval/daemon-{pin_dir(netns=netns.rx).name}-{netns.if_rx}.lock)")
    assert d.proc.poll() is None
    assert get(netns, port)["status"] == "HTTP/1.1 200 OK"

    # another interface, but the same address: refused before anything is attached
    res = run("daemon", "--listen", f"127.0.0.1:{port}", "--interface", "lo", netns=netns.rx,
              timeout=20)
    assert (res.returncode, res.stderr) == (1, f"roceval: listen 127.0.0.1:{port}: Address already in use\n")
    assert not os.path.exists(pin_dir("lo", netns.rx))


def test_sighup(netns, daemons, tmp_path, traffic):
    pcap, want = traffic
    port = 9435 + os.getpid() % 1000
    conf = write_conf(tmp_path / "a.conf", netns, port, "pmtu = 2048")
    d = start(daemons, netns, conf, port)
    send(netns, pcap)
    # a PMTU of 2048 makes the capture's 1024-byte SEND_FIRST and SEND_MIDDLE payloads illegal
    first_middle = sum(1 for fr in pcap_frames(pcap) if fr[42] in (0x00, 0x01))
    assert first_middle > 0
    assert metrics(netns, port)[rule("payload_length")] == first_middle

    # a broken file: rejected naming its line, the running configuration stays
    conf.write_text(f"interface = {netns.if_rx}\nlisten = 127.0.0.1:{port + 1}\npmtu = 1000\n")
    d.proc.send_signal(signal.SIGHUP)
    assert wait_for(lambda: "reload failed" in d.stderr())
    assert f"roceval: {conf}:3: pmtu=1000: must be 0, 256, 512, 1024, 2048 or 4096" in d.stderr()
    assert d.proc.poll() is None
    send(netns, pcap)
    m = metrics(netns, port)
    assert m[rule("payload_length")] == 2 * first_middle
    assert m[ROCE] == 2 * want["roce"]

    # a good one: new listen address, new setting
    conf.write_text(f"interface = {netns.if_rx}\nlisten = 127.0.0.1:{port + 1}\npmtu = 1024\n")
    d.proc.send_signal(signal.SIGHUP)
    assert wait_for(lambda: "configuration reloaded" in d.stderr())
    d.port = port + 1
    send(netns, pcap)
    m = metrics(netns, port + 1)
    assert m[rule("payload_length")] == 2 * first_middle
    assert m[ROCE] == 3 * want["roce"]
    res = subprocess.run(["nsenter", f"--net=/run/netns/{netns.rx}", sys.executable, "-c", FETCH,
                          str(port), "GET /metrics HTTP/1.0\\r\\n\\r\\n"], capture_output=True)
    assert res.returncode != 0  # the old address is closed


def test_sigterm_detaches_when_configured(netns, daemons, tmp_path):
    conf = tmp_path / "a.conf"
    conf.write_text(f"interface = {netns.if_rx}\ndetach_on_exit = yes\nmode = generic\n")
    d = start(daemons, netns, conf, 9435)
    assert "metrics on 127.0.0.1:9435, every 10s" in d.stderr()  # the defaults
    assert xdp_prog_id(netns) is not None
    assert f'interface="{netns.if_rx}",mode="generic"' in get(netns, 9435)["body"]
    assert d.stop(signal.SIGINT) == 0
    assert f"roceval: {netns.if_rx}: detached" in d.stderr()
    assert xdp_prog_id(netns) is None
    assert "xdp" not in subprocess.run(["ip", "-n", netns.rx, "link", "show", netns.if_rx],
                                       capture_output=True, text=True).stdout
    assert not os.path.exists(pin_dir(netns.if_rx, netns.rx))


def test_config_errors(tmp_path):
    bad = tmp_path / "bad.conf"
    cases = [
        ("interface = eth0\nfoo = 1\n", "2: unknown key 'foo' (see 'roceval help daemon')"),
        ("\n# c\nlisten = localhost:80\n",
         "3: listen = localhost:80: expected IPv4:PORT, [IPv6]:PORT or none"),
        ("interval = 0\n", "1: interval = 0: expected whole seconds, 1-86400"),
        ("mode = fast\n", "1: mode = fast: expected native, generic, auto or tc"),
        ("interface = a/b\n", "1: interface = a/b: not a valid interface name"),
        ("interface = x\ninterface = x\n", "2: interface = x: listed twice"),
        ("just words\n", "1: expected 'key = value', found 'just words'"),
        ("pkeys = 0x8000\n", "1: pkeys=0x8000: a P_Key whose low 15 bits are 0 is invalid"),
        ("detach_on_exit = maybe\n", "1: detach_on_exit = maybe: expected yes or no"),
    ]
    for text, msg in cases:
        bad.write_text(text)
        res = run("daemon", "--config", bad)
        assert res.returncode == 2, text
        assert res.stderr == f"roceval: {bad}:{msg}\n"
    res = run("daemon", "--interval", "x")
    assert res.returncode == 2
    assert "interval = x: expected whole seconds" in res.stderr


def test_missing_interface_fails_cleanly(tmp_path):
    conf = tmp_path / "c.conf"
    conf.write_text("interface = rvnosuch0\nlisten = none\n")
    res = run("daemon", "--config", conf, timeout=20)
    assert res.returncode == 1
    assert res.stderr == "roceval: rvnosuch0: no such interface\n"
    assert not os.path.exists(pin_dir("rvnosuch0"))
    assert not os.path.exists(f"/run/roceval/daemon-{pin_dir().name}-rvnosuch0.lock")  # removed, not left behind


def test_without_libmicrohttpd_only_the_endpoint_is_refused(tmp_path, good_capture):
    """libmicrohttpd is opened by the daemon's endpoint, not linked: where it cannot be opened a
    daemon that would serve says so in one line before it looks at an interface, one that does
    not serve goes on, and a replay judges as before."""
    lib = re.search(r"^\s+libmicrohttpd\.so\.\S+ \(libc6[^)]*\) => (\S+)$",
                    subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout, re.M).group(1)

    def unloadable(*args):
        # a private mount namespace, where the library's file is empty
        return subprocess.run(["unshare", "-m", "sh", "-c", 'mount --bind /dev/null "$1" && shift && exec "$@"',
                               "sh", os.path.realpath(lib), str(ROCEVAL), *map(str, args)],
                              capture_output=True, text=True, timeout=60)

    conf = tmp_path / "c.conf"
    conf.write_text("interface = rvnosuch0\nlisten = 127.0.0.1:9\n")
    res = unloadable("daemon", "--config", conf)
    assert res.returncode == 1
    assert res.stderr == f"roceval: the metrics endpoint needs libmicrohttpd (or --listen none): {lib}: file too short\n"
    res = unloadable("daemon", "--config", conf, "--listen", "none")
    assert (res.returncode, res.stderr) == (1, "roceval: rvnosuch0: no such interface\n")
    res = unloadable("replay", "--json", good_capture[0])
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == json.loads(run("replay", "--json", good_capture[0], check=True).stdout)


def test_help_documents_every_key():
    text = run("help", "daemon", check=True).stdout
    keys = ["interface", "listen", "interval", "mode", "detach_on_exit", "json_log"]
    keys += re.findall(r"^  (\w+)=", run("rules", "--markdown", check=True).stdout, re.M)
    assert len(keys) > 6
    for key in keys:
        assert re.search(rf"^  {key} = ", text, re.M), key


def test_label_values_escaped(netns, daemons, tmp_path):
    """Linux allows '"' and '\\' in interface names: metrics and JSON must escape them."""
    odd = 'rv"\\' + netns.if_rx[-6:]
    netns.ip("link", "add", odd, "type", "veth", "peer", "name", "p" + netns.if_rx[-6:],
             netns=netns.rx)
    try:
        netns.ip("link", "set", odd, "up", netns=netns.rx)
        netns.ip("link", "set", "p" + netns.if_rx[-6:], "up", netns=netns.rx)
        port = 9435 + os.getpid() % 1000
        conf = tmp_path / "odd.conf"
        conf.write_text(f"interface = {odd}\nlisten = 127.0.0.1:{port}\ninterval = 1\n"
                        "mode = generic\n")
        d = start(daemons, netns, conf, port)
        body = get(netns, port)["body"]
        escaped = odd.replace("\\", "\\\\").replace('"', '\\"')
        assert f'roceval_frames_total{{interface="{escaped}"}} ' in body
        check = subprocess.run(["promtool", "check", "metrics"], input=body, capture_output=True,
                               text=True)
        assert check.returncode == 0, check.stdout + check.stderr
        # veth peers exchange IPv6 chatter once up: wait for a JSON line and parse it
        assert wait_for(lambda: d.json_lines(), timeout=15)
        assert d.json_lines()[0]["interface"] == odd
        d.stop()
    finally:
        subprocess.run([str(ROCEVAL), "detach", odd], capture_output=True)
        subprocess.run(["rm", "-rf", str(pin_dir(odd, netns.rx))], capture_output=True)


@pytest.fixture
def deploy():
    return ROOT / "deploy"


def test_deploy_config_files(deploy, tmp_path):
    yaml = pytest.importorskip("yaml", reason="python3-yaml is needed to read the DaemonSet")

    res = run("daemon", "--check", "--config", deploy / "roceval.conf.example", check=True)
    assert res.stdout == f"{deploy / 'roceval.conf.example'}: OK\n"

    docs = list(yaml.safe_load_all((deploy / "roceval-daemonset.yaml").read_text()))
    cm = next(d for d in docs if d["kind"] == "ConfigMap")
    conf = tmp_path / "cm.conf"
    conf.write_text(cm["data"]["roceval.conf"])
    run("daemon", "--check", "--config", conf, check=True)
    ds = next(d for d in docs if d["kind"] == "DaemonSet")
    pod = ds["spec"]["template"]["spec"]
    assert pod["hostNetwork"] is True
    c = pod["containers"][0]
    assert set(c["securityContext"]["capabilities"]["add"]) == {"BPF", "NET_ADMIN", "PERFMON"}
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    vols = {v["name"]: v for v in pod["volumes"]}
    assert mounts["bpffs"] == "/sys/fs/bpf" and vols["bpffs"]["hostPath"]["path"] == "/sys/fs/bpf"
    assert mounts["run"] == "/run/roceval" and vols["run"]["hostPath"]["path"] == "/run/roceval"
    # the image installs the Debian package, which puts the binary in /usr/sbin
    assert c["command"][:2] == ["/usr/sbin/roceval", "daemon"]
    assert c["securityContext"]["privileged"] is False
    assert c["securityContext"]["capabilities"]["drop"] == ["ALL"]

    for args in (["check", "config", deploy / "prometheus.yml"],
                 ["check", "rules", deploy / "roceval-alerts.yml"]):
        res = subprocess.run(["promtool", *map(str, args)], capture_output=True, text=True)
        assert res.returncode == 0, res.stdout + res.stderr

    # every alert has input series and expectations in the unit tests, and they pass
    res = subprocess.run(["promtool", "test", "rules", "roceval-alerts.test.yml"], cwd=deploy,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    alerts = {r["alert"] for g in yaml.safe_load((deploy / "roceval-alerts.yml").read_text())["groups"]
              for r in g["rules"]}
    tests = yaml.safe_load((deploy / "roceval-alerts.test.yml").read_text())["tests"]
    tested = {a["alertname"] for t in tests for a in t["alert_rule_test"] if a["exp_alerts"]}
    assert len(alerts) >= 6 and tested == alerts, alerts ^ tested

    # every dashboard query is valid PromQL over the families the exporter serves
    rules = tmp_path / "dash-rules.yml"
    rules.write_text(json.dumps({"groups": [{"name": "dash", "rules": [
        {"record": f"dash:q{i}", "expr": e} for i, e in enumerate(dashboard_queries(deploy))]}]}))
    res = subprocess.run(["promtool", "check", "rules", str(rules)], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    names = set(re.findall(r"\b(roceval_\w+)\b", " ".join(dashboard_queries(deploy))))
    assert names and names <= served_families(), names - served_families()


def dashboard_queries(deploy, rate_interval="5m"):
    def no_repeated_keys(pairs):
        # json keeps the last of a repeated key: a panel's second "description" hid its first
        keys = [k for k, _ in pairs]
        assert len(keys) == len(set(keys)), keys
        return dict(pairs)

    dash = json.loads((deploy / "grafana-dashboard.json").read_text(), object_pairs_hook=no_repeated_keys)
    exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
    assert len(exprs) >= 10
    return [e.replace("$__rate_interval", rate_interval).replace("$instance", ".*")
            .replace("$interface", ".*") for e in exprs]


def served_families():
    """Every metric name the exporter serves, from the help text and the totals table."""
    text = run("help", "daemon", check=True).stdout
    return set(re.findall(r"\b(roceval_\w+)\b", text)) | \
        {re.sub(r"\{.*", "", s) for s in total_series().values()}


def test_systemd_unit(deploy, tmp_path):
    if not shutil.which("systemd-analyze"):
        pytest.skip("systemd-analyze (Debian package systemd) is not installed")
    unit = tmp_path / "roceval.service"
    unit.write_text((deploy / "roceval.service").read_text().replace("/usr/local/sbin/roceval",
                                                                     str(ROCEVAL)))
    res = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout + res.stderr == "", res.stdout + res.stderr


def test_the_units_capabilities_run_the_daemon(netns, daemons, deploy, tmp_path, traffic):
    """What the unit grants, and no uid 0, is enough: attach, serve, count, leave attached."""
    unit = (deploy / "roceval.service").read_text()
    caps = re.search(r"^AmbientCapabilities=(.*)$", unit, re.M).group(1).split()
    assert re.search(r"^CapabilityBoundingSet=(.*)$", unit, re.M).group(1).split() == caps
    assert re.search(r"^User=(\w+)$", unit, re.M).group(1) != "root"
    setcaps = ",".join("+" + c.removeprefix("CAP_").lower() for c in caps)
    wrap = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
            f"--inh-caps=-all,{setcaps}", f"--ambient-caps=-all,{setcaps}", f"--bounding-set=-all,{setcaps}"]
    port = 9435 + os.getpid() % 1000
    d = start(daemons, netns, write_conf(tmp_path / "a.conf", netns, port), port, wrap=wrap)
    assert f"roceval: {netns.if_rx}: attached (native mode, program {xdp_prog_id(netns)})" in d.stderr()
    pcap, want = traffic
    send(netns, pcap)
    assert wait_for(lambda: metrics(netns, port).get(ROCE) == want["roce"])
    assert d.stop() == 0
    assert xdp_prog_id(netns) is not None
    run("detach", netns.if_rx, netns=netns.rx, check=True)


def test_tc_mode_is_served_with_its_hook(netns, daemons, tmp_path, traffic):
    port = 9435 + os.getpid() % 1000
    d = start(daemons, netns, write_conf(tmp_path / "a.conf", netns, port, "mode = tc"), port)
    assert f"roceval: {netns.if_rx}: attached (tc mode, program " in d.stderr()
    assert xdp_prog_id(netns) is None
    prog = json.loads(run("status", "--json", netns=netns.rx, check=True).stdout)[0]["program_id"]
    body = get(netns, port)["body"]
    assert f'roceval_attached_info{{interface="{netns.if_rx}",mode="tc",hook="tc",prog_id="{prog}"}} 1' in body
    pcap, want = traffic
    send(netns, pcap)
    assert wait_for(lambda: metrics(netns, port).get(ROCE) == want["roce"])
    assert d.stop() == 0
    run("detach", netns.if_rx, netns=netns.rx, check=True)


def test_adopt_all_without_interfaces(netns, daemons, tmp_path):
    port = 9435 + os.getpid() % 1000
    a = start(daemons, netns, write_conf(tmp_path / "a.conf", netns, port), port)
    prog = xdp_prog_id(netns)
    assert a.stop() == 0
    conf = tmp_path / "all.conf"
    conf.write_text(f"listen = 127.0.0.1:{port}\ninterval = 1\n")
    extra = "rx" + netns.if_rx[-6:]
    try:
        # an attachment in the other namespace: its pins are visible, its interface is not
        t = start(daemons, netns, conf, port, "--listen", "none", "--interface", netns.if_tx,
                  where=netns.tx)
        assert t.stop() == 0
        assert os.path.isdir(pin_dir(netns.if_tx, netns.tx))

        # no interface line: serve what is attached here, and only that
        b = start(daemons, netns, conf, port)
        assert f"roceval: {netns.if_rx}: adopted the existing attachment (native mode, " \
            f"program {prog})" in b.stderr()
        labels = set(re.findall(r'^roceval_frames_total\{interface="([^"]*)"',
                                get(netns, port)["body"], re.M))
        assert labels == {netns.if_rx}

        # attached later (by a daemon that then stops): picked up at the next interval
        netns.ip("link", "add", extra, "type", "veth", "peer", "name", "px" + netns.if_rx[-6:],
                 netns=netns.rx)
        c = start(daemons, netns, conf, port, "--listen", "none", "--interface", extra)
        assert c.stop() == 0
        assert wait_for(lambda: f'roceval_frames_total{{interface="{extra}"}}' in
                        get(netns, port)["body"])
        assert f"roceval: {extra}: adopted the existing attachment" in b.stderr()
        assert b.stop() == 0
    finally:
        subprocess.run(["ip", "-n", netns.rx, "link", "del", extra], capture_output=True)
        for ifname, ns in ((extra, netns.rx), (netns.if_tx, netns.tx)):
            subprocess.run(["rm", "-rf", str(pin_dir(ifname, ns))], capture_output=True)


def start_prometheus(netns, port, tmp_path, rule_file=None):
    """A real Prometheus in the receiving namespace, scraping the daemon on `port` every second
    and serving its API on port + 2; with `rule_file`, evaluating those rules every second."""
    conf = {"global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
            "scrape_configs": [{"job_name": "roceval",
                                "static_configs": [{"targets": [f"127.0.0.1:{port}"]}]}]}
    if rule_file:
        conf["global"]["evaluation_interval"] = "1s"
        conf["rule_files"] = [str(rule_file)]
    cfg = tmp_path / "prometheus.yml"
    cfg.write_text(json.dumps(conf))
    return subprocess.Popen(["nsenter", f"--net=/run/netns/{netns.rx}", "prometheus",
                             f"--config.file={cfg}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                             f"--web.listen-address=127.0.0.1:{port + 2}"],
                            stdout=subprocess.DEVNULL, stderr=open(tmp_path / "prometheus.log", "w"))


def test_prometheus_scrapes_it(netns, daemons, tmp_path, traffic):
    """The real thing: Prometheus scrapes the daemon and stores the values it served."""
    if not shutil.which("prometheus"):
        pytest.skip("prometheus (Debian package prometheus) is not installed")
    import encap
    pcap, _ = traffic
    # and a mirror session's frame, for the dashboard's per-session panels
    mirrored = encap.wrap(roce.roce(roce.opcode(roce.RC, "SEND_ONLY"), 16), "erspan2", seq=1)
    pcap = roce.write_pcap(tmp_path / "with-mirror.pcap", pcap_frames(pcap) + [mirrored])
    want = replay_json(pcap)
    assert (want["mirror_frames"], want["rules"]["icrc"]) == (1, 1)
    port = 9435 + os.getpid() % 1000
    start(daemons, netns, write_conf(tmp_path / "a.conf", netns, port), port)
    send(netns, pcap)
    prom = start_prometheus(netns, port, tmp_path)
    try:
        def api(path):
            r = prom_get(netns, port + 2, path)
            assert r["status"].endswith("200 OK"), r
            return json.loads(r["body"])["data"]

        def query(q):
            res = api("/api/v1/query?query=" + urllib.parse.quote(q))["result"]
            return {(s["metric"].get("__name__"), s["metric"].get("interface"),
                     s["metric"].get("rule") or s["metric"].get("result")): s["value"][1]
                    for s in res}

        def scraped(n=1):
            try:
                got = query(f'count_over_time(roceval_frames_total{{interface="{netns.if_rx}"}}[1m])')
                return got and int(next(iter(got.values()))) >= n
            except (AssertionError, ValueError):
                return False
        assert wait_for(scraped, timeout=30), "Prometheus never stored a sample"
        assert query("up") == {("up", None, None): "1"}
        icrc = f'roceval_violations_total{{interface="{netns.if_rx}", rule="icrc"}}'
        assert query(icrc) == {("roceval_violations_total", netns.if_rx, "icrc"): "1"}
        assert query("sum by (interface) (roceval_roce_frames_total)") == \
            {(None, netns.if_rx, None): str(want["roce"])}
        assert query('sum by (result) (roceval_icrc_frames_total)') == \
            {(None, None, r): str(want[f"icrc_{r}"]) for r in ("ok", "bad", "unchecked", "skipped")}
        # every dashboard query runs against what was scraped and returns data
        assert wait_for(lambda: scraped(3), timeout=30)
        # what failed with one family per rule: rate() over every rule at once, by severity
        by_sev = api("/api/v1/query?query=" + urllib.parse.quote(
            "sum by (severity) (rate(roceval_violations_total[1m]))"))["result"]
        assert sorted(r["metric"]["severity"] for r in by_sev) == ["error", "info", "warning"]

        for q in dashboard_queries(ROOT / "deploy", rate_interval="1m"):
            assert query(q), q
    finally:
        prom.terminate()
        prom.wait(timeout=30)


def test_alerts_evaluate_against_live_exporter(netns, daemons, tmp_path):
    """The shipped alert rules loaded into Prometheus next to a live exporter: every rule
    evaluates without error (promtool check rules only checks syntax)."""
    if not shutil.which("prometheus"):
        pytest.skip("prometheus (Debian package prometheus) is not installed")
    port = 9435 + os.getpid() % 1000
    start(daemons, netns, write_conf(tmp_path / "a.conf", netns, port), port)
    shutil.copy(ROOT / "deploy" / "roceval-alerts.yml", tmp_path / "alerts.yml")
    prom = start_prometheus(netns, port, tmp_path, tmp_path / "alerts.yml")
    try:
        def rules():
            try:
                r = prom_get(netns, port + 2, "/api/v1/rules")
            except AssertionError:
                return []
            if not r["status"].endswith("200 OK"):
                return []
            return [r for g in json.loads(r["body"])["data"]["groups"] for r in g["rules"]]

        def scraped():
            try:
                r = prom_get(netns, port + 2, "/api/v1/query?query=roceval_violations_total")
            except AssertionError:
                return False
            return r["status"].endswith("200 OK") and json.loads(r["body"])["data"]["result"]
        assert wait_for(scraped, timeout=30), "Prometheus never stored a sample"
        # each rule evaluated over the scraped series (its health is "unknown" until then)
        assert wait_for(lambda: rules() and all(r["health"] != "unknown" for r in rules()), timeout=30), rules()
        got = rules()
        for r in got:
            assert r["health"] == "ok", (r["name"], r.get("lastError"))
        assert len(got) >= 6
    finally:
        prom.terminate()
        prom.wait(timeout=30)


def test_detach_and_attach_behind_its_back(netns, daemons, tmp_path, traffic):
    pcap, want = traffic
    port = 9435 + os.getpid() % 1000
    d = start(daemons, netns, write_conf(tmp_path / "a.conf", netns, port), port)
    first = xdp_prog_id(netns)
    run("detach", netns.if_rx, netns=netns.rx, check=True)
    assert wait_for(lambda: "the attachment went away" in d.stderr())
    assert netns.if_rx not in get(netns, port)["body"]  # no stale counters served

    # attached again by hand: adopted, counters from the new maps
    run("attach", netns.if_rx, netns=netns.rx, check=True)
    second = xdp_prog_id(netns)
    assert second not in (None, first)
    assert wait_for(lambda: f"adopted the new attachment (program {second})" in d.stderr())
    send(netns, pcap)
    assert metrics(netns, port)[ROCE] == want["roce"]
    assert d.stop() == 0
