# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Fuzzing in CI: the data path through BPF_PROG_TEST_RUN, the userspace parsers under
libFuzzer with ASan/UBSan, and the replay CLI under valgrind.  Built by `make fuzz-build`, which
`make test` runs first; ROCEVAL_FUZZ_SECONDS (default 60) and ROCEVAL_FUZZ_TARGET_SECONDS
(default 20) bound the time."""
import os
import re
import subprocess
from pathlib import Path

import pytest

import roce
from conftest import ROCEVAL, ROOT, run
from roce import RAW, SLL2, cooked, raw_ip

# bounded by time, each a good part of a minute
pytestmark = pytest.mark.long

FUZZ_DIR = Path(os.environ.get("ROCEVAL_FUZZ_DIR", ROCEVAL.parent if ROCEVAL.parent != ROOT
                               else ROOT / ".output"))
DATAPATH_SECONDS = int(os.environ.get("ROCEVAL_FUZZ_SECONDS", "60"))
TARGET_SECONDS = int(os.environ.get("ROCEVAL_FUZZ_TARGET_SECONDS", "20"))
SUPP = ROOT / "tests" / "fuzz" / "valgrind.supp"
SUMMARY = re.compile(r"datapath: (\d+) frames pushed in [\d.]+ s \(observe (\d+), enforce (\d+), "
                     r"icrc_sample=3 (\d+)\), (\d+) rounds, seed (\d+), (\d+) violations")
MIRRORED = re.compile(r"datapath: (\d+) mirrored frames taken apart \((\d+) malformed, (\d+) nested, "
                      r"(\d+) truncated, (\d+) lost\)")


def fuzz_bin(name):
    path = FUZZ_DIR / f"fuzz-{name}"
    assert path.exists(), f"{path} is missing: run 'make fuzz-build' (make test does)"
    return path


def datapath(*args, timeout):
    res = subprocess.run([str(fuzz_bin("datapath")), "-q", *args], capture_output=True, text=True,
                         timeout=timeout)
    m = SUMMARY.search(res.stdout)
    assert m, f"no summary line:\n{res.stdout}\n{res.stderr[-4000:]}"
    return res, [int(g) for g in m.groups()]


def test_datapath_fuzz(record_property):
    """Every invariant on every frame for ROCEVAL_FUZZ_SECONDS, observe and enforce modes."""
    res, (pushed, observe, enforce, sample, rounds, _, violations) = datapath(
        "-s", str(DATAPATH_SECONDS), "-S", os.environ.get("ROCEVAL_FUZZ_SEED", "1"),
        timeout=DATAPATH_SECONDS + 120)
    record_property("figures", res.stdout.strip())  # the figure the closing note reports
    assert violations == 0 and res.returncode == 0, res.stderr[-8000:]
    assert pushed == observe + enforce + sample
    # every mode ran, and the run was not starved: one round is over 2000 frames
    assert min(observe, enforce, sample) > 2000 and rounds >= 3
    # every fifth round's seed is a mirror's: their frames were taken apart, and their mutants made
    # malformed outer headers, truncating switches and sequence gaps the oracle predicted
    taken, malformed, _, truncated, lost = (int(g) for g in MIRRORED.search(res.stdout).groups())
    assert taken > 1000 and malformed > 0 and truncated > 0 and lost > 0, res.stdout


def test_datapath_fuzz_is_reproducible():
    """The same seed pushes the same frames: a reported violation can be replayed."""
    a, sa = datapath("-n", "30000", "-S", "7", timeout=120)
    b, sb = datapath("-n", "30000", "-S", "7", timeout=120)
    assert a.returncode == b.returncode == 0, a.stderr + b.stderr
    assert sa == sb and sa[0] >= 30000
    c, sc = datapath("-n", "30000", "-S", "8", "-F", "4", timeout=120)
    assert c.returncode == 0, c.stderr
    assert sc[0] != sa[0]  # another seed mutates differently, so rounds end at other counts


def test_datapath_fuzz_usage():
    res = subprocess.run([str(fuzz_bin("datapath")), "-x"], capture_output=True, text=True)
    assert res.returncode == 2 and "Usage: datapath" in res.stderr


def libfuzzer(target, tmp_path, *args):
    """A libFuzzer run writing its corpus and artifacts to tmp_path: its stderr, once it exits 0."""
    res = subprocess.run([str(fuzz_bin(target)), "-seed=1", "-close_fd_mask=3", "-print_final_stats=1",
                          f"-artifact_prefix={tmp_path}/", *args], capture_output=True, text=True,
                         timeout=TARGET_SECONDS + 120)
    assert res.returncode == 0, res.stderr[-8000:]
    return res.stderr


def inited_cov(log):
    return int(re.search(r"^#\d+\s+INITED cov: (\d+) ", log, re.M).group(1))


@pytest.mark.parametrize("target", ["settings", "pcap", "config", "trace", "http"])
def test_libfuzzer_target(target, tmp_path):
    """Each libFuzzer target runs from its shipped corpus with ASan and UBSan, crash and leak free.
    It is judged by what it did, not by how fast: a loaded machine runs fewer inputs in the time,
    and that finds less, but is no failure."""
    corpus = ROOT / "tests" / "fuzz" / "corpus" / target
    seeds = sum(1 for f in corpus.iterdir() if f.is_file())
    assert seeds
    empty, out = tmp_path / "empty", tmp_path / "corpus"
    empty.mkdir()
    out.mkdir()
    # the empty input alone: what a target reaches without its seeds
    bare = inited_cov(libfuzzer(target, tmp_path, "-runs=0", str(empty)))
    log = libfuzzer(target, tmp_path, f"-max_total_time={TARGET_SECONDS}", str(out), str(corpus))
    assert re.search(rf"^INFO: +{seeds} files found in {re.escape(str(corpus))}$", log, re.M), log[-4000:]
    assert f"INFO: seed corpus: files: {seeds} " in log, log[-4000:]
    # every seed ran before the fuzzing did, and the seeds reach past what the empty input does:
    # a target whose inputs no longer get to the parser, or a corpus it rejects early, fails here
    runs = int(re.search(r"stat::number_of_executed_units: (\d+)", log).group(1))
    assert runs >= seeds, log[-4000:]
    assert inited_cov(log) > bare, (bare, log[-4000:])
    artifacts = [p.name for p in tmp_path.iterdir() if re.match(r"(crash|leak|timeout|oom)-", p.name)]
    assert artifacts == [], log[-8000:]


needs_plain_binary = pytest.mark.skipif(
    os.environ.get("ROCEVAL_ASAN") == "1",
    reason="roceval is built with ASan here (make test-asan), which does this checking itself")


def valgrind(*args):
    return subprocess.run(["valgrind", "-q", f"--suppressions={SUPP}", "--error-exitcode=99",
                           "--leak-check=full", "--errors-for-leak-kinds=definite,indirect",
                           str(ROCEVAL), *[str(a) for a in args]],
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def bad_captures(tmp_path_factory, good_capture):
    d = tmp_path_factory.mktemp("bad")
    good = good_capture[0].read_bytes()
    assert len(good) > 5000  # cut.pcap below must be cut inside a record
    (d / "garbage.pcap").write_bytes(bytes(range(256)) * 3)
    (d / "empty.pcap").write_bytes(b"")
    (d / "header-only.pcap").write_bytes(good[:24])
    (d / "cut.pcap").write_bytes(good[:5000])
    # a record header claiming far more bytes than the file holds
    (d / "lying-caplen.pcap").write_bytes(good[:24] + bytes(8) + (0xFFFF).to_bytes(4, "little") * 2
                                          + good[40:200])
    # LINUX_SLL2, every ICRC failing both ways (replay's note), a record shorter than its header
    send, ack = (roce.roce(roce.opcode(roce.RC, op), 8 if op == "SEND_ONLY" else None,
                           frame_kw=dict(src=a, dst=b, bad_icrc=True))
                 for op, a, b in (("SEND_ONLY", roce.V4_SRC, roce.V4_DST),
                                  ("ACKNOWLEDGE", roce.V4_DST, roce.V4_SRC)))
    roce.write_pcap(d / "cooked.pcap", [cooked(send, SLL2), cooked(ack, SLL2), cooked(send, SLL2)[:12]],
                    linktype=SLL2)
    # RAW: IPv4 and IPv6, an empty record, one that is no IP, one cut inside its IP header
    send6 = roce.roce(roce.opcode(roce.RC, "SEND_ONLY"), 8, ipv6=True)
    roce.write_pcap(d / "raw.pcap", [raw_ip(send), raw_ip(send6), b"", b"\x50" + raw_ip(send)[1:],
                                     raw_ip(send6)[:30]], linktype=RAW)
    return d


@needs_plain_binary
@pytest.mark.parametrize("case,status", [
    ("good", 0), ("cnp", 0), ("garbage.pcap", 2), ("empty.pcap", 2),
    ("header-only.pcap", 0), ("cut.pcap", 2), ("lying-caplen.pcap", 2), ("cooked.pcap", 0),
    ("raw.pcap", 0)])
def test_replay_under_valgrind(case, status, bad_captures, good_capture, cnp_capture):
    """roceval replay on good and damaged captures: the documented exit status, zero reports."""
    path = {"good": good_capture[0], "cnp": cnp_capture}.get(case, bad_captures / case)
    res = valgrind("replay", "--json", path)
    reports = [l for l in res.stderr.splitlines() if l.startswith("==")]
    assert reports == [], "\n".join(reports[:60])
    assert res.returncode == status, res.stderr
    if status == 0:
        assert run("replay", "--json", path).stdout == res.stdout


@needs_plain_binary
def test_cli_usage_errors_under_valgrind():
    for args, status in ((["replay"], 2), (["replay", "--pmtu", "7", "x.pcap"], 2),
                         (["replay", "--set", "ports=1,2,3,4,5", "x.pcap"], 2), (["nosuch"], 2),
                         (["rules"], 0), (["help", "replay"], 0), (["--version"], 0)):
        res = valgrind(*args)
        reports = [l for l in res.stderr.splitlines() if l.startswith("==")]
        assert reports == [] and res.returncode == status, (args, res.returncode, res.stderr)
