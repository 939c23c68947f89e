/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Mirror sessions: the encapsulations a switch or a cloud wraps mirrored
 * frames in, which roceval takes off at the hook and in a replay before it
 * judges the frame inside exactly as it would judge it bare
 * (docs/collector.md).  The BPF program, the JSON, the text tables and the
 * exporter share this table and these layouts.
 *
 * X(ENUM, id, description)
 */
#ifndef ROCEVAL_MIRROR_H
#define ROCEVAL_MIRROR_H

#define ROCEVAL_MIRROR_ENCAPS(X)                                                              \
	X(ERSPAN1, "erspan1", "ERSPAN type I: GRE 0x88BE without a sequence number, the Ethernet frame right after the GRE header") \
	X(ERSPAN2, "erspan2", "ERSPAN type II: GRE 0x88BE with a sequence number, an 8-byte ERSPAN header (version 1)") \
	X(ERSPAN3, "erspan3", "ERSPAN type III: GRE 0x22EB, a 12-byte ERSPAN header (version 2), 8 more bytes when its O bit is set") \
	X(GRE, "gre", "GRE transparent Ethernet bridging (0x6558), with or without checksum, key and sequence number") \
	X(VXLAN, "vxlan", "VXLAN: UDP to 4789 or a vxlan_ports port, the I flag set; the VNI is the session")    \
	X(GENEVE, "geneve", "Geneve carrying Ethernet: UDP to a geneve_ports port; the VNI is the session")

/* 0: not a mirror; then the table's rows from 1. */
enum roceval_mirror_encap {
	MIRROR_NONE = 0,
#define ROCEVAL_MIRROR_ENUM(e, id, desc) MIRROR_##e,
	ROCEVAL_MIRROR_ENCAPS(ROCEVAL_MIRROR_ENUM)
#undef ROCEVAL_MIRROR_ENUM
	MIRROR__COUNT
};

/*
 * Sessions listed at most: one more counts under mirror_sessions_full, and
 * its frames are still decapsulated and judged (in the flows of all such
 * sessions together, ROCEVAL_MIRROR_UNLISTED).
 */
#define ROCEVAL_MIRROR_SESSIONS 1024
/* The session index of a bare frame's flows, and of the unlisted sessions' */
#define ROCEVAL_MIRROR_BARE 0
#define ROCEVAL_MIRROR_UNLISTED 0xFFFF

/*
 * A session: who mirrors (the outer source address), how, and which of its
 * sessions (the ERSPAN session ID, the VNI, the GRE key; 0 when the
 * encapsulation carries none).  Two switches mirroring into one ERSPAN
 * session ID are two sessions, each with its own sequence numbers.
 * The hash map "mirror_sessions" maps it to its slot in "mirror_stats".
 */
struct roceval_mirror_key {
	__u8 source[16]; /* IPv4 in the first 4 bytes, the rest zero */
	__u8 ipv6;
	__u8 encap; /* enum roceval_mirror_encap */
	__u16 pad;
	__u32 session;
	__u32 pad2;
} __attribute__((aligned(8)));

/* mirror_seq value flags */
#define ROCEVAL_MIRROR_SEQ_SEEN 0x1 /* a sequence number was seen: last_seq holds it */
#define ROCEVAL_MIRROR_NUMBERED 0x2 /* its sequence numbers advanced at least once */

/*
 * A session's counts, per CPU, in slot `slot` of the per-CPU array
 * "mirror_stats"; userspace sums them.
 */
struct roceval_mirror_stats {
	__u64 frames;	 /* encapsulated frames */
	__u64 bytes;	 /* their outer frames' bytes */
	__u64 lost;	 /* frames its sequence numbers skipped */
	__u64 truncated; /* frames the switch cut (ERSPAN T bit): judged as snapped */
	__u64 nested;	 /* frames carrying another encapsulation, decapsulated once */
};

/*
 * Where a session's numbers stand, in slot `slot` of the array "mirror_seq",
 * one for every CPU: a session's frames reach the hook on whichever CPU
 * RSS, RPS or a veth hands them to, and each CPU following the numbers
 * alone took every frame another CPU saw for lost.  Loss is the sequence
 * numbers skipped (GRE S bit: GRE-TEB, ERSPAN II and III): a session whose
 * numbers never advance (always 0, as some switches send) is unnumbered and
 * loses nothing.
 */
struct roceval_mirror_seq {
	__u32 last_seq; /* the last sequence number seen */
	__u32 flags;	/* ROCEVAL_MIRROR_* */
};

#endif /* ROCEVAL_MIRROR_H */
