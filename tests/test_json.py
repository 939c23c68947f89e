# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Every --json output parses, whatever the interface is called.

Linux interface names are bytes: anything but '/', ':', white space and NUL.
Each name here is given to a real veth, roceval is attached to it, and what
status, stats, trace and the daemon's log print is read with Python's json
module (strict UTF-8 first, so a raw byte that is not UTF-8 fails too).
"""
import json
import os
import select
import subprocess
import sys
import time

import pytest

import roce
from conftest import ROCEVAL, run

# the tag of the test's namespaces is appended: pin directories are global
HOSTILE = [b'uxt"q\\x', b"\x01\x1b[31m\x7f", b"\xff\xfe\xc3(", b"\xe2\x82\xac\\\"\x08"]

SEND = r"""
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((bytes.fromhex(sys.argv[1]).decode("utf-8", "surrogateescape"), 0))
s.send(bytes.fromhex(sys.argv[2]))
"""


def in_ns(netns, *args, **kw):
    return subprocess.run(["nsenter", f"--net=/run/netns/{netns.rx}", *args], capture_output=True,
                          timeout=30, **kw)


def parse(out):
    """Every line of out as JSON, after a strict UTF-8 decode."""
    return [json.loads(line) for line in out.decode("utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("base", HOSTILE, ids=["quote-backslash", "control", "not-utf8", "utf8-escapes"])
def test_json_outputs_parse_for_hostile_names(netns, base, tmp_path):
    name = base + netns.if_rx[-6:].encode()
    peer = b"pj" + netns.if_rx[-6:].encode()
    want = name.decode("utf-8", "replace")
    subprocess.run([b"ip", b"-n", netns.rx.encode(), b"link", b"add", name, b"type", b"veth",
                    b"peer", b"name", peer], check=True)
    try:
        for ifname in (name, peer):
            subprocess.run([b"ip", b"-n", netns.rx.encode(), b"link", b"set", ifname, b"up"],
                           check=True)
        res = in_ns(netns, str(ROCEVAL), b"attach", name, b"--mode", b"generic")
        assert res.returncode == 0, res.stderr

        for cmd in ([b"status", b"--json", name], [b"status", b"--json"],
                    [b"stats", b"--json", name], [b"stats", b"--json", b"--top", b"5", name]):
            res = in_ns(netns, str(ROCEVAL), *cmd)
            assert res.returncode == 0, (cmd, res.stderr)
            docs = parse(res.stdout)
            objs = docs[0] if isinstance(docs[0], list) else docs
            assert want in [o["interface"] for o in objs], (cmd, res.stdout)

        # a frame with a bad ICRC, sampled by a JSON trace
        bad = roce.roce(roce.opcode(roce.RC, "SEND_ONLY"), b"\x00" * 16, frame_kw={"bad_icrc": True})
        trace = subprocess.Popen(["nsenter", f"--net=/run/netns/{netns.rx}", str(ROCEVAL), "trace",
                                  name, "--json", "--count", "1"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            assert b"tracing" in trace.stderr.readline()
            in_ns(netns, sys.executable, "-c", SEND, peer.hex(), bytes(bad).hex(), check=True)
            out, err = trace.communicate(timeout=10)
        finally:
            if trace.poll() is None:
                trace.kill()
        assert trace.returncode == 0, err
        (sample,) = parse(out)
        assert sample["interface"] == want and sample["rules"] == ["icrc"]

        # the daemon's log lines
        conf = tmp_path / "d.conf"
        conf.write_bytes(b"interface = " + name + b"\nlisten = none\ninterval = 1\n")
        daemon = subprocess.Popen(["nsenter", f"--net=/run/netns/{netns.rx}", str(ROCEVAL), "daemon",
                                   "--config", str(conf)], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        try:
            # sent once the daemon has read the counters it reports deltas from, however slow its start
            started, deadline = b"", time.time() + 20
            while b"daemon running" not in started and time.time() < deadline:
                if select.select([daemon.stderr], [], [], 0.5)[0]:
                    started += os.read(daemon.stderr.fileno(), 65536)
            assert b"daemon running" in started, started
            in_ns(netns, sys.executable, "-c", SEND, peer.hex(), bytes(bad).hex(), check=True)
            # read from the descriptor: a buffered readline could leave the line sought in the
            # buffer, where select() does not see it
            entries, out, deadline = [], b"", time.time() + 10
            while time.time() < deadline and not any(e["delta"]["rules"].get("icrc") for e in entries):
                if select.select([daemon.stdout], [], [], 0.5)[0]:
                    out += os.read(daemon.stdout.fileno(), 65536)
                    entries = parse(out[:out.rfind(b"\n") + 1])
        finally:
            daemon.terminate()
            daemon.communicate(timeout=20)
        assert entries and all(e["interface"] == want for e in entries)
        assert sum(e["delta"]["rules"].get("icrc", 0) for e in entries) == 1
    finally:
        in_ns(netns, str(ROCEVAL), b"detach", name)
        subprocess.run([b"ip", b"-n", netns.rx.encode(), b"link", b"del", name], capture_output=True)
        subprocess.run([b"rm", b"-rf", b"/sys/fs/bpf/roceval/" + name], capture_output=True)


def test_rules_json_parses():
    rules = json.loads(run("rules", "--json", check=True).stdout)
    assert rules and all("rocev2.md" not in r["reference"] for r in rules)
