# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""roceval bench as a smoke test: it runs and prints what it promises.  No timing is judged here."""
import ctypes
import errno
import json
import platform
import re

import pytest

from conftest import run

FIELDS = ["payload", "family", "baseline_ns", "headers_ns", "full_ns", "zlib_ns", "icrc_vs_zlib",
          "headers_over_baseline_ns", "steady_read", "steady_baseline_ns", "steady_headers_ns",
          "steady_full_ns", "steady_icrc_vs_zlib", "steady_headers_over_baseline_ns",
          "steady_congestion_ns", "icrc_sample_ns", "mirrored_frame", "steady_mirrored_baseline_ns",
          "steady_mirrored_headers_ns", "steady_mirrored_headers_over_baseline_ns", "decap_ns", "mirror_session"]
# The bare frames' bytes, row by row, and their ERSPAN II copies': 50 bytes more over IPv4 (Ethernet,
# IPv4, GRE with its sequence number, ERSPAN II), 70 over IPv6.
FRAME_BYTES = [62, 82, 314, 334, 1082, 1102, 4154, 4174]
MIRRORED_BYTES = [112, 152, 364, 404, 1132, 1172, 4204, 4244]
FLOW_FIELDS = ["flows", "payload", "family", "steady_read", "steady_baseline_ns",
               "steady_headers_ns", "steady_headers_over_baseline_ns"]
ANSWERED_FIELDS = ["answered", "payload", "family", "steady_read", "steady_baseline_ns",
                   "steady_headers_ns", "steady_headers_over_baseline_ns", "ack_over_baseline_ns"]

# The bench derives each figure from the others before any is printed, so a derived figure and
# the same sum or quotient of the printed ones agree only to what the printed decimals allow:
# these checks take that bound from the decimals, the same on a busy machine as on an idle one.
# A decimal read into binary floating point moves by far less than EPS.
EPS = 1e-9


def span(x, decimals):
    """The interval a figure printed with `decimals` decimals was rounded from."""
    half = 0.5 * 10 ** -decimals
    return x - half, x + half


def assert_quotient(q, q_decimals, num, den):
    """q, printed with q_decimals decimals, is n / d for some n in the interval num, d in den."""
    (nlo, nhi), (dlo, dhi) = num, den
    assert dlo > 0, den
    lo, hi = min(nlo / dlo, nlo / dhi), max(nhi / dlo, nhi / dhi)
    qlo, qhi = span(q, q_decimals)
    assert qlo - EPS <= hi and lo <= qhi + EPS, (q, num, den)


def assert_ratio(q, q_decimals, num, den, decimals):
    """q is num / den, all three as printed; num and den with `decimals` decimals."""
    assert_quotient(q, q_decimals, span(num, decimals), span(den, decimals))


def difference(a, b, decimals):
    """The interval a - b came from, both printed with `decimals` decimals."""
    return span(a, decimals)[0] - span(b, decimals)[1], span(a, decimals)[1] - span(b, decimals)[0]


def assert_combination(x, decimals, terms):
    """x is sum(c * v) over terms (c, v), x and each v printed with `decimals` decimals.  In
    units of the last decimal each is an integer at most half a unit from the unrounded figure,
    so the two sides differ by at most half a unit for x and half for each unit of |c|, rounded
    down to a whole unit."""
    unit = 10 ** decimals
    got = round(x * unit)
    want = sum(c * round(v * unit) for c, v in terms)
    assert abs(got - want) <= int(0.5 + 0.5 * sum(abs(c) for c, _ in terms)), (x, terms)


def check_mirrored(r, mirrored_bytes, rounds, repeat):
    """A row's mirrored figures: its copies' size, the two derived figures as the printed ones give
    them, and its session as the bench left it: every copy counted (the warming run's one, then
    each round's), numbered, none lost."""
    assert r["mirrored_frame"] == mirrored_bytes
    assert_combination(r["steady_mirrored_headers_over_baseline_ns"], 1,
                       [(1, r["steady_mirrored_headers_ns"]), (-1, r["steady_mirrored_baseline_ns"])])
    assert_combination(r["decap_ns"], 1, [(1, r["steady_mirrored_headers_ns"]), (-1, r["steady_mirrored_baseline_ns"]),
                                          (-1, r["steady_headers_ns"]), (1, r["steady_baseline_ns"])])
    assert r["mirror_session"] == {"encap": "erspan2", "frames": 1 + rounds * repeat, "lost": 0, "numbered": True}


@pytest.mark.alone  # compares two timings (congestion's path against the baseline's)
def test_bench_json():
    # The bench checks itself that every steady frame took the steady path (no rule broken, each
    # counted on its flow; each mirrored copy counted by its session, none lost) and fails
    # otherwise: exit 0 says the steady figures are what they claim.
    res = run("bench", "--json", "--repeat", "20", "--rounds", "3", check=True)
    lines = [json.loads(line) for line in res.stdout.splitlines()]
    rows, sweep, answered, clock = lines[:8], lines[8:12], lines[12:13], lines[13:]
    assert [(r["payload"], r["family"]) for r in rows] == \
        [(p, f) for p in (0, 256, 1024, 4096) for f in ("ipv4", "ipv6")]
    for r in rows:
        assert list(r) == FIELDS
        assert r["full_ns"] > 0 and r["zlib_ns"] > 0 and r["steady_full_ns"] > 0
        # ns to 1 decimal, ratios to 3
        assert_quotient(r["icrc_vs_zlib"], 3, difference(r["full_ns"], r["headers_ns"], 1),
                        span(r["zlib_ns"], 1))
        assert_combination(r["headers_over_baseline_ns"], 1, [(1, r["headers_ns"]), (-1, r["baseline_ns"])])
        assert_quotient(r["steady_icrc_vs_zlib"], 3,
                        difference(r["steady_full_ns"], r["steady_headers_ns"], 1), span(r["zlib_ns"], 1))
        assert_combination(r["steady_headers_over_baseline_ns"], 1,
                           [(1, r["steady_headers_ns"]), (-1, r["steady_baseline_ns"])])
        assert list(r["icrc_sample_ns"]) == ["1", "2", "8", "64"]
        assert r["icrc_sample_ns"]["1"] == r["steady_full_ns"]
        # the header path with every congestion setting on: the same frames, judged further
        assert r["steady_congestion_ns"] > r["steady_baseline_ns"]
    for r, mirrored_bytes in zip(rows, MIRRORED_BYTES):
        check_mirrored(r, mirrored_bytes, 3, 20)
    # batches of small frames fit the test run's linear buffer: read in place, as live
    assert [r["steady_read"] for r in rows] == ["in_place"] * 4 + ["helper"] * 4
    assert [(r["flows"], r["payload"], r["family"]) for r in sweep] == \
        [(1, 256, "ipv4"), (2, 256, "ipv4"), (1024, 256, "ipv4"), (65536, 256, "ipv4")]
    for r in sweep:
        assert list(r) == FLOW_FIELDS
        assert r["steady_read"] == "in_place"
        assert_combination(r["steady_headers_over_baseline_ns"], 1,
                           [(1, r["steady_headers_ns"]), (-1, r["steady_baseline_ns"])])
    # requests each answered by an ACK matched to it (the bench fails if one is not)
    [a] = answered
    assert list(a) == ANSWERED_FIELDS
    assert (a["answered"], a["payload"], a["family"], a["steady_read"]) == \
        ("ack", 256, "ipv4", "in_place")
    assert_combination(a["ack_over_baseline_ns"], 1, [(2, a["steady_headers_over_baseline_ns"]),
                                                      (-1, sweep[1]["steady_headers_over_baseline_ns"])])
    # the kernel's clock on a new request: a figure, of either sign on a noisy machine
    [c] = clock
    assert list(c) == ["clock", "payload", "family", "request_timed_ns", "flow_sampled_ns"]
    assert (c["clock"], c["payload"], c["family"]) == ("kernel", 256, "ipv4")
    assert isinstance(c["request_timed_ns"], float) and isinstance(c["flow_sampled_ns"], float)
    assert res.stderr == ""


def test_bench_table():
    res = run("bench", "--repeat", "20", "--rounds", "1", check=True)
    lines = res.stdout.splitlines()
    head = lines.index(next(line for line in lines if line.lstrip().startswith("payload")))
    assert lines[head].split() == ["payload", "family", "frame", "baseline", "headers", "full",
                                   "zlib", "icrc/zlib", "hdr-base", "Mpps/core", "Gb/s/core"]
    rows = [line.split() for line in lines[head + 1:head + 9]]
    assert [(r[0], r[1]) for r in rows] == \
        [(p, f) for p in ("0", "256", "1024", "4096") for f in ("ipv4", "ipv6")]
    # frame bytes: Ethernet + IP + UDP + BTH (+ AETH for the ACK) + payload + ICRC
    assert [int(r[2]) for r in rows] == FRAME_BYTES
    for r in rows:
        # ns to 1 decimal, Mpps and Gb/s to 2
        assert float(r[5]) > 0
        assert_quotient(float(r[9]), 2, (1e3, 1e3), span(float(r[5]), 1))
        assert_quotient(float(r[10]), 2, (int(r[2]) * 8, int(r[2]) * 8), span(float(r[5]), 1))
    steady = lines.index(next(line for line in lines[head + 9:]
                              if line.lstrip().startswith("payload")))
    assert lines[steady].split() == ["payload", "family", "frame", "baseline", "headers", "full",
                                     "icrc/zlib", "hdr-base", "sample2", "sample8", "sample64",
                                     "cc-hdr", "read"]
    rows = [line.split() for line in lines[steady + 1:steady + 9]]
    assert [(r[0], r[1], int(r[2])) for r in rows] == \
        [(p, f, n) for (p, f), n in zip([(p, f) for p in ("0", "256", "1024", "4096")
                                         for f in ("ipv4", "ipv6")],
                                        FRAME_BYTES)]
    for r in rows:
        assert_combination(float(r[7]), 1, [(1, float(r[4])), (-1, float(r[3]))])
    assert [r[12] for r in rows] == ["in_place"] * 4 + ["helper"] * 4
    # each frame's ERSPAN II copies, timed beside it: decap is their hdr-base less the frame's
    mirrored = lines.index(next(line for line in lines if line.startswith("Steady header path of each frame's ERSPAN II")))
    assert lines[mirrored + 2].split() == ["payload", "family", "frame", "mirrored", "baseline", "headers",
                                           "hdr-base", "decap", "lost"]
    mrows = [line.split() for line in lines[mirrored + 3:mirrored + 11]]
    assert [(r[0], r[1], int(r[2]), int(r[3]), r[8]) for r in mrows] == \
        [(p, f, n, m, "0") for (p, f), n, m in zip([(p, f) for p in ("0", "256", "1024", "4096")
                                                     for f in ("ipv4", "ipv6")], FRAME_BYTES, MIRRORED_BYTES)]
    for r, m in zip(rows, mrows):
        assert_combination(float(m[6]), 1, [(1, float(m[5])), (-1, float(m[4]))])
        assert_combination(float(m[7]), 1, [(1, float(m[5])), (-1, float(m[4])), (-1, float(r[4])), (1, float(r[3]))])
    flows = lines.index(next(line for line in lines if line.lstrip().startswith("flows")))
    assert [line.split()[0] for line in lines[flows + 1:flows + 5]] == ["1", "2", "1024", "65536"]
    answered = lines.index(next(line for line in lines if "answered by an ACK" in line))
    assert lines[answered + 1].split() == ["baseline", "headers", "hdr-base", "ack-base"]
    base, headers, hdr, ack = map(float, lines[answered + 2].split())
    assert_combination(hdr, 1, [(1, headers), (-1, base)])
    clock = lines.index(next(line for line in lines if line.startswith("Timing a new request")))
    assert re.fullmatch(r"against never\): -?[0-9.]+ ns a request; latency_sample=flow, no request answered: "
                        r"-?[0-9.]+", lines[clock + 1])


LIVE_FIELDS = ["live", "family", "frame_bytes", "sender", "pass_mpps", "roceval_mpps",
               "roceval_vs_pass"]
# What auto says, on its own line, when the kernel refuses live frames (as a BPF-LSM policy may).
REFUSED = re.compile(r"roceval: the kernel refused BPF_PROG_TEST_RUN in live-frames mode "
                     r"\((EPERM|EACCES): [^)]+\): sending by AF_PACKET instead\n")


def check_live_rows(rows, sender):
    assert [(r["live"], r["family"], r["frame_bytes"]) for r in rows] == \
        [("ack", "ipv4", 62), ("send", "ipv4", 3130)]
    for r in rows:
        assert list(r) == LIVE_FIELDS
        assert r["sender"] == sender
        assert r["pass_mpps"] > 0 and r["roceval_mpps"] > 0
        # Mpps printed to 4 decimals, the ratio of the unrounded ones to 3
        assert_ratio(r["roceval_vs_pass"], 3, r["roceval_mpps"], r["pass_mpps"], 4)
    # Its veth pair lived in a namespace of its own, gone with the process.
    assert run("ip", "link", "show", "rvb0").returncode != 0


def test_bench_live_json():
    # auto: live frames, or AF_PACKET where this kernel refuses them, saying so in one line
    res = run("bench", "--live", "--json", "--repeat", "20000", "--rounds", "1", check=True)
    rows = [json.loads(line) for line in res.stdout.splitlines()]
    sender = rows[0]["sender"]
    check_live_rows(rows, sender)
    if sender == "live_frames":
        assert res.stderr == ""
    else:
        assert sender == "af_packet" and REFUSED.fullmatch(res.stderr), res.stderr


def test_bench_live_packet():
    res = run("bench", "--live", "--sender", "packet", "--json", "--repeat", "20000", "--rounds", "1",
              check=True)
    check_live_rows([json.loads(line) for line in res.stdout.splitlines()], "af_packet")
    assert res.stderr == ""


def test_bench_live_packet_table():
    res = run("bench", "--live", "--sender", "packet", "--repeat", "20000", "--rounds", "1", check=True)
    lines = res.stdout.splitlines()
    assert lines[0] == "Live veth, one core, median of 1 rounds; Mpps per core:"
    assert lines[2].split() == ["frame", "family", "bytes", "pass", "roceval", "ratio", "sender"]
    rows = [line.split() for line in lines[3:]]
    assert [(r[0], r[1], r[2], r[6]) for r in rows] == \
        [("ack", "ipv4", "62", "af_packet"), ("send", "ipv4", "3130", "af_packet")]
    for r in rows:
        # all three to 3 decimals, the ratio of the unrounded figures
        assert_ratio(float(r[5]), 3, float(r[4]), float(r[3]), 3)
    assert res.stderr == ""


MIRROR_FIELDS = ["live", "encap", "family", "frame_bytes", "mirrored_bytes", "sender", "icrc_sample",
                 "pass_mpps", "roceval_mpps", "roceval_vs_pass", "roceval_ns", "cores_per_100g",
                 "roceval_cores_per_100g"]


@pytest.mark.parametrize("sender", ["auto", "packet"])
def test_bench_live_mirror_json(sender):
    """Collector sizing: ERSPAN II copies (50 bytes of outer headers) of an ACK and of 1 KB and
    4 KB WRITEs, each at icrc_sample 1 and 8; the 4 KB one is too long for a live frame.  The
    bench itself fails unless each session counted every frame roceval received."""
    res = run("bench", "--live", "--mirror", "--sender", sender, "--json", "--repeat", "20000", "--rounds", "1",
              check=True)
    rows = [json.loads(line) for line in res.stdout.splitlines()]
    asked, sender = sender, rows[0]["sender"]
    assert [(r["live"], r["frame_bytes"], r["mirrored_bytes"], r["icrc_sample"], r["sender"]) for r in rows] == [
        ("ack", 62, 112, 1, sender), ("ack", 62, 112, 8, sender),
        ("write", 1098, 1148, 1, sender), ("write", 1098, 1148, 8, sender),
        ("write", 4170, 4220, 1, "af_packet"), ("write", 4170, 4220, 8, "af_packet")]
    if asked == "packet":
        assert (sender, res.stderr) == ("af_packet", "")
    else:
        assert sender == "af_packet" and REFUSED.fullmatch(res.stderr) or (sender, res.stderr) == ("live_frames", "")
    for r in rows:
        assert list(r) == MIRROR_FIELDS
        assert (r["encap"], r["family"]) == ("erspan2", "ipv4")
        assert r["pass_mpps"] > 0 and r["roceval_mpps"] > 0
        assert_ratio(r["roceval_vs_pass"], 3, r["roceval_mpps"], r["pass_mpps"], 4)
        # 100 Gb/s of the mirrored frames, 24 bytes more each on the wire, at roceval's Mpps
        pps = 100e9 / ((r["frame_bytes"] + 24) * 8)
        lo, hi = span(r["roceval_mpps"], 4)
        assert pps / (hi * 1e6) - 0.0005 <= r["cores_per_100g"] <= pps / (lo * 1e6) + 0.0005
        # what roceval adds to a frame, in ns: 1000 / roceval_mpps - 1000 / pass_mpps
        (plo, phi) = span(r["pass_mpps"], 4)
        assert 1000 / hi - 1000 / plo - 0.05 <= r["roceval_ns"] <= 1000 / lo - 1000 / phi + 0.05
    assert run("ip", "link", "show", "rvb0").returncode != 0


BPF_PROG_TEST_RUN = 10
# (audit arch, bpf syscall number) where this test knows them
SECCOMP_ARCH = {"x86_64": (0xC000003E, 321), "aarch64": (0xC00000B7, 280)}


def refuse_test_runs():
    """A seccomp filter for the child: bpf(BPF_PROG_TEST_RUN) fails with EPERM, as where a security
    policy refuses live frames.  bench --live test-runs nothing else, so only the sender sees it."""
    arch, nr_bpf = SECCOMP_ARCH[platform.machine()]
    ld_abs, jeq, ret = 0x20, 0x15, 0x06  # BPF_LD|BPF_W|BPF_ABS, BPF_JMP|BPF_JEQ|BPF_K, BPF_RET|BPF_K
    allow, eperm = 0x7FFF0000, 0x00050000 | errno.EPERM
    # seccomp_data: nr at 0, arch at 4, args[0] at 16 (its low half, little-endian)
    prog = [(ld_abs, 0, 0, 4), (jeq, 0, 5, arch), (ld_abs, 0, 0, 0), (jeq, 0, 3, nr_bpf),
            (ld_abs, 0, 0, 16), (jeq, 0, 1, BPF_PROG_TEST_RUN), (ret, 0, 0, eperm), (ret, 0, 0, allow)]

    class SockFilter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                    ("k", ctypes.c_uint32)]

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(SockFilter))]

    insns = (SockFilter * len(prog))(*[SockFilter(*i) for i in prog])
    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_no_new_privs, pr_set_seccomp, seccomp_mode_filter = 38, 22, 2
    if libc.prctl(pr_set_no_new_privs, 1, 0, 0, 0) or \
            libc.prctl(pr_set_seccomp, seccomp_mode_filter, ctypes.byref(SockFprog(len(prog), insns)), 0, 0):
        raise OSError(ctypes.get_errno(), "prctl")


@pytest.mark.skipif(platform.machine() not in SECCOMP_ARCH, reason="no seccomp numbers for this arch")
def test_bench_live_refused():
    # auto falls back, in one line; asked for live frames, the bench fails as before
    res = run("bench", "--live", "--json", "--repeat", "20000", "--rounds", "1", check=True,
              preexec_fn=refuse_test_runs)
    check_live_rows([json.loads(line) for line in res.stdout.splitlines()], "af_packet")
    assert res.stderr == "roceval: the kernel refused BPF_PROG_TEST_RUN in live-frames mode " \
        "(EPERM: Operation not permitted): sending by AF_PACKET instead\n"
    res = run("bench", "--live", "--sender", "live", "--json", "--repeat", "20000", "--rounds", "1",
              preexec_fn=refuse_test_runs)
    assert (res.returncode, res.stdout, res.stderr) == \
        (1, "", "roceval: Couldn't send live frames: Operation not permitted\n")


@pytest.mark.parametrize("args, message", [
    (["--repeat", "0"], "roceval bench: --repeat 0: expected 1-10000000; see 'roceval help bench'\n"),
    (["--rounds", "x"], "roceval bench: --rounds x: expected 1-1000; see 'roceval help bench'\n"),
    (["extra"], "roceval bench: unexpected argument 'extra'; see 'roceval help bench'\n"),
    (["--bogus"], "roceval bench: unknown option or missing value: '--bogus'; see 'roceval help bench'\n"),
    (["-x"], "roceval bench: unknown option '-x'; see 'roceval help bench'\n"),
    (["--repeat"], "roceval bench: option '--repeat' needs a value; see 'roceval help bench'\n"),
    (["--live", "--sender", "xdp"],
     "roceval bench: --sender xdp: expected auto, live or packet; see 'roceval help bench'\n"),
    (["--live", "--sender", ""],
     "roceval bench: --sender : expected auto, live or packet; see 'roceval help bench'\n"),
    (["--live", "--sender"], "roceval bench: option '--sender' needs a value; see 'roceval help bench'\n"),
    (["--sender", "packet"], "roceval bench: --sender packet: only with --live; see 'roceval help bench'\n"),
    (["--mirror"], "roceval bench: --mirror: only with --live; see 'roceval help bench'\n"),
])
def test_bench_usage(args, message):
    res = run("bench", *args)
    assert (res.returncode, res.stdout, res.stderr) == (2, "", message)
