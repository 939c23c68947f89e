/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Mirror sessions (roceval_mirror.h, docs/collector.md): frames a switch or
 * a cloud mirrored to this host inside ERSPAN, GRE-TEB, VXLAN or Geneve.
 * Looked for only in frames the parse turned away, so a bare RoCE frame
 * pays nothing for it: roceval_mirror() reads the outer headers from the
 * first copy, counts the session and leaves where the inner frame is in
 * the scratch; the entry point then judges the inner frame with the same
 * global function, as it would judge it bare (mirror_inner()).
 */
#ifndef ROCEVAL_MIRROR_BPF_H
#define ROCEVAL_MIRROR_BPF_H

#include "batch.bpf.h"
#include "frame.bpf.h"

/* A session's slot in mirror_stats; created on its first frame, never removed. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ROCEVAL_MIRROR_SESSIONS);
	__type(key, struct roceval_mirror_key);
	__type(value, __u32);
} mirror_sessions SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ROCEVAL_MIRROR_SESSIONS);
	__type(key, __u32);
	__type(value, struct roceval_mirror_stats);
} mirror_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ROCEVAL_MIRROR_SESSIONS);
	__type(key, __u32);
	__type(value, struct roceval_mirror_seq);
} mirror_seq SEC(".maps");

/* Slots handed out so far, under a lock: an atomic add that returns its result needs BPF v3 */
struct mirror_next {
	struct bpf_spin_lock lock;
	__u32 slots;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mirror_next);
} mirror_next SEC(".maps");

/* A new session's slot, ROCEVAL_MIRROR_SESSIONS once all are taken. */
static __always_inline __u32 mirror_slot_new(void)
{
	__u32 zero = 0, slot = ROCEVAL_MIRROR_SESSIONS;
	struct mirror_next *m = rare_lookup(&mirror_next, &zero);

	if (!m)
		return slot;
	bpf_spin_lock(&m->lock);
	if (m->slots < ROCEVAL_MIRROR_SESSIONS)
		slot = m->slots++;
	bpf_spin_unlock(&m->lock);
	return slot;
}

/* What roceval_frame() returns for a frame roceval_mirror() took apart: not an XDP action. */
#define ROCEVAL_MIRRORED BATCH_INNER

#define IPPROTO_GRE_NR 47
#define GRE_C 0x8000
#define GRE_K 0x2000
#define GRE_S 0x1000
/* routing present, strict source route, recursion, flags and version bits no mirror sets */
#define GRE_UNUSED 0x4FF8
#define GRE_VERSION 0x0007
#define GRE_P_ERSPAN 0x88BE
#define GRE_P_ERSPAN3 0x22EB
#define GRE_P_TEB 0x6558
#define VXLAN_PORT 4789
#define VXLAN_I 0x08

/* Outcomes of the outer parse besides an encapsulation (enum roceval_mirror_encap). */
#define MIRROR_MALFORMED 0xFF

/* What the outer headers said. */
struct mirror_outer {
	__u32 at;	/* the inner frame's offset */
	__u32 end;	/* the outer IP datagram's end */
	__u32 session;	/* ERSPAN session ID, VNI or GRE key */
	__u32 seq;
	__u8 has_seq;
	__u8 truncated; /* ERSPAN T bit */
	__u8 ipv6;	/* the outer header's family */
};

static __always_inline bool mirror_port(const __u16 *ports, __u16 dport)
{
#pragma unroll
	for (int i = 0; i < ROCEVAL_MAX_PORTS; i++)
		if (ports[i] && ports[i] == dport)
			return true;
	return false;
}

/* ERSPAN II or III after a GRE header ending at `off`; the encapsulation or MIRROR_MALFORMED. */
static __always_inline __u8 mirror_erspan(const __u8 *h, __u32 lim, __u32 off, __u16 proto, struct mirror_outer *o)
{
	bool three = proto == GRE_P_ERSPAN3;
	__u32 hl = three ? 12 : 8;

	if (off + hl > lim || (h[off] >> 4) != (three ? 2 : 1))
		return MIRROR_MALFORMED;
	o->session = rd16(h + off + 2) & 0x3FF;
	o->truncated = (h[off + 2] >> 2) & 1;
	/* type III's O bit: an 8-byte platform-specific sub-header follows */
	if (three && (h[off + 11] & 1))
		hl += 8;
	o->at = off + hl;
	return three ? MIRROR_ERSPAN3 : MIRROR_ERSPAN2;
}

/* GRE at `off`: ERSPAN I, II, III or GRE-TEB; 0 for other GRE (IP in GRE, keepalives). */
static __always_inline __u8 mirror_gre(const __u8 *h, __u32 lim, __u32 off, struct mirror_outer *o)
{
	__u16 flags, proto;

	if (off + 4 > lim)
		return MIRROR_MALFORMED;
	flags = rd16(h + off);
	proto = rd16(h + off + 2);
	if (proto != GRE_P_ERSPAN && proto != GRE_P_ERSPAN3 && proto != GRE_P_TEB)
		return 0;
	if (flags & (GRE_UNUSED | GRE_VERSION))
		return MIRROR_MALFORMED;
	off += 4 + ((flags & GRE_C) ? 4 : 0);
	if (flags & GRE_K) {
		if (off + 4 > lim)
			return MIRROR_MALFORMED;
		o->session = rd32(h + off);
		off += 4;
	}
	if (flags & GRE_S) {
		if (off + 4 > lim)
			return MIRROR_MALFORMED;
		o->seq = rd32(h + off);
		o->has_seq = 1;
		off += 4;
	}
	o->at = off;
	if (proto == GRE_P_TEB)
		return MIRROR_GRE;
	/* type I: no sequence number, no ERSPAN header (its session is its GRE key, if any) */
	if (proto == GRE_P_ERSPAN && !(flags & GRE_S))
		return MIRROR_ERSPAN1;
	o->session = 0;
	return mirror_erspan(h, lim, off & 0x7F, proto, o);
}

/* UDP at `off`: VXLAN (4789, vxlan_ports) or Geneve carrying Ethernet (geneve_ports); else 0. */
static __always_inline __u8 mirror_udp(const __u8 *h, __u32 lim, __u32 off, const struct roceval_settings *cfg,
				       struct mirror_outer *o)
{
	__u16 dport;

	if (off + UDP_HLEN > lim)
		return 0;
	dport = rd16(h + off + 2);
	off += UDP_HLEN;
	if (dport == VXLAN_PORT || mirror_port(cfg->vxlan_ports, dport)) {
		if (off + 8 > lim || !(h[off] & VXLAN_I))
			return MIRROR_MALFORMED;
		o->session = rd24(h + off + 4);
		o->at = off + 8;
		return MIRROR_VXLAN;
	}
	if (!mirror_port(cfg->geneve_ports, dport))
		return 0;
	if (off + 8 > lim || (h[off] >> 6))
		return MIRROR_MALFORMED;
	if (rd16(h + off + 2) != GRE_P_TEB) /* Geneve carrying IP: not a mirror */
		return 0;
	o->session = rd24(h + off + 4);
	o->at = off + 8 + (h[off] & 0x3F) * 4;
	return MIRROR_GENEVE;
}

/*
 * The outer IP header at `l3` (no fragments, no IPv6 extension headers: a
 * mirror's tunnel sends neither), then GRE or UDP; the encapsulation, 0 or
 * MIRROR_MALFORMED.  Fills the session key's source.
 */
static __always_inline __u8 mirror_outer_parse(struct roceval_scratch *s, __u32 n, __u32 wire,
					       const struct roceval_settings *cfg, struct mirror_outer *o)
{
	const __u8 *h = s->l2l4;
	struct roceval_mirror_key *k = &s->mkey;
	__u32 l3 = s->li.l3 & 31, l4, lim;
	__u16 proto;
	__u8 nh;

	if (l3 < ETH_HLEN)
		return 0;
	proto = rd16(h + l3 - 2);
	if (proto == ETH_P_IP) {
		if (l3 + IPV4_HLEN > n || (h[l3] >> 4) != 4 || (h[l3] & 0x0F) < 5 || (rd16(h + l3 + 6) & 0x3FFF))
			return 0;
		nh = h[l3 + 9];
		o->end = l3 + rd16(h + l3 + 2);
		l4 = l3 + (h[l3] & 0x0F) * 4;
		((__u64 *)k->source)[0] = *(const __u32 *)(h + l3 + 12);
		((__u64 *)k->source)[1] = 0;
		o->ipv6 = 0;
	} else if (proto == ETH_P_IPV6) {
		if (l3 + IPV6_HLEN > n || (h[l3] >> 4) != 6)
			return 0;
		nh = h[l3 + 6];
		o->end = l3 + IPV6_HLEN + rd16(h + l3 + 4);
		l4 = l3 + IPV6_HLEN;
		((__u64 *)k->source)[0] = *(const __u64 *)(h + l3 + 8);
		((__u64 *)k->source)[1] = *(const __u64 *)(h + l3 + 16);
		o->ipv6 = 1;
	} else {
		return 0;
	}
	if (nh != IPPROTO_GRE_NR && nh != IPPROTO_UDP_NR)
		return 0;
	/* what the header parses may read: what the datagram holds, as far as it was copied */
	lim = o->end < n ? o->end : n;
	o->has_seq = 0;
	o->truncated = 0;
	o->session = 0;
	nh = nh == IPPROTO_GRE_NR ? mirror_gre(h, lim, l4 & 0x7F, o) : mirror_udp(h, lim, l4 & 0x7F, cfg, o);
	/* an outer datagram longer than its frame, or too short for an Ethernet header inside */
	if (nh && nh != MIRROR_MALFORMED && (o->end > wire || o->at + ETH_HLEN > o->end))
		return MIRROR_MALFORMED;
	return nh;
}

/*
 * The session's slot: this CPU's last session's, else the table's, else a
 * new one (ROCEVAL_MIRROR_SESSIONS once all are taken).  Two CPUs creating
 * one session at once: the loser's slot stays unused.
 */
static __always_inline __u32 mirror_slot(struct roceval_scratch *s)
{
	const __u64 *a = (const __u64 *)&s->mkey, *b = (const __u64 *)&s->mlast;
	__u32 *found, slot;

	if (a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3])
		return s->mlast_slot;
	found = rare_lookup(&mirror_sessions, &s->mkey);
	if (found) {
		slot = *found;
	} else {
		slot = mirror_slot_new();
		if (slot >= ROCEVAL_MIRROR_SESSIONS ||
		    bpf_map_update_elem(&mirror_sessions, &s->mkey, &slot, BPF_NOEXIST)) {
			found = rare_lookup(&mirror_sessions, &s->mkey);
			slot = found ? *found : ROCEVAL_MIRROR_SESSIONS;
		}
	}
	s->mlast = s->mkey;
	s->mlast_slot = slot;
	return slot;
}

/* The session's counts, and the frames its sequence numbers skipped (only forward: a frame behind is reordered). */
static __always_inline void mirror_count(struct roceval_counters *cnt, struct roceval_mirror_stats *st,
					 struct roceval_mirror_seq *sq, const struct mirror_outer *o, __u32 len)
{
	__u32 d;

	st->frames++;
	st->bytes += len;
	if (o->truncated)
		st->truncated++;
	if (!o->has_seq || !sq)
		return;
	if (!(sq->flags & ROCEVAL_MIRROR_SEQ_SEEN)) {
		sq->flags |= ROCEVAL_MIRROR_SEQ_SEEN;
		sq->last_seq = o->seq;
		return;
	}
	d = o->seq - sq->last_seq;
	if (!d || d >= 0x80000000u)
		return;
	/* the next number, what a healthy session sends: no loss to add */
	if (d != 1) {
		st->lost += d - 1;
		cnt->total[TOTAL_MIRROR_LOST] += d - 1;
	}
	sq->flags |= ROCEVAL_MIRROR_NUMBERED;
	sq->last_seq = o->seq;
}

/*
 * The inner frame of the frame roceval_mirror() is taking apart, when the
 * outer frame's first copy holds its own: moved to the start of the copy,
 * inner_at bytes down, in place of a second call to the load helper, before
 * anything reads the inner frame in place (a read in place that stops at
 * the head's end has written over the copy's first words); true when it
 * was.  Word by word upwards, each word read before anything is written
 * over it.  Here rather than in the inner frame's pass: no call and no
 * lookup of the scratch, and the verifier checks it once, not on the
 * frame's path (inlined there, that path was walked once more: 141k).
 */
static __always_inline bool mirror_inner_kept(struct roceval_scratch *s)
{
	__u32 at = s->inner_at;

	barrier_var(at);
	if (at > ROCEVAL_MIRROR_SPARE)
		return false;
#pragma unroll
	for (int i = 0; i < ROCEVAL_L2L4_MAX / 8; i++)
		((__u64 *)s->l2l4)[i] = *(const __u64 *)(s->l2l4 + at + 8 * i);
	return true;
}

/*
 * The frame whose first bytes are in the scratch, which the parse turned
 * away, in the session of its flow key (ROCEVAL_MIRROR_BARE: none, a frame
 * as it came): 1 when it is a mirrored frame, its inner frame's place and
 * session then in the scratch (inner_*), its first copy already at the
 * copy's start when the outer one's held it (inner_kept); 0 otherwise (not a mirror,
 * malformed, or nested in a mirrored frame's inner frame, each counted).
 * Global: verified once, whatever calls it.  The caller's scratch, counters
 * and settings, not looked up again (five arguments at most: the session
 * is the one frame_begin() wrote in the flow key, n follows from len).
 */
__noinline int roceval_mirror(struct roceval_scratch *s, struct roceval_counters *cnt,
			      const struct roceval_settings *cfg, __u32 len, __u32 wire)
{
	__u32 slot, end, session, n = len < ROCEVAL_L2L4_MAX ? len : ROCEVAL_L2L4_MAX;
	struct roceval_mirror_stats *st;
	struct mirror_outer o;
	__u8 encap;

	if (!s || !cnt || !cfg)
		return 0;
	session = s->fi.key.session;
	encap = mirror_outer_parse(s, n, wire, cfg, &o);
	if (!encap)
		return 0;
	if (encap == MIRROR_MALFORMED) {
		cnt->total[TOTAL_MIRROR_MALFORMED]++;
		return 0;
	}
	if (session) {
		cnt->total[TOTAL_MIRROR_NESTED]++;
		slot = session - 1;
		st = rare_lookup(&mirror_stats, &slot);
		if (st)
			st->nested++;
		return 0;
	}
	s->mkey.ipv6 = o.ipv6;
	s->mkey.encap = encap;
	s->mkey.pad = 0;
	s->mkey.session = o.session;
	s->mkey.pad2 = 0;
	slot = mirror_slot(s);
	st = bpf_map_lookup_elem(&mirror_stats, &slot);
	if (st)
		mirror_count(cnt, st, bpf_map_lookup_elem(&mirror_seq, &slot), &o, len);
	else
		cnt->total[TOTAL_MIRROR_SESSIONS_FULL]++;
	cnt->total[TOTAL_MIRROR_FRAMES]++;
	if (o.truncated)
		cnt->total[TOTAL_MIRROR_TRUNCATED]++;
	end = o.end < len ? o.end : len;
	s->inner_at = o.at;
	s->inner_len = end > o.at ? end - o.at : 0;
	s->inner_wire = o.truncated ? ROCEVAL_WIRE_UNKNOWN : o.end - o.at;
	s->inner_session = st ? slot + 1 : ROCEVAL_MIRROR_UNLISTED;
	/* the inner frame's first copy is within the bytes of the outer one's the scratch holds */
	s->inner_kept = o.at + (s->inner_len < ROCEVAL_L2L4_MAX ? s->inner_len : ROCEVAL_L2L4_MAX) <= s->held &&
			mirror_inner_kept(s);
	s->spare = 1;
	if (replay_clock) {
		batch_inner.at = s->inner_at;
		batch_inner.len = s->inner_len;
		batch_inner.wire = s->inner_wire;
		batch_inner.session = s->inner_session;
	}
	/* the inner frame is counted as a bare one would be: the outer frame's count stands for it */
	cnt->total[TOTAL_FRAMES]--;
	cnt->total[TOTAL_BYTES] -= s->inner_len;
	return 1;
}

/*
 * name(ctx, base, len, wire): `frame` (a roceval_frame of its context) on
 * the frame, then, when it was a mirrored one, on its inner frame with the
 * same global function and the session (no recursion, no second copy of
 * the frame's code to verify).  The inner frame's verdict is the outer
 * frame's: enforce drops what it would drop bare.
 */
#define MIRROR_DECAP(name, frame, ctx_type)                                                   \
	static __always_inline int name(ctx_type *ctx, __u32 base, __u32 len, __u32 wire)     \
	{                                                                                     \
		__u32 zero = 0;                                                               \
		struct roceval_scratch *s;                                                    \
		int v = frame(ctx, base, len, wire, ROCEVAL_MIRROR_BARE);                     \
                                                                                              \
		if (v != ROCEVAL_MIRRORED)                                                    \
			return v;                                                             \
		s = bpf_map_lookup_elem(&scratch, &zero);                                     \
		if (!s)                                                                       \
			return XDP_PASS;                                                      \
		v = frame(ctx, base + s->inner_at, s->inner_len, s->inner_wire, s->inner_session); \
		return v == XDP_DROP ? XDP_DROP : XDP_PASS;                                   \
	}

#endif /* ROCEVAL_MIRROR_BPF_H */
