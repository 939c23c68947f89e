// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Mutations: what a broken sender, a bad link or a hostile peer could put on the wire. */
#include <string.h>

#include "datapath.h"
#include "wire.h"

/* Where the headers of the unmutated layout are; 0 when not there. */
struct where {
	uint32_t l3, l4, bth;
	bool v6;
};

static void insert_bytes(struct frame *f, uint32_t at, uint32_t n)
{
	if (f->len + n > MAX_FRAME || at > f->len)
		return;
	memmove(f->d + at + n, f->d + at, f->len - at);
	for (uint32_t i = 0; i < n; i++)
		f->d[at + i] = rnd();
	f->len += n;
}

static void remove_bytes(struct frame *f, uint32_t at, uint32_t n)
{
	if (at >= f->len)
		return;
	if (n > f->len - at)
		n = f->len - at;
	memmove(f->d + at, f->d + at + n, f->len - at - n);
	f->len -= n;
}

static void layout(const struct frame *f, struct where *w)
{
	uint32_t off = 14, proto;

	memset(w, 0, sizeof(*w));
	if (f->len < 14)
		return;
	proto = get16(f->d + 12);
	for (int i = 0; i < 2 && (proto == 0x8100 || proto == 0x88A8) && off + 4 <= f->len; i++) {
		proto = get16(f->d + off + 2);
		off += 4;
	}
	if (proto == 0x0800 && off + 20 <= f->len) {
		w->l3 = off;
		w->l4 = off + (f->d[off] & 15) * 4;
	} else if (proto == 0x86DD && off + 40 <= f->len) {
		w->l3 = off;
		w->l4 = off + 40;
		w->v6 = true;
	}
	w->bth = w->l4 ? w->l4 + 8 : 0;
}

static uint32_t interesting16(uint32_t cur)
{
	static const uint32_t vals[] = { 0, 1, 7, 8, 19, 20, 27, 28, 36, 0x7FFF, 0x8000, 0xFFFF };

	switch (rnd_below(4)) {
	case 0:
		return vals[rnd_below(sizeof(vals) / sizeof(vals[0]))];
	case 1:
		return (cur + 1 + rnd_below(16)) & 0xFFFF;
	case 2:
		return (cur - 1 - rnd_below(16)) & 0xFFFF;
	default:
		return rnd() & 0xFFFF;
	}
}

static void flip_anywhere(struct frame *f, const struct where *w)
{
	uint32_t n = 1 + rnd_below(8);

	for (uint32_t i = 0; i < n && f->len; i++)
		f->d[rnd_below(f->len)] ^= 1 << rnd_below(8);
	note(f, "flip%u", n);
}

static void flip_headers(struct frame *f, const struct where *w)
{
	uint32_t n = 1 + rnd_below(4);

	for (uint32_t i = 0; i < n && f->len; i++)
		f->d[rnd_below(f->len < 128 ? f->len : 128)] ^= 1 << rnd_below(8);
	note(f, "hflip%u", n);
}

static void truncate_frame(struct frame *f, const struct where *w)
{
	f->len = rnd_below(f->len + 1);
	note(f, "trunc@%u", f->len);
}

static void ip_length_lies(struct frame *f, const struct where *w)
{
	uint32_t n;

	if (!w->l3)
		return;
	n = interesting16(get16(f->d + w->l3 + (w->v6 ? 4 : 2)));
	put16(f->d + w->l3 + (w->v6 ? 4 : 2), n);
	note(f, "iplen=%u", n);
}

static void udp_length_lies(struct frame *f, const struct where *w)
{
	uint32_t n;

	if (!w->l4 || w->l4 + 8 > f->len)
		return;
	n = interesting16(get16(f->d + w->l4 + 4));
	put16(f->d + w->l4 + 4, n);
	note(f, "udplen=%u", n);
}

static void any_opcode(struct frame *f, const struct where *w)
{
	if (!w->bth || w->bth >= f->len)
		return;
	f->d[w->bth] = rnd();
	note(f, "op=0x%02x", f->d[w->bth]);
}

static void any_padcnt(struct frame *f, const struct where *w)
{
	if (!w->bth || w->bth + 1 >= f->len)
		return;
	f->d[w->bth + 1] = (f->d[w->bth + 1] & 0xCF) | (rnd_below(4) << 4);
	note(f, "pad=%u", (f->d[w->bth + 1] >> 4) & 3);
}

/* IPv4 fragment fields, or an IPv6 fragment header inserted before UDP. */
static void fragment(struct frame *f, const struct where *w)
{
	uint32_t l3 = w->l3, n;
	uint8_t nh;

	if (!l3)
		return;
	if (!w->v6) {
		n = (rnd_below(2) << 13) | (chance(50) ? 0 : rnd_below(0x2000));
		put16(f->d + l3 + 6, n);
		note(f, "frag4=0x%04x", n);
		return;
	}
	if (l3 + 40 > f->len)
		return;
	nh = f->d[l3 + 6];
	insert_bytes(f, l3 + 40, 8);
	if (f->d[l3 + 6] != nh)
		return;
	f->d[l3 + 6] = 44;
	f->d[l3 + 40] = nh;
	f->d[l3 + 41] = 0;
	n = chance(50) ? 1 : rnd() & 0xFFF9;
	put16(f->d + l3 + 42, n);
	put16(f->d + l3 + 4, get16(f->d + l3 + 4) + 8);
	note(f, "frag6=0x%04x", n);
}

static void edge_byte(struct frame *f, const struct where *w)
{
	static const uint8_t edge[] = { 0x00, 0xFF, 0x7F, 0x80, 0x01, 0xC0 };
	uint32_t n;

	if (!f->len)
		return;
	n = rnd_below(f->len < 160 ? f->len : 160);
	f->d[n] = edge[rnd_below(sizeof(edge))];
	note(f, "b%u=0x%02x", n, f->d[n]);
}

/* Trailing bytes beyond what IP claims. */
static void tail_bytes(struct frame *f, const struct where *w)
{
	uint32_t n = 1 + rnd_below(chance(80) ? 64 : 8192);

	insert_bytes(f, f->len, n);
	note(f, "tail+%u", n);
}

/* IPv4 IHL: options, or a header shorter than allowed. */
static void ipv4_ihl(struct frame *f, const struct where *w)
{
	uint32_t n;

	if (!w->l3 || w->v6)
		return;
	n = rnd_below(16);
	if (n > 5 && chance(70)) {
		insert_bytes(f, w->l3 + 20, (n - 5) * 4);
		put16(f->d + w->l3 + 2, get16(f->d + w->l3 + 2) + (n - 5) * 4);
	}
	f->d[w->l3] = 0x40 | n;
	note(f, "ihl=%u", n);
}

/* TVer, reserved bits, P_Key. */
static void bth_fields(struct frame *f, const struct where *w)
{
	uint32_t n;

	if (!w->bth || w->bth + 12 > f->len)
		return;
	n = rnd_below(4);
	if (n == 0)
		f->d[w->bth + 1] |= 1 + rnd_below(15);
	else if (n == 1)
		f->d[w->bth + 8] |= 1 + rnd_below(127);
	else if (n == 2)
		put16(f->d + w->bth + 2, interesting16(0));
	else
		f->d[w->bth + 4] = rnd();
	note(f, "bthfield%u", n);
}

/* Bytes removed or inserted in the middle. */
static void splice(struct frame *f, const struct where *w)
{
	uint32_t n = 1 + rnd_below(16);

	if (chance(50))
		remove_bytes(f, rnd_below(f->len + 1), n);
	else
		insert_bytes(f, rnd_below(f->len + 1), n);
	note(f, "splice%u", n);
}

static void vlan_or_ethertype(struct frame *f, const struct where *w)
{
	static const uint16_t types[] = { 0x8100, 0x88A8, 0x0800, 0x86DD, 0x0806, 0x8915 };

	if (f->len < 14)
		return;
	if (chance(50)) {
		insert_bytes(f, 12, 4);
		put16(f->d + 12, chance(50) ? 0x8100 : 0x88A8);
		note(f, "+vlan");
	} else {
		put16(f->d + 12, types[rnd_below(6)]);
		note(f, "ethertype");
	}
}

/* A bigger payload with consistent lengths: multi-buffer and beyond the scratch. */
static void grow(struct frame *f, const struct where *w)
{
	uint32_t n, iplen_at = w->l3 + (w->v6 ? 4 : 2);

	if (!w->l3 || !w->l4 || w->l4 + 8 > f->len)
		return;
	n = 4 * (1 + rnd_below(chance(80) ? 1100 : 5000));
	if (f->len + n > MAX_FRAME)
		return;
	insert_bytes(f, w->l4 + 8 + 12, n);
	put16(f->d + iplen_at, (get16(f->d + iplen_at) + n) & 0xFFFF);
	put16(f->d + w->l4 + 4, (get16(f->d + w->l4 + 4) + n) & 0xFFFF);
	note(f, "grow%u", n);
}

/* Other UDP ports and protocols. */
static void port_or_protocol(struct frame *f, const struct where *w)
{
	if (!w->l4 || w->l4 + 4 > f->len)
		return;
	if (chance(50)) {
		put16(f->d + w->l4 + 2, chance(50) ? 4792 : rnd());
		note(f, "dport");
	} else {
		f->d[w->l3 + (w->v6 ? 6 : 9)] = chance(50) ? 6 : rnd();
		note(f, "proto");
	}
}

static void ecn_ce(struct frame *f, const struct where *w)
{
	if (!w->l3)
		return;
	if (w->v6)
		f->d[w->l3 + 1] |= 0x30;
	else
		f->d[w->l3 + 1] |= 3;
	note(f, "ce");
}

static void (*const mutations[])(struct frame *f, const struct where *w) = {
	flip_anywhere, flip_headers,	  truncate_frame, ip_length_lies, udp_length_lies, any_opcode,
	any_padcnt,    fragment,	  edge_byte,	  tail_bytes,	  ipv4_ihl,	   bth_fields,
	splice,	       vlan_or_ethertype, grow,		  port_or_protocol, ecn_ce,
};

static void mutate_plain(struct frame *f)
{
	struct where w;

	layout(f, &w);
	mutations[rnd_below(sizeof(mutations) / sizeof(mutations[0]))](f, &w);
}

/* Where GRE's sequence number is, and the header after GRE's words (ERSPAN's); 0 when past the frame. */
static uint32_t gre_words(const struct frame *f, uint32_t l4, uint32_t *seq_at)
{
	uint16_t flags = get16(f->d + l4);
	uint32_t off = l4 + 4 + (flags & 0x8000 ? 4 : 0) + (flags & 0x2000 ? 4 : 0);

	*seq_at = flags & 0x1000 ? off : 0;
	off += flags & 0x1000 ? 4 : 0;
	return off + 12 <= f->len ? off : 0;
}

/*
 * The fields a mirror's outer headers add, the way a misconfigured switch, a
 * lossy path or a hostile sender would set them: GRE flags, version and
 * protocol, ERSPAN's version, T and O bits, sequence numbers that skip,
 * repeat or go back, VXLAN's port and I flag, the session's source.
 */
static void mirror_fields(struct frame *f, const struct mirror_read *m)
{
	static const uint16_t gre_protos[] = { 0x88BE, 0x22EB, 0x6558, 0x0800 };
	static const uint16_t ports[] = { 4789, 4791, 8472, 6081 };
	uint32_t seq_at = 0, erspan = m->udp || m->l4 + 4 > f->len ? 0 : gre_words(f, m->l4, &seq_at);
	uint32_t k = rnd_below(6);

	if (m->udp && m->l4 + 16 <= f->len) {
		if (k < 2)
			put16(f->d + m->l4 + 2, chance(80) ? ports[rnd_below(4)] : rnd());
		else if (k < 4)
			f->d[m->l4 + 8] ^= 1 << rnd_below(8); /* the I flag among the flags */
		else
			f->d[m->l3 + (m->v6 ? 23 : 15)] ^= 1 + rnd_below(3); /* another source: a new session */
		note(f, "vxlan%u", k);
		return;
	}
	if (m->udp || m->l4 + 4 > f->len)
		return;
	if (k == 0)
		f->d[m->l4 + rnd_below(2)] ^= 1 << rnd_below(8);
	else if (k == 1)
		put16(f->d + m->l4 + 2, chance(80) ? gre_protos[rnd_below(4)] : rnd());
	else if (k == 2 && seq_at) {
		uint32_t seq = (uint32_t)get16(f->d + seq_at) << 16 | get16(f->d + seq_at + 2);

		/* the next, a few skipped, the same, behind, anywhere */
		put32(f->d + seq_at, chance(80) ? seq + rnd_below(5) - 1 : rnd());
	}
	else if (k == 3 && erspan)
		f->d[erspan] ^= 0x10 << rnd_below(4); /* the version */
	else if (k == 4 && erspan)
		f->d[erspan + (chance(50) ? 2 : 11)] ^= chance(50) ? 0x04 : 0x01; /* T, or III's O */
	else
		f->d[m->l3 + (m->v6 ? 23 : 15)] ^= 1 + rnd_below(3);
	note(f, "gre%u", k);
}

/* The inner frame of a mirror mutated, the outer lengths following it as the switch would write them. */
static void mutate_inner(struct frame *f, const struct expect *e)
{
	static struct frame in;
	const struct mirror_read *m = &e->outer;
	uint32_t tail = f->len - m->at - e->len, delta;

	memcpy(in.d, f->d + m->at, e->len);
	in.len = e->len;
	in.how[0] = '\0';
	mutate_plain(&in);
	if (m->at + in.len + tail > MAX_FRAME)
		return;
	memmove(f->d + m->at + in.len, f->d + m->at + e->len, tail);
	memcpy(f->d + m->at, in.d, in.len);
	f->len = m->at + in.len + tail;
	delta = in.len - e->len;
	put16(f->d + m->l3 + (m->v6 ? 4 : 2), get16(f->d + m->l3 + (m->v6 ? 4 : 2)) + delta);
	if (m->udp)
		put16(f->d + m->l4 + 4, get16(f->d + m->l4 + 4) + delta);
	note(f, "inner(%s)", in.how);
}

void mutate(struct frame *f)
{
	struct expect e;

	expect_frame(f->d, f->len, &e);
	if (e.outer.encap > 0 && chance(60))
		mutate_inner(f, &e);
	else if (e.outer.encap != MIRROR_NONE && chance(30))
		mirror_fields(f, &e.outer);
	else
		mutate_plain(f);
}
