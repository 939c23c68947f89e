// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Mirrors for the data-path fuzzer, read from mirrors-and-congestion.md and
 * docs/collector.md, never from bpf/mirror.bpf.h: seeds wrapped as switches
 * and clouds send them, the oracle's reading of the outer headers, and the
 * sessions whose sequence numbers tell the collector's loss.
 */
#include <string.h>

#include "datapath.h"
#include "wire.h"

#define GRE_C 0x8000
#define GRE_K 0x2000
#define GRE_S 0x1000
/* routing, strict source route, recursion, the other flags and the version: no mirror sets them */
#define GRE_NEVER 0x4FFF
#define GRE_ERSPAN 0x88BE
#define GRE_ERSPAN3 0x22EB
#define GRE_TEB 0x6558
#define VXLAN_PORT 4789
#define VXLAN_I 0x08
/* sessions the program lists at most (ROCEVAL_MIRROR_SESSIONS, docs/collector.md) */
#define SESSIONS 1024

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

/* ERSPAN II or III after the GRE header (at m->at); the encapsulation or MIRROR_READ_BAD. */
static int read_erspan(const uint8_t *d, uint32_t lim, bool three, struct mirror_read *m)
{
	uint32_t off = m->at, hl = three ? 12 : 8;

	if (off + hl > lim || d[off] >> 4 != (three ? 2 : 1))
		return MIRROR_READ_BAD;
	m->session = get16(d + off + 2) & 0x3FF;
	m->truncated = d[off + 2] & 0x04;
	if (three && (d[off + 11] & 1)) /* O: the platform-specific sub-header */
		hl += 8;
	m->at = off + hl;
	return three ? MIRROR_ERSPAN3 : MIRROR_ERSPAN2;
}

static int read_gre(const uint8_t *d, uint32_t lim, struct mirror_read *m)
{
	uint32_t off = m->l4;
	uint16_t flags, proto;

	if (off + 4 > lim)
		return MIRROR_READ_BAD;
	flags = get16(d + off);
	proto = get16(d + off + 2);
	if (proto != GRE_ERSPAN && proto != GRE_ERSPAN3 && proto != GRE_TEB)
		return MIRROR_NONE; /* IP in GRE, keepalives: not a mirror */
	if (flags & GRE_NEVER)
		return MIRROR_READ_BAD;
	off += 4 + (flags & GRE_C ? 4 : 0);
	if (flags & GRE_K) {
		if (off + 4 > lim)
			return MIRROR_READ_BAD;
		m->session = get32(d + off);
		off += 4;
	}
	if (flags & GRE_S) {
		if (off + 4 > lim)
			return MIRROR_READ_BAD;
		m->seq = get32(d + off);
		m->has_seq = true;
		off += 4;
	}
	m->at = off;
	if (proto == GRE_TEB)
		return MIRROR_GRE;
	if (proto == GRE_ERSPAN && !(flags & GRE_S)) /* type I: its session is its GRE key, if any */
		return MIRROR_ERSPAN1;
	m->session = 0;
	return read_erspan(d, lim, proto == GRE_ERSPAN3, m);
}

static int read_vxlan(const uint8_t *d, uint32_t lim, struct mirror_read *m)
{
	uint32_t off = m->l4 + 8;

	if (m->l4 + 8 > lim || get16(d + m->l4 + 2) != VXLAN_PORT)
		return MIRROR_NONE;
	if (off + 8 > lim || !(d[off] & VXLAN_I))
		return MIRROR_READ_BAD;
	m->session = get24(d + off + 4);
	m->at = off + 8;
	return MIRROR_VXLAN;
}

/* The outer IP header at l3: its protocol, or 0 when no mirror can follow it. */
static uint8_t read_ip(const uint8_t *d, uint32_t len, uint32_t l3, struct mirror_read *m)
{
	uint16_t proto = get16(d + l3 - 2);

	if (proto == 0x0800) {
		/* a fragment is no mirror: a tunnel's packets are whole */
		if (l3 + 20 > len || d[l3] >> 4 != 4 || (d[l3] & 15) < 5 || (get16(d + l3 + 6) & 0x3FFF))
			return 0;
		m->end = l3 + get16(d + l3 + 2);
		m->l4 = l3 + (d[l3] & 15) * 4;
		memcpy(m->source, d + l3 + 12, 4);
		return d[l3 + 9];
	}
	if (proto != 0x86DD || l3 + 40 > len || d[l3] >> 4 != 6)
		return 0;
	m->v6 = true;
	m->end = l3 + 40 + get16(d + l3 + 4);
	m->l4 = l3 + 40;
	memcpy(m->source, d + l3 + 8, 16);
	return d[l3 + 6];
}

int mirror_read(const uint8_t *d, uint32_t len, uint32_t wire, uint32_t l3, struct mirror_read *m)
{
	uint32_t lim;
	uint8_t nh;

	memset(m, 0, sizeof(*m));
	nh = l3 >= 14 ? read_ip(d, len, l3, m) : 0;
	if (nh != 47 && nh != 17)
		return m->encap = MIRROR_NONE;
	m->l3 = l3;
	m->udp = nh == 17;
	lim = m->end < len ? m->end : len; /* what the datagram holds, as far as the frame has it */
	m->encap = m->udp ? read_vxlan(d, lim, m) : read_gre(d, lim, m);
	/* a datagram longer than its frame, or too short for the Ethernet header inside */
	if (m->encap > 0 && (m->end > wire || m->at + 14 > m->end))
		m->encap = MIRROR_READ_BAD;
	return m->encap;
}

/* The sessions the program has seen, as its table keeps them, and whether a sequence number came. */
static struct session {
	uint8_t source[16];
	bool v6, seq_seen;
	int encap;
	uint32_t id, last_seq;
} sessions[SESSIONS];
static int nsessions;

void mirror_session(const struct expect *e, uint64_t *lost, bool *full)
{
	const struct mirror_read *m = &e->outer;
	struct session *s = sessions;
	uint32_t gap;

	*lost = 0;
	*full = false;
	if (m->encap <= 0)
		return;
	while (s < sessions + nsessions && (memcmp(s->source, m->source, 16) || s->v6 != m->v6 ||
					    s->encap != m->encap || s->id != m->session))
		s++;
	if (s == sessions + SESSIONS) {
		*full = true;
		return;
	}
	if (s == sessions + nsessions) {
		nsessions++;
		memset(s, 0, sizeof(*s));
		memcpy(s->source, m->source, 16);
		s->v6 = m->v6;
		s->encap = m->encap;
		s->id = m->session;
	}
	if (!m->has_seq)
		return;
	gap = m->seq - s->last_seq;
	/* a number behind (reordered) or the same (unnumbered) loses nothing and moves nothing */
	if (s->seq_seen && (!gap || gap >= 0x80000000u))
		return;
	*lost = s->seq_seen ? gap - 1 : 0;
	s->seq_seen = true;
	s->last_seq = m->seq;
}

/* The GRE header, and ERSPAN's after it; their length. */
static uint32_t wrap_gre(uint8_t *p, int encap)
{
	uint16_t flags = encap == MIRROR_ERSPAN1 ? 0 : GRE_S;
	uint32_t n = 4;

	/* GRE-TEB as Linux's gretap sends it with a key and numbers; a type I mirror may carry a key */
	if (encap == MIRROR_GRE || (encap == MIRROR_ERSPAN1 && chance(50)))
		flags |= GRE_K;
	put16(p, flags);
	put16(p + 2, encap == MIRROR_GRE ? GRE_TEB : encap == MIRROR_ERSPAN3 ? GRE_ERSPAN3 : GRE_ERSPAN);
	if (flags & GRE_K) {
		put32(p + n, rnd());
		n += 4;
	}
	if (flags & GRE_S) {
		put32(p + n, rnd_below(4) ? rnd() : 0); /* some sessions start at 0 */
		n += 4;
	}
	if (encap == MIRROR_ERSPAN2) {
		put16(p + n, 0x1000 | rnd_below(4096)); /* version 1, the VLAN */
		put16(p + n + 2, rnd_below(1024) | (rnd() & 0xE000)); /* COS, session; never T */
		put32(p + n + 4, rnd() & 0xFFFFF);
		n += 8;
	} else if (encap == MIRROR_ERSPAN3) {
		bool o = chance(30);

		put16(p + n, 0x2000 | rnd_below(4096));
		put16(p + n + 2, rnd_below(1024) | (rnd() & 0xE000));
		put32(p + n + 4, rnd()); /* timestamp */
		put32(p + n + 8, (rnd() & 0xFFFFFFFE) | o); /* SGT, P, FT 0 below, hardware ID, D, Gra, O */
		p[n + 10] &= 0x83; /* FT 0: an Ethernet frame */
		n += 12;
		if (o) {
			put32(p + n, rnd());
			put32(p + n + 4, rnd());
			n += 8;
		}
	}
	return n;
}

void mirror_wrap(struct frame *f, const struct seed *sd)
{
	static uint8_t inner[MAX_FRAME];
	uint32_t ilen = f->len, l3 = 14 + 4 * (sd->nvlan & 1), l4 = l3 + (sd->outer_v6 ? 40 : 20), th;
	uint8_t *ip = f->d + l3, *t = f->d + l4;

	memcpy(inner, f->d, ilen);
	memcpy(f->d, "\x02\x00\x00\x00\xc0\x11\x02\x00\x00\x00\x51\x7c", 12);
	if (sd->nvlan & 1) { /* an outer VLAN tag, as before a cloud's VXLAN */
		put16(f->d + 12, 0x8100);
		put16(f->d + 14, rnd_below(4096));
	}
	put16(ip - 2, sd->outer_v6 ? 0x86DD : 0x0800);
	if (sd->encap == MIRROR_VXLAN) {
		put16(t, 49152 + rnd_below(16384));
		put16(t + 2, VXLAN_PORT);
		put16(t + 6, 0);
		t[8] = VXLAN_I;
		put24(t + 9, 0);
		put32(t + 12, rnd() << 8);
		th = 16;
		put16(t + 4, th + ilen);
	} else {
		th = wrap_gre(t, sd->encap);
	}
	memcpy(t + th, inner, ilen);
	f->len = l4 + th + ilen;
	if (sd->outer_v6) {
		put32(ip, 0x60000000);
		put16(ip + 4, th + ilen);
		ip[6] = sd->encap == MIRROR_VXLAN ? 17 : 47;
		ip[7] = 64;
		memcpy(ip + 8, "\x20\x01\x0d\xb8\0\x05\0\0\0\0\0\0\0\0\0\x10", 16);
		memcpy(ip + 24, "\x20\x01\x0d\xb8\0\x05\0\0\0\0\0\0\0\0\0\x01", 16);
		return;
	}
	ip[0] = 0x45;
	ip[1] = 0;
	put16(ip + 2, 20 + th + ilen);
	put16(ip + 4, rnd());
	put16(ip + 6, 0x4000);
	ip[8] = 64;
	ip[9] = sd->encap == MIRROR_VXLAN ? 17 : 47;
	put16(ip + 10, 0);
	/* a few switches mirror from one address, so sessions meet */
	memcpy(ip + 12, "\xc0\x00\x02\x0a\xc0\x00\x02\x01", 8);
	ip[15] += rnd_below(3);
}
