# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Live attach on a veth pair: counters, trace, config, status, detach and the errors.

Each test builds its own two namespaces (conftest's `netns`): roceval is
attached to the rx end, frames from a pcap are sent raw (AF_PACKET) from the
tx end, and what the live program counts must be exactly what `roceval
replay` counts for the same pcap.  The kernel may add frames of its own to a
new veth (IPv6 neighbour discovery...), so `frames` is compared with >=,
everything about RoCEv2 exactly.
"""
import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import (ROCEVAL, nonzero_rules, pcap_frames, pin_dir, read_until_closed, replay_json, run,
                      send_pcap, timeless, xdp_prog_id)
N_BAD = 6

# The first N RoCEv2 frames of a pcap with their ICRC stored byte-swapped, or unmasked; with
# "unmasked", the first frame over 128 bytes and then the first of at most 128.
MAKE_BAD = r"""
import sys, zlib
from scapy.utils import rdpcap, wrpcap
from scapy.layers.l2 import Ether
out = []
for p in rdpcap(sys.argv[1]):
    b = bytes(p)
    if b[12:14] != b"\x08\x00" or b[23] != 17 or int.from_bytes(b[36:38], "big") != 4791:
        continue
    if sys.argv[4] == "unmasked" and (len(b) > 128) != (len(out) == 0):
        continue
    end = 14 + int.from_bytes(b[16:18], "big")
    if sys.argv[4] == "swapped":
        icrc = b[end - 4:end][::-1]
    else:  # the ICRC as a sender that forgot to mask the variant fields computes it
        icrc = zlib.crc32(b"\xff" * 8 + b[14:end - 4]).to_bytes(4, "little")
    out.append(Ether(b[:end - 4] + icrc + b[end:]))
    if len(out) == int(sys.argv[3]):
        break
wrpcap(sys.argv[2], out)
"""


@pytest.fixture(scope="module")
def pcaps(tmp_path_factory, good_capture):
    """good (fault-free generated traffic, IPv4, two flows), bad (its first frames, ICRC
    byte-swapped), both; "roce" is how many RoCEv2 frames good holds.  Made once: only read."""
    good, summary = good_capture
    d = tmp_path_factory.mktemp("pcaps")
    bad = d / "bad.pcap"
    both = d / "both.pcap"
    subprocess.run(["/usr/bin/python3", "-c", MAKE_BAD, str(good), str(bad), str(N_BAD), "swapped"], check=True)
    subprocess.run(["/usr/bin/python3", "-c",
                    "import sys\nfrom scapy.utils import rdpcap, wrpcap\n"
                    "wrpcap(sys.argv[3], list(rdpcap(sys.argv[1])) + list(rdpcap(sys.argv[2])))",
                    str(good), str(bad), str(both)], check=True)
    return {"good": good, "bad": bad, "both": both, "roce": summary["expected"]["roce"]}




def send(ns, pcap, tmp_path):
    send_pcap(ns.tx, ns.if_tx, pcap, pace=True)


def stats(ns):
    res = run("stats", "--json", ns.if_rx, netns=ns.rx, check=True)
    lines = res.stdout.splitlines()
    assert len(lines) == 1
    return json.loads(lines[0])


def wait_roce(ns, want, timeout=5.0):
    """Counters once `roce` reaches `want` (frames may still be in flight just after sending)."""
    deadline = time.monotonic() + timeout
    while True:
        s = stats(ns)
        if s["roce"] >= want or time.monotonic() > deadline:
            return s
        time.sleep(0.05)




def attach(ns, *opts):
    res = run("attach", ns.if_rx, *opts, netns=ns.rx, check=True)
    assert re.match(rf"{ns.if_rx}: attached roceval \(program \d+, \w+ mode\)", res.stdout)
    return res


def assert_same_as_replay(live, want):
    assert live["frames"] >= want["frames"]
    for key in ("roce", "icrc_ok", "icrc_bad", "icrc_unchecked", "icrc_skipped", "dropped", "trace_samples",
                "trace_skipped"):
        assert live[key] == want[key], key
    assert live["rules"] == want["rules"]


@pytest.mark.parametrize("mode", ["native", "generic"])
def test_live_counts_equal_replay(netns, pcaps, tmp_path, mode):
    want = replay_json(pcaps["both"])
    assert want["icrc_bad"] == N_BAD and want["roce"] == pcaps["roce"] + N_BAD  # the test means something

    # every request timed, as a replay times them (live, the default times one a round trip a flow)
    attach(netns, "--mode", mode, "latency_sample=1")
    st = json.loads(run("status", "--json", netns=netns.rx, check=True).stdout)
    assert [(s["interface"], s["mode"], s["enforce"]) for s in st] == [(netns.if_rx, mode, False)]
    assert st[0]["program_id"] == xdp_prog_id(netns)

    send(netns, pcaps["both"], tmp_path)
    live = wait_roce(netns, want["roce"])
    assert live["interface"] == netns.if_rx
    assert_same_as_replay(live, want)
    assert set(live["rates"]) == set(want) - {"flows", "icrc_all_bad_both_directions", "cm_rej_reasons", "connections",
                                              "latency", "retransmission", "reorder", "pfc", "cnp_reaction",
                                              "mirrors"} \
        and set(live["rates"]["rules"]) == set(want["rules"])
    assert live["mirrors"] == want["mirrors"] == []
    # the flow table too: same flows, packets, bytes and rules per flow; latencies as many
    # (timed by the clock live, by the capture in a replay)
    assert timeless(live)["flows"] == timeless(want)["flows"] and len(want["flows"]) == 2
    assert timeless(live)["latency"] == timeless(want)["latency"]
    assert live["retransmission"] == want["retransmission"]

    st = json.loads(run("status", "--json", netns.if_rx, netns=netns.rx, check=True).stdout)[0]
    # frames, not RoCE, may still arrive between the two reads: the kernel's own IPv6 router
    # solicitations and MLD reports in the first seconds of the veth
    assert st["roce"] == want["roce"] and st["frames"] >= live["frames"]
    assert st["memory_bytes"] > 0 and st["settings"]["pmtu"] == "0"

    # the table form says the same
    text = run("stats", netns.if_rx, netns=netns.rx, check=True).stdout
    assert re.search(rf"^  icrc_bad +{N_BAD} ", text, re.M)
    assert re.search(rf"^  icrc +{N_BAD} ", text, re.M)


def test_trace_samples_to_pcapng(netns, pcaps, tmp_path):
    attach(netns)
    out = tmp_path / "trace.pcapng"
    trace = subprocess.Popen(
        ["nsenter", f"--net=/run/netns/{netns.rx}", str(ROCEVAL), "trace", netns.if_rx, "--rule", "icrc",
         "--count", "3", "--json", "--pcap", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "tracing" in trace.stderr.readline()  # sampling is on from here
        send(netns, pcaps["both"], tmp_path)
        stdout, stderr = trace.communicate(timeout=10)
    finally:
        if trace.poll() is None:
            trace.kill()
    assert trace.returncode == 0, stderr
    samples = [json.loads(line) for line in stdout.splitlines()]
    assert len(samples) == 3
    for s in samples:
        assert "icrc" in s["rules"]
        assert s["icrc_diagnosis"] == "stored byte-swapped"
        assert int(s["icrc_found"], 16) == int.from_bytes(int(s["icrc_expected"], 16).to_bytes(4, "little"), "big")
        # headers only by default: Ethernet, IPv4, UDP, BTH and the opcode's xTH, never payload
        xth = {"RC ACKNOWLEDGE": 4, "RC SEND_ONLY_WITH_IMMEDIATE": 4, "RC SEND_LAST_WITH_IMMEDIATE": 4,
               "RC SEND_ONLY_WITH_INVALIDATE": 4, "RC SEND_LAST_WITH_INVALIDATE": 4, "RC SEND_FIRST": 0,
               "RC SEND_MIDDLE": 0, "RC SEND_LAST": 0, "RC SEND_ONLY": 0}[s["opcode_name"]]
        assert s["cap_len"] == 14 + 20 + 8 + 12 + xth < s["frame_len"] and s["dport"] == 4791
        assert s["opcode_name"].startswith("RC ")
    assert "3 samples" in stderr

    # Wireshark's reader agrees: three Ethernet frames, cut after their headers, our comment on each
    res = run("tshark", "-r", out, "-T", "fields", "-e", "frame.number", "-e", "frame.len", "-e",
              "frame.cap_len", "-e", "udp.dstport", "-e", "frame.comment", check=True)
    rows = [r.split("\t") for r in res.stdout.strip().splitlines()]
    assert [r[0] for r in rows] == ["1", "2", "3"]
    assert [(int(r[1]), int(r[2]), r[3]) for r in rows] == [(s["frame_len"], s["cap_len"], "4791") for s in samples]
    assert all(r[4].startswith("roceval: icrc") and "(stored byte-swapped)" in r[4] for r in rows)

    # frames sampled before the trace switched sampling off count too (it stops after --count)
    before = stats(netns)
    assert 3 <= before["trace_samples"] <= N_BAD and before["trace_skipped"] == 0
    # sampling is off again: more bad frames are not sampled
    send(netns, pcaps["bad"], tmp_path)
    after = wait_roce(netns, before["roce"] + N_BAD)
    assert after["icrc_bad"] == 2 * N_BAD
    assert (after["trace_samples"], after["trace_skipped"]) == (before["trace_samples"], 0)


def test_trace_text_and_filters(netns, pcaps, tmp_path):
    attach(netns)
    # a QP filter that matches nothing: the bad frames are not sampled
    trace = subprocess.Popen(
        ["nsenter", f"--net=/run/netns/{netns.rx}", str(ROCEVAL), "trace", netns.if_rx, "--qpn", "0xabcdef"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert "tracing" in trace.stderr.readline()
    send(netns, pcaps["bad"], tmp_path)
    wait_roce(netns, N_BAD)
    trace.terminate()
    stdout, stderr = trace.communicate(timeout=10)
    assert trace.returncode == 0 and stdout == "" and "0 samples, 0 skipped" in stderr

    # the text form: one tcpdump-like line per frame
    trace = subprocess.Popen(
        ["nsenter", f"--net=/run/netns/{netns.rx}", str(ROCEVAL), "trace", netns.if_rx, "--addr",
         "192.0.2.1", "--count", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert "tracing" in trace.stderr.readline()
    send(netns, pcaps["bad"], tmp_path)
    stdout, _ = trace.communicate(timeout=10)
    assert trace.returncode == 0
    # the frames were sent once before: on their RC flow they are now a retransmission
    assert re.fullmatch(
        rf"\d\d:\d\d:\d\d\.\d{{6}} {netns.if_rx} 192\.0\.2\.1\.\d+ > 192\.0\.2\.2\.4791: RC \w+ "
        r"dqpn 0x[0-9a-f]{6} psn \d+, length \d+: icrc\S*; icrc expected 0x[0-9a-f]{8} found 0x[0-9a-f]{8} "
        r"\(stored byte-swapped\); retransmission episode from psn \d+ after a timeout\n", stdout)
    assert "192.0.2.1" in stdout


def test_trace_diagnoses_an_unmasked_icrc(netns, tmp_path, good_capture):
    unmasked = tmp_path / "unmasked.pcap"
    subprocess.run(["/usr/bin/python3", "-c", MAKE_BAD, str(good_capture[0]), str(unmasked), "2", "unmasked"],
                   check=True)
    assert nonzero_rules(replay_json(unmasked)).get("icrc") == 2
    long, short = (len(f) for f in pcap_frames(unmasked))
    assert long > 128 >= short
    attach(netns)
    why = "would match if the variant fields were not masked"
    for snaplen in ("9216", "128"):
        trace = subprocess.Popen(
            ["nsenter", f"--net=/run/netns/{netns.rx}", str(ROCEVAL), "trace", netns.if_rx, "--json", "--count",
             "2", "--snaplen", snaplen], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert "tracing" in trace.stderr.readline()
        send(netns, unmasked, tmp_path)
        stdout, _ = trace.communicate(timeout=10)
        samples = [json.loads(line) for line in stdout.splitlines()]
        # with 128 bytes only the short frame is whole
        assert [(smp["frame_len"], smp["cap_len"]) for smp in samples] == \
            [(long, min(long, int(snaplen))), (short, short)]
        # the diagnosis needs the whole datagram, so it is only given when the sample holds it
        assert [smp.get("icrc_diagnosis") for smp in samples] == [why if snaplen == "9216" else None, why]


def test_trace_rate_limit_counts_skipped(netns, pcaps, tmp_path):
    attach(netns, "trace_rate=1", "trace_burst=2")
    trace = subprocess.Popen(
        ["nsenter", f"--net=/run/netns/{netns.rx}", str(ROCEVAL), "trace", netns.if_rx, "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert "tracing" in trace.stderr.readline()
    send(netns, pcaps["bad"], tmp_path)
    s = wait_roce(netns, N_BAD)
    trace.terminate()
    stdout, stderr = trace.communicate(timeout=10)
    # a burst of 2 (and at most one more token per second per CPU) out of 6
    taken = len(stdout.splitlines())
    assert 2 <= taken < N_BAD
    assert s["trace_samples"] + s["trace_skipped"] == N_BAD
    assert f"{taken} samples, {N_BAD - taken} skipped" in stderr

    # SIGTERM switched sampling off: nothing more is sampled or skipped
    send(netns, pcaps["bad"], tmp_path)
    after = wait_roce(netns, 2 * N_BAD)
    assert (after["trace_samples"], after["trace_skipped"]) == (s["trace_samples"], s["trace_skipped"])


def test_killed_trace_is_taken_over(netns, pcaps, tmp_path):
    """SIGKILL leaves sampling on; the next trace says so, takes over and switches it off."""
    attach(netns)
    trace = subprocess.Popen(["nsenter", f"--net=/run/netns/{netns.rx}", str(ROCEVAL), "trace", netns.if_rx],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert "tracing" in trace.stderr.readline()
    trace.kill()
    trace.communicate()
    send(netns, pcaps["bad"], tmp_path)
    s = wait_roce(netns, N_BAD)
    assert s["trace_samples"] == N_BAD  # still sampling, nobody reading

    trace = subprocess.Popen(["nsenter", f"--net=/run/netns/{netns.rx}", str(ROCEVAL), "trace", netns.if_rx,
                              "--count", "1", "--json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert re.match(rf"roceval: {netns.if_rx}: a trace that was killed \(pid \d+\) left sampling on; "
                    "taking over$", trace.stderr.readline())
    trace.terminate()
    trace.communicate(timeout=10)
    send(netns, pcaps["bad"], tmp_path)
    after = wait_roce(netns, 2 * N_BAD)
    assert after["trace_samples"] == s["trace_samples"]


def test_several_traces_on_one_interface(netns, pcaps, tmp_path):
    """Like tcpdump: two traces on one interface both get every sample; one ending leaves the
    other running; more than the slots are refused; no lock file is left behind."""
    attach(netns)
    procs = []

    def start(*opts):
        p = subprocess.Popen(["nsenter", f"--net=/run/netns/{netns.rx}", str(ROCEVAL), "trace", netns.if_rx,
                              "--json", *opts], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(p)
        assert "tracing" in p.stderr.readline()
        return p

    try:
        a, b = start(), start("--rule", "icrc")
        send(netns, pcaps["bad"], tmp_path)
        s = wait_roce(netns, N_BAD)
        assert s["trace_samples"] == 2 * N_BAD  # each frame to each trace
        b.terminate()
        out_b, err_b = b.communicate(timeout=10)
        assert len(out_b.splitlines()) == N_BAD and f"{N_BAD} samples, 0 skipped" in err_b

        # b gone, a still samples
        send(netns, pcaps["bad"], tmp_path)
        wait_roce(netns, 2 * N_BAD)
        others = [start() for _ in range(3)]  # a and three more: every slot taken
        full = run("trace", netns.if_rx, netns=netns.rx, timeout=10)
        assert (full.returncode, full.stderr) == \
            (1, f"roceval: {netns.if_rx}: 4 traces already run on this interface; stop one first\n")
        for p in others + [a]:
            p.terminate()
        out_a, _ = a.communicate(timeout=10)
        for p in others:
            p.communicate(timeout=10)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    samples = [json.loads(line) for line in out_a.splitlines()]
    assert len(samples) == 2 * N_BAD and all(smp["interface"] == netns.if_rx for smp in samples)

    # all gone: sampling is off again, and the lock file was removed
    send(netns, pcaps["bad"], tmp_path)
    after = wait_roce(netns, 3 * N_BAD)
    assert after["trace_samples"] == s["trace_samples"] + N_BAD
    assert not list(Path("/run/roceval").glob(f"*{netns.if_rx}*"))


def test_config_is_seen_by_the_running_program(netns, pcaps, tmp_path):
    attach(netns)
    send(netns, pcaps["good"], tmp_path)
    before = wait_roce(netns, pcaps["roce"])
    assert nonzero_rules(before) == {}

    res = run("config", netns.if_rx, "pmtu=2048", netns=netns.rx, check=True)
    assert re.search(r"^  pmtu +2048$", res.stdout, re.M)
    send(netns, pcaps["good"], tmp_path)
    after = wait_roce(netns, 2 * pcaps["roce"])
    # every SEND_FIRST and SEND_MIDDLE carries 1024 bytes, illegal at pmtu 2048; replay counts them,
    # and the live program, told at run time, agrees
    first_middle = sum(1 for f in pcap_frames(pcaps["good"]) if f[42] in (0x00, 0x01))
    assert first_middle > 0
    assert replay_json(pcaps["good"], "--pmtu", "2048")["rules"]["payload_length"] == first_middle
    assert after["rules"]["payload_length"] == first_middle

    # a bad value is refused with the reason, and nothing changes
    res = run("config", netns.if_rx, "enforce=on", "pmtu=300", netns=netns.rx)
    assert res.returncode == 2
    assert res.stderr.startswith("roceval config: pmtu=300: must be 0, 256, 512, 1024, 2048 or 4096")
    st = json.loads(run("status", "--json", netns.if_rx, netns=netns.rx, check=True).stdout)[0]
    assert st["settings"]["pmtu"] == "2048" and st["enforce"] is False


def test_detach_leaves_nothing(netns):
    attach(netns, "--mode", "generic")
    assert xdp_prog_id(netns) is not None
    res = run("detach", netns.if_rx, netns=netns.rx, check=True)
    assert res.stdout == f"{netns.if_rx}: detached roceval\n"
    assert xdp_prog_id(netns) is None
    out = subprocess.run(["ip", "-n", netns.rx, "link", "show", netns.if_rx], check=True,
                         capture_output=True, text=True).stdout
    assert "xdp" not in out
    assert not pin_dir(netns.if_rx, netns.rx).exists()

    res = run("detach", netns.if_rx, netns=netns.rx)
    assert (res.returncode, res.stderr) == (1, f"roceval: {netns.if_rx}: roceval is not attached\n")
    res = run("stats", netns.if_rx, netns=netns.rx)
    assert res.returncode == 1 and "roceval is not attached" in res.stderr


def test_attach_missing_interface(netns):
    res = run("attach", "rvnosuch0", netns=netns.rx)
    assert (res.returncode, res.stdout, res.stderr) == (1, "", "roceval: rvnosuch0: no such interface\n")
    assert not pin_dir("rvnosuch0", netns.rx).exists()
    res = run("attach", netns.if_rx, "pmtu=3", netns=netns.rx)
    assert res.returncode == 2 and "pmtu=3: must be" in res.stderr
    assert xdp_prog_id(netns) is None


def test_attach_twice_names_the_program(netns, tmp_path):
    attach(netns)
    prog = xdp_prog_id(netns)
    res = run("attach", netns.if_rx, netns=netns.rx)
    assert res.returncode == 1
    assert res.stderr == (f"roceval: {netns.if_rx}: roceval is already attached (program {prog}); "
                          f"'roceval detach {netns.if_rx}' first\n")
    assert xdp_prog_id(netns) == prog
    run("detach", netns.if_rx, netns=netns.rx, check=True)

    # someone else's XDP program: named by id and name, and left alone
    src = tmp_path / "other.bpf.c"
    src.write_text('__attribute__((section("xdp"), used))\n'
                   'int other_pass(void *ctx) { return 2; /* XDP_PASS */ }\n'
                   'char _license[] __attribute__((section("license"), used)) = "GPL";\n')
    obj = tmp_path / "other.bpf.o"
    subprocess.run(["clang", "-O2", "-target", "bpf", "-c", str(src), "-o", str(obj)], check=True)
    subprocess.run(["ip", "-n", netns.rx, "link", "set", "dev", netns.if_rx, "xdpgeneric", "obj", str(obj),
                    "sec", "xdp"], check=True)
    other = xdp_prog_id(netns)
    res = run("attach", netns.if_rx, netns=netns.rx)
    assert res.returncode == 1
    assert res.stderr == (f"roceval: {netns.if_rx}: already has XDP program {other} (other_pass); "
                          "detach it or use --multiprog\n")
    assert xdp_prog_id(netns) == other
    assert not pin_dir(netns.if_rx, netns.rx).exists()


def test_status_and_top_without_a_tty(netns, pcaps, tmp_path):
    attach(netns, "enforce=on")
    send(netns, pcaps["bad"], tmp_path)
    s = wait_roce(netns, N_BAD)
    assert s["dropped"] == N_BAD  # enforce drops what breaks an error rule

    text = run("status", netns.if_rx, netns=netns.rx, check=True).stdout
    assert re.search(r"^  enforce +ON: frames breaking error rules are DROPPED$", text, re.M)
    assert re.search(rf"^  roce +{N_BAD}$", text, re.M)

    res = run("top", netns.if_rx, "-n", "2", "-d", "0.2", netns=netns.rx, check=True, stdin=subprocess.DEVNULL)
    assert "\033[" not in res.stdout  # no escape sequences when not on a terminal
    assert res.stdout.count("roceval top - ") == 2
    # the first screen has no interval to measure a current rate over yet; the second has
    assert re.search(rf"^  icrc +{N_BAD} +- +[\d.]+ error$", res.stdout, re.M)
    assert re.search(rf"^  icrc +{N_BAD} +0\.0 +[\d.]+ error$", res.stdout, re.M)
    # the flow table: both flows of the capture broke rules, and both are the busiest
    flows = stats(netns)["flows"]
    assert len(flows) == 2 and sum(f["violations"] for f in flows) >= N_BAD
    for f in flows:
        assert re.search(rf"^  {re.escape(f['src'])} > {re.escape(f['dst'])} qp 0x{f['dqpn']:x} +{f['packets']} ",
                         res.stdout, re.M)
    assert "(2 flows in the table)" in res.stdout


def test_top_on_a_terminal_quits_on_q(netns):
    """Redraws in place on a tty, `q` quits, and the terminal is put back as it was."""
    import os
    import pty
    import select
    import termios

    attach(netns)
    pid, fd = pty.fork()
    if pid == 0:
        os.execvpe("nsenter", ["nsenter", f"--net=/run/netns/{netns.rx}", str(ROCEVAL), "top", netns.if_rx,
                               "-d", "0.2"], {**os.environ, "TERM": "xterm"})
    before = termios.tcgetattr(fd)
    out = b""
    deadline = time.monotonic() + 10
    while b"q quit" not in out and time.monotonic() < deadline:
        if select.select([fd], [], [], 0.5)[0]:
            out += os.read(fd, 65536)
    first = len(out)
    while len(out) == first and time.monotonic() < deadline:  # redrawn: the clock moves
        if select.select([fd], [], [], 0.5)[0]:
            out += os.read(fd, 65536)
    assert b"roceval top - " in out and b"q quit" in out and len(out) > first
    assert b"\033[?1049h" in out  # the alternate screen (xterm's smcup)
    assert not termios.tcgetattr(fd)[3] & termios.ICANON  # raw while running
    os.write(fd, b"q")
    out += read_until_closed(fd)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert b"\033[?1049l" in out  # the shell's screen back (rmcup)
    assert termios.tcgetattr(fd)[3] & termios.ICANON


def test_stats_watch(netns, pcaps, tmp_path):
    attach(netns)
    t0 = time.monotonic()
    watch = subprocess.Popen(["nsenter", f"--net=/run/netns/{netns.rx}", str(ROCEVAL), "stats", netns.if_rx,
                              "--json", "--watch", "0.3", "--top", "0"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    reports = [json.loads(watch.stdout.readline())]
    send(netns, pcaps["bad"], tmp_path)
    # reports until the frames are all counted and two intervals were reported, not for a fixed
    # time that a busy machine could outlast
    deadline = time.monotonic() + 30
    while (len(reports) < 3 or reports[-1]["roce"] < N_BAD) and time.monotonic() < deadline:
        reports.append(json.loads(watch.stdout.readline()))
    watch.terminate()
    stdout, stderr = watch.communicate(timeout=10)
    t1 = time.monotonic()
    assert watch.returncode == 0 and stderr == ""
    first = reports[0]
    reports += [json.loads(line) for line in stdout.splitlines()]
    assert len(reports) >= 3 and "flows" not in first
    assert first["rates_since_attach"] is True
    # each interval is the 0.3 s nap and a read, at least 0.300 once printed, and they follow one
    # another within the test's own time
    later = reports[1:]
    assert all(r["rates_since_attach"] is False and r["rates_seconds"] >= 0.3 for r in later)
    assert sum(r["rates_seconds"] for r in later) <= t1 - t0 + len(later) * 0.0005
    assert reports[-1]["roce"] == reports[-1]["icrc_bad"] == N_BAD
    # The rates add up to what moved.  Each report's rate times its interval is that interval's
    # count, a whole number; both are printed to 3 decimals, each within HALF of what was
    # multiplied, so the product is off by at most HALF * (seconds + rate + HALF).  Under 0.5,
    # rounding recovers the count exactly, and the counts sum to the frames sent.
    half = 0.0005
    for prev, r in zip(reports, later):
        product, count = r["rates"]["icrc_bad"] * r["rates_seconds"], r["icrc_bad"] - prev["icrc_bad"]
        bound = half * (r["rates_seconds"] + r["rates"]["icrc_bad"] + half) + 1e-9
        assert bound < 0.5 and abs(product - count) <= bound, (r, count)
    assert sum(round(r["rates"]["icrc_bad"] * r["rates_seconds"]) for r in later) == N_BAD


@pytest.mark.parametrize("args", [["attach", "lo"], ["detach", "lo"], ["status"], ["stats"], ["top", "-n", "1"],
                                  ["trace", "--count", "1"], ["config", "lo", "pmtu=1024"]])
def test_needs_root(args):
    res = run("/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", ROCEVAL, *args)
    assert (res.returncode, res.stdout) == (1, "")
    assert res.stderr == ("roceval: needs CAP_BPF, CAP_NET_ADMIN and CAP_PERFMON, and CAP_DAC_OVERRIDE "
                          "unless uid 0 (missing: CAP_BPF CAP_NET_ADMIN CAP_PERFMON CAP_DAC_OVERRIDE); "
                          "run as root or grant them\n")


# Another XDP program, as a DDoS filter or load balancer on a production NIC would be.
OTHER_XDP = r"""
struct xdp_md;
__attribute__((section("xdp"), used)) int other_pass(struct xdp_md *ctx) { return 2; /* XDP_PASS */ }
char _license[] __attribute__((section("license"), used)) = "GPL";
"""


def attach_other_xdp(ns, how, tmp_path):
    """Attaches a pass-everything XDP program to the rx interface; returns its program id."""
    src, obj = tmp_path / "other.c", tmp_path / "other.o"
    src.write_text(OTHER_XDP)
    subprocess.run(["clang", "-target", "bpf", "-O2", "-g", "-c", src, "-o", obj], check=True)
    if how == "ip":
        subprocess.run(["ip", "-n", ns.rx, "link", "set", "dev", ns.if_rx, "xdp", "obj", obj, "sec", "xdp"],
                       check=True, capture_output=True)
    else:
        if not shutil.which("xdp-loader"):
            pytest.skip("xdp-loader (Debian package xdp-tools) is not installed")
        run("/usr/sbin/xdp-loader", "load", "-m", "native", ns.if_rx, obj, netns=ns.rx, check=True)
    prog = xdp_prog_id(ns)
    assert prog is not None
    return prog


@pytest.mark.parametrize("how", ["ip", "libxdp"])
def test_multiprog_beside_another_program(netns, pcaps, tmp_path, how):
    """Beside another XDP program: attach succeeds, counts equal replay, detach leaves it in place."""
    want = replay_json(pcaps["both"])
    other = attach_other_xdp(netns, how, tmp_path)
    res = run("attach", netns.if_rx, netns=netns.rx)
    assert (res.returncode, res.stderr) == (1, f"roceval: {netns.if_rx}: already has XDP program {other} "
                                               "(other_pass); detach it or use --multiprog\n")

    res = run("attach", netns.if_rx, "--multiprog", netns=netns.rx, check=True)
    st = json.loads(run("status", "--json", netns.if_rx, netns=netns.rx, check=True).stdout)[0]
    if st["hook"] == "xdp":  # libxdp's dispatcher runs here: both programs are its components
        assert st["multiprog"] is True and "libxdp dispatcher" in res.stdout
        # the dispatcher's components are not bound to the device: a tag the NIC stripped is not seen
        assert st["pcp_source"] == "frame_tag"
    else:  # the kernel refuses freplace, or the other program is not a dispatcher's
        assert (st["hook"], st["mode"], st["multiprog"], st["pcp_source"]) == ("tc", "tc", False, "skb_tag")
        assert xdp_prog_id(netns) == other
        assert res.stdout.startswith(f"{netns.if_rx}: attached roceval (program {st['program_id']}, tc mode)")
        assert res.stderr == (f"roceval: {netns.if_rx}: libxdp's dispatcher cannot run here (-v says why): "
                              "attached at tc ingress instead, where it sees what the XDP program passes on\n")
        text = run("status", netns.if_rx, netns=netns.rx, check=True).stdout
        assert text.startswith(f"{netns.if_rx}: tc ingress (tcx link), program {st['program_id']}, ")

    send(netns, pcaps["both"], tmp_path)
    assert_same_as_replay(wait_roce(netns, want["roce"]), want)

    run("detach", netns.if_rx, netns=netns.rx, check=True)
    assert xdp_prog_id(netns) == other
    assert not pin_dir(netns.if_rx, netns.rx).exists()


def test_tc_mode_counts_equal_replay(netns, pcaps, tmp_path):
    """--mode tc by itself: the same validation at tc ingress, and nothing at the XDP hook."""
    want = replay_json(pcaps["both"])
    res = run("attach", netns.if_rx, "--mode", "tc", "latency_sample=1", netns=netns.rx, check=True)
    assert res.stderr == "" and xdp_prog_id(netns) is None
    st = json.loads(run("status", "--json", netns=netns.rx, check=True).stdout)
    assert [(s["interface"], s["hook"], s["mode"]) for s in st] == [(netns.if_rx, "tc", "tc")]
    send(netns, pcaps["both"], tmp_path)
    live = wait_roce(netns, want["roce"])
    assert_same_as_replay(live, want)
    assert timeless(live)["flows"] == timeless(want)["flows"]

    # trace reads the socket buffer as it reads an XDP buffer
    trace = subprocess.Popen(
        ["nsenter", f"--net=/run/netns/{netns.rx}", str(ROCEVAL), "trace", netns.if_rx, "--count", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert "tracing" in trace.stderr.readline()
    send(netns, pcaps["bad"], tmp_path)
    stdout, _ = trace.communicate(timeout=10)
    assert trace.returncode == 0
    assert re.fullmatch(rf"\d\d:\d\d:\d\d\.\d{{6}} {netns.if_rx} {netns.addr_tx}\.\d+ > {netns.addr_rx}\.4791: "
                        r"RC \w+ dqpn 0x[0-9a-f]{6} psn \d+, length \d+: icrc\S*; icrc expected 0x[0-9a-f]{8} "
                        r"found 0x[0-9a-f]{8} \(stored byte-swapped\); retransmission episode from psn \d+ "
                        r"after a timeout\n", stdout)  # its frames were sent before, in "both"
    run("detach", netns.if_rx, netns=netns.rx, check=True)
    assert not pin_dir(netns.if_rx, netns.rx).exists()


def test_deleted_interface_leaves_stale_pins_that_attach_and_detach_handle(netns):
    attach(netns)
    netns.ip("link", "del", netns.if_rx, netns=netns.rx)
    st = json.loads(run("status", "--json", netns.if_rx, netns=netns.rx, check=True).stdout)[0]
    assert st["stale"] is True
    text = run("status", netns.if_rx, netns=netns.rx, check=True).stdout
    assert f"STALE: the interface it was attached to is gone; 'roceval detach {netns.if_rx}' removes the pins" in text
    # plain status lists it too, marked: its pins still hold memory
    st = json.loads(run("status", "--json", netns=netns.rx, check=True).stdout)
    assert [(s["interface"], s["stale"]) for s in st] == [(netns.if_rx, True)]

    # a new interface of the same name: attach replaces the leftover pins
    netns.ip("link", "add", netns.if_rx, "type", "veth", "peer", "name", netns.if_rx + "p", netns=netns.rx)
    attach(netns)
    st = json.loads(run("status", "--json", netns.if_rx, netns=netns.rx, check=True).stdout)[0]
    assert st["stale"] is False and st["program_id"] == xdp_prog_id(netns)
    netns.ip("link", "del", netns.if_rx, netns=netns.rx)
    run("detach", netns.if_rx, netns=netns.rx, check=True)
    assert not pin_dir(netns.if_rx, netns.rx).exists()


def test_an_attachment_by_another_build_is_refused_before_its_maps_are_read(netns):
    """A lookup copies the map's value size into the reader's struct: pins whose layout is not
    this build's (an upgrade while attached) must be refused, not read past the struct's end."""
    attach(netns)
    sets = pin_dir(netns.if_rx, netns.rx) / "flow_sets"
    sets.unlink()
    # another build's sets: 24-byte values where this build's are 32
    subprocess.run(["bpftool", "map", "create", str(sets), "type", "array", "key", "4", "value", "24",
                    "entries", "1", "name", "flow_sets"], check=True)
    want = (f"roceval: {netns.if_rx}: attached by another build of roceval (its flow_sets map holds "
            f"24-byte values, this build's 32); 'roceval detach {netns.if_rx}' and attach again\n")
    for args in (("status", netns.if_rx), ("stats", netns.if_rx), ("config", netns.if_rx), ("status",)):
        res = run(*args, netns=netns.rx)
        assert (res.returncode, res.stdout, res.stderr) == (1, "", want), args
    run("detach", netns.if_rx, netns=netns.rx, check=True)
    assert not pin_dir(netns.if_rx, netns.rx).exists()


def test_trace_pcapng_to_stdout(netns, pcaps, tmp_path):
    """--pcap - writes only the pcapng on stdout, so it pipes into tshark -r -."""
    attach(netns)
    out = tmp_path / "stdout.pcapng"
    before = time.time()
    with open(out, "wb") as f:
        trace = subprocess.Popen(["nsenter", f"--net=/run/netns/{netns.rx}", str(ROCEVAL), "trace", netns.if_rx,
                                  "--count", "2", "--pcap", "-"], stdout=f, stderr=subprocess.PIPE, text=True)
        assert "tracing" in trace.stderr.readline()
        tracing = time.time()
        send(netns, pcaps["bad"], tmp_path)
        _, stderr = trace.communicate(timeout=10)
    after = time.time()
    assert trace.returncode == 0 and "2 samples" in stderr
    res = subprocess.run(["tshark", "-r", "-", "-T", "fields", "-e", "frame.interface_name", "-e", "udp.dstport",
                          "-e", "frame.time_epoch"], stdin=open(out, "rb"), capture_output=True, text=True, check=True)
    rows = [line.split("\t") for line in res.stdout.splitlines()]
    assert [r[:2] for r in rows] == [[netns.if_rx, "4791"]] * 2
    # Nanosecond timestamps on the wall clock, taken while the trace ran.  The trace converts the
    # kernel's monotonic clock by the two clocks' offset, read one after the other before it says
    # "tracing": late by at most the time that took, never early.  A microsecond covers a 10-digit
    # epoch's nanoseconds read into a double.
    late = tracing - before
    assert all(before - 1e-6 <= float(r[2]) <= after + late + 1e-6 for r in rows), (before, rows, after, late)
