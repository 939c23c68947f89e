# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""RDMA CM: connections learned from their handshake, and their first packets judged by it."""
import json
import re
import struct
import subprocess
import time

import pytest

import cm_mad
import roce
from conftest import ROCEVAL, nonzero_rules, real_capture, replay, replay_json, run, send_pcap

CM_CAPTURES = ["cx-ibdump-rdmacm-send.pcap", "cx-ibdump-rdmacm-write.pcap",
               "cx-ibdump-rdmacm-read.pcap", "nvmeof-discover-a.pcap", "nvmeof-discover-b.pcap"]




def error_rules(result):
    rules = json.loads(run("rules", "--json", check=True).stdout)
    errors = {r["id"] for r in rules if r["severity"] == "error"}
    return {k: v for k, v in nonzero_rules(result).items() if k in errors}


def tshark_fields(pcap, *fields, display="infiniband.mad"):
    cmd = ["tshark", "-r", str(pcap), "-d", "udp.port==4791,infiniband", "-Y", display, "-T",
           "fields", "-E", "separator=\t"]
    for f in fields:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return [line.split("\t") for line in out.splitlines()]


def flows_by_key(r):
    return {(f["src"], f["dst"], f["dqpn"]): f for f in r["flows"]}


# --- crafted handshakes ---------------------------------------------------

def test_complete_handshake(tmp_path):
    c = cm_mad.Conn()
    frames = c.handshake() + c.conversation() + c.teardown()
    r = replay(tmp_path, frames)
    assert nonzero_rules(r) == {"cm": 5, "cm_established": 1}
    (conn,) = r["connections"]
    assert conn["state"] == "closed"
    assert conn["service"] == "tcp/4420 (NVMe-oF)"
    assert conn["initiator"] == {"addr": c.a, "qpn": c.a_qpn, "start_psn": c.a_psn,
                                 "comm_id": c.a_comm}
    assert conn["responder"] == {"addr": c.b, "qpn": c.b_qpn, "start_psn": c.b_psn,
                                 "comm_id": c.b_comm}
    assert (conn["pmtu"], conn["pkey"], conn["retry_count"], conn["rnr_retry_initiator"],
            conn["rnr_retry_responder"], conn["ack_timeout"]) == (1024, 0xFFFF, 7, 7, 7, 0x13)
    flows = flows_by_key(r)
    to_b, to_a = flows[(c.a, c.b, c.b_qpn)], flows[(c.b, c.a, c.a_qpn)]
    assert (to_b["service"], to_b["peer_qpn"]) == ("tcp/4420 (NVMe-oF)", c.a_qpn)
    assert (to_a["service"], to_a["peer_qpn"]) == ("tcp/4420 (NVMe-oF)", c.b_qpn)
    assert "service" not in flows[(c.a, c.b, 1)]


def test_handshake_over_ipv6(tmp_path):
    c = cm_mad.Conn(a="2001:db8::1", b="2001:db8::2", ipv6=True, port=3260)
    r = replay(tmp_path, c.handshake() + c.conversation())
    assert nonzero_rules(r) == {"cm": 3, "cm_established": 1}
    assert r["connections"][0]["state"] == "established"
    assert flows_by_key(r)[(c.a, c.b, c.b_qpn)]["service"] == "tcp/3260 (iSER)"


@pytest.mark.parametrize("to_b", [True, False])
def test_wrong_starting_psn(tmp_path, to_b):
    c = cm_mad.Conn()
    if to_b:
        data = [c.to_b("SEND_ONLY", c.b_psn + 5, 8), c.to_b("SEND_ONLY", c.b_psn + 6, 8)]
    else:
        data = [c.to_a("SEND_ONLY", c.a_psn - 1, 8), c.to_a("SEND_ONLY", c.a_psn, 8)]
    r = replay(tmp_path, c.handshake() + data)
    # only the first request is judged against the Starting PSN; later ones follow it
    assert nonzero_rules(r) == {"cm": 3, "cm_established": 1, "cm_start_psn": 1}
    # the same packets without the handshake: the first packet only sets expectations
    assert nonzero_rules(replay(tmp_path, data)) == {}


def test_starting_psn_applies_to_requests_only(tmp_path):
    c = cm_mad.Conn()
    # A READ response to a carries the PSN of a's READ, not b's Starting PSN.
    frames = c.handshake() + [c.to_b("RDMA_READ_REQUEST", c.b_psn, dmalen=64),
                              c.to_a("RDMA_READ_RESPONSE_ONLY", c.b_psn, 64)]
    assert nonzero_rules(replay(tmp_path, frames)) == {"cm": 3, "cm_established": 1}


def test_uc_connection_is_judged_as_rc(tmp_path):
    c = cm_mad.Conn()
    frames = c.handshake() + [c.to_b("SEND_ONLY", c.b_psn + 1, 8, transport=roce.UC),
                              c.to_a("SEND_ONLY", c.a_psn, 8, transport=roce.UC, pkey=0x8001),
                              c.to_a("SEND_FIRST", c.a_psn + 1, 2048, transport=roce.UC)]
    assert nonzero_rules(replay(tmp_path, frames)) == {
        "cm": 3, "cm_established": 1, "cm_start_psn": 1, "cm_pkey": 1, "payload_length": 1}


def test_negotiated_pmtu_judges_payloads(tmp_path):
    c = cm_mad.Conn(mtu=1024)
    data = [c.to_b("SEND_FIRST", c.b_psn, 2048), c.to_b("SEND_LAST", c.b_psn + 1, 1100)]
    r = replay(tmp_path, c.handshake() + data)
    assert nonzero_rules(r) == {"cm": 3, "cm_established": 1, "payload_length": 2}
    # without CM any legal PMTU goes
    assert nonzero_rules(replay(tmp_path, data)) == {}


def test_negotiated_pmtu_overrides_the_setting(tmp_path):
    c = cm_mad.Conn(mtu=1024)
    data = [c.to_b("SEND_FIRST", c.b_psn, 1024), c.to_b("SEND_LAST", c.b_psn + 1, 1000)]
    r = replay(tmp_path, c.handshake() + data, "--pmtu", "4096")
    assert nonzero_rules(r) == {"cm": 3, "cm_established": 1}
    assert nonzero_rules(replay(tmp_path, data, "--pmtu", "4096")) == {"payload_length": 1}


def test_pkey_against_the_negotiated_one(tmp_path):
    c = cm_mad.Conn(pkey=0x8123)
    data = [c.to_b("SEND_ONLY", c.b_psn, 8, pkey=0x8123),
            c.to_b("SEND_ONLY", c.b_psn + 1, 8, pkey=0x0123),  # limited member: same partition
            c.to_b("SEND_ONLY", c.b_psn + 2, 8, pkey=0xFFFF),
            c.to_a("ACKNOWLEDGE", c.b_psn + 2, pkey=0x8124)]
    r = replay(tmp_path, c.handshake() + data)
    assert nonzero_rules(r) == {"cm": 3, "cm_established": 1, "cm_pkey": 2}


def test_out_of_order_handshakes(tmp_path):
    c = cm_mad.Conn()
    d = cm_mad.Conn(a_comm=0x1111, b_comm=0x2222, a_qpn=0x500, b_qpn=0x600)
    e = cm_mad.Conn(a_comm=0x3333, b_comm=0x4444, a_qpn=0x700, b_qpn=0x800)
    frames = [c.rep(),             # REP without its REQ
              d.req(), d.rtu(),    # RTU before the REP
              e.dreq(),            # DREQ for a connection never seen
              c.req(), c.rep(),
              c.to_a("SEND_ONLY", c.a_psn, 8),  # the responder sends before the RTU
              c.to_a("SEND_ONLY", c.a_psn + 1, 8),  # counted once per connection
              c.to_b("SEND_ONLY", c.b_psn, 8),  # the initiator may (the RTU may be lost)
              c.rtu(),
              c.to_a("SEND_ONLY", c.a_psn + 2, 8)]
    r = replay(tmp_path, frames)
    assert nonzero_rules(r) == {"cm": 7, "cm_rep_unknown": 1, "cm_rtu_unknown": 1,
                                "cm_dreq_unknown": 1, "cm_pending": 1, "cm_established": 1}
    assert sorted(x["state"] for x in r["connections"]) == ["established", "req"]


def test_corrupted_mad_is_not_learned(tmp_path):
    c = cm_mad.Conn()
    wrong = cm_mad.req_body(c.a_comm, cm_mad.service_id(c.port), c.a_qpn, c.a_psn ^ 0x40)
    # the receiver drops the corrupted REQ and the initiator resends it, same TID
    frames = [c.cm(cm_mad.REQ, wrong, bad_icrc=True)] + c.handshake() + c.conversation()
    r = replay(tmp_path, frames)
    assert nonzero_rules(r) == {"icrc": 1, "cm": 3, "cm_established": 1}
    assert r["connections"][0]["initiator"]["start_psn"] == c.a_psn


def test_mad_cut_by_the_capture_is_not_read(tmp_path):
    """A REQ the capture (or a truncating mirror) kept only the start of is not read: its MAD is
    not whole, and the record after it is another frame's bytes, not the rest of the MAD."""
    c = cm_mad.Conn()
    req, rep = c.req(), c.rep()
    cut = roce.l3_offset(req) + 20 + 8 + 12 + 8 + 40  # the MAD header and part of the REQ
    path = tmp_path / "cut.pcap"
    whole = roce.pcap_bytes([req, rep])
    path.write_bytes(whole[:32] + struct.pack("<II", cut, len(req)) + req[:cut] + whole[40 + len(req):])
    r = replay_json(path)
    assert r["snapped"] == 1
    assert nonzero_rules(r) == {"cm": 1, "cm_rep_unknown": 1} == nonzero_rules(replay(tmp_path, [rep]))


def test_retries_and_mra(tmp_path):
    c = cm_mad.Conn()
    frames = [c.req(), c.req(), c.mra(), c.rep(), c.rep(), c.rtu(), c.rtu(),
              c.dreq(), c.dreq(), c.drep(), c.drep()]
    r = replay(tmp_path, frames)
    assert nonzero_rules(r) == {"cm": 11, "cm_mra": 1, "cm_retry": 5, "cm_established": 1}


def test_crossing_dreqs_are_no_retry(tmp_path):
    c = cm_mad.Conn()
    # both sides disconnect at once: two DREQs, two transactions, two DREPs
    frames = c.handshake() + [c.dreq(from_a=True),
                              c.cm(cm_mad.DREQ, cm_mad.dreq_body(c.b_comm, c.a_comm, c.a_qpn),
                                   from_a=False, tid=0x777),
                              c.drep(from_a=False),
                              c.cm(cm_mad.DREP, cm_mad.ids_body(c.a_comm, c.b_comm), tid=0x777)]
    assert nonzero_rules(replay(tmp_path, frames)) == {"cm": 7, "cm_established": 1}
    # the same DREQ resent (same TID) is a retry
    frames = c.handshake() + [c.dreq(), c.dreq(), c.drep()]
    assert nonzero_rules(replay(tmp_path, frames)) == {"cm": 6, "cm_established": 1, "cm_retry": 1}


@pytest.mark.parametrize("reason,name", [(28, "consumer"), (8, "invalid_service_id"),
                                         (26, "invalid_path_mtu"), (40, "reason_40")])
def test_rejected(tmp_path, reason, name):
    c = cm_mad.Conn()
    d = cm_mad.Conn(a_comm=0x1111, b_comm=0x2222, a_qpn=0x500, b_qpn=0x600)
    frames = [c.req(), c.rej(reason), d.req(), d.rep(), d.rej(reason, from_a=True),
              # the rejected QPs' later traffic is judged as if no CM had been seen
              c.to_a("SEND_ONLY", 5, 8), d.to_b("SEND_ONLY", 5, 8)]
    r = replay(tmp_path, frames)
    assert nonzero_rules(r) == {"cm": 5, "cm_rej": 2}
    assert r["cm_rej_reasons"] == {name: 2}
    assert r["connections"] == []


def test_mid_capture_is_judged_as_before(tmp_path):
    c = cm_mad.Conn()
    # no handshake seen: the first PSN of each direction only sets expectations
    frames = [c.to_b("SEND_ONLY", c.b_psn - 3, 8), c.to_a("ACKNOWLEDGE", c.b_psn - 3),
              c.to_a("SEND_ONLY", c.a_psn + 9, 8, pkey=0x8001), c.to_b("ACKNOWLEDGE", c.a_psn + 9),
              c.to_b("SEND_FIRST", c.b_psn - 2, 4096), c.to_b("SEND_LAST", c.b_psn - 1, 8)]
    r = replay(tmp_path, frames)
    assert nonzero_rules(r) == {}
    assert r["connections"] == []
    assert all("service" not in f for f in r["flows"])
    # the same frames after the handshake break three of its rules
    r = replay(tmp_path, c.handshake() + frames)
    assert nonzero_rules(r) == {"cm": 3, "cm_established": 1, "cm_start_psn": 2, "cm_pkey": 1,
                                "payload_length": 1}


def test_data_after_close_is_judged_as_before(tmp_path):
    c = cm_mad.Conn()
    frames = c.handshake() + c.teardown() + [c.to_b("SEND_ONLY", 5, 8, pkey=0x8001)]
    assert nonzero_rules(replay(tmp_path, frames)) == {"cm": 5, "cm_established": 1}


# --- idle expiry ---------------------------------------------------------------

def idle_frames(c, gap):
    """A handshake and a first request each way, then, `gap` seconds of silence later, a request
    to B on the wrong P_Key: judged by CM only if the connection has not expired."""
    frames = c.handshake() + [c.to_b("SEND_ONLY", c.b_psn, 8), c.to_a("SEND_ONLY", c.a_psn, 8),
                              c.to_b("SEND_ONLY", c.b_psn + 1, 8, pkey=0x8001)]
    return frames, [0, 1, 2, 3, 4, 4 + gap]


@pytest.mark.parametrize("gap,opts,expired", [
    (700, (), True),                              # the default: 600 s
    (500, (), False),
    (700, ("--set", "conn_idle=0"), False),       # never
    (700, ("--set", "conn_idle=1000"), False),
    (2.5, ("--set", "conn_idle=2"), True),
])
def test_idle_connection_expires(tmp_path, gap, opts, expired):
    c = cm_mad.Conn()
    frames, times = idle_frames(c, gap)
    r = replay(tmp_path, frames, *opts, times=times)
    rules = nonzero_rules(r)
    if expired:
        assert rules == {"cm": 3, "cm_established": 1, "conn_expired": 1}
        assert [x["state"] for x in r["connections"]] == ["expired"]
    else:
        assert rules == {"cm": 3, "cm_established": 1, "cm_pkey": 1}
        assert [x["state"] for x in r["connections"]] == ["established"]


def test_one_busy_end_keeps_the_connection(tmp_path):
    c = cm_mad.Conn()
    # B receives every 100 s; A receives nothing for 800 s, then a request on the wrong P_Key
    frames = c.handshake() + [c.to_b("SEND_ONLY", c.b_psn + i, 8) for i in range(9)]
    frames.append(c.to_a("SEND_ONLY", c.a_psn, 8, pkey=0x8001))
    times = [0, 1, 2] + [3 + 100 * i for i in range(9)] + [803]
    assert nonzero_rules(replay(tmp_path, frames, times=times)) == {
        "cm": 3, "cm_established": 1, "cm_pkey": 1}


def test_expired_connection_still_disconnects(tmp_path):
    c = cm_mad.Conn()
    frames, times = idle_frames(c, 700)
    frames += c.teardown()
    times += [times[-1] + 1, times[-1] + 2]
    r = replay(tmp_path, frames, times=times)
    # a DREQ after the expiry names a known connection, not an unknown one
    assert nonzero_rules(r) == {"cm": 5, "cm_established": 1, "conn_expired": 1}
    assert [x["state"] for x in r["connections"]] == ["closed"]


def test_a_capture_out_of_order_in_time_expires_nothing(tmp_path):
    c = cm_mad.Conn()
    frames, times = idle_frames(c, 0)
    times[-1] = -5000  # a clock step back: no idle time at all
    assert nonzero_rules(replay(tmp_path, frames, times=times)) == {
        "cm": 3, "cm_established": 1, "cm_pkey": 1}


def conns(n):
    return [cm_mad.Conn(a_comm=0x100 + i, b_comm=0x200 + i, a_qpn=0x1000 + i, b_qpn=0x2000 + i)
            for i in range(n)]


def test_full_table_evicts_oldest_and_counts(tmp_path):
    c0, c1, c2 = conns(3)
    frames = (c0.handshake() + c1.handshake() + c2.handshake() +
              # c0 was forgotten: its wrong first PSN goes unjudged; c2's is judged
              [c0.to_b("SEND_ONLY", 1, 8), c2.to_b("SEND_ONLY", 1, 8)])
    r = replay(tmp_path, frames, "--flows", "2")
    rules = nonzero_rules(r)
    assert (rules["conn_evicted"], rules["cm_start_psn"], rules["cm_established"]) == (1, 1, 3)
    assert len(r["connections"]) == 2


def test_closed_connections_leave_without_eviction_count(tmp_path):
    c0, c1, c2 = conns(3)
    frames = c0.handshake() + c0.teardown() + c1.handshake() + c2.handshake()
    r = replay(tmp_path, frames, "--flows", "2")
    assert "conn_evicted" not in nonzero_rules(r)
    assert sorted(x["state"] for x in r["connections"]) == ["established", "established"]


# --- decode against tshark --------------------------------------------------

def test_decode_matches_tshark(tmp_path):
    """Every field roceval learns, as tshark decodes it from the same crafted frames."""
    c = cm_mad.Conn(a_qpn=0xABCDE, b_qpn=0x12345, a_psn=0xFEDCBA, b_psn=0x000001, port=20049,
                    mtu=2048, pkey=0x8042, a_comm=0xDEADBEEF, b_comm=0x0BADCAFE)
    frames = [c.req(retry=3, rnr=5, ack_timeout=0x0E), c.rep(rnr=2), c.rtu()]
    pcap = roce.write_pcap(tmp_path / "cm.pcap", frames)
    r = replay_json(pcap)
    (conn,) = r["connections"]
    (req,) = tshark_fields(pcap, "infiniband.cm.req.serviceid.protocol",
                           "infiniband.cm.req.serviceid.dport", "infiniband.cm.req.localqpn",
                           "infiniband.cm.req.startpsn", "infiniband.cm.req.retrcount",
                           "infiniband.cm.req.pkey", "infiniband.cm.req.pppmtu",
                           "infiniband.cm.req.rnrretrcount", "infiniband.cm.req.prim_localacktout",
                           display="infiniband.mad.attributeid == 0x10")
    (rep,) = tshark_fields(pcap, "infiniband.cm.rep.remotecommid", "infiniband.cm.rep.localqpn",
                           "infiniband.cm.rep.startpsn", "infiniband.cm.rep.rnrretrcount",
                           display="infiniband.mad.attributeid == 0x13")
    proto, port, qpn, psn, retry, pkey, mtu, rnr, ack = (int(v, 16) for v in req)
    assert conn["service"] == f"tcp/{port} (NFS/RDMA)" and proto == 0x06
    assert conn["service_id"] == 1 << 24 | proto << 16 | port
    assert (conn["initiator"]["qpn"], conn["initiator"]["start_psn"]) == (qpn, psn)
    assert (conn["retry_count"], conn["pkey"], conn["pmtu"], conn["rnr_retry_initiator"],
            conn["ack_timeout"]) == (retry, pkey, 128 << mtu, rnr, ack)
    remote, qpn, psn, rnr = (int(v, 16) for v in rep)
    assert remote == conn["initiator"]["comm_id"]
    assert (conn["responder"]["qpn"], conn["responder"]["start_psn"],
            conn["rnr_retry_responder"]) == (qpn, psn, rnr)


def test_rej_reason_matches_tshark(tmp_path):
    c = cm_mad.Conn()
    frames = [c.req(), c.rej(26)]
    pcap = roce.write_pcap(tmp_path / "cm.pcap", frames)
    ((reason,),) = tshark_fields(pcap, "infiniband.cm.rej.reason",
                                 display="infiniband.mad.attributeid == 0x12")
    assert int(reason, 16) == 26
    assert replay_json(pcap)["cm_rej_reasons"] == {"invalid_path_mtu": 1}


# --- real captures ----------------------------------------------------------

@pytest.mark.parametrize("name", CM_CAPTURES)
def test_real_handshakes(name):
    pcap = real_capture(f"realcaps/{name}")
    mads = tshark_fields(pcap, "ip.src", "ip.dst", "infiniband.mad.mgmtclass",
                         "infiniband.mad.attributeid")
    attrs = [int(m[3], 16) for m in mads if int(m[2], 16) == 0x07]
    (req,) = tshark_fields(pcap, "ip.src", "ip.dst", "infiniband.cm.req.localqpn",
                           "infiniband.cm.req.startpsn", "infiniband.cm.req.serviceid.dport",
                           "infiniband.cm.req.pppmtu", display="infiniband.mad.attributeid == 0x10")
    (rep,) = tshark_fields(pcap, "infiniband.cm.rep.localqpn", "infiniband.cm.rep.startpsn",
                           display="infiniband.mad.attributeid == 0x13")
    ini, rsp = req[0], req[1]
    ini_qpn, ini_psn, port, mtu = (int(v, 16) for v in req[2:])
    rsp_qpn, rsp_psn = (int(v, 16) for v in rep)
    # tshark's first request PSN to each QP: the Starting PSN its own side announced
    reqs = tshark_fields(pcap, "infiniband.bth.destqp", "infiniband.bth.psn",
                         display="infiniband.bth.opcode < 0x0d || infiniband.bth.opcode == 0x0c")
    first = {}
    for qp, psn in reqs:
        first.setdefault(int(qp, 16), int(psn))
    assert first[rsp_qpn] == rsp_psn
    if ini_qpn in first:
        assert first[ini_qpn] == ini_psn

    r = replay_json(pcap)
    rules = nonzero_rules(r)
    assert error_rules(r) == {}
    assert rules["cm"] == len(attrs)
    assert rules["cm_established"] == attrs.count(cm_mad.RTU) == 1
    assert not {k for k in rules if k.startswith("cm_") and k != "cm_established"}
    (conn,) = r["connections"]
    assert conn["state"] == ("closed" if cm_mad.DREP in attrs else "established")
    assert (conn["initiator"]["addr"], conn["initiator"]["qpn"], conn["initiator"]["start_psn"]) \
        == (ini, ini_qpn, ini_psn)
    assert (conn["responder"]["addr"], conn["responder"]["qpn"], conn["responder"]["start_psn"]) \
        == (rsp, rsp_qpn, rsp_psn)
    assert conn["pmtu"] == 128 << mtu
    flows = flows_by_key(r)
    service = f"tcp/{port}" + (" (NVMe-oF)" if port == 4420 else "")
    assert flows[(ini, rsp, rsp_qpn)]["service"] == service
    assert flows[(ini, rsp, rsp_qpn)]["peer_qpn"] == ini_qpn
    assert flows[(rsp, ini, ini_qpn)]["peer_qpn"] == rsp_qpn


@pytest.mark.parametrize("name", ["nvmeof-echo.pcap", "nvmeof-idle.pcap"])
def test_real_captures_without_cm(name):
    pcap = real_capture(f"realcaps/{name}")
    r = replay_json(pcap)
    assert nonzero_rules(r) == {}
    assert r["connections"] == []


# --- the generator ----------------------------------------------------------

def gen_replay(tmp_path, *args):
    path = tmp_path / "gen.pcap"
    s = json.loads(run("gen", "-w", path, "--cm", "--json", "--quiet", *args, check=True).stdout)
    return s, replay_json(path)


def assert_as_predicted(s, r):
    exp = s["expected"]
    for k in ("frames", "roce", "icrc_ok", "icrc_bad"):
        assert r[k] == exp[k], k
    assert {k: v for k, v in exp["rules"].items() if v} == \
        {k: v for k, v in nonzero_rules(r).items() if k in exp["rules"]}
    # a dropped FIRST or LAST breaks its message: the summary leaves opcode_sequence out
    assert set(nonzero_rules(r)) - exp["rules"].keys() <= \
        ({"opcode_sequence"} if s["dropped_first_or_last"] else set())


@pytest.mark.parametrize("args", [("--seed", "3"), ("--seed", "4", "-6", "--qps", "6"),
                                  ("--seed", "5", "-f", "mixed", "--pmtu", "256")])
def test_gen_handshakes(tmp_path, args):
    s, r = gen_replay(tmp_path, *args)
    rc = len(r["connections"])
    assert rc >= 1 and all(c["state"] == "closed" for c in r["connections"])
    # per RC connection REQ REP RTU DREQ DREP, and the first one's rejected REQ and its REJ
    assert s["expected"]["rules"]["cm"] == nonzero_rules(r)["cm"] == 5 * rc + 2
    assert nonzero_rules(r)["cm_established"] == rc
    assert r["cm_rej_reasons"] == {"consumer": 1}
    assert not error_rules(r)
    assert_as_predicted(s, r)
    cm_flows = [f for f in r["flows"] if "service" in f]
    assert len(cm_flows) == 2 * rc and {f["service"] for f in cm_flows} == {"tcp/4420 (NVMe-oF)"}


def test_gen_wrong_start_psn(tmp_path):
    s, r = gen_replay(tmp_path, "--seed", "7", "--qps", "9", "--wrong-start-psn", "0.5")
    assert s["injected"]["wrong_start_psn"] > 0
    assert nonzero_rules(r)["cm_start_psn"] == s["injected"]["wrong_start_psn"]
    assert_as_predicted(s, r)


def test_gen_mismatched_pmtu(tmp_path):
    s, r = gen_replay(tmp_path, "--seed", "21", "--mismatched-pmtu", "1")
    assert s["injected"]["mismatched_pmtu"] == len(r["connections"]) == 2
    assert {c["pmtu"] for c in r["connections"]} == {512}
    assert nonzero_rules(r)["payload_length"] == s["expected"]["rules"]["payload_length"] > 0
    assert_as_predicted(s, r)


def test_gen_cm_with_every_fault(tmp_path):
    s, r = gen_replay(tmp_path, "--seed", "15", "-f", "mixed", "--qps", "12", "--count", "6000",
                      "--pmtu", "512", "--drop", "1%", "--flip-invariant", "5%",
                      "--corrupt-icrc", "1%", "--bad-opcode", "1%", "--wrong-start-psn", "20%",
                      "--mismatched-pmtu", "20%")
    assert all(s["injected"][k] for k in ("drop", "flip_invariant", "wrong_start_psn"))
    assert_as_predicted(s, r)


@pytest.mark.parametrize("faults", [(), ("--drop", "1%", "--duplicate", "1%", "--reorder", "2%", "--wrong-start-psn",
                                    "20%", "--mismatched-pmtu", "20%", "--nak-wrong-psn", "5%")],
                         ids=["clean", "faults"])
def test_gen_reconnects_on_the_same_qpns(tmp_path, faults):
    # every RC connection closed half way and made again on its QPNs, at new Starting PSNs
    s, r = gen_replay(tmp_path, "--seed", "16", "--qps", "6", "-f", "mixed", "--count", "4000", "--reconnect",
                      *faults)
    conns = r["connections"]
    assert len(conns) == s["expected"]["rules"]["cm_established"] == 4
    assert len({(c["initiator"]["qpn"], c["responder"]["qpn"]) for c in conns}) == 2
    assert_as_predicted(s, r)
    if not faults:
        assert {k for k in nonzero_rules(r)} == {"cm", "cm_established", "cm_rej", "cnp"}


def test_gen_reconnect_needs_cm(tmp_path):
    res = run("gen", "-w", tmp_path / "x.pcap", "--reconnect")
    assert res.returncode == 2 and "--cm" in res.stderr


def test_gen_cm_faults_need_cm(tmp_path):
    res = run("gen", "-w", tmp_path / "x.pcap", "--wrong-start-psn", "1%")
    assert res.returncode == 2 and "--cm" in res.stderr


def live_counters(netns, expected_roce):
    deadline = time.monotonic() + 10
    while True:
        st = json.loads(run("stats", netns.if_rx, "--json", "--top", "100", netns=netns.rx,
                            check=True).stdout)
        if st["roce"] >= expected_roce or time.monotonic() > deadline:
            return st
        time.sleep(0.2)


def test_live_gen_handshakes_count_as_in_replay(netns, tmp_path):
    args = ("--count", "1500", "--seed", "21", "-f", "mixed", "--qps", "6", "--cm",
            "--wrong-start-psn", "30%", "--mismatched-pmtu", "30%", "--drop", "1%", "--json",
            "--quiet", "--mac",
            f"{netns.mac(netns.tx, netns.if_tx)},{netns.mac(netns.rx, netns.if_rx)}")
    s_file = json.loads(run("gen", "-w", tmp_path / "g.pcap", *args, check=True).stdout)
    replayed = replay_json(tmp_path / "g.pcap", "--top", "100")
    run("attach", netns.if_rx, netns=netns.rx, check=True)
    try:
        s = json.loads(run("gen", "-i", netns.if_tx, "--rate", "20000", *args, netns=netns.tx,
                           check=True).stdout)
        assert s["expected"] == s_file["expected"]
        st = live_counters(netns, s["expected"]["roce"])
    finally:
        run("detach", netns.if_rx, netns=netns.rx)
    assert st["roce"] == replayed["roce"]
    live = {k: v for k, v in st["rules"].items() if v}
    assert live == nonzero_rules(replayed)
    assert live["cm"] == s["expected"]["rules"]["cm"] and live["cm_established"] >= 1
    # stats names the CM-learned flows as replay does
    named = {(f["src"], f["dst"], f["dqpn"]): (f["service"], f["peer_qpn"])
             for f in st["flows"] if "service" in f}
    assert named == {(f["src"], f["dst"], f["dqpn"]): (f["service"], f["peer_qpn"])
                     for f in replayed["flows"] if "service" in f}
    assert len(named) == 2 * live["cm_established"]


def test_live_trace_names_the_connection(netns, tmp_path):
    args = ("--count", "300", "--seed", "22", "--qps", "3", "--traffic", "send", "--cm",
            "--wrong-start-psn", "100%", "--json", "--quiet", "--mac",
            f"{netns.mac(netns.tx, netns.if_tx)},{netns.mac(netns.rx, netns.if_rx)}")
    replayed = json.loads(run("gen", "-w", tmp_path / "g.pcap", *args, check=True).stdout)
    conns = replay_json(tmp_path / "g.pcap")["connections"]
    run("attach", netns.if_rx, netns=netns.rx, check=True)
    try:
        trace = subprocess.Popen(["nsenter", f"--net=/run/netns/{netns.rx}", str(ROCEVAL), "trace",
                                  netns.if_rx, "--rule", "cm_start_psn", "--json"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert "tracing" in trace.stderr.readline()
        s = json.loads(run("gen", "-i", netns.if_tx, *args, netns=netns.tx, check=True).stdout)
        live_counters(netns, s["expected"]["roce"])
        trace.terminate()
        out, _ = trace.communicate(timeout=10)
    finally:
        run("detach", netns.if_rx, netns=netns.rx)
    n = replayed["injected"]["wrong_start_psn"]
    assert n == s["injected"]["wrong_start_psn"] > 0
    lines = [json.loads(line) for line in out.splitlines()]
    assert len(lines) == n
    # each sample names its connection: the application and the QP that sent it
    peers = {(c["responder"]["qpn"], c["initiator"]["qpn"]) for c in conns} | \
        {(c["initiator"]["qpn"], c["responder"]["qpn"]) for c in conns}
    for ev in lines:
        assert ev["rules"] == ["cm_start_psn"] and ev["service"] == "tcp/4420 (NVMe-oF)"
        assert (ev["dqpn"], ev["peer_qpn"]) in peers


def test_live_idle_connection_expires_by_the_clock(netns, tmp_path):
    c = cm_mad.Conn()
    frames, _ = idle_frames(c, 0)
    run("attach", netns.if_rx, "conn_idle=1", netns=netns.rx, check=True)
    try:
        send_pcap(netns.tx, netns.if_tx, roce.write_pcap(tmp_path / "a.pcap", frames[:-1]),
                  one_cpu=True)
        live_counters(netns, len(frames) - 1)
        time.sleep(2.5)
        send_pcap(netns.tx, netns.if_tx, roce.write_pcap(tmp_path / "b.pcap", frames[-1:]))
        st = live_counters(netns, len(frames))
    finally:
        run("detach", netns.if_rx, netns=netns.rx)
    assert {k: v for k, v in st["rules"].items() if v} == {
        "cm": 3, "cm_established": 1, "conn_expired": 1}


def test_text_flow_table_keeps_its_columns_with_cm_names(tmp_path):
    """replay's flow table, as top's: a name with its CM service and peer QP is longer than the
    name column (over IPv6 longer still), so it goes on below its row and every count stays under
    its heading; the whole name reads back from the lines."""
    v6 = cm_mad.Conn(a="2001:db8:aaaa:bbbb:cccc:dddd:eeee:1", b="2001:db8:aaaa:bbbb:cccc:dddd:eeee:2",
                     a_qpn=0x237, b_qpn=0x267, ipv6=True)
    pcap = roce.write_pcap(tmp_path / "cm.pcap", v6.handshake() + v6.conversation())
    lines = run("replay", pcap, check=True).stdout.splitlines()
    at = next(i for i, x in enumerate(lines) if x.startswith("  flow "))
    ends = [m.end() for m in re.finditer(r"\S+", lines[at])][1:4]  # packets, bytes, violations
    names, rows = [], 0
    for line in lines[at + 1:]:
        if not line.startswith("  ") or line.startswith("  ("):
            break
        if line.startswith("    "):
            assert len(line) <= 2 + 52, line
            names[-1] += " " + line.strip()
            continue
        rows += 1
        names.append(line[:2 + 52].strip())
        assert [2 + 52 + m.end() for m in re.finditer(r"\S+", line[2 + 52:])][:3] == ends, line
    want = f"{v6.a} > {v6.b} qp {v6.b_qpn:#x} [tcp/4420 (NVMe-oF) peer qp {v6.a_qpn:#x}]"
    assert want in names, lines
    assert rows >= 3
