# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Privilege and exposure: root-only pins, capabilities rather than uid 0, a metrics endpoint on loopback unless told
otherwise, trace samples without payload unless asked, enforce dropping only error-severity
RoCEv2 violators, and one clear line with exit 1 for every privileged command run unprivileged."""
import json
import signal
import stat
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

import roce
from conftest import PIN_ROOT, ROCEVAL, pin_dir, replay_json, run

NOBODY = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
# without any capability: the pins are root's, so another uid needs CAP_DAC_OVERRIDE besides
ROOT_LINE = ("roceval: needs CAP_BPF, CAP_NET_ADMIN and CAP_PERFMON, and CAP_DAC_OVERRIDE unless uid 0 "
             "(missing: CAP_BPF CAP_NET_ADMIN CAP_PERFMON CAP_DAC_OVERRIDE); run as root or grant them\n")
# replay and bench touch no pins
BPF_LINE = ("roceval: needs CAP_BPF, CAP_NET_ADMIN and CAP_PERFMON (missing: CAP_BPF CAP_NET_ADMIN "
            "CAP_PERFMON); run as root or grant them\n")


def as_nobody(*args, **kw):
    return subprocess.run(NOBODY + [str(a) for a in args], capture_output=True, text=True,
                          timeout=60, cwd="/", **kw)


# --- pins ------------------------------------------------------------------

def test_pins_are_root_only(netns):
    run("attach", netns.if_rx, "--mode", "generic", netns=netns.rx, check=True)
    pins = pin_dir(netns.if_rx, netns.rx)
    for d in (PIN_ROOT, pins.parent, pins):
        st = d.stat()
        assert (stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid) == (0o700, 0, 0), d
    entries = list(pins.iterdir())
    # the program, its link and the maps the CLI and the daemon open
    names = {p.name for p in entries}
    assert {"counters", "settings"} <= names and len(entries) >= 4, names
    for p in entries:
        st = p.lstat()
        assert stat.S_ISREG(st.st_mode), p
        assert (stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid) == (0o600, 0, 0), p
    # nobody else can even look: neither list the pins nor open a map
    res = as_nobody("/bin/ls", pins)
    assert res.returncode != 0 and "Permission denied" in res.stderr
    res = as_nobody("/bin/cat", pins / "counters")
    assert res.returncode != 0 and "Permission denied" in res.stderr

    run("detach", netns.if_rx, netns=netns.rx, check=True)
    assert not pins.exists()
    assert stat.S_IMODE(PIN_ROOT.stat().st_mode) == 0o700


# --- privileges ------------------------------------------------------------

PRIVILEGED = [
    ["replay", "CNP"],  # the cnp_capture fixture: a capture nobody can read would fail first
    ["attach", "lo"],
    ["detach", "lo"],
    ["status"],
    ["stats", "lo"],
    ["top", "-n", "1"],
    ["trace", "lo", "--count", "1"],
    ["config", "lo", "pmtu=1024"],
    ["daemon", "--listen", "none", "--interface", "lo"],
    ["bench"],
]


@pytest.mark.parametrize("args", PRIVILEGED, ids=lambda a: a[0])
def test_unprivileged_gets_one_line_and_exit_1(args, cnp_capture):
    res = as_nobody(ROCEVAL, *[cnp_capture if a == "CNP" else a for a in args])
    want = BPF_LINE if args[0] in ("replay", "bench") else ROOT_LINE
    assert (res.returncode, res.stdout, res.stderr) == (1, "", want)


def test_unprivileged_gen_to_an_interface():
    """gen -i needs a raw socket: refused by the kernel, said in one line, exit 1."""
    res = as_nobody(ROCEVAL, "gen", "-i", "lo", "--count", "1", "--seed", "1")
    assert res.returncode == 1 and res.stdout == ""
    assert res.stderr.count("\n") == 1 and res.stderr.startswith("roceval: ")
    assert "Operation not permitted" in res.stderr


def test_unprivileged_commands_that_need_nothing():
    """What needs no privilege works without it: the rule table, help, writing a capture."""
    assert as_nobody(ROCEVAL, "rules").returncode == 0
    assert as_nobody(ROCEVAL, "help", "attach").returncode == 0
    assert as_nobody(ROCEVAL, "--version").returncode == 0
    with tempfile.TemporaryDirectory(prefix="roceval-nobody-") as d:  # pytest's tmp_path is 0700
        out = Path(d)
        out.chmod(0o777)
        res = as_nobody(ROCEVAL, "gen", "-w", out / "x.pcap", "--count", "10", "--seed", "1")
        assert res.returncode == 0, res.stderr
        assert (out / "x.pcap").stat().st_size > 24


CAPS = "+bpf,+net_admin,+perfmon"


def with_caps(caps, *args, uid=65534, netns=None):
    """args run as uid with exactly caps: ambient for another uid, the bounding set for uid 0."""
    if uid:
        pre = ["/usr/bin/setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
               f"--inh-caps=-all,{caps}", f"--ambient-caps=-all,{caps}"]
    else:
        pre = ["/usr/bin/setpriv", "--inh-caps=-all", f"--bounding-set=-all,{caps}"]
    if netns:
        pre = ["nsenter", f"--net=/run/netns/{netns}"] + pre
    return subprocess.run(pre + [str(a) for a in args], capture_output=True, text=True, timeout=60,
                          cwd="/")


@pytest.mark.parametrize("uid, caps", [(0, CAPS), (65534, CAPS + ",+dac_override")],
                         ids=["uid0", "nobody"])
def test_capabilities_are_enough(netns, uid, caps, good_capture):
    """The capabilities the help names, and not uid 0, run every live command end to end."""
    res = with_caps(caps, ROCEVAL, "attach", netns.if_rx, "--mode", "generic", uid=uid, netns=netns.rx)
    assert res.returncode == 0, res.stderr
    for args in (["status", "--json"], ["stats", "--json", netns.if_rx], ["config", netns.if_rx, "pmtu=1024"],
                 ["top", "-n", "1"]):
        res = with_caps(caps, ROCEVAL, *args, uid=uid, netns=netns.rx)
        assert res.returncode == 0 and res.stderr == "", (args, res.stderr)
    st = json.loads(with_caps(caps, ROCEVAL, "status", "--json", uid=uid, netns=netns.rx).stdout)[0]
    assert st["settings"]["pmtu"] == "1024" and st["memory_bytes"] > 20 << 20
    res = with_caps(caps, ROCEVAL, "detach", netns.if_rx, uid=uid, netns=netns.rx)
    assert (res.returncode, res.stderr) == (0, "")
    assert not pin_dir(netns.if_rx, netns.rx).exists()
    # replay needs no pins, so no CAP_DAC_OVERRIDE either
    res = with_caps(CAPS, ROCEVAL, "replay", "--json", good_capture[0], uid=uid)
    assert res.returncode == 0 and json.loads(res.stdout)["roce"] > 0, res.stderr


@pytest.mark.parametrize("uid, caps, missing", [
    (0, "+bpf,+net_admin", "CAP_PERFMON"),
    (0, "+bpf,+perfmon", "CAP_NET_ADMIN"),
    (65534, CAPS, "CAP_DAC_OVERRIDE"),
], ids=["no-perfmon", "no-net-admin", "nobody-without-dac-override"])
def test_a_missing_capability_is_named(netns, uid, caps, missing):
    res = with_caps(caps, ROCEVAL, "attach", netns.if_rx, uid=uid, netns=netns.rx)
    extra = ", and CAP_DAC_OVERRIDE unless uid 0" if uid else ""
    assert (res.returncode, res.stdout, res.stderr) == (
        1, "", f"roceval: needs CAP_BPF, CAP_NET_ADMIN and CAP_PERFMON{extra} (missing: {missing}); "
               "run as root or grant them\n")
    assert not pin_dir(netns.if_rx, netns.rx).exists()


# --- the metrics endpoint --------------------------------------------------

def listening(ns):
    out = subprocess.run(["ip", "netns", "exec", ns, "ss", "-Hltn"], capture_output=True, text=True,
                         check=True).stdout
    return sorted(line.split()[3] for line in out.splitlines())


def run_daemon(netns, *args):
    proc = subprocess.Popen(["nsenter", f"--net=/run/netns/{netns.rx}", str(ROCEVAL), "daemon",
                             "--interface", netns.if_rx, "--interval", "3600", *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 20
    while time.time() < deadline and proc.poll() is None and not listening(netns.rx):
        time.sleep(0.1)
    return proc


def stop_daemon(proc, netns):
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=20)
    for lock in Path("/run/roceval").glob(f"daemon-*-{netns.if_rx}.lock"):
        lock.unlink()


@pytest.mark.parametrize("listen,want", [(None, "127.0.0.1:9435"), ("0.0.0.0:9436", "0.0.0.0:9436"),
                                         ("[::1]:9437", "[::1]:9437")])
def test_metrics_listen_address(netns, listen, want):
    """Loopback only unless the operator names another address."""
    proc = run_daemon(netns, *(["--listen", listen] if listen else []))
    try:
        assert proc.poll() is None, proc.stderr.read()
        assert listening(netns.rx) == [want]
    finally:
        stop_daemon(proc, netns)


# --- trace -----------------------------------------------------------------

SENDER = r"""
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
s.send(open(sys.argv[2], "rb").read())
"""


def trace_one(netns, tmp_path, frame, *opts):
    run("attach", netns.if_rx, "--mode", "generic", netns=netns.rx, check=True)
    out = tmp_path / "trace.pcapng"
    (tmp_path / "frame").write_bytes(frame)
    trace = subprocess.Popen(["nsenter", f"--net=/run/netns/{netns.rx}", str(ROCEVAL), "trace",
                              netns.if_rx, "--count", "1", "--json", "--pcap", str(out), *opts],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "tracing" in trace.stderr.readline()
        run("/usr/bin/python3", "-c", SENDER, netns.if_tx, tmp_path / "frame", netns=netns.tx, check=True)
        stdout, stderr = trace.communicate(timeout=10)
    finally:
        if trace.poll() is None:
            trace.kill()
    assert trace.returncode == 0, stderr
    sample = json.loads(stdout.splitlines()[0])
    res = run("tshark", "-r", out, "-x", check=True)
    return sample, res.stdout


# An RC SEND_ONLY with 200 bytes of recognisable payload and a bad ICRC: a violation to sample.
SECRET = bytes([0xA5]) * 200
HEADERS = 14 + 20 + 8 + 12  # Ethernet, IPv4, UDP, BTH


def test_trace_carries_headers_only_by_default(netns, tmp_path):
    frame = roce.roce(roce.opcode(roce.RC, "SEND_ONLY"), SECRET, frame_kw={"bad_icrc": True})
    sample, _ = trace_one(netns, tmp_path, frame)
    assert sample["cap_len"] == HEADERS


def test_trace_carries_payload_when_asked(netns, tmp_path):
    frame = roce.roce(roce.opcode(roce.RC, "SEND_ONLY"), SECRET, frame_kw={"bad_icrc": True})
    sample, hexdump = trace_one(netns, tmp_path, frame, "--snaplen", "9216")
    assert (sample["frame_len"], sample["cap_len"]) == (len(frame), len(frame))
    assert "a5 a5 a5 a5" in hexdump


# --- enforce ---------------------------------------------------------------

def enforce_frames():
    """(frames, how many of them enforce must drop): distinct counts per category."""
    op = roce.opcode
    send_only = op(roce.RC, "SEND_ONLY")
    valid = [roce.roce(send_only), roce.roce(op(roce.UD, "SEND_ONLY"), ipv6=True),
             roce.roce(op(roce.RC, "RDMA_WRITE_ONLY"), frame_kw={"vlans": (5,)})]
    info = [roce.cnp(), roce.roce(op(roce.RC, "ACKNOWLEDGE"), syndrome=0x60),  # NAK PSN error
            roce.roce(send_only, frame_kw={"tos": 0x03}),  # ECN CE
            roce.roce(0xC4, 0)]  # vendor opcode
    # warnings only: an IP fragment, and a PSN gap on one QP
    warning = [roce.roce(send_only, frame_kw={"mf": True}),
               roce.roce(send_only, dqpn=0x777, psn=10), roce.roce(send_only, dqpn=0x777, psn=20)]
    error = [roce.roce(send_only, frame_kw={"bad_icrc": True}), roce.roce(send_only, pkey=0x8000),
             roce.roce(send_only, tver=1), roce.roce(0x2C),  # READ request: reserved on UC
             roce.roce(send_only, frame_kw={"cut": 8}),
             roce.roce(op(roce.RC, "RDMA_WRITE_ONLY"), se=True, resv7=1)]
    other = [bytes(roce.Ether() / roce.IP() / roce.UDP(dport=4792) / roce.Raw(bytes(64))),
             bytes(roce.Ether(type=0x0806) / roce.Raw(bytes(46))),
             bytes(roce.Ether() / roce.IP(proto=6) / roce.Raw(bytes(60)))]
    return valid + info + warning + error + other, len(error), len(valid + info + warning + error)


def test_enforce_drops_only_error_violators(tmp_path):
    frames, n_error, n_roce = enforce_frames()
    pcap = roce.write_pcap(tmp_path / "mix.pcap", frames)
    observe = replay_json(pcap)
    roce.check_accounting(observe)
    assert (observe["frames"], observe["roce"], observe["dropped"]) == (len(frames), n_roce, 0)
    enforce = replay_json(pcap, "--set", "enforce=on")
    assert enforce["dropped"] == n_error
    # the same frames judged the same way: only the verdict differs
    assert {k: v for k, v in enforce.items() if k not in ("dropped", "flows")} == \
        {k: v for k, v in observe.items() if k not in ("dropped", "flows")}
    assert {k: v for k, v in observe["rules"].items() if v} == {
        "cnp": 1, "nak_psn": 1, "ecn_ce": 1, "opcode_vendor": 1,  # info
        "ip_fragment": 1, "psn_gap": 1,  # warning
        "icrc": 1, "pkey": 1, "tver": 1, "opcode": 1, "truncated": 1, "se": 1, "reserved": 1}
