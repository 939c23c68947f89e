# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The ICRC fast path against zlib: every payload length 0..9000, random bytes, both families.

Frames are written as raw pcap bytes (scapy is too slow for 36,000 frames) and replayed through
BPF_PROG_TEST_RUN; the reference ICRC is zlib.crc32 over rocev2.md section 5's masked bytes.
"""
import random
import struct
import zlib

import pytest

from conftest import replay_json
from roce import write_pcap

MAX_PAYLOAD = 9000
RC_SEND_ONLY = 0x04


def masked(ip6, dgram):
    """The ICRC input: 8 x 0xFF, then the datagram with its variant fields all ones."""
    m = bytearray(b"\xff" * 8 + dgram)
    ip, udp = 8, 8 + (40 if ip6 else 20)
    if ip6:
        m[ip] |= 0x0F
        m[ip + 1:ip + 4] = b"\xff\xff\xff"
        m[ip + 7] = 0xFF
    else:
        m[ip + 1] = m[ip + 8] = m[ip + 10] = m[ip + 11] = 0xFF
    m[udp + 6] = m[udp + 7] = 0xFF
    m[udp + 12] = 0xFF
    return bytes(m)


def frame(ip6, payload, vlan=False, padded=True):
    """Ethernet (+ an 802.1Q tag), IPv4 or IPv6, UDP 4791, BTH, payload, correct ICRC.

    Unpadded, the transport length is not a multiple of 4 (a `pad` violation) and the
    datagram can have any length: the ICRC is checked all the same.
    """
    pad = -len(payload) & 3 if padded else 0
    bth = struct.pack("!BBHII", RC_SEND_ONLY, 0x40 | pad << 4, 0xFFFF, 0x000123, 0x00000001)
    udplen = 8 + len(bth) + len(payload) + pad + 4
    udp = struct.pack("!HHHH", 49152, 4791, udplen, 0x1234)
    if ip6:
        # traffic class, flow label and hop limit are masked: give them values
        ip = struct.pack("!IHBB", 0x6E21FACE, udplen, 17, 61) + bytes(range(1, 33))
        eth = b"\x02\0\0\0\0\x02\x02\0\0\0\0\x01" + (b"\x81\x00\x00\x07" if vlan else b"") + b"\x86\xdd"
    else:
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0x6A, 20 + udplen, len(payload), 0x4000, 63, 17,
                         0xBEEF, b"\xc0\x00\x02\x01", b"\xc0\x00\x02\x02")
        eth = b"\x02\0\0\0\0\x02\x02\0\0\0\0\x01" + (b"\x81\x00\x00\x07" if vlan else b"") + b"\x08\x00"
    dgram = ip + udp + bth + payload + b"\0" * pad
    icrc = struct.pack("<I", zlib.crc32(masked(ip6, dgram)))
    return eth + dgram + icrc, len(eth)




@pytest.fixture(scope="module")
def every_length():
    """(frame, offset of the IP header) for payloads 0..MAX_PAYLOAD over IPv4 and IPv6:
    datagrams of every length from 44 to 9064 bytes."""
    rng = random.Random(6)
    out = []
    for n in range(MAX_PAYLOAD + 1):
        payload = rng.randbytes(n)
        for ip6 in (False, True):
            out.append(frame(ip6, payload, vlan=n % 3 == 0, padded=n % 2 == 0))
    return out


def flip_byte(data, offset, mask):
    """A copy of data with the bits of mask flipped in the byte at offset."""
    f = bytearray(data)
    f[offset] ^= mask
    return bytes(f)


def test_every_length_matches_zlib(tmp_path, every_length):
    path = tmp_path / "good.pcap"
    write_pcap(path, [f for f, _ in every_length])
    r = replay_json(path)
    n = len(every_length)
    assert (r["frames"], r["roce"]) == (n, n)
    assert (r["icrc_ok"], r["icrc_bad"], r["icrc_unchecked"], r["icrc_skipped"]) == (n, 0, 0, 0)
    assert r["rules"]["icrc"] == 0


def test_every_length_changed_icrc_byte(tmp_path, every_length):
    # each byte of the ICRC in turn
    frames = [flip_byte(f, len(f) - 4 + i % 4, 1 << (i % 8)) for i, (f, _) in enumerate(every_length)]
    path = tmp_path / "bad-icrc.pcap"
    write_pcap(path, frames)
    r = replay_json(path)
    n = len(frames)
    assert (r["icrc_ok"], r["icrc_bad"], r["rules"]["icrc"]) == (0, n, n)


def test_every_length_changed_covered_byte(tmp_path, every_length):
    """One flipped bit anywhere the ICRC covers unmasked, e.g. in the last lane or the first."""
    rng = random.Random(7)
    frames = []
    for f, l3 in every_length:
        f = bytearray(f)
        ip6 = f[l3] >> 4 == 6
        bth = l3 + (40 if ip6 else 20) + 8
        # the addresses, the UDP source port, the BTH from DestQP on, the payload
        spans = [(l3 + 8, l3 + 40) if ip6 else (l3 + 12, l3 + 20), (bth - 8, bth - 6),
                 (bth + 5, len(f) - 4)]
        lo, hi = spans[rng.randrange(3)]
        pos = rng.choice((lo, hi - 1, rng.randrange(lo, hi)))
        f[pos] ^= 1 << rng.randrange(8)
        frames.append(bytes(f))
    path = tmp_path / "bad-data.pcap"
    write_pcap(path, frames)
    r = replay_json(path)
    assert (r["icrc_ok"], r["icrc_bad"]) == (0, len(frames))


def test_icrc_sample(tmp_path, every_length):
    """icrc_sample=4: 1 frame in 4 checked, the rest counted as skipped and never judged."""
    frames = [flip_byte(f, -1, 0x80) for f, _ in every_length[:100]]
    path = tmp_path / "sample.pcap"
    write_pcap(path, frames)
    r = replay_json(path, "--set", "icrc_sample=4")
    assert (r["roce"], r["icrc_ok"], r["icrc_bad"], r["icrc_skipped"], r["icrc_unchecked"]) == \
        (100, 0, 25, 75, 0)
    assert r["rules"]["icrc"] == 25
    r = replay_json(path, "--set", "icrc_sample=1")
    assert (r["icrc_bad"], r["icrc_skipped"]) == (100, 0)


def test_icrc_sample_across_batches(tmp_path, every_length):
    """1 in 7 over ~150 replay batches: the countdown is per CPU and replay keeps to one."""
    frames = [flip_byte(f, -2, 0x01) for f, _ in every_length[:2000]]
    path = tmp_path / "sample-batches.pcap"
    write_pcap(path, frames)
    r = replay_json(path, "--set", "icrc_sample=7")
    assert (r["icrc_ok"], r["icrc_bad"], r["icrc_skipped"]) == (0, 2000 // 7, 2000 - 2000 // 7)
