/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Congestion control and QoS (docs/congestion.md): the state the
 * BPF program keeps to judge CNP pacing and CE answered by CNPs, to measure
 * how a sender's rate follows a CNP, and to count PFC pause frames, and
 * the report userspace reads.  Kept apart from the flow table: a flow's
 * entry is the same four cache lines whether or not any of this is on.
 */
#ifndef ROCEVAL_CC_H
#define ROCEVAL_CC_H

/*
 * What the settings switch on, derived by settings_derive() whenever the
 * settings map is written, so a frame tests one word to know whether any
 * of it is asked for.
 */
#define ROCEVAL_CC_QOS 0x1	/* dscp, cnp_dscp, pcp, cnp_pcp or ect=required */
#define ROCEVAL_CC_GAP 0x2	/* cnp_gap */
#define ROCEVAL_CC_CE 0x4	/* cnp_delay */
#define ROCEVAL_CC_REACTION 0x8 /* cnp_reaction */
#define ROCEVAL_CC_STATE (ROCEVAL_CC_GAP | ROCEVAL_CC_CE | ROCEVAL_CC_REACTION)

/* qos_pcp(): the outer tag's priority | ROCEVAL_PCP_TAGGED, 0 for an untagged frame */
#define ROCEVAL_PCP_TAGGED 0x8

/*
 * A pacing scope, as the notification point (the CNP's sender) paces: its
 * address, the reaction point's (the CNP's destination), and the reaction
 * point's QP, or ROCEVAL_CC_ANY_QP for the IP pair.  Laid out as a flow key.
 */
#define ROCEVAL_CC_ANY_QP 0xFFFFFFFFu
struct roceval_cc_key {
	__u8 np[16];
	__u8 rp[16];
	__u32 qpn;
	__u8 ipv6;
	__u8 pad[3];
} __attribute__((aligned(8)));

/* Times in nanoseconds of the frames' own clock (frame_time_ns); 0 for none. */
struct roceval_cc_scope {
	__u64 cnp_ns; /* the scope's last CNP */
	__u64 ce_ns;  /* its first CE-marked request not yet answered by a CNP */
};

/*
 * The sending rate of one request flow around a CNP, under the slot of the
 * flow table the flow has (cc_rate): two checkpoints of its byte count at
 * least a window apart while it sends, and once a CNP came, the count and
 * time at the CNP and the rate before it, until the window after it ends.
 */
struct roceval_cc_rate {
	__u32 id;     /* the flow's key hashed: the slot may have changed hands */
	__u32 before; /* the rate before the CNP, bytes per 1024 ns; 0 while no CNP is measured */
	__u64 cp_ns[2];
	__u64 cnp_ns;
	__u32 cp_bytes[2];
	__u32 cnp_bytes;
	__u32 pad;
};

/*
 * How a sender's rate after a CNP compares with its rate before it, in
 * eighths: bucket b counts ratios up to (b + 1) / 8, the last one those
 * above 2.  Ratios are held as 64ths.
 */
#define ROCEVAL_REACTION_BUCKETS 17
#define ROCEVAL_REACTION_ONE 64

#define ROCEVAL_PFC_PRIOS 8
/* IEEE 802.3 Annex 31B / 802.1Qbb: MAC control frames and the PFC opcode */
#define ETH_P_MAC_CONTROL 0x8808
#define MAC_CONTROL_PFC 0x0101
#define PFC_LEN 20 /* opcode, class-enable vector, eight pause times */

struct roceval_pfc_prio {
	__u64 frames; /* PFC frames whose class-enable vector names the priority */
	__u64 xoff;   /* of them, with a pause time above 0 */
	__u64 xon;    /* with a pause time of 0: resume */
	__u64 quanta; /* the pause times added up, in quanta of 512 bit times */
};

/* Per CPU, one entry: what userspace reports of congestion beside the rules. */
struct roceval_congestion {
	struct roceval_pfc_prio pfc[ROCEVAL_PFC_PRIOS];
	__u64 reaction[ROCEVAL_REACTION_BUCKETS];
	__u64 reaction_sum;	   /* of the ratios counted, in 64ths */
	__u64 reaction_within;	   /* CNPs inside the window after an earlier one: one sample for both */
	__u64 reaction_unmeasured; /* CNPs to a flow with no rate before them (idle, or followed too briefly) */
	__u64 reaction_unpaired;   /* CNPs whose QP no request flow is known to belong to */
};

#endif /* ROCEVAL_CC_H */
