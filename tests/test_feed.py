# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""roceval feed: a pcap stream (a pipe from tcpdump or ibdump, or a file) judged by the replay
program as it arrives, with counters pinned under a name as an attachment's are."""
import json
import os
import shutil
import signal
import struct
import subprocess
import time

import pytest

import roce
from conftest import ROCEVAL, ROOT, pcap_frames, real_capture, replay_json, run, wait_for

NAME = "feed-t"
TOTALS = ("frames", "roce", "rocev2_ipv4", "icrc_ok", "icrc_bad", "icrc_unchecked", "icrc_skipped",
          "snapped")


def feed(ns, data, *args, name=NAME, path="-"):
    """`roceval feed NAME PATH` in ns's rx namespace, with data (bytes) on its standard input."""
    cmd = ["nsenter", f"--net=/run/netns/{ns.rx}", str(ROCEVAL), "feed", *args, name, str(path)]
    res = subprocess.run(cmd, input=data, capture_output=True, timeout=120)
    res.stdout, res.stderr = res.stdout.decode(), res.stderr.decode()
    return res


def stats(ns, name=NAME):
    return json.loads(run("stats", "--json", name, netns=ns.rx, check=True).stdout)


def status(ns, name=NAME):
    return json.loads(run("status", "--json", name, netns=ns.rx, check=True).stdout)[0]


def same_counts(got, want):
    for key in TOTALS:
        assert got[key] == want[key], (key, got[key], want[key])
    assert got["rules"] == want["rules"]


def test_a_piped_capture_counts_as_replay_does(netns, good_capture):
    path, _ = good_capture
    res = feed(netns, path.read_bytes())
    assert res.returncode == 0, res.stderr
    assert res.stderr == ""
    want = replay_json(path)
    got = stats(netns)
    same_counts(got, want)
    # timed by the capture, as replay times them: the same latencies to the nanosecond
    assert got["latency"] == want["latency"] and want["latency"]["ack"]["count"] > 0
    st = status(netns)
    assert (st["interface"], st["hook"], st["mode"]) == (NAME, "feed", "feed")
    assert st["latency_clock"] == "capture"
    assert st["feed"]["running"] is False
    assert st["feed"]["ended"] == "end of stream"
    assert st["feed"]["frames"] == want["frames"]
    assert st["feed"]["icrc"] == "checked"
    # the text form names the source and what was decided about its ICRCs
    text = run("status", NAME, netns=netns.rx, check=True).stdout
    assert f"{NAME}: feed, program" in text
    assert "ICRCs valid" in text


def test_top_shows_a_feed(netns, good_capture):
    path, _ = good_capture
    assert feed(netns, path.read_bytes()).returncode == 0
    res = run("top", NAME, "-n", "1", netns=netns.rx, stdin=subprocess.DEVNULL)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[2].startswith(f"{NAME}: feed, program ")
    assert lines[3].split()[:2] == ["frames", str(replay_json(path)["frames"])]


def test_icrc_sample_off_checks_no_icrc(good_capture):
    path, _ = good_capture
    r = replay_json(path, "--set", "icrc_sample=off")
    assert r["roce"] > 0
    assert (r["icrc_skipped"], r["icrc_ok"], r["icrc_bad"]) == (r["roce"], 0, 0)
    res = run("replay", "--set", "icrc_sample=0", path)
    assert res.returncode == 2 and "expected off, or a whole number from 1" in res.stderr


def test_a_file_argument_and_a_second_feed_continue_the_counters(netns, good_capture):
    path, _ = good_capture
    want = replay_json(path)
    assert feed(netns, b"", path=path).returncode == 0
    res = feed(netns, path.read_bytes())
    assert res.returncode == 0, res.stderr
    got = stats(netns)
    assert got["frames"] == 2 * want["frames"]
    assert got["roce"] == 2 * want["roce"]
    assert status(netns)["feed"]["frames"] == want["frames"]  # this feed's own
    assert run("detach", NAME, netns=netns.rx).returncode == 0
    res = run("status", NAME, netns=netns.rx)
    assert res.returncode == 1
    assert "not attached" in res.stderr or "no such" in res.stderr


def test_a_stream_broken_mid_record_ends_in_one_line_and_keeps_its_frames(netns, good_capture):
    path, _ = good_capture
    data = path.read_bytes()
    frames = pcap_frames(path)
    whole = 24 + sum(16 + len(f) for f in frames[:10])
    res = feed(netns, data[:whole + 16 + 20])  # the 11th record's header and 20 of its bytes
    assert res.returncode == 1
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith(f"roceval: {NAME}: the stream broke after 10 frames:"), lines
    assert stats(netns)["frames"] == 10
    st = status(netns)
    assert st["feed"]["running"] is False
    assert st["feed"]["ended"] == "broken stream"


def test_detach_ends_a_running_feed(netns, good_capture):
    path, _ = good_capture
    proc = subprocess.Popen(["nsenter", f"--net=/run/netns/{netns.rx}", str(ROCEVAL), "feed", NAME],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=False)
    try:
        proc.stdin.write(path.read_bytes())  # the stream stays open: the feed waits for more
        proc.stdin.flush()
        assert wait_for(lambda: run("status", NAME, netns=netns.rx).returncode == 0 and
                        stats(netns)["frames"] == len(pcap_frames(path)), timeout=20)
        assert status(netns)["feed"]["running"] is True
        assert run("detach", NAME, netns=netns.rx).returncode == 0
        proc.wait(timeout=20)  # with its standard input still open
        out, err = proc.stdout.read(), proc.stderr.read()
    finally:
        proc.kill()
        proc.stdin.close()
    assert proc.returncode == 0, err
    assert err == b""
    assert out.decode() == f"{NAME}: detached; the feed ends after {len(pcap_frames(path))} frames\n"
    assert run("status", NAME, netns=netns.rx).returncode == 1


def test_bad_input_leaves_nothing_pinned(netns, good_capture, tmp_path):
    res = feed(netns, b"not a capture at all, just words")
    assert res.returncode == 2
    assert len(res.stderr.splitlines()) == 1 and res.stderr.startswith("roceval: "), res.stderr
    other = roce.pcap_bytes([b"\x00" * 60], linktype=147)  # USER0
    res = feed(netns, other)
    assert res.returncode == 2
    assert "link type" in res.stderr and len(res.stderr.splitlines()) == 1, res.stderr
    res = feed(netns, b"", path=tmp_path / "absent.pcap")
    assert res.returncode == 2 and len(res.stderr.splitlines()) == 1, res.stderr
    res = feed(netns, b"", name="bad/name")
    assert res.returncode == 2 and "not a valid name" in res.stderr, res.stderr
    assert run("status", NAME, netns=netns.rx).returncode == 1


def test_a_raw_ip_stream_counts_as_its_ethernet_capture(netns, good_capture, tmp_path):
    """A stream of link type RAW (a tunnel interface's, a cloud capture service's) is read as
    replay reads it: each IP packet given an Ethernet header, every count the Ethernet original's
    but the bytes, 14 fewer a frame."""
    path, _ = good_capture
    frames = pcap_frames(path)
    raw = roce.pcap_bytes([roce.raw_ip(f) for f in frames], linktype=roce.RAW)
    res = feed(netns, raw)
    assert res.returncode == 0, res.stderr
    want = replay_json(path)
    got = stats(netns)
    same_counts(got, want)
    assert got["roce"] > 0


def test_a_name_roceval_is_attached_to_is_refused(netns, good_capture):
    path, _ = good_capture
    run("attach", netns.if_rx, "--mode", "generic", netns=netns.rx, check=True)
    res = feed(netns, path.read_bytes(), name=netns.if_rx)
    assert res.returncode == 1
    assert res.stderr == (f"roceval: {netns.if_rx}: roceval is attached to this interface; "
                          "a feed needs a name of its own\n")
    assert status(netns, netns.if_rx)["hook"] == "xdp"


def ibdump_like(frames):
    """A stream shaped as `ibdump -w -` writes it: Ethernet, microseconds, snap length 10000."""
    return roce.pcap_bytes(frames, snaplen=10000, times=[1e9 + i * 1e-5 for i in range(len(frames))])


def sniffer_like(frames):
    """A stream shaped as tcpdump on the mlx5 sniffer writes it: snap length 262144, each frame's
    source MAC one more than the last's, and every RoCE frame's ICRC wrong, both ways."""
    out = []
    for i, f in enumerate(frames):
        b = bytearray(f)
        b[6:12] = (0x248A07000000 + i).to_bytes(6, "big")
        if len(b) > 42 and b[12:14] == b"\x08\x00" and b[36:38] == (4791).to_bytes(2, "big"):
            b[-1] ^= 0x5A
        out.append(bytes(b))
    return roce.pcap_bytes(out, snaplen=262144, times=[1e9 + i * 1e-5 for i in range(len(out))])


def test_an_ibdump_shaped_stream_is_checked(netns, good_capture):
    path, _ = good_capture
    res = feed(netns, ibdump_like(pcap_frames(path)))
    assert res.returncode == 0, res.stderr
    want = replay_json(path)
    got = stats(netns)
    same_counts(got, want)
    assert got["icrc_ok"] == want["roce"] > 0
    assert status(netns)["feed"]["icrc"] == "checked"


def test_a_sniffer_shaped_stream_raises_no_icrc_alarm(netns, good_capture, tmp_path):
    path, _ = good_capture
    data = sniffer_like(pcap_frames(path))
    (tmp_path / "s.pcap").write_bytes(data)
    offline = replay_json(tmp_path / "s.pcap")
    assert offline["icrc_all_bad_both_directions"] is True
    res = feed(netns, data)
    assert res.returncode == 0, res.stderr
    assert res.stdout.count("ICRC") == 1 and "not the wire's bytes" in res.stdout, res.stdout
    got = stats(netns)
    assert got["roce"] == offline["roce"]
    assert got["icrc_bad"] == 0 and got["rules"]["icrc"] == 0
    assert got["icrc_ok"] == 0
    assert got["icrc_skipped"] == offline["icrc_bad"]
    st = status(netns)
    assert st["feed"]["icrc"] == "off: capture-path artefact"
    assert st["settings"]["icrc_sample"] == "off"
    text = run("status", NAME, netns=netns.rx, check=True).stdout
    assert "not the wire's bytes" in text


def test_a_sniffer_stream_that_starts_with_other_traffic_is_still_told_apart(netns, good_capture, tmp_path):
    """The sniffer copies everything the port carries: a stream may run long before its first
    RoCE frame, and only RoCE frames can show which kind of copy it is."""
    path, _ = good_capture
    other = roce.frame(b"\x00" * 32, dport=53)
    frames = [other] * 5000 + pcap_frames(path)
    (tmp_path / "s.pcap").write_bytes(sniffer_like(frames))
    offline = replay_json(tmp_path / "s.pcap")
    assert offline["icrc_all_bad_both_directions"] is True
    res = feed(netns, (tmp_path / "s.pcap").read_bytes())
    assert res.returncode == 0, res.stderr
    got = stats(netns)
    assert got["frames"] == len(frames)
    assert got["icrc_bad"] == 0 and got["rules"]["icrc"] == 0
    assert got["icrc_skipped"] == offline["icrc_bad"]
    assert status(netns)["feed"]["icrc"] == "off: capture-path artefact"


def test_a_stream_without_roce_leaves_the_icrcs_undecided(netns, tmp_path):
    frames = [roce.frame(b"\x00" * 32, dport=53)] * 10
    res = feed(netns, roce.pcap_bytes(frames))
    assert res.returncode == 0, res.stderr
    assert stats(netns)["frames"] == 10
    assert status(netns)["feed"]["icrc"] == "undecided"
    text = run("status", NAME, netns=netns.rx, check=True).stdout
    assert "undecided: no whole RoCEv2 frame came" in text


@pytest.mark.parametrize("name", ["cx-ibdump-rdmacm-write.pcap", "cx-ibdump-rc-send-16qp-lossy-a.pcap"])
def test_real_ibdump_streams_are_checked(netns, name):
    path = real_capture("realcaps/" + name)
    res = feed(netns, path.read_bytes())
    assert res.returncode == 0, res.stderr
    want = replay_json(path)
    same_counts(stats(netns), want)
    assert want["icrc_ok"] > 0
    assert status(netns)["feed"]["icrc"] == "checked"


@pytest.mark.parametrize("name", ["mlx5sniff-rc-write-small.pcap", "mlx5sniff-uc-send-sg.pcap"])
def test_real_sniffer_streams_are_told_apart(netns, name):
    path = real_capture("realcaps/" + name)
    want = replay_json(path)
    assert want["icrc_all_bad_both_directions"] is True
    res = feed(netns, path.read_bytes())
    assert res.returncode == 0, res.stderr
    got = stats(netns)
    assert got["roce"] == want["roce"]
    assert got["rules"]["icrc"] == 0 and got["icrc_bad"] == 0
    assert got["icrc_skipped"] == want["icrc_bad"]
    assert {k: v for k, v in got["rules"].items() if k != "icrc"} == \
        {k: v for k, v in want["rules"].items() if k != "icrc"}
    assert status(netns)["feed"]["icrc"] == "off: capture-path artefact"


def test_a_live_tcpdump_stream_moves_the_counters_before_it_ends(netns, good_capture):
    path, _ = good_capture
    frames = pcap_frames(path)
    want = replay_json(path)
    shell = (f"tcpdump -i {netns.if_rx} -U -w - -s 0 udp port 4791 2>/dev/null | "
             f"{ROCEVAL} feed {NAME} -")
    proc = subprocess.Popen(["nsenter", f"--net=/run/netns/{netns.rx}", "sh", "-c", shell],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        assert wait_for(lambda: run("status", NAME, netns=netns.rx).returncode == 0, timeout=20)
        time.sleep(0.5)  # tcpdump is listening once its header is out, which the feed waited for
        subprocess.run(["nsenter", f"--net=/run/netns/{netns.tx}", "taskset", "-c", "0",
                        "/usr/bin/python3", "-c",
                        "import socket,sys\n"
                        "from conftest import pcap_frames\n"
                        "s=socket.socket(socket.AF_PACKET,socket.SOCK_RAW)\n"
                        f"s.bind(('{netns.if_tx}',0))\n"
                        f"[s.send(f) for f in pcap_frames('{path}')]\n"],
                       check=True, timeout=60, cwd=ROOT / "tests")
        # counted while the stream still runs: the feed judges what came, not only at its end
        assert wait_for(lambda: stats(netns)["roce"] == want["roce"], timeout=20), stats(netns)
        assert proc.poll() is None
        assert status(netns)["feed"]["running"] is True
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=20)
    got = stats(netns)
    assert got["frames"] == len(frames)
    same_counts(got, want)
    assert status(netns)["feed"]["running"] is False


def test_the_daemon_serves_a_feed_with_its_hook(netns, good_capture, tmp_path):
    from test_daemon import Daemon, get, SAMPLE, LABEL

    path, _ = good_capture
    assert feed(netns, path.read_bytes()).returncode == 0
    port = 19541
    conf = tmp_path / "d.conf"
    conf.write_text(f"listen = 127.0.0.1:{port}\ninterval = 1\n")  # adopt-all
    d = Daemon(netns, conf, port)
    try:
        d.wait_ready()
        body = get(netns, port)["body"]
    finally:
        d.stop(signal.SIGKILL)
    info = [dict(LABEL.findall(m.group(2))) for m in map(SAMPLE.match, body.splitlines())
            if m and m.group(1) == "roceval_attached_info"]
    assert {"interface": NAME, "mode": "feed", "hook": "feed"}.items() <= \
        next(i for i in info if i["interface"] == NAME).items()
    frames = [int(m.group(3)) for m in map(SAMPLE.match, body.splitlines())
              if m and m.group(1) == "roceval_frames_total" and f'interface="{NAME}"' in m.group(2)]
    assert frames == [replay_json(path)["frames"]]


def test_a_trace_samples_what_a_feed_runs(netns, good_capture):
    path, _ = good_capture
    frames = pcap_frames(path)
    assert feed(netns, path.read_bytes()).returncode == 0  # the name, for the trace to wait on
    bad = list(frames)
    bad[5] = bad[5][:-1] + bytes([bad[5][-1] ^ 0xFF])  # one ICRC wrong, one way: a sender's fault
    trace = subprocess.Popen(["nsenter", f"--net=/run/netns/{netns.rx}", str(ROCEVAL), "trace", NAME,
                              "--json", "--count", "1", "--rule", "icrc"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        assert wait_for(lambda: "tracing" in os.read(trace.stderr.fileno(), 4096).decode(), timeout=20)
        res = feed(netns, roce.pcap_bytes(bad))
        assert res.returncode == 0, res.stderr
        out, _ = trace.communicate(timeout=20)
    finally:
        trace.kill()
    sample = json.loads(out.splitlines()[0])
    assert sample["rules"] == ["icrc"]
    got = stats(netns)
    assert got["rules"]["icrc"] == 1
    assert status(netns)["feed"]["icrc"] == "checked"


# --- --rdma: the sniffer opened with libibverbs ---------------------------

def has_verbs():
    return "--rdma is unavailable" not in run("feed", "--rdma", "x", "n").stderr


def test_rdma_help_says_it_has_not_run_on_hardware():
    out = run("help", "feed", check=True).stdout
    assert "--rdma DEV[:PORT]" in out
    assert "has not been run on RDMA hardware" in out


def test_rdma_no_such_device_is_one_line(netns):
    if not has_verbs():
        pytest.skip("this build has no libibverbs")
    res = run("feed", "--rdma", "mlx5_9", NAME, netns=netns.rx)
    assert res.returncode == 1
    assert res.stderr == "roceval: feed --rdma mlx5_9: no such RDMA device (ibv_devices lists them)\n"
    assert run("status", NAME, netns=netns.rx).returncode == 1
    res = run("feed", "--rdma", "mlx5_0:x", NAME, netns=netns.rx)
    assert res.returncode == 2 and "PORT" in res.stderr and len(res.stderr.splitlines()) == 1


def test_rdma_without_privileges_is_one_line(netns):
    if not has_verbs():
        pytest.skip("this build has no libibverbs")
    res = subprocess.run(["nsenter", f"--net=/run/netns/{netns.rx}", "setpriv", "--inh-caps=-net_raw",
                          "--bounding-set=-net_raw", str(ROCEVAL), "feed", "--rdma", "mlx5_0", NAME],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 1
    assert res.stderr == ("roceval: feed --rdma mlx5_0: the sniffer needs CAP_NET_RAW and "
                          "CAP_NET_ADMIN; run as root\n")


@pytest.mark.xdist_group("make")  # copies the build directory, which test_install.py's make writes
def test_a_build_without_libibverbs_says_rdma_is_unavailable(tmp_path):
    out = tmp_path / "out"
    shutil.copytree(ROOT / ".output", out, symlinks=True)
    for o in out.glob("cmd/feed*.o"):
        o.unlink()
    for o in out.glob("lib/feed/*.o"):
        o.unlink()
    (out / "libroceval.a").unlink(missing_ok=True)
    subprocess.run(["make", "-C", str(ROOT), f"OUTPUT={out}", f"BIN={out}/roceval", "IBVERBS=0"],
                   check=True, capture_output=True, timeout=600)
    assert "libibverbs" not in subprocess.run(["ldd", str(out / "roceval")], capture_output=True,
                                              text=True).stdout
    res = subprocess.run([str(out / "roceval"), "feed", "--rdma", "mlx5_0", NAME], capture_output=True,
                         text=True)
    assert res.returncode == 2
    assert res.stderr == ("roceval: feed: --rdma is unavailable: this roceval was built without "
                          "libibverbs (install libibverbs-dev and rebuild)\n")
