# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The roceval command line: replay's errors and output, help, prefixes, the rule list."""
import json
import re
import subprocess

import pytest

import roce
from conftest import ROCEVAL, ROOT, run

TOTALS = ("frames", "bytes", "roce", "rocev1", "rocev2_ipv4", "rocev2_ipv6", "roce_bytes", "icrc_ok", "icrc_bad",
          "icrc_unchecked", "icrc_skipped", "snapped", "dropped",
          "trace_samples", "trace_skipped")


def header_rules():
    """(id, severity) of every rule, in table order, read from include/roceval_rules.h."""
    text = (ROOT / "include" / "roceval_rules.h").read_text()
    table = text[text.index("#define ROCEVAL_RULES(X)"):text.index("enum roceval_rule {")]
    sev = {"SEV_ERROR": "error", "SEV_WARNING": "warning", "SEV_INFO": "info"}
    return [(i, sev[s]) for i, s in re.findall(r'X\(\w+, "(\w+)", (SEV_\w+),', table)]


def one_error_line(res, code, *words):
    """Exit `code`, nothing on stdout, one stderr line from roceval naming the problem."""
    assert res.returncode == code, (res.stdout, res.stderr)
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("roceval"), lines[0]
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


def commands():
    if not ROCEVAL.exists():  # collection runs before conftest can say it is missing
        return []
    out = run("help", check=True).stdout
    block = out[out.index("Commands:"):out.index("Options:")]
    names = re.findall(r"^  (\w+) {2,}\S", block, re.M)
    assert "replay" in names and "rules" in names
    return names


# --- replay: bad input ----------------------------------------------------------

def test_missing_file(tmp_path):
    path = tmp_path / "nope.pcap"
    line = one_error_line(run("replay", path), 2, str(path))
    assert line.count(str(path)) == 1


def test_garbage_file(tmp_path):
    path = tmp_path / "garbage.pcap"
    path.write_bytes(bytes(range(256)) * 4)
    one_error_line(run("replay", "--json", path), 2, str(path))


def test_empty_file(tmp_path):
    path = tmp_path / "empty.pcap"
    path.write_bytes(b"")
    one_error_line(run("replay", path), 2, str(path))


def test_directory(tmp_path):
    one_error_line(run("replay", tmp_path), 2, str(tmp_path))


@pytest.mark.parametrize("linktype,name", [(0, "NULL"), (105, "IEEE802_11"), (14, "14")])
def test_non_ethernet(tmp_path, linktype, name):
    """A link type replay does not read, named, or numbered where libpcap has no name for it."""
    path = roce.write_pcap(tmp_path / "raw.pcap", [roce.cnp()[14:]], linktype=linktype)
    one_error_line(run("replay", "--json", path), 2, str(path), f"link type {name} ", "Ethernet")


def test_non_ethernet_pcapng(tmp_path):
    path = tmp_path / "wifi.pcapng"
    path.write_bytes(roce.pcapng_bytes([roce.cnp()[14:]], linktype=105))
    one_error_line(run("replay", path), 2, str(path), "IEEE802_11", "Ethernet")


@pytest.mark.parametrize("cut", [30, 70, 74 + 16 - 8], ids=["in_frame", "in_frame_start",
                                                           "in_record_header"])
def test_capture_cut_mid_record(tmp_path, cut):
    """Counters for the frames before the damage still come out; the exit says it was damaged."""
    frames = [roce.cnp(), roce.cnp(), roce.roce(0x04, 16, tver=1), roce.cnp()]
    assert len(frames[-1]) == 74
    data = roce.pcap_bytes(frames)
    path = tmp_path / "cut.pcap"
    path.write_bytes(data[:len(data) - cut])
    res = run("replay", "--json", path)
    assert res.returncode == 2, res.stderr
    r = json.loads(res.stdout)
    assert (r["frames"], r["roce"], r["icrc_ok"]) == (3, 3, 3)
    assert r["rules"]["cnp"] == 2 and r["rules"]["tver"] == 1
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("roceval") and str(path) in lines[0], lines
    # and the table form prints the same counts before the error
    res = run("replay", path)
    assert res.returncode == 2
    assert re.search(r"^\s+frames\s+3$", res.stdout, re.M), res.stdout
    assert len(res.stderr.splitlines()) == 1


BAD_OPTIONS = [
    (("--pmtu", "1000"), "1000"), (("--pmtu", "abc"), "abc"), (("--pmtu", "-1"), "-1"),
    (("--pmtu", "8192"), "8192"), (("-m", "300"), "300"),
    (("--pkey", "0x8000"), "0x8000"), (("--pkey", "0"), "pkeys=0"),
    (("--pkey", "0x10000"), "0x10000"),
    (("--pkey", "ffff"), "ffff"), (("--pkey", ",,"), ",,"),
    (("--pkey", ",".join(["1"] * 17)), "pkeys="),
    (("--port", "0"), "ports=0"), (("--port", "70000"), "70000"), (("--port", "x"), "ports=x"),
    (("--port", "1", "--port", "2", "--port", "3", "--port", "4", "--port", "5"), "5"),
    (("--set", "nosuch=1"), "nosuch"), (("--set", "resv6=maybe"), "maybe"),
    (("--set", "pmtu"), "pmtu"), (("--set", "=1"), "=1"), (("--set", "enforce=perhaps"), "perhaps"),
    (("--set", "icrc_sample=0"), "icrc_sample=0"),
    (("--set", "latency_sample=0"), "latency_sample=0"),
    (("--set", "latency_sample=x"), "latency_sample=x"),
    (("--set", "latency_sample=flows"), "latency_sample=flows: expected flow, or a whole number"),
    (("--frobnicate",), "--frobnicate"), (("-x",), "-x"), (("--json=yes",), "--json"),
    (("--pmtu",), "--pmtu"),
]


@pytest.mark.parametrize("opts,word", BAD_OPTIONS, ids=[" ".join(o) for o, _ in BAD_OPTIONS])
def test_bad_option(opts, word, cnp_capture):
    args = list(opts) if opts == ("--pmtu",) else list(opts) + [str(cnp_capture)]
    one_error_line(run("replay", *args), 2, word)


def test_file_count(cnp_capture):
    one_error_line(run("replay", "--json"), 2, "capture file")


def test_not_root(cnp_capture):
    res = run("/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
              ROCEVAL, "replay", "--json", cnp_capture)
    one_error_line(res, 1, "root")


# --- replay: output -------------------------------------------------------------

def test_json_is_one_object_with_every_id(cnp_capture):
    res = run("replay", "--json", cnp_capture, check=True)
    assert res.stderr == ""
    assert res.stdout.endswith("}\n") and res.stdout.count("\n") == 1
    r = json.loads(res.stdout)
    assert isinstance(r, dict)
    for k in TOTALS:
        assert isinstance(r[k], int), k
    assert list(r["rules"]) == [i for i, _ in header_rules()]
    assert all(isinstance(v, int) for v in r["rules"].values())
    assert (r["frames"], r["roce"], r["icrc_ok"], r["rules"]["cnp"]) == (1, 1, 1, 1)
    # options change what is counted, never the shape
    r2 = json.loads(run("replay", "--json", "--pmtu", "1024", "--pkey", "0xffff", "--port", "1",
                        "--set", "resv6=check", cnp_capture, check=True).stdout)
    assert list(r2["rules"]) == list(r["rules"])


def test_pcapng(tmp_path):
    frames = [roce.cnp(), roce.roce(0x11, syndrome=0x62), roce.roce(0x04, 64, tver=3)]
    path = tmp_path / "c.pcapng"
    path.write_bytes(roce.pcapng_bytes(frames))
    r = json.loads(run("replay", "--json", path, check=True).stdout)
    assert (r["frames"], r["roce"], r["icrc_ok"]) == (3, 3, 3)
    assert {k: v for k, v in r["rules"].items() if v} == {"cnp": 1, "nak_access": 1, "tver": 1}


def test_table(good_capture):
    path, summary = good_capture
    want = summary["expected"]
    res = run("replay", path, check=True)
    assert res.stderr == ""
    out = res.stdout
    assert out.startswith(f"{path}: {want['frames']} frames, 2 flows\n")
    for name in ("frames", "roce", "icrc_ok", "icrc_bad"):
        value = want[name]
        assert re.search(rf"^\s+{name}\s+{value}$", out, re.M), name
    for rule, _ in header_rules():
        assert re.search(rf"^\s+{rule}\s+0\s", out, re.M), rule


def test_empty_capture(tmp_path):
    path = roce.write_pcap(tmp_path / "none.pcap", [])
    r = json.loads(run("replay", "--json", path, check=True).stdout)
    assert all(r[k] == 0 for k in TOTALS)
    assert not any(r["rules"].values())


# --- help, prefixes, unknown commands -----------------------------------------------

def test_help_lists_commands():
    res = run("help", check=True)
    assert res.stdout.startswith("Usage: roceval")
    assert run("--help", check=True).stdout == res.stdout
    assert run("-h", check=True).stdout == res.stdout
    assert len(commands()) >= 2


def test_no_command():
    res = run(ROCEVAL)
    assert res.returncode == 2
    assert res.stderr.startswith("Usage: roceval") and res.stdout == ""


@pytest.mark.parametrize("cmd", commands())
def test_help_of_each_command(cmd):
    res = run("help", cmd, check=True)
    assert res.stdout.startswith(f"Usage: roceval {cmd} ")
    assert res.stderr == ""
    # the summary line of the command list, then a real description
    summary = re.search(rf"^  {cmd} +(.+)$", run("help").stdout, re.M).group(1)
    assert summary in res.stdout
    assert len(res.stdout.splitlines()) >= 4
    assert run(cmd, "--help", check=True).stdout == res.stdout
    assert run(cmd, "-h", check=True).stdout == res.stdout


def test_unique_prefix(cnp_capture):
    full = run("rules", "--json", check=True).stdout
    assert run("rul", "--json", check=True).stdout == full
    r = json.loads(run("repl", "--json", cnp_capture, check=True).stdout)
    assert r["frames"] == 1
    assert run("help", "repl", check=True).stdout == run("help", "replay", check=True).stdout


def test_ambiguous_prefix():
    line = one_error_line(run("r"), 2, "ambiguous")
    assert "replay" in line and "rules" in line
    one_error_line(run("help", "r"), 2, "ambiguous")


@pytest.mark.parametrize("args", [("frobnicate",), ("replayx", "capture.pcap"), ("help", "zzz"),
                                  ("--bogus", "rules")])
def test_unknown_command(args):
    one_error_line(run(*args), 2)


def test_version():
    res = run("--version", check=True)
    assert re.fullmatch(r"roceval \S+\n", res.stdout)


# --- rules ------------------------------------------------------------------------

def test_rules_json_lists_every_id():
    res = run("rules", "--json", check=True)
    assert res.stdout.count("\n") == 1
    rules = json.loads(res.stdout)
    assert [(x["id"], x["severity"]) for x in rules] == header_rules()
    for x in rules:
        assert set(x) == {"id", "severity", "reference", "description"}
        assert x["reference"] and x["description"]


def test_rules_text_and_markdown():
    ids = [i for i, _ in header_rules()]
    text = run("rules", check=True).stdout.splitlines()
    blank = text.index("")
    assert [line.split()[0] for line in text[1:blank]] == ids
    # then the latency kinds, from the same header
    assert [line.split()[0] for line in text[blank + 1:]] == ["LATENCY", "ack", "read", "nak_retx", "rnr_retry",
                                                           "ce_cnp"]
    md = run("rules", "--markdown", check=True).stdout
    assert [m for m in re.findall(r"^\| `(\w+)` \| (?:error|warning|info) \|", md, re.M)] == ids
    one_error_line(run("rules", "--yaml"), 2, "rules")


@pytest.mark.parametrize("cmd", commands())
def test_unknown_option_is_one_line_everywhere(cmd):
    """Every command says an unknown option the same way, in one line, and exits 2."""
    for opt in ("--frobnicate", "-Z"):
        res = run(cmd, opt, "x", stdin=subprocess.DEVNULL)
        assert res.returncode == 2, (cmd, opt, res.stderr)
        assert res.stderr.count("\n") == 1, (cmd, opt, res.stderr)
        assert res.stderr.startswith(f"roceval {cmd}: ") and f"see 'roceval help {cmd}'" in res.stderr


@pytest.mark.parametrize("cmd,opt", [("attach", "--mode"), ("bench", "--repeat"), ("daemon", "-c"),
                                     ("gen", "--count"), ("replay", "-m"), ("stats", "--top"),
                                     ("top", "-n"), ("trace", "--rule")])
def test_missing_value_is_said_everywhere(cmd, opt):
    """An option given last without its value: named, in the one line every command uses."""
    res = run(cmd, opt, stdin=subprocess.DEVNULL)
    assert (res.returncode, res.stderr) == (
        2, f"roceval {cmd}: option '{opt}' needs a value; see 'roceval help {cmd}'\n")


IFACE_COMMANDS = [("attach",), ("status",), ("stats",), ("top", "-n", "1"), ("trace",), ("config",),
                  ("gen", "--count", "1", "-i")]


@pytest.mark.parametrize("args", IFACE_COMMANDS, ids=[a[0] for a in IFACE_COMMANDS])
def test_no_such_interface_is_the_same_everywhere(args):
    res = run(*args, "rvnosuch0", stdin=subprocess.DEVNULL)
    assert (res.returncode, res.stderr) == (1, "roceval: rvnosuch0: no such interface\n"), args


def test_exit_codes_are_documented():
    text = run("help", check=True).stdout
    assert "Exit status, for every command: 0 success; 1 a runtime failure (no such" in text
    assert "2 bad usage" in text
    assert "Exit status" in (ROOT / "README.md").read_text()


def test_rule_references_cite_the_specification():
    rules = json.loads(run("rules", "--json", check=True).stdout)
    for r in rules:
        assert "rocev2.md" not in r["reference"], r
        assert re.match(r"^(IBA [A0-9]|RFC \d|IEEE 802|roceval)", r["reference"]), r


def test_more_flows_grammar(tmp_path):
    send_only = roce.opcode(roce.RC, "SEND_ONLY")
    pcap = roce.write_pcap(tmp_path / "three.pcap",
                           [bytes(roce.roce(send_only, b"\x00" * 8, dqpn=q)) for q in (0x11, 0x12, 0x13)])
    out = run("replay", "--top", "2", pcap, check=True).stdout
    assert "  (1 more flow)\n" in out
    out = run("replay", "--top", "1", pcap, check=True).stdout
    assert "  (2 more flows)\n" in out


def test_byte_totals(tmp_path):
    """bytes and roce_bytes: whole frames, summed independently here."""
    send_only = roce.opcode(roce.RC, "SEND_ONLY")
    rocev2 = [bytes(roce.roce(send_only, b"\x00" * n, dqpn=0x20 + n)) for n in (0, 8, 256)]
    rocev2.append(bytes(roce.cnp(ipv6=True)))
    other = bytes(roce.frame(roce.transport(send_only, b""), dport=4792))  # not a RoCEv2 port
    pcap = roce.write_pcap(tmp_path / "b.pcap", rocev2 + [other])
    r = json.loads(run("replay", "--json", pcap, check=True).stdout)
    assert (r["frames"], r["roce"]) == (5, 4)
    assert r["roce_bytes"] == sum(map(len, rocev2))
    assert r["bytes"] == sum(map(len, rocev2)) + len(other)
