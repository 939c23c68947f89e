/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * MAC control frames (EtherType 0x8808): PFC pause frames (IEEE 802.1Qbb,
 * opcode 0x0101: a class-enable vector, bit n for priority n, then eight
 * pause times in quanta of 512 bit times, 0 resuming) counted per
 * priority; other opcodes (802.3x PAUSE) counted; a frame too short for
 * its opcode as captured, or a PFC frame with reserved bits of its vector
 * set, counted as malformed and not read.  Host NICs consume PFC in the
 * MAC; mirror ports and taps carry it (docs/congestion.md).
 */
#ifndef ROCEVAL_PFC_BPF_H
#define ROCEVAL_PFC_BPF_H

#include "congestion.bpf.h"

/* Whether the frame the parse turned away is a MAC control frame (its EtherType, after any tags). */
static __always_inline bool mac_control(const struct roceval_scratch *s)
{
	__u32 at = s->li.l3;

	return at >= ETH_HLEN && rd16(s->l2l4 + ((at - 2) & 31)) == ETH_P_MAC_CONTROL;
}

/* The MAC control frame whose first n bytes are in the scratch.  Global: verified once. */
__noinline int roceval_mac_control(__u32 n)
{
	struct roceval_scratch *s = scratch_get();
	struct roceval_counters *cnt = counters_get();
	struct roceval_congestion *c = congestion_get();
	__u32 at;
	__u16 vector;
	const __u8 *p;

	if (!s || !cnt || !c)
		return 0;
	at = s->li.l3 & 31;
	p = s->l2l4 + at;
	if (at + 2 > n) {
		cnt->total[TOTAL_MAC_CONTROL_MALFORMED]++;
		return 0;
	}
	if (rd16(p) != MAC_CONTROL_PFC) {
		cnt->total[TOTAL_MAC_CONTROL_OTHER]++;
		return 0;
	}
	vector = rd16(p + 2);
	if (at + PFC_LEN > n || (vector & 0xFF00)) {
		cnt->total[TOTAL_MAC_CONTROL_MALFORMED]++;
		return 0;
	}
	cnt->total[TOTAL_PFC_FRAMES]++;
#pragma unroll
	for (int i = 0; i < ROCEVAL_PFC_PRIOS; i++) {
		__u16 quanta = rd16(p + 4 + 2 * i);

		if (!(vector & (1u << i)))
			continue;
		c->pfc[i].frames++;
		if (quanta) {
			c->pfc[i].xoff++;
			c->pfc[i].quanta += quanta;
		} else {
			c->pfc[i].xon++;
		}
	}
	return 0;
}

#endif /* ROCEVAL_PFC_BPF_H */
