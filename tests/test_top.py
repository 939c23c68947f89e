# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""roceval top in a real terminal (tmux): it fits every size, follows a resize, colours rules by
severity, shows the current rate first, sorts, pauses and quits on q."""
import re
import shutil
import subprocess
import sys
import time
import uuid

import pytest

import roce
from conftest import ROCEVAL, read_until_closed, run

SEND = r"""
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
for hexframe in sys.argv[2:]:
    s.send(bytes.fromhex(hexframe))
"""
N_BAD = 5


def frames():
    """N_BAD frames with a bad ICRC (an error) and a PSN jump on one QP (psn_gap, a warning)."""
    send_only = roce.opcode(roce.RC, "SEND_ONLY")
    bad = [roce.roce(send_only, b"\x00" * 16, frame_kw={"bad_icrc": True}) for _ in range(N_BAD)]
    gap = [roce.roce(send_only, b"\x00" * 16, dqpn=0x4242, psn=p) for p in (1, 2, 10)]
    return [bytes(f) for f in bad + gap]


@pytest.fixture
def tmux():
    if not shutil.which("tmux"):
        pytest.skip("tmux (Debian package tmux) is not installed")
    sock = f"roceval-test-{uuid.uuid4().hex[:8]}"

    def cmd(*args, check=True):
        return subprocess.run(["tmux", "-L", sock, *args], capture_output=True, text=True,
                              check=check, timeout=10)
    yield cmd
    cmd("kill-server", check=False)


def screen(tmux, escapes=False):
    out = tmux("capture-pane", "-p", *(["-e"] if escapes else []), "-t", "top").stdout
    return out.rstrip("\n").split("\n")


def wait_screen(tmux, cond, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        lines = screen(tmux)
        if cond(lines):
            return lines
        time.sleep(0.1)
    raise AssertionError("\n".join(screen(tmux)))


def row(lines, rule):
    return next((line for line in lines if re.match(rf"^  {rule} +\d+ ", line)), None)


def assert_fits(lines, width, height):
    assert len(lines) <= height, lines
    assert max(len(line) for line in lines) <= width, lines


def test_top_in_a_terminal(netns, tmux):
    attaching = time.monotonic()
    run("attach", netns.if_rx, "--mode", "generic", netns=netns.rx, check=True)
    attached = time.monotonic()
    subprocess.run(["nsenter", f"--net=/run/netns/{netns.tx}", sys.executable, "-c", SEND, netns.if_tx,
                    *(f.hex() for f in frames())], check=True, timeout=30)
    started = time.monotonic()
    tmux("new-session", "-d", "-s", "top", "-x", "60", "-y", "12",
         f"nsenter --net=/run/netns/{netns.rx} {ROCEVAL} top {netns.if_rx} -d 0.3")

    # 60x12: cut to fit, and says so
    # (a capture can catch a redraw half done: wait for both rows to show a measured rate)
    lines = wait_screen(tmux, lambda ls: all(row(ls, r) and row(ls, r).split()[2] != "-"
                                             for r in ("icrc", "psn_gap")))
    captured = time.monotonic()
    assert_fits(lines, 60, 12)
    assert lines[0].startswith("roceval top - ") and "sort rate" in lines[0]
    assert lines[-1].startswith("q quit")
    assert any("more lines; a larger terminal shows them" in line for line in lines)
    # the current rate comes first: no traffic now, so 0.0/s, the average since attach beside it
    icrc = row(lines, "icrc").split()
    assert icrc[1:3] == [str(N_BAD), "0.0"] and icrc[4] == "error"
    # the average is N_BAD over the time from the attach to the reading shown: at least from the
    # attach's end to top's start, at most from its beginning to the capture (printed to 1
    # decimal, so within 0.05 of that)
    avg, slowest, fastest = float(icrc[3]), N_BAD / (captured - attaching), N_BAD / (started - attached)
    assert slowest - 0.05 - 1e-9 <= avg <= fastest + 0.05 + 1e-9, (avg, slowest, fastest)
    assert row(lines, "psn_gap").split()[1:3] == ["1", "0.0"]

    # colours: errors red (SGR 31), warnings yellow (33)
    coloured = screen(tmux, escapes=True)
    sgr = r"(?:\x1b\[[0-9;]*m)*"
    assert re.search(rf"\x1b\[(?:[0-9;]*;)?31m{sgr}  icrc ", "\n".join(coloured)), coloured
    assert re.search(rf"\x1b\[(?:[0-9;]*;)?33m{sgr}  psn_gap ", "\n".join(coloured)), coloured
    assert not re.search(rf"\x1b\[(?:[0-9;]*;)?3[13]m{sgr}  roce ", "\n".join(coloured))

    # larger: everything shows, the flows too
    tmux("resize-window", "-t", "top", "-x", "100", "-y", "30")
    lines = wait_screen(tmux, lambda ls: len(ls) > 12 and any("flows in the table" in x for x in ls))
    assert_fits(lines, 100, 30)
    assert not any("more lines" in line for line in lines)
    assert any(line.startswith("  BUSIEST FLOWS") for line in lines)

    # smaller than any line: still fits
    tmux("resize-window", "-t", "top", "-x", "30", "-y", "6")
    lines = wait_screen(tmux, lambda ls: len(ls) <= 6 and max(map(len, ls)) <= 30)
    assert_fits(lines, 30, 6)

    # keys: s sorts by count, then name; p pauses; q quits
    tmux("resize-window", "-t", "top", "-x", "80", "-y", "24")

    def rules(ls):
        return [x.split()[0] for x in ls if re.match(r"^  \w+ +\d+ .* (error|warning|info)$", x)]
    tmux("send-keys", "-t", "top", "s")
    wait_screen(tmux, lambda ls: "sort count" in ls[0] and rules(ls)[:2] == ["icrc", "psn_gap"])
    tmux("send-keys", "-t", "top", "s")

    # by count icrc (5) comes before psn_gap (1); by name every rule is in order
    wait_screen(tmux, lambda ls: "sort name" in ls[0] and rules(ls) == sorted(rules(ls)) and
                {"icrc", "psn_gap"} <= set(rules(ls)))
    tmux("send-keys", "-t", "top", "p")
    paused = wait_screen(tmux, lambda ls: "PAUSED" in ls[0])
    time.sleep(1)
    assert screen(tmux)[1:] == paused[1:]  # frozen
    tmux("send-keys", "-t", "top", "q")
    deadline = time.time() + 5
    while time.time() < deadline and tmux("has-session", "-t", "top", check=False).returncode == 0:
        time.sleep(0.1)
    assert tmux("has-session", "-t", "top", check=False).returncode != 0


def test_top_without_a_terminal(netns):
    run("attach", netns.if_rx, "--mode", "generic", netns=netns.rx, check=True)
    res = run("top", netns.if_rx, "-n", "1", netns=netns.rx, stdin=subprocess.DEVNULL)
    assert res.returncode == 0, res.stderr
    assert "\x1b" not in res.stdout and res.stdout.startswith("roceval top - ")
    res = run("top", netns.if_rx, "--sort", "size", netns=netns.rx)
    assert res.returncode == 2
    assert res.stderr == "roceval top: --sort size: expected rate, count or name; see 'roceval help top'\n"


def test_top_shows_each_flows_answer_latency(netns, tmp_path):
    """P50 and P99 of the answers to a flow's requests; "-" for a flow that had none."""
    import cm_mad
    from conftest import send_pcap
    c = cm_mad.Conn()
    frames = [c.to_b("SEND_ONLY", c.b_psn + i, 16) for i in range(4)] + [c.to_a("ACKNOWLEDGE", c.b_psn + 3)]
    run("attach", netns.if_rx, "--mode", "generic", netns=netns.rx, check=True)
    send_pcap(netns.tx, netns.if_tx, roce.write_pcap(tmp_path / "t.pcap", frames), one_cpu=True)
    out = run("top", netns.if_rx, "-n", "1", netns=netns.rx, stdin=subprocess.DEVNULL, check=True).stdout
    lines = out.splitlines()
    assert re.search(r"BUSIEST FLOWS +PACKETS +BYTES +VIOLATIONS +P50 +P99$", out, re.M), out
    busiest = lines[next(i for i, x in enumerate(lines) if "BUSIEST FLOWS" in x) + 1:]
    lat = r"\d+(\.\d)? (ns|us|ms|s)"
    requests = next(x for x in busiest if f"qp {c.b_qpn:#x}" in x)
    assert re.search(rf"  4 +\d+ +0 +{lat} +{lat}$", requests), requests
    acks = next(x for x in busiest if f"qp {c.a_qpn:#x}" in x)
    assert re.search(r"  1 +\d+ +0 +- +-$", acks), acks


FLOW_LABELS = ("PACKETS", "BYTES", "VIOLATIONS", "P50", "P99")
NAME_END = 2 + 52 + 1  # the flow column, then the numbers


def flow_table(lines, heading):
    """The rows of the flow table under `heading`: each flow's whole name (its row's name column
    and the lines below it joined) and the columns its numbers end at, with the columns the
    visible labels end at. A line below a row holds nothing past the name column."""
    at = next(i for i, x in enumerate(lines) if x.startswith(f"  {heading} "))
    ends = [NAME_END + m.end() for m in re.finditer(r"\S+", lines[at][NAME_END:]) if m.group() in FLOW_LABELS]
    rows = []
    for line in lines[at + 1:]:
        if line.startswith("  (") or re.match(r"^  [A-Z]", line):
            break
        if line.startswith("    "):
            assert len(line) < NAME_END, line
            rows[-1][0].append(line.strip())
        else:
            rows.append(([line[:NAME_END].strip()], [NAME_END + m.end() for m in re.finditer(
                r"\d+(\.\d)? (ns|us|ms|s)\b|\S+", line[NAME_END:])]))  # a latency has its unit
    return ends, {" ".join(name): cols for name, cols in rows}


@pytest.mark.parametrize("width", [80, 110])
def test_top_keeps_the_columns_of_cm_named_flows(netns, tmux, tmp_path, width):
    """A flow named with its RDMA CM service and peer QP is longer than the flow column (over IPv6
    longer still): the name goes on below its row, and every number stays under its label, at 80
    columns (PACKETS and BYTES showing) as at 110 (all of them); the whole name shows."""
    import cm_mad
    from conftest import send_pcap
    v4 = cm_mad.Conn()
    v6 = cm_mad.Conn(a="2001:db8:aaaa:bbbb:cccc:dddd:eeee:1", b="2001:db8:aaaa:bbbb:cccc:dddd:eeee:2",
                     a_qpn=0x237, b_qpn=0x267, ipv6=True)
    frames = []
    for c in (v4, v6):
        # the sends to b the busiest flows; a send to a past a gap puts those in the violating table
        frames += c.handshake() + c.conversation() + [c.to_b("SEND_ONLY", c.b_psn + i, 16) for i in range(2, 6)]
        frames.append(c.to_a("SEND_ONLY", c.a_psn + 5, 16))

    def cm_name(src, dst, qpn, peer):
        return f"{src} > {dst} qp {qpn:#x} [tcp/4420 (NVMe-oF) peer qp {peer:#x}]"
    to_b = [cm_name(c.a, c.b, c.b_qpn, c.a_qpn) for c in (v4, v6)]
    to_a = [cm_name(c.b, c.a, c.a_qpn, c.b_qpn) for c in (v4, v6)]
    run("attach", netns.if_rx, "--mode", "generic", netns=netns.rx, check=True)
    send_pcap(netns.tx, netns.if_tx, roce.write_pcap(tmp_path / "cm.pcap", frames), one_cpu=True)
    tmux("new-session", "-d", "-s", "top", "-x", str(width), "-y", "60",
         f"nsenter --net=/run/netns/{netns.rx} {ROCEVAL} top {netns.if_rx} -d 0.3")
    lines = wait_screen(tmux, lambda ls: any("(8 flows in the table)" in x for x in ls))
    assert_fits(lines, width, 60)
    for heading, names in (("MOST VIOLATING FLOWS", to_a), ("BUSIEST FLOWS", to_b + to_a)):
        ends, rows = flow_table(lines, heading)
        assert len(ends) == (2 if width == 80 else 5)
        assert set(names) <= set(rows), (names, lines)
        for name, cols in rows.items():
            assert cols == ends, (name, lines)


def test_top_shows_mirror_sessions_in_80_columns(netns, tmux, tmp_path):
    """ERSPAN II copies from two switches, one losing a frame: at 80 columns the sessions table
    fits with every number under its label, the losing session first and yellow, an IPv6 source
    too long for its column on a line of its own."""
    import encap
    from conftest import send_pcap
    send_only = roce.opcode(roce.RC, "SEND_ONLY")
    v4 = [encap.wrap(roce.roce(send_only, 16, dqpn=0x500, psn=1 + i), "erspan2", session=5, seq=s)
          for i, s in enumerate((1, 2, 4))]
    v6_src = "2001:db8:5:0:abcd:ef01:2345:6789"
    v6 = encap.wrap_all([roce.roce(send_only, 16, dqpn=0x501, psn=1 + i) for i in range(5)], "erspan2", 6,
                        session=900, src=v6_src)
    run("attach", netns.if_rx, "--mode", "generic", netns=netns.rx, check=True)
    send_pcap(netns.tx, netns.if_tx, roce.write_pcap(tmp_path / "mirrors.pcap", v4 + v6), one_cpu=True)
    tmux("new-session", "-d", "-s", "top", "-x", "80", "-y", "60",
         f"nsenter --net=/run/netns/{netns.rx} {ROCEVAL} top {netns.if_rx} -d 0.3")
    lines = wait_screen(tmux, lambda ls: "  (2 mirror sessions)" in ls)
    assert_fits(lines, 80, 60)
    at = lines.index("  MIRROR SESSIONS         ENCAP      SESSION      FRAMES         BYTES     LOST")
    assert lines[at + 1:at + 5] == [
        f"  192.0.2.10              erspan2          5           3 {sum(map(len, v4)):13}        1",
        f"  {v6_src}",
        f"                          erspan2        900           5 {sum(map(len, v6)):13}        0",
        "  (2 mirror sessions)"]
    coloured = "\n".join(screen(tmux, escapes=True))
    sgr = r"(?:\x1b\[[0-9;]*m)*"
    assert re.search(rf"\x1b\[(?:[0-9;]*;)?33m{sgr}  192\.0\.2\.10 ", coloured), coloured
    assert not re.search(rf"\x1b\[(?:[0-9;]*;)?33m{sgr}                          erspan2 ", coloured)


def test_top_on_a_terminal_without_term(netns):
    """A terminal whose type is not known: one clear line and exit 1, the terminal untouched."""
    import os
    import pty

    run("attach", netns.if_rx, "--mode", "generic", netns=netns.rx, check=True)
    env = {k: v for k, v in os.environ.items() if k != "TERM"}
    for term_env, want in ((env, "TERM is not set"), ({**env, "TERM": "no-such-term"},
                                                      "unknown terminal type 'no-such-term'")):
        pid, fd = pty.fork()
        if pid == 0:
            os.execvpe("nsenter", ["nsenter", f"--net=/run/netns/{netns.rx}", str(ROCEVAL), "top",
                                   netns.if_rx], term_env)
        out = read_until_closed(fd)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 1
        assert out.decode().replace("\r\n", "\n") == \
            f"roceval: top: {want}: set TERM to your terminal's type, or run 'roceval top' with " \
            "output to a pipe or a file\n"
