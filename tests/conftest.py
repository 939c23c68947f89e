# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Shared fixtures: the roceval binary, replay helpers, throwaway network namespaces.

`make test` runs the suite in several processes side by side (pytest-xdist, --dist loadgroup).
Whatever a test creates on the host carries a name of its own (unique_name(), the `netns`
fixture), so two tests never meet.  A test that cannot share says so:
  @pytest.mark.xdist_group("NAME")  the tests of one group run one after another, in one process
                                    (they share a file in the tree, or compare the host's state);
  @pytest.mark.alone                nothing else runs meanwhile, in this suite or another on the
                                    host (the test takes the host's bpffs away, or must see every
                                    namespace on the host).
  @pytest.mark.long(MINUTES)        a test (or group) of a minute or more, MINUTES (default 1) a
                                    rough guess: started early, the longest first, so that the run
                                    does not end waiting on it.
The `alone` tests run first: met later, each would wait for every test running beside it to end
(a long one among them) while the other processes, held back, did nothing.
"""
import contextlib
import fcntl
import json
import os
import select
import shutil
import struct
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ROCEVAL = Path(os.environ.get("ROCEVAL_BIN", ROOT / "roceval"))
# Real captures are not part of the project: tests that need them find them here, beside the
# clone, or where ROCEVAL_CAPTURES points, and skip when they are absent.
CAPTURES = Path(os.environ.get("ROCEVAL_CAPTURES", ROOT.parent / "shared" / "captures"))
PIN_ROOT = Path("/sys/fs/bpf/roceval")
# Every test holds HOST_LOCK shared for its length, an `alone` one exclusive; TURNSTILE, taken on
# the way in, makes the others wait behind an `alone` one instead of starving it.
HOST_LOCK, TURNSTILE = Path("/run/roceval-tests.lock"), Path("/run/roceval-tests.turnstile")
HOST_LOCK_HELD = "ROCEVAL_TEST_HOST_LOCK_HELD"


def pytest_configure(config):
    config.addinivalue_line("markers", "alone: runs with no other test running on the host")
    config.addinivalue_line("markers", "xdist_group(name): runs in one process after the group's others")
    config.addinivalue_line("markers", "long(minutes): takes a minute or more; started before the others")


@contextlib.contextmanager
def host_lock(alone):
    # A suite a test runs (test_mirror_wrapped.py) runs within that test's hold, which its
    # environment says: taking the lock again would wait behind an `alone` test waiting for it.
    if os.environ.get(HOST_LOCK_HELD):
        yield
        return
    with open(TURNSTILE, "a") as turnstile, open(HOST_LOCK, "a") as lock:
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        if not alone:
            fcntl.flock(turnstile, fcntl.LOCK_UN)
        fcntl.flock(lock, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        os.environ[HOST_LOCK_HELD] = "1"
        try:
            yield
        finally:
            del os.environ[HOST_LOCK_HELD]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """The lock spans setup and teardown, so the fixtures a test's first or last use makes or
    ends (netns, module ones) fall inside it too."""
    with host_lock(item.get_closest_marker("alone") is not None):
        yield


def pytest_terminal_summary(terminalreporter):
    """The "figures" a test recorded (record_property), printed at the end of the run: a test
    running in another process (pytest-xdist) has no terminal of its own to print them on."""
    for report in terminalreporter.getreports("passed"):
        for name, value in report.user_properties:
            if name == "figures":
                terminalreporter.write_line(value)


def unique_name(prefix):
    """prefix and 6 random hex digits: a namespace, interface or pin name no other test (or
    other run) uses at the same time.  Interface names fit 15 characters: a prefix of 9 at most."""
    return f"{prefix}{uuid.uuid4().hex[:6]}"


def pin_dir(ifname=None, netns=None):
    """Where roceval pins IFNAME's attachment in network namespace NETNS (a name under
    /run/netns; None: this process's), or that namespace's directory without IFNAME."""
    ns = f"/run/netns/{netns}" if netns else "/proc/self/ns/net"
    d = PIN_ROOT / f"netns-{os.stat(ns).st_ino}"
    return d / ifname if ifname else d


def refusal(ns, why="out of reach"):
    return ("roceval: /sys/fs/bpf is not the host's bpffs in this mount namespace (a private one, as "
            f"'ip netns exec' or a container makes) and the host's is {why}: pins made here would vanish "
            f"with this command; run 'nsenter --net=/run/netns/{ns} roceval ...' instead, or mount the "
            "host's bpffs on /sys/fs/bpf\n")


def host_root():
    """Where a command in a private mount namespace reaches the host's root: through pid 1, or,
    where pid 1's links are closed even to root (a VM's init agent), through kthreadd, which like
    every kernel thread lives in the initial namespaces; None where neither is open."""
    try:
        os.readlink("/proc/1/ns/mnt")
        return "/proc/1/root"
    except OSError:
        pass
    try:
        flags = int(open("/proc/2/stat").read().rsplit(")", 1)[1].split()[6])
        os.readlink("/proc/2/ns/mnt")
    except (OSError, ValueError, IndexError):
        return None
    return "/proc/2/root" if flags & 0x00200000 else None  # PF_KTHREAD


def real_capture(name):
    """The real capture CAPTURES/name; skips the calling test, with one reason for all, if absent."""
    path = CAPTURES / name
    if not path.is_file():
        pytest.skip(f"real captures not found at {CAPTURES} (set ROCEVAL_CAPTURES=DIR)")
    return path


def run(*args, check=False, timeout=120, netns=None, **kw):
    """Runs roceval (or any command when args[0] is a path) and captures its output."""
    cmd = [str(a) for a in args]
    if not cmd[0].startswith("/") and cmd[0] not in ("ip", "tshark", "tcpdump", "promtool"):
        cmd = [str(ROCEVAL)] + cmd
    if netns:
        # nsenter switches only the network namespace, so bpffs pins stay
        # visible; `ip netns exec` would remount /sys and hide them.
        cmd = ["nsenter", f"--net=/run/netns/{netns}"] + cmd
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    if check and res.returncode != 0:
        raise AssertionError(f"{cmd} exited {res.returncode}:\n{res.stdout}\n{res.stderr}")
    return res


def read_until_closed(fd, timeout=10):
    """What the other side of a pty writes until it closes it (EIO), at most `timeout` seconds."""
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if not select.select([fd], [], [], 0.5)[0]:
                continue
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the other side closed
            break
        if not chunk:
            break
        out += chunk
    return out


def pcap_frames(path):
    """The frames of a classic pcap file, of either byte order."""
    data = Path(path).read_bytes()
    endian = "<" if data[:4] == b"\xd4\xc3\xb2\xa1" else ">"
    frames, off = [], 24
    while off < len(data):
        caplen = struct.unpack(endian + "I", data[off + 8:off + 12])[0]
        frames.append(data[off + 16:off + 16 + caplen])
        off += 16 + caplen
    return frames


# Sends every frame of a classic pcap out of an interface through AF_PACKET, in order; with
# "pace", a pause every 32 frames keeps well inside a veth's NAPI backlog.
SEND_PCAP = r"""
import socket, struct, sys, time
ifname, path, pace = sys.argv[1], sys.argv[2], sys.argv[3:] == ["pace"]
data = open(path, "rb").read()
endian = "<" if data[:4] == b"\xd4\xc3\xb2\xa1" else ">"
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((ifname, 0))
off, i = 24, 0
while off < len(data):
    caplen = struct.unpack(endian + "I", data[off + 8:off + 12])[0]
    s.send(data[off + 16:off + 16 + caplen])
    off += 16 + caplen
    i += 1
    if pace and i % 32 == 0:
        time.sleep(0.005)
"""


def send_pcap(netns, ifname, pcap, pace=False, one_cpu=False, cpu=None):
    """Sends the frames of pcap out of ifname in network namespace netns.  one_cpu: from CPU 0
    only, since frames queued on two CPUs' backlogs could reach the program out of order; cpu:
    from that CPU only (a veth's receiver runs the program on the sender's CPU)."""
    cpu = 0 if one_cpu and cpu is None else cpu
    cmd = ["nsenter", f"--net=/run/netns/{netns}"] + (["taskset", "-c", str(cpu)] if cpu is not None else [])
    cmd += ["/usr/bin/python3", "-c", SEND_PCAP, ifname, str(pcap)] + (["pace"] if pace else [])
    subprocess.run(cmd, check=True, timeout=60)


def xdp_prog_id(ns):
    """The id of the XDP program on ns's rx interface, None without one."""
    out = subprocess.run(["ip", "-n", ns.rx, "-j", "link", "show", ns.if_rx], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)[0].get("xdp", {}).get("prog", {}).get("id")


def live_stats(netns, tmp_path, frames, while_attached=None, settings=()):
    """Attaches roceval to netns's receiving end with settings (KEY=VALUE), sends frames from the
    other end on one CPU, and returns stats --json once it counted them all (10 s at most), with
    what while_attached() returned before the detach."""
    import roce

    run("attach", netns.if_rx, *settings, netns=netns.rx, check=True)
    try:
        send_pcap(netns.tx, netns.if_tx, roce.write_pcap(tmp_path / "live.pcap", frames), one_cpu=True)
        deadline = time.monotonic() + 10
        while True:
            st = json.loads(run("stats", netns.if_rx, "--json", netns=netns.rx, check=True).stdout)
            if st["roce"] >= len(frames) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        extra = while_attached() if while_attached else None
    finally:
        run("detach", netns.if_rx, netns=netns.rx)
    assert st["roce"] == len(frames)
    return st, extra


def wait_for(cond, timeout=10):
    """Whether cond() became true within timeout seconds (polled every 0.1 s)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return True
        time.sleep(0.1)
    return cond()


def replay(tmp_path, frames, *opts, name="f.pcap", times=None):
    """replay --json of frames (tests/roce.py builds them), written to tmp_path/name; times: their
    capture times in seconds (default one a second)."""
    import roce

    return roce.replay_frames(tmp_path / name, frames, *opts, times=times)


def poke(frm, *pairs):
    """frm with the byte at each offset replaced (offset, value, offset, value...); the ICRC is
    left as it was."""
    b = bytearray(frm)
    for off, val in zip(pairs[::2], pairs[1::2]):
        b[off] = val
    return bytes(b)


def replay_json(pcap, *opts):
    import roce

    if roce.WRAPS:  # each replay also judges the capture wrapped in mirrors (tests/roce.py)
        return roce.replay_wrapped(pcap, *opts)
    res = run("replay", "--json", *opts, pcap, check=True)
    return json.loads(res.stdout)


def replay_files(paths, *opts):
    """replay_json() of each capture of paths, the lot in one run of roceval (each file judged as
    alone: test_replay_files.py holds replay to that), so the program is verified once."""
    import roce

    if roce.WRAPS or len(paths) < 2:
        return [replay_json(p, *opts) for p in paths]
    lines = run("replay", "--json", *opts, *paths, check=True).stdout.splitlines()
    results = [json.loads(line) for line in lines]
    assert [r.pop("file") for r in results] == [str(p) for p in paths]
    return results


def replay_batch(directory, cases):
    """replay --json of many captures, one run of roceval per set of options: the kernel then
    verifies the program once for them all, which is most of what a small capture costs.  cases
    maps a key to (frames, options); returns {key: result}, each what replaying that capture
    alone gives (test_replay_files.py holds several files to that), accounting checked."""
    import roce

    groups = {}
    for i, (key, (frames, opts)) in enumerate(cases.items()):
        path = roce.write_pcap(Path(directory) / f"{i}.pcap", frames)
        # wrapped runs (ROCEVAL_TEST_ENCAP): each capture's mirrored copies follow it in the run
        copies = roce.wrapped_copies(path) if roce.WRAPS else []
        groups.setdefault(tuple(opts), []).append((key, path, copies))
    out = {}
    for opts, members in groups.items():
        files = [f for _, path, copies in members for f in (path, *(c[0] for _, _, c in copies))]
        # a file costs the run some 20 ms of resetting the program's maps, more on a loaded
        # machine: thousands of them (test_rules.py's, wrapped) outlast a fixed bound
        lines = run("replay", "--json", *opts, *files, check=True,
                    timeout=120 + len(files) // 10).stdout.splitlines()
        assert len(lines) == len(files), lines
        results = [json.loads(line) for line in lines]
        if len(files) > 1:  # one file alone is not named
            assert [r.pop("file") for r in results] == [str(f) for f in files]
        for key, path, copies in members:
            mine, results = results[:1 + len(copies)], results[1 + len(copies):]
            roce.check_accounting(mine[0])
            out[key] = roce.hold_copies(mine, copies) if copies else mine[0]
    return out


def timeless(result):
    """A replay or stats result with its latencies cut to their sample counts: what does not
    depend on when the frames came (a capture's timestamps, or the clock live)."""
    out = dict(result)
    if "latency" in out:
        out["latency"] = {k: v["count"] for k, v in out["latency"].items()}
    if "flows" in out:
        out["flows"] = [dict(f, latency=f["latency"]["count"]) if "latency" in f else f
                        for f in out["flows"]]
    return out


def nonzero_rules(result):
    return {k: v for k, v in result["rules"].items() if v}


def pytest_collection_modifyitems(config, items):
    """The `alone` tests first, then the `long` ones, then the rest, each in the order collected
    (every process of a run sorts alike: their collections must agree).  Judged wrapped in
    mirrors (ROCEVAL_TEST_ENCAP), only what replays captures runs: a live attachment's tests (a
    namespace's veth) are deselected, and said so."""
    import roce

    def rank(item):
        if item.get_closest_marker("alone"):
            return 0, 0
        long = item.get_closest_marker("long")
        return (1, -(long.args[0] if long.args else 1)) if long else (2, 0)

    items.sort(key=rank)
    if not roce.WRAPS:
        return
    live = [i for i in items if "netns" in getattr(i, "fixturenames", ())]
    if live:
        config.hook.pytest_deselected(items=live)
        items[:] = [i for i in items if "netns" not in getattr(i, "fixturenames", ())]


@pytest.fixture(scope="session", autouse=True)
def _environment():
    if os.geteuid() != 0:
        pytest.exit("the roceval tests need root (BPF, XDP and network namespaces)", returncode=2)
    if not ROCEVAL.exists():
        pytest.exit(f"{ROCEVAL} is missing: run 'make' first", returncode=2)


@pytest.fixture(scope="session")
def made_dir():
    """A directory for the captures the tests make, readable by the unprivileged user some tests
    run roceval as (pytest's own temporary directories are private to root)."""
    path = Path(tempfile.mkdtemp(prefix="roceval-tests-"))
    try:
        path.chmod(0o755)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def good_capture(made_dir):
    """A fault-free RC SEND conversation from `roceval gen`: one QP, so two flows (requests one
    way, ACKs the other), 1024-byte PMTU, messages of up to four packets, IPv4, no VLAN.  Its
    first frames are a three-packet SEND (1082 bytes first), an ACK, a SEND_ONLY and an ACK, so
    they hold long and short frames of both flows.  Returns (path, gen's JSON summary); the
    summary's "expected" is what replay must count."""
    path = made_dir / "good.pcap"
    res = run("gen", "-w", path, "--json", "--quiet", "--seed", "3", "--count", "100", "--qps", "1",
              "--traffic", "send", "--pmtu", "1024", check=True)
    path.chmod(0o644)
    return path, json.loads(res.stdout)


@pytest.fixture(scope="session")
def cnp_capture(made_dir):
    """One valid CNP (tests/roce.py builds it): the smallest capture replay accepts whole."""
    import roce

    path = roce.write_pcap(made_dir / "cnp.pcap", [roce.cnp()])
    path.chmod(0o644)
    return path


class Netns:
    """Two namespaces joined by a veth pair: tx (sender) and rx (roceval's side)."""

    def __init__(self):
        tag = unique_name("")
        self.tx, self.rx = f"rvtx-{tag}", f"rvrx-{tag}"
        self.if_tx, self.if_rx = f"rvt{tag}", f"rvr{tag}"
        self.addr_tx, self.addr_rx = "192.0.2.1", "192.0.2.2"
        self.addr6_tx, self.addr6_rx = "2001:db8::1", "2001:db8::2"

    def ip(self, *args, netns=None):
        cmd = ["ip"] + (["-n", netns] if netns else []) + list(args)
        subprocess.run(cmd, check=True, capture_output=True)

    def create(self):
        self.ip("netns", "add", self.tx)
        self.ip("netns", "add", self.rx)
        self.ip("link", "add", self.if_tx, "netns", self.tx, "type", "veth", "peer", "name",
                self.if_rx, "netns", self.rx)
        for ns, ifname, a4, a6 in ((self.tx, self.if_tx, self.addr_tx, self.addr6_tx),
                                   (self.rx, self.if_rx, self.addr_rx, self.addr6_rx)):
            self.ip("link", "set", "lo", "up", netns=ns)
            self.ip("link", "set", ifname, "up", netns=ns)
            self.ip("addr", "add", f"{a4}/24", "dev", ifname, netns=ns)
            self.ip("-6", "addr", "add", f"{a6}/64", "dev", ifname, "nodad", netns=ns)
        return self

    def destroy(self):
        for ns in (self.tx, self.rx):
            # pins of interfaces that vanish with their namespace
            if os.path.exists(f"/run/netns/{ns}"):
                subprocess.run(["rm", "-rf", str(pin_dir(netns=ns))], capture_output=True)
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)

    def mac(self, netns, ifname):
        out = subprocess.run(["ip", "-n", netns, "-j", "link", "show", ifname], check=True,
                             capture_output=True, text=True).stdout
        return json.loads(out)[0]["address"]


@pytest.fixture
def netns():
    ns = Netns()
    try:
        yield ns.create()
    finally:
        ns.destroy()
