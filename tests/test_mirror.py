# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Mirror sessions: frames as switches and clouds mirror them (ERSPAN I/II/III, GRE-TEB,
VXLAN, Geneve; IPv4 and IPv6 outer headers) are judged as the bare frames, per session."""
import subprocess

import pytest

import encap
import roce
from conftest import ROCEVAL, replay

SEND = roce.opcode(roce.RC, "SEND_ONLY")
# the totals that differ between a bare frame and its mirrored copy by design
OUTER_ONLY = ("bytes",) + tuple(k for k in ("mirror_frames", "mirror_lost", "mirror_truncated",
                                            "mirror_nested", "mirror_malformed",
                                            "mirror_sessions_full"))


def sends(n=4, **kw):
    """n SENDs of one QP, PSNs 0 .. n-1."""
    return [roce.roce(SEND, 16, psn=i, dqpn=0x100, **kw) for i in range(n)]


def judged(r):
    """What a replay judged, without what the encapsulation adds."""
    return {k: v for k, v in r.items() if k not in OUTER_ONLY + ("mirrors", "flows")}


def one_session(r):
    assert len(r["mirrors"]) == 1, r["mirrors"]
    return r["mirrors"][0]


@pytest.mark.parametrize("family", [4, 6])
@pytest.mark.parametrize("kind", encap.ENCAPS)
def test_each_encapsulation_judged_as_bare(tmp_path, kind, family):
    frames = sends() + [roce.roce(SEND, 16, psn=4, ipv6=True, frame_kw={"vlans": (5,)})]
    bare = replay(tmp_path, frames, name="bare.pcap")
    opts = ("--set", "geneve_ports=6081") if kind == "geneve" else ()
    r = replay(tmp_path, encap.wrap_all(frames, kind, family), *opts, name="m.pcap")
    assert judged(r) == judged(bare)
    assert r["mirror_frames"] == 5 and r["mirror_lost"] == 0 and r["mirror_malformed"] == 0
    s = one_session(r)
    assert s["encap"] == kind and s["frames"] == 5 and s["lost"] == 0
    assert s["source"] == (encap.OUTER_V6 if family == 6 else encap.OUTER_V4)[0]
    assert s["numbered"] == (kind in encap.NUMBERED)
    assert s["session"] == (0 if kind in ("erspan1", "gre") else 0x64)


@pytest.mark.parametrize("family", [4, 6])
def test_erspan3_o_bit_and_direction(tmp_path, family):
    frames = sends(2)
    wrapped = [encap.wrap(frames[0], "erspan3", family, seq=1, o_bit=True),
               encap.wrap(frames[1], "erspan3", family, seq=2, direction=1)]
    r = replay(tmp_path, wrapped)
    assert r["roce"] == 2 and r["icrc_ok"] == 2 and r["mirror_frames"] == 2


def test_outer_vlan_before_vxlan_and_gre_key(tmp_path):
    frames = sends(2)
    r = replay(tmp_path, [encap.wrap(frames[0], "vxlan", 4, vlan=[10, 20]),
                          encap.wrap(frames[1], "gre", 6, key=77, seq=9)])
    assert r["roce"] == 2 and r["icrc_ok"] == 2
    assert sorted((m["encap"], m["session"]) for m in r["mirrors"]) == [("gre", 77), ("vxlan", 100)]


def test_aws_vxlan_one_vni_per_session(tmp_path):
    frames = sends(4)
    wrapped = [encap.wrap(f, "vxlan", 4, session=vni) for f, vni in zip(frames, (7, 7, 8, 9))]
    r = replay(tmp_path, wrapped)
    assert [(m["session"], m["frames"]) for m in r["mirrors"]] == [(7, 2), (8, 1), (9, 1)]


def test_two_switches_same_session_listed_apart(tmp_path):
    """Two sources mirror the same packets into ERSPAN session 100, each numbering its own."""
    frames = sends(3)
    a = encap.wrap_all(frames, "erspan2", 4, src="192.0.2.21", first_seq=10)
    b = encap.wrap_all(frames, "erspan2", 4, src="192.0.2.22", first_seq=500)
    r = replay(tmp_path, [x for pair in zip(a, b) for x in pair])
    assert [(m["source"], m["frames"], m["lost"]) for m in r["mirrors"]] == \
        [("192.0.2.21", 3, 0), ("192.0.2.22", 3, 0)]
    assert r["mirror_lost"] == 0
    # the same packets seen twice are two sessions' packets, never retransmissions
    assert r["retx_packets"] == 0 and r["rules"]["psn_duplicate"] == 0
    assert len(r["flows"]) == 2


@pytest.mark.parametrize("kind", encap.NUMBERED)
def test_gap_counts_lost_frames(tmp_path, kind):
    frames = sends(4)
    seqs = (1, 2, 5, 9)  # 2 then 3 skipped
    r = replay(tmp_path, [encap.wrap(f, kind, 6, seq=q) for f, q in zip(frames, seqs)])
    assert r["mirror_lost"] == 5
    s = one_session(r)
    assert (s["lost"], s["numbered"], s["last_seq"]) == (5, True, 9)


def test_unnumbered_session(tmp_path):
    r = replay(tmp_path, [encap.wrap(f, "erspan2", 4, seq=0) for f in sends(4)])
    s = one_session(r)
    assert (s["lost"], s["numbered"], s["frames"]) == (0, False, 4)
    assert r["mirror_lost"] == 0


@pytest.mark.parametrize("kind", ["erspan2", "erspan3"])
def test_truncating_mirror(tmp_path, kind):
    frames = [roce.roce(SEND, 1024, psn=i) for i in range(2)]
    r = replay(tmp_path, encap.wrap_all(frames, kind, 4, truncate=128))
    assert r["roce"] == 2 and r["snapped"] == 2 and r["icrc_unchecked"] == 2
    assert r["rules"]["truncated"] == 0 and r["mirror_truncated"] == 2
    assert one_session(r)["truncated"] == 2


def _poke(frm, off, val):
    b = bytearray(frm)
    b[off] = val
    return bytes(b)


def malformed_frames(family):
    f = sends(1)[0]
    ip = 40 if family == 6 else 20
    gre_at = 14 + ip
    udp_at = 14 + ip
    out = {
        "gre version": _poke(encap.wrap(f, "erspan2", family, seq=1), gre_at + 1, 0x01),
        "erspan2 version": _poke(encap.wrap(f, "erspan2", family, seq=1), gre_at + 8, 0x20),
        "erspan3 version": _poke(encap.wrap(f, "erspan3", family, seq=1), gre_at + 8, 0x10),
        "vxlan without I": _poke(encap.wrap(f, "vxlan", family), udp_at + 8, 0x00),
    }
    # a GRE packet that ends inside its own header: the IP length says 2 bytes of GRE
    body, proto = encap.gre(encap.ERSPAN2_PROTO, b"", seq=1)[:2], 47
    out["short gre"] = encap.outer(body, proto, family)
    return out


@pytest.mark.parametrize("family", [4, 6])
def test_malformed_outer_headers(tmp_path, family):
    frames = malformed_frames(family)
    for name, frm in frames.items():
        r = replay(tmp_path, [frm], name=name.replace(" ", "_") + ".pcap")
        assert (r["mirror_malformed"], r["mirror_frames"], r["roce"]) == (1, 0, 0), name
        assert r["mirrors"] == [], name


def test_nested_decapsulated_once(tmp_path):
    inner = encap.wrap(sends(1)[0], "vxlan", 4)
    r = replay(tmp_path, [encap.wrap(inner, "erspan2", 6, seq=1)])
    assert (r["mirror_frames"], r["mirror_nested"], r["roce"]) == (1, 1, 0)
    assert one_session(r)["nested"] == 1


def test_other_ports_need_a_setting(tmp_path):
    frames = sends(2)
    wrapped = [encap.wrap(frames[0], "vxlan", 4, port=8472), encap.wrap(frames[1], "geneve", 4)]
    r = replay(tmp_path, wrapped, name="off.pcap")
    assert (r["roce"], r["mirror_frames"]) == (0, 0)
    r = replay(tmp_path, wrapped, "--set", "vxlan_ports=8472", "--set", "geneve_ports=6081",
               name="on.pcap")
    assert (r["roce"], r["mirror_frames"]) == (2, 2)


def test_non_mirror_gre_is_not_roce(tmp_path):
    f = sends(1)[0]
    ip_in_gre = encap.outer(encap.gre(0x0800, f[14:]), 47, 4)
    keepalive = encap.outer(encap.gre(0x0000, b""), 47, 4)
    r = replay(tmp_path, [ip_in_gre, keepalive])
    assert (r["frames"], r["roce"], r["mirror_frames"], r["mirror_malformed"]) == (2, 0, 0, 0)


def test_replay_from_stdin(tmp_path):
    data = roce.pcap_bytes(encap.wrap_all(sends(3), "erspan2", 4))
    out = subprocess.run([ROCEVAL, "replay", "--json", "-"], input=data, capture_output=True,
                         check=True)
    import json
    r = json.loads(out.stdout)
    assert r["roce"] == 3 and r["mirror_frames"] == 3 and one_session(r)["frames"] == 3


def test_text_lists_sessions(tmp_path):
    path = roce.write_pcap(tmp_path / "t.pcap", encap.wrap_all(sends(2), "erspan3", 4))
    out = subprocess.run([ROCEVAL, "replay", str(path)], capture_output=True, text=True, check=True)
    assert "mirror sessions:" in out.stdout
    assert "192.0.2.10" in out.stdout and "erspan3" in out.stdout


# replay's batches (include/roceval.h): 60 KiB of records, each a 16-byte header and the frame
BATCH_BYTES, REC_HDR = 60 * 1024, 16


def test_inner_frame_across_a_batch_page(tmp_path):
    """A replay batch's first page is read in place, its records past it with the load helper:
    the record the page ends in is read partly each way.  Each group below fills one batch, a
    filler a byte longer than the last group's first, so that the page's end falls at every
    offset of a mirrored record in turn (between 2 and 6 KiB into the batch); each inner frame
    is judged as any other, whichever of its bytes were read in place."""
    frames = sends(1)[0]
    rec = REC_HDR + len(encap.wrap(frames, "erspan2", 4, seq=0))
    per = 4096 // rec
    groups, psn = [], 0
    for i in range(rec):
        filler = roce.frame(bytes(2048 + i), dport=9)
        wrapped = [encap.wrap(roce.roce(SEND, 16, psn=psn + k, dqpn=0x100), "erspan2", 4, seq=psn + k + 1)
                   for k in range(per)]
        psn += per
        used = 4 + REC_HDR + len(filler) + per * rec
        groups += [filler, *wrapped, roce.frame(bytes(BATCH_BYTES - used - REC_HDR - 46), dport=9)]
    r = replay(tmp_path, groups)
    n = rec * per
    assert (r["frames"], r["roce"], r["icrc_ok"], r["mirror_frames"], r["mirror_lost"]) == (n + 2 * rec, n, n, n, 0)
    assert sum(r["rules"].values()) == 0


@pytest.mark.parametrize("family", [4, 6])
def test_mirrored_and_bare_frames_in_turn_read_with_the_helper(tmp_path, family):
    """A frame the load helper reads brings the bytes a mirror's inner frame needs only when the
    frame before it was mirrored: a mirrored frame after a bare one reads its inner frame a
    second time, a bare one after a mirrored one reads more than it needs.  Bare and mirrored
    frames of two QPs in every order, over several batches (a 5 KB filler first: the first
    batch's frames are read with the helper, each later batch's first page in place, after the
    helper read the batch before's last), are each judged as alone; a bad ICRC in a mirrored
    frame after a bare one, in a bare one after a mirrored one and in a mirrored one after a
    mirrored one."""
    pattern = "BMMBBMBMMMBBBM"
    frames, psn = [roce.frame(bytes(5000), dport=9)], {"B": 0, "M": 0}
    for i, kind in enumerate(pattern * 100):
        bad = i in (5, 6, 8)
        f = roce.roce(SEND, 16 + i, psn=psn[kind], dqpn=0x100 if kind == "B" else 0x200,
                      ipv6=family == 6, frame_kw={"bad_icrc": bad})
        psn[kind] += 1
        frames.append(encap.wrap(f, "erspan2", family, seq=psn[kind]) if kind == "M" else f)
    r = replay(tmp_path, frames)
    n = 100 * len(pattern)
    assert (r["frames"], r["roce"], r["icrc_ok"], r["mirror_frames"]) == (n + 1, n, n - 3, psn["M"])
    assert {k: v for k, v in r["rules"].items() if v} == {"icrc": 3}
