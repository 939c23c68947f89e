# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""replay of many capture files with one load of the program: each file judged exactly as alone,
--join for the rotations of one capture, unreadable files among good ones, and --fail-on."""
import json
import os
import re
import struct
import subprocess

import pytest

import cm_mad
import roce
from conftest import ROCEVAL, run

US = 1e-6
# The settings gen's congestion faults are predicted with: the congestion maps get work too.
CC = ("--set", "dscp=26", "--set", "cnp_dscp=48", "--set", "ect=required", "--set", "cnp_gap=4us",
      "--set", "cnp_delay=50us")
# Every kind of state the program keeps: CM connections (closed and made again on the same QPNs),
# reorder windows, retransmissions, answers awaited, congestion, PFC, ICRC failures.
STATEFUL = ("--cm", "--reconnect", "--qps", "6", "-f", "mixed", "--pmtu", "512", "--drop", "1%",
            "--duplicate", "1%", "--reorder", "3%", "--nak-wrong-psn", "2%", "--corrupt-icrc", "1%",
            "--bad-opcode", "1%", "--wrong-start-psn", "20%", "--cnp-burst", "3%", "--ce-unanswered", "3%",
            "--pfc", "2%", "--not-ect", "1%", "--ack-delay", "20")


def gen(path, *args):
    run("gen", "-w", path, "--quiet", *args, check=True)
    return path


def in_order(obj):
    """The result with its RDMA CM connections in one order: they come in the order of a kernel
    hash table, which the kernel seeds afresh for each load, so two runs of one file list them
    in different orders."""
    if "connections" in obj:
        obj = dict(obj, connections=sorted(obj["connections"], key=lambda c: json.dumps(c, sort_keys=True)))
    return obj


def alone(path, *opts):
    return in_order(json.loads(run("replay", "--json", *opts, path, check=True).stdout))


def objects(res):
    return [in_order(json.loads(line)) for line in res.stdout.splitlines()]


def without_file(obj, path):
    """The object of one file of many, its "file" (the first key) checked and taken out."""
    assert next(iter(obj)) == "file", obj.keys()
    assert obj["file"] == str(path)
    return {k: v for k, v in obj.items() if k != "file"}


def pcap_split(path, cuts, out):
    """The classic pcap `path` cut before each frame index of `cuts`, as tcpdump -C rotates: each
    part with the file header, the records whole.  Returns the parts' paths."""
    data = path.read_bytes()
    assert data[:4] == b"\xd4\xc3\xb2\xa1", "little-endian pcap"
    records, off = [], 24
    while off < len(data):
        caplen = struct.unpack_from("<I", data, off + 8)[0]
        records.append(data[off:off + 16 + caplen])
        off += 16 + caplen
    bounds = [0, *cuts, len(records)]
    parts = []
    for i, (a, b) in enumerate(zip(bounds, bounds[1:])):
        p = out / f"{path.stem}.{i}"
        p.write_bytes(data[:24] + b"".join(records[a:b]))
        parts.append(p)
    return parts


def severities():
    return {r["id"]: r["severity"] for r in json.loads(run("rules", "--json", check=True).stdout)}


# --- many files, one load ---------------------------------------------------------------

GEN_VARIANTS = [(), ("--cm",), ("--cm", "--reconnect", "--qps", "6"), ("-6", "--drop", "2%"),
                ("-f", "mixed", "--reorder", "5%", "--duplicate", "2%"), ("--corrupt-icrc", "5%", "--pfc", "5%"),
                ("--cm", "--ce-unanswered", "5%", "--cnp-burst", "5%", "--ack-delay", "30"),
                ("--nak-wrong-psn", "5%", "--go-back-0", "3%", "--rnr-early", "3%"),
                ("--cm", "--wrong-start-psn", "50%", "--mismatched-pmtu", "50%", "--qps", "9"),
                ("--bad-opcode", "3%", "--bad-pad", "3%", "--se-misuse", "3%", "--dscp", "3%")]


@pytest.fixture(scope="module")
def sixty(tmp_path_factory):
    """60 small generated captures, each of its own seed, through every kind of traffic and fault."""
    d = tmp_path_factory.mktemp("sixty")
    return [gen(d / f"c{i:02}.pcap", "--seed", str(100 + i), "--count", str(40 + 7 * i),
                *GEN_VARIANTS[i % len(GEN_VARIANTS)]) for i in range(60)]


@pytest.mark.long
def test_sixty_files_each_as_alone(sixty):
    res = run("replay", "--json", *CC, *sixty, check=True)
    assert res.stderr == ""
    many = objects(res)
    assert len(many) == 60
    for path, obj in zip(sixty, many):
        assert without_file(obj, path) == alone(path, *CC), path


def best_of(n, *args):
    """The least CPU time (user and system, the kernel's verifying and test runs included) of n
    runs of roceval: what other processes take of the machine meanwhile does not count in it."""
    best = None
    for _ in range(n):
        proc = subprocess.Popen([str(ROCEVAL), *map(str, args)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        err = proc.stderr.read().decode()
        proc.stderr.close()
        assert proc.returncode == 0, (args, err)
        t = usage.ru_utime + usage.ru_stime
        best = t if best is None else min(best, t)
    return best


def test_sixty_files_cost_about_one(sixty, cnp_capture, record_property):
    """The program is verified once, the tables are sized for the largest file and the reset
    between files costs what a file used: sixty files (14,790 frames) take under three times one
    one-frame file's CPU here (2.7x; 7x when every file reset the full-size tables; the times
    measured are printed)."""
    one = best_of(3, "replay", "--json", cnp_capture)
    many = best_of(2, "replay", "--json", *sixty)
    record_property("figures", f"replay: one file {one:.3f} s, sixty files {many:.3f} s of CPU: {many / one:.2f}x")
    assert many < 4 * one, (one, many)


def sets_for(frames):
    """The flow table's sets for a replay of at most `frames` frames, when smaller than the full
    table's: a power of two, at least 4, 16 slots a frame."""
    sets = 4
    while sets * 8 < frames * 16:
        sets *= 2
    return sets


def flow_table(*args, stdin=None):
    """(sets, connections) of the flow table a replay loads, as -v names them."""
    res = subprocess.run([str(ROCEVAL), "-v", "replay", *map(str, args)], stdin=stdin, capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    m = re.search(r"flow table: (\d+) sets of 8 slots, (\d+) connections", res.stderr)
    assert m, res.stderr
    return int(m[1]), int(m[2])


# A pcap record header and the shortest frame that names a flow: a raw-IP one's IPv4, UDP and BTH.
ENTRY_FRAME_BYTES = 16 + 20 + 8 + 12


def test_flow_table_sized_for_the_largest_file(tmp_path):
    """Files judged each alone start from empty tables: the flow table is sized for the largest
    file's frames (one that makes an entry takes ENTRY_FRAME_BYTES of a file at least); --join's one capture for all of
    theirs; --flows is honoured as given; standard input and a file of more frames than 4096
    get the full size (65536 flows: 12288 sets)."""
    small = gen(tmp_path / "small.pcap", "-c", "10", "-s", "1", "--max-size", "64")
    larger = gen(tmp_path / "larger.pcap", "-c", "100", "-s", "2", "--max-size", "64")
    bound = {p: p.stat().st_size // ENTRY_FRAME_BYTES for p in (small, larger)}
    assert bound[small] < bound[larger] <= 4096
    assert flow_table(small, larger) == flow_table(larger, small) == (sets_for(bound[larger]), bound[larger])
    both = bound[small] + bound[larger]
    assert flow_table("--join", small, larger) == (sets_for(both), both)
    assert flow_table("--flows", "100", small) == (19, 100)
    with open(small, "rb") as stdin:
        assert flow_table("-", stdin=stdin) == (12288, 65536)
    big = gen(tmp_path / "big.pcap", "-c", "6000", "-s", "3")
    assert big.stat().st_size // ENTRY_FRAME_BYTES > 4096
    assert flow_table(small, big) == (12288, 65536)


SMALL_MANY = ("--max-size", "64", "-f", "mixed", "--pmtu", "512", "--nak-wrong-psn", "2%", "--corrupt-icrc", "1%",
              "--cnp-burst", "3%", "--ce-unanswered", "3%", "--pfc", "2%")


@pytest.mark.parametrize("traffic", [("-c", "120", "--qps", "30", "--cm", "--reconnect"),
                                     ("-c", "500", "--qps", "150", "--reorder", "5%", "--duplicate", "2%",
                                      "--drop", "2%")], ids=["cm", "qps150"])
def test_small_flow_table_judges_as_full_size(tmp_path, traffic):
    """A small file of many flows judged in the flow table sized for it and in the full-size one
    (--flows 65536): the same verdicts, every flow listed the same."""
    path = gen(tmp_path / "many.pcap", "-s", "43", *SMALL_MANY, *traffic)
    assert path.stat().st_size // ENTRY_FRAME_BYTES <= 4096
    sized = alone(path, *CC, "--top", "100000")
    assert len(sized["flows"]) > 50 and sized["rules"]["flow_evicted"] == 0 and sized["rules"]["cnp"] > 0
    assert sized == alone(path, *CC, "--top", "100000", "--flows", "65536")


@pytest.mark.parametrize("opts", [(), ("--set", "icrc_sample=3"), ("--flows", "16"), CC],
                         ids=["defaults", "icrc_sample", "small_table", "congestion"])
def test_after_a_file_full_of_state(tmp_path, opts):
    """A file judged after others, the same capture among them, equals it judged alone; and
    judged as one capture (--join), the parts equal the whole."""
    whole = gen(tmp_path / "whole.pcap", "--seed", "16", "--count", "900", *STATEFUL)
    parts = pcap_split(whole, [250, 520], tmp_path)
    files = [whole, *parts, whole]
    res = run("replay", "--json", *opts, *files, check=True)
    many = objects(res)
    assert len(many) == len(files)
    alones = {p: alone(p, *opts) for p in (whole, *parts)}
    for path, obj in zip(files, many):
        assert without_file(obj, path) == alones[path], path
    # the state carried from part to part changes what they count: a reset that left any of it
    # behind would show
    joined = in_order(json.loads(run("replay", "--json", "--join", *opts, *parts, check=True).stdout))
    assert joined == alones[whole]
    assert any(sum(alones[p]["rules"][k] for p in parts) != alones[whole]["rules"][k]
               for k in alones[whole]["rules"])


def test_a_part_after_its_predecessor_is_judged_afresh(tmp_path):
    """The second half of a CM conversation: alone its RTUs and DREQs match no connection, after
    the first half judged as one capture they do."""
    whole = gen(tmp_path / "cm.pcap", "--seed", "4", "--cm", "--count", "200", "--qps", "2")
    first, second = pcap_split(whole, [9], tmp_path)  # the REQ and the REP, then the RTU
    res = run("replay", "--json", first, second, check=True)
    a, b = objects(res)
    assert without_file(b, second) == alone(second)
    assert b["rules"]["cm_rtu_unknown"] > 0 and b["rules"]["cm_established"] == 0
    joined = json.loads(run("replay", "--json", "--join", first, second, check=True).stdout)
    assert joined["rules"]["cm_rtu_unknown"] == 0 and joined["rules"]["cm_established"] == 1


def test_no_answer_hint_is_left_behind(tmp_path):
    """A capture where a request was answered leaves the hint of which QP its ACKs answer; a
    one-way mirror's capture of the same hosts after it gives up on the ACKs of that PSN window
    as it does alone (after 16 looked up in vain: tests/test_latency.py), and so leaves the ACK
    after the next request untimed."""
    c = cm_mad.Conn(b_psn=0x100100)
    answered = roce.write_pcap(tmp_path / "answered.pcap", [c.to_b("SEND_ONLY", c.b_psn - 50, 64),
                                                            c.to_a("ACKNOWLEDGE", c.b_psn - 50)])
    frames = [(i * US, c.to_a("ACKNOWLEDGE", c.b_psn + i)) for i in range(20)]
    frames += [(30 * US, c.to_b("SEND_ONLY", c.b_psn + 20, 64)), (31 * US, c.to_a("ACKNOWLEDGE", c.b_psn + 20))]
    mirror = roce.write_pcap(tmp_path / "mirror.pcap", [f for _, f in frames], times=[1 + t for t, _ in frames])
    assert alone(mirror)["latency"]["ack"]["count"] == 0
    _, after = objects(run("replay", "--json", answered, mirror, check=True))
    assert without_file(after, mirror) == alone(mirror)
    # as one capture the hint stays, the ACKs are never given up on, and the last one is timed
    joined = json.loads(run("replay", "--json", "--join", answered, mirror, check=True).stdout)
    assert joined["latency"]["ack"]["count"] == 2


# --- output ----------------------------------------------------------------------------

def test_text_reports_then_a_table(tmp_path):
    good = roce.write_pcap(tmp_path / "good.pcap", [roce.cnp(), roce.cnp()])
    bad = roce.write_pcap(tmp_path / "bad.pcap", [roce.roce(0x04, 16, tver=1), roce.roce(0x04, 16, tver=2),
                                                  roce.cnp()])
    res = run("replay", good, bad, check=True)
    assert res.stderr == ""
    out = res.stdout
    assert out.startswith(f"{good}: 2 frames, 2 flows\n")
    # each report as the file alone prints it, in order
    alone_good, alone_bad = run("replay", good, check=True).stdout, run("replay", bad, check=True).stdout
    assert out.index(alone_good) == 0
    assert out.index(alone_bad) > 0
    table = out[out.index(alone_bad) + len(alone_bad):]
    rows = [line.split() for line in table.splitlines() if line.strip()]
    assert rows == [["file", "frames", "roce", "errors", "warnings", "rules"],
                    [str(good), "2", "2", "0", "0", "cnp"],
                    [str(bad), "3", "3", "2", "0", "tver,cnp"]], table


def test_json_one_object_a_line_each_with_its_file(tmp_path, cnp_capture):
    two = roce.write_pcap(tmp_path / "two.pcap", [roce.cnp(), roce.cnp()])
    res = run("replay", "--json", cnp_capture, two, cnp_capture, check=True)
    lines = res.stdout.splitlines()
    assert len(lines) == 3 and res.stdout.endswith("}\n")
    objs = [json.loads(line) for line in lines]
    assert [(o["file"], o["frames"]) for o in objs] == [(str(cnp_capture), 1), (str(two), 2),
                                                         (str(cnp_capture), 1)]
    # a file alone keeps its output as it was: no "file"
    assert "file" not in alone(cnp_capture)


def test_standard_input_among_the_files(tmp_path, cnp_capture):
    three = roce.write_pcap(tmp_path / "three.pcap", [roce.cnp()] * 3)
    with open(three, "rb") as stdin:
        res = subprocess.run([str(ROCEVAL), "replay", "--json", cnp_capture, "-", cnp_capture], stdin=stdin,
                             capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert [(o["file"], o["frames"]) for o in objects(res)] == [(str(cnp_capture), 1), ("-", 3),
                                                                (str(cnp_capture), 1)]


def test_tables_sized_for_the_files_judge_as_full_size(tmp_path):
    """Files' sizes bound their frames, and the hash tables are sized for the entries those frames
    can make; standard input, whose size is not known, gets the full size: the verdicts agree."""
    path = gen(tmp_path / "state.pcap", "-c", "4000", "-s", "41", *STATEFUL)
    with open(path, "rb") as stdin:
        res = subprocess.run([str(ROCEVAL), "replay", "--json", *CC, "-"], stdin=stdin,
                             capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    full = in_order(json.loads(res.stdout))
    assert full["rules"]["cm_established"] > 0 and full["rules"]["cnp"] > 0
    assert alone(path, *CC) == full


@pytest.mark.parametrize("json_out", [True, False], ids=["json", "text"])
def test_an_unreadable_file_among_others(tmp_path, cnp_capture, json_out):
    missing = tmp_path / "missing.pcap"
    garbage = tmp_path / "garbage.pcap"
    garbage.write_bytes(bytes(range(256)) * 4)
    args = ["replay"] + (["--json"] if json_out else []) + [missing, cnp_capture, garbage, cnp_capture]
    res = run(*args)
    assert res.returncode == 2, res.stderr
    lines = res.stderr.splitlines()
    assert len(lines) == 2, lines
    assert str(missing) in lines[0] and str(garbage) in lines[1]
    if json_out:
        assert [o["file"] for o in objects(res)] == [str(cnp_capture)] * 2
    else:
        assert res.stdout.count(f"{cnp_capture}: 1 frames, 1 flows\n") == 2
        rows = [line.split() for line in res.stdout.splitlines()[-5:]]
        assert rows[0][0] == "file" and [r[0] for r in rows[1:]] == [str(missing), str(cnp_capture),
                                                                     str(garbage), str(cnp_capture)]
        assert rows[1][1:] == ["-", "-", "-", "-", "unreadable"] == rows[3][1:]


def test_a_damaged_file_among_others(tmp_path, cnp_capture):
    data = roce.pcap_bytes([roce.cnp(), roce.cnp(), roce.cnp()])
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(data[:-30])
    res = run("replay", "--json", cut, cnp_capture)
    assert res.returncode == 2
    assert [(o["file"], o["frames"]) for o in objects(res)] == [(str(cut), 2), (str(cnp_capture), 1)]
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and str(cut) in lines[0] and "damaged" in lines[0]


# --- --join ---------------------------------------------------------------------------------

def test_join_reads_rotations_as_one_capture(tmp_path):
    whole = gen(tmp_path / "rot.pcap", "--seed", "9", "--count", "400", "--reorder", "5%", "--drop", "2%")
    parts = pcap_split(whole, [100, 101, 300], tmp_path)
    head, rest = run("replay", "--join", *parts, check=True).stdout.split("\n", 1)
    whole_head, whole_rest = run("replay", whole, check=True).stdout.split("\n", 1)
    assert rest == whole_rest
    assert head == f"{parts[0]} ... {parts[-1]} (4 files): " + whole_head.split(": ", 1)[1]
    r = alone(whole)
    with open(parts[1], "rb") as stdin:
        res = subprocess.run([str(ROCEVAL), "replay", "--json", "--join", parts[0], "-", *parts[2:]], stdin=stdin,
                             capture_output=True, text=True, timeout=120)
    assert in_order(json.loads(res.stdout)) == r


def test_join_skips_an_unreadable_file(tmp_path):
    whole = gen(tmp_path / "rot.pcap", "--seed", "9", "--count", "100")
    a, b = pcap_split(whole, [50], tmp_path)
    missing = tmp_path / "missing.pcap"
    res = run("replay", "--json", "--join", a, missing, b)
    assert res.returncode == 2
    assert len(res.stderr.splitlines()) == 1 and str(missing) in res.stderr
    assert in_order(json.loads(res.stdout)) == alone(whole)


# --- --fail-on ---------------------------------------------------------------------------------

@pytest.mark.long
def test_fail_on(tmp_path, cnp_capture):
    sev = severities()
    assert sev["tver"] == "error" and sev["psn_duplicate"] == "warning" and sev["cnp"] == "info"
    error = roce.write_pcap(tmp_path / "error.pcap", [roce.roce(0x04, 16, tver=1)])
    send = roce.opcode(roce.RC, "SEND_ONLY")
    warning = roce.write_pcap(tmp_path / "warning.pcap",
                              [roce.roce(send, 64, psn=p, dqpn=0x11) for p in (1000, 1001, 1001)])
    r = alone(warning)
    assert {k for k, v in r["rules"].items() if v and sev[k] != "info"} == {"psn_duplicate"}
    info = cnp_capture
    clean = roce.write_pcap(tmp_path / "clean.pcap", [roce.roce(send, 64, psn=5, dqpn=0x12)])
    assert not any(alone(clean)["rules"].values())
    want = {  # (level, files): exit status
        ("error", (error,)): 3, ("error", (warning, info, clean)): 0, ("error", (clean, error)): 3,
        ("warning", (warning,)): 3, ("warning", (info, clean)): 0, ("warning", (error,)): 3,
        ("info", (info,)): 3, ("info", (clean,)): 0, ("info", (clean, clean)): 0,
    }
    for (level, files), code in want.items():
        for out in ((), ("--json",)):
            res = run("replay", *out, "--fail-on", level, *files)
            assert res.returncode == code, (level, files, out, res.stderr)
            assert res.stderr == ""
    # without --fail-on, broken rules are no failure
    assert run("replay", error).returncode == 0
    # joined, the one capture is judged
    assert run("replay", "--join", "--fail-on", "error", clean, error).returncode == 3


def test_fail_on_keeps_the_other_statuses(tmp_path):
    error = roce.write_pcap(tmp_path / "error.pcap", [roce.roce(0x04, 16, tver=1)])
    missing = tmp_path / "missing.pcap"
    # a file not read outweighs a rule broken: the run did not judge everything
    assert run("replay", "--fail-on", "error", error, missing).returncode == 2
    assert run("replay", "--fail-on", "error", missing).returncode == 2
    res = run("replay", "--fail-on", "errors", error)
    assert res.returncode == 2 and len(res.stderr.splitlines()) == 1
    assert "--fail-on" in res.stderr and "error, warning or info" in res.stderr


def test_fail_on_is_documented():
    text = run("help", "replay", check=True).stdout
    assert "--fail-on" in text and "--join" in text
    assert re.search(r"\b3 when", text), text
    assert "roceval replay --fail-on error" in text
    man = (ROCEVAL.parent / "docs" / "roceval.8").read_text()
    assert "fail\\-on" in man
