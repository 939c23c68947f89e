# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""roceval bench as a smoke test: it runs and prints what it promises.  No timing is judged here."""
import json

import pytest

from conftest import run

FIELDS = ["payload", "family", "baseline_ns", "headers_ns", "full_ns", "zlib_ns", "icrc_vs_zlib",
          "headers_over_baseline_ns"]


def test_bench_json():
    res = run("bench", "--json", "--repeat", "20", "--rounds", "3", check=True)
    rows = [json.loads(line) for line in res.stdout.splitlines()]
    assert [(r["payload"], r["family"]) for r in rows] == \
        [(p, f) for p in (0, 256, 1024, 4096) for f in ("ipv4", "ipv6")]
    for r in rows:
        assert list(r) == FIELDS
        assert r["full_ns"] > 0 and r["zlib_ns"] > 0
        assert r["icrc_vs_zlib"] == pytest.approx((r["full_ns"] - r["headers_ns"]) / r["zlib_ns"],
                                                  rel=0.01, abs=2e-3)
        assert r["headers_over_baseline_ns"] == pytest.approx(r["headers_ns"] - r["baseline_ns"],
                                                              abs=0.1)
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
    assert [int(r[2]) for r in rows] == [62, 82, 314, 334, 1082, 1102, 4154, 4174]
    for r in rows:
        full = float(r[5])
        assert float(r[9]) == pytest.approx(1e3 / full, abs=0.01)
        assert float(r[10]) == pytest.approx(int(r[2]) * 8 / full, abs=0.01)


@pytest.mark.parametrize("args, message", [
    (["--repeat", "0"], "roceval bench: --repeat 0: expected 1-10000000; see 'roceval help bench'\n"),
    (["--rounds", "x"], "roceval bench: --rounds x: expected 1-1000; see 'roceval help bench'\n"),
    (["extra"], "roceval bench: unexpected argument 'extra'; see 'roceval help bench'\n"),
    (["--bogus"], "roceval bench: unknown option or missing value: '--bogus'; see 'roceval help bench'\n"),
    (["-x"], "roceval bench: unknown option '-x'; see 'roceval help bench'\n"),
    (["--repeat"], "roceval bench: option '--repeat' needs a value; see 'roceval help bench'\n"),
])
def test_bench_usage(args, message):
    res = run("bench", *args)
    assert (res.returncode, res.stdout, res.stderr) == (2, "", message)
