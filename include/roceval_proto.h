/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * RoCEv2 wire facts shared by the BPF program and userspace: header sizes,
 * transports, and the opcode table (IBA 9.2.1, 9.3) that drives both
 * the validator and the decoders.  Everything here is plain data so the BPF
 * side indexes it instead of branching on opcodes.
 */
#ifndef ROCEVAL_PROTO_H
#define ROCEVAL_PROTO_H

#define ROCE_UDP_PORT 4791

/* The headers RoCEv2 rides in; IPv4's without options.  The values <linux/if_ether.h> gives ETH_HLEN. */
#define ETH_HLEN 14
#define VLAN_HLEN 4
#define IPV4_HLEN 20
#define IPV6_HLEN 40
#define UDP_HLEN 8
#define IPPROTO_UDP_NR 17 /* IP protocol number; vmlinux.h has IPPROTO_UDP only as an enum */

#define ROCE_BTH_LEN 12
#define ROCE_ICRC_LEN 4
#define ROCE_RDETH_LEN 4
#define ROCE_DETH_LEN 8
#define ROCE_XRCETH_LEN 4
#define ROCE_RETH_LEN 16
#define ROCE_ATOMICETH_LEN 28
#define ROCE_AETH_LEN 4
#define ROCE_CNP_RESERVED_LEN 16
#define ROCE_LRH_MASK_LEN 8 /* the absent LRH: 8 bytes of 0xFF at the start of the ICRC */
#define ROCE_GRH_LEN 40	    /* RoCEv1: the GRH, IPv6's layout, replaces IP and UDP */
#define ROCE_GRH_NXTHDR_BTH 0x1B
#define ROCE_ETH_P_ROCEV1 0x8915

/*
 * mlx5 DC (Dynamically Connected) transport, which ConnectX carries in the
 * RD opcode range.  Its headers are not public; these sizes are what real
 * ConnectX frames show (docs/protocol.md, "mlx5 DC"): a 20-byte header after the BTH
 * on every packet, where RD has RDETH (+ DETH on requests); 16 more bytes
 * on the connect packet (the RESYNC opcode), ending in the DC access key;
 * and an ACK may carry 8 bytes after its AETH (the reply to a connect).
 */
#define ROCE_DC_HDR_LEN 20
#define ROCE_DC_CONNECT_LEN 16
#define ROCE_DC_ACK_EXTRA_LEN 8

#define ROCE_OPCODE_CNP 0x81
#define ROCE_PSN_MASK 0xFFFFFFu
#define ROCE_PSN_WINDOW 0x800000u /* 2^23: "ahead" means (b - a) mod 2^24 in 1 .. 2^23-1 */

/* OpCode[7:5] */
enum roce_transport {
	ROCE_TR_RC = 0,
	ROCE_TR_UC = 1,
	ROCE_TR_RD = 2,
	ROCE_TR_UD = 3,
	ROCE_TR_CNP = 4,
	ROCE_TR_XRC = 5,
	ROCE_TR_VENDOR6 = 6,
	ROCE_TR_VENDOR7 = 7,
};

#define TRB(t) (1u << ROCE_TR_##t)
#define TR_RC_UC_RD_XRC (TRB(RC) | TRB(UC) | TRB(RD) | TRB(XRC))
#define TR_ALL5 (TR_RC_UC_RD_XRC | TRB(UD))
#define TR_RC_RD_XRC (TRB(RC) | TRB(RD) | TRB(XRC))
#define TR_RC_XRC (TRB(RC) | TRB(XRC))

/* What the payload of an opcode may be (IBA 9.7.7 and the opcode's headers, 9.3-9.4). */
enum roce_payload_rule {
	PL_NONE = 0, /* no payload at all */
	PL_PMTU,     /* FIRST/MIDDLE: exactly the PMTU */
	PL_LAST,     /* 1 .. PMTU */
	PL_ONLY,     /* 0 .. PMTU */
	PL_EIGHT,    /* ATOMIC_WRITE: exactly 8 bytes */
};

/* Where a packet stands in its message: drives the sequence rules. */
enum roce_position {
	POS_NONE = 0, /* ACKs: outside any message */
	POS_FIRST,
	POS_MIDDLE,
	POS_LAST,
	POS_ONLY,
};

enum roce_family {
	FAM_NONE = 0,
	FAM_SEND,
	FAM_WRITE,
	FAM_READ_REQ,
	FAM_READ_RESP,
	FAM_ACK,
	FAM_ATOMIC,
	FAM_ATOMIC_ACK,
	FAM_FLUSH,
	FAM_ATOMIC_WRITE,
	FAM_RESYNC,
};

/* roce_op.flags */
#define OPF_REQUEST 0x01 /* requester-to-responder packet (its own PSN space) */
#define OPF_SE_OK 0x02	 /* SE may be set (LAST/ONLY of SEND, WRITE with immediate) */
#define OPF_DMALEN 0x04	 /* payload must equal RETH.DMALen */
#define OPF_IMM 0x08	 /* carries ImmDt */
#define OPF_IETH 0x10	 /* carries IETH */

#define ROCE_NO_HDR 0xFF

/*
 * One row per OpCode[4:0].  Offsets of RETH/AETH/AtomicETH are relative to
 * the first operation-specific header, i.e. after the transport's own
 * RDETH/DETH/XRCETH, which roce_transport_hdr_len() adds.
 */
struct roce_op {
	unsigned char transports; /* TRB() bits of the transports that define it */
	unsigned char xth_len;	  /* operation-specific extended header bytes */
	unsigned char reth_off;
	unsigned char aeth_off;
	unsigned char atomic_off;
	unsigned char payload;	/* enum roce_payload_rule */
	unsigned char position; /* enum roce_position */
	unsigned char family;	/* enum roce_family */
	unsigned char flags;	/* OPF_* */
};

/* X(code, NAME, transports, xth_len, reth, aeth, atomic, payload, position, family, flags) */
#define ROCE_OPS(X)                                                                               \
	X(0x00, SEND_FIRST, TR_RC_UC_RD_XRC, 0, ROCE_NO_HDR, ROCE_NO_HDR, ROCE_NO_HDR, PL_PMTU,   \
	  POS_FIRST, FAM_SEND, OPF_REQUEST)                                                       \
	X(0x01, SEND_MIDDLE, TR_RC_UC_RD_XRC, 0, ROCE_NO_HDR, ROCE_NO_HDR, ROCE_NO_HDR, PL_PMTU,  \
	  POS_MIDDLE, FAM_SEND, OPF_REQUEST)                                                      \
	X(0x02, SEND_LAST, TR_RC_UC_RD_XRC, 0, ROCE_NO_HDR, ROCE_NO_HDR, ROCE_NO_HDR, PL_LAST,    \
	  POS_LAST, FAM_SEND, OPF_REQUEST | OPF_SE_OK)                                            \
	X(0x03, SEND_LAST_WITH_IMMEDIATE, TR_RC_UC_RD_XRC, 4, ROCE_NO_HDR, ROCE_NO_HDR,           \
	  ROCE_NO_HDR, PL_LAST, POS_LAST, FAM_SEND, OPF_REQUEST | OPF_SE_OK | OPF_IMM)            \
	X(0x04, SEND_ONLY, TR_ALL5, 0, ROCE_NO_HDR, ROCE_NO_HDR, ROCE_NO_HDR, PL_ONLY, POS_ONLY,  \
	  FAM_SEND, OPF_REQUEST | OPF_SE_OK)                                                      \
	X(0x05, SEND_ONLY_WITH_IMMEDIATE, TR_ALL5, 4, ROCE_NO_HDR, ROCE_NO_HDR, ROCE_NO_HDR,      \
	  PL_ONLY, POS_ONLY, FAM_SEND, OPF_REQUEST | OPF_SE_OK | OPF_IMM)                         \
	X(0x06, RDMA_WRITE_FIRST, TR_RC_UC_RD_XRC, 16, 0, ROCE_NO_HDR, ROCE_NO_HDR, PL_PMTU,      \
	  POS_FIRST, FAM_WRITE, OPF_REQUEST)                                                      \
	X(0x07, RDMA_WRITE_MIDDLE, TR_RC_UC_RD_XRC, 0, ROCE_NO_HDR, ROCE_NO_HDR, ROCE_NO_HDR,     \
	  PL_PMTU, POS_MIDDLE, FAM_WRITE, OPF_REQUEST)                                            \
	X(0x08, RDMA_WRITE_LAST, TR_RC_UC_RD_XRC, 0, ROCE_NO_HDR, ROCE_NO_HDR, ROCE_NO_HDR,       \
	  PL_LAST, POS_LAST, FAM_WRITE, OPF_REQUEST)                                              \
	X(0x09, RDMA_WRITE_LAST_WITH_IMMEDIATE, TR_RC_UC_RD_XRC, 4, ROCE_NO_HDR, ROCE_NO_HDR,     \
	  ROCE_NO_HDR, PL_LAST, POS_LAST, FAM_WRITE, OPF_REQUEST | OPF_SE_OK | OPF_IMM)           \
	X(0x0A, RDMA_WRITE_ONLY, TR_RC_UC_RD_XRC, 16, 0, ROCE_NO_HDR, ROCE_NO_HDR, PL_ONLY,       \
	  POS_ONLY, FAM_WRITE, OPF_REQUEST | OPF_DMALEN)                                          \
	X(0x0B, RDMA_WRITE_ONLY_WITH_IMMEDIATE, TR_RC_UC_RD_XRC, 20, 0, ROCE_NO_HDR, ROCE_NO_HDR, \
	  PL_ONLY, POS_ONLY, FAM_WRITE, OPF_REQUEST | OPF_DMALEN | OPF_SE_OK | OPF_IMM)           \
	X(0x0C, RDMA_READ_REQUEST, TR_RC_RD_XRC, 16, 0, ROCE_NO_HDR, ROCE_NO_HDR, PL_NONE,        \
	  POS_ONLY, FAM_READ_REQ, OPF_REQUEST)                                                    \
	X(0x0D, RDMA_READ_RESPONSE_FIRST, TR_RC_RD_XRC, 4, ROCE_NO_HDR, 0, ROCE_NO_HDR, PL_PMTU,  \
	  POS_FIRST, FAM_READ_RESP, 0)                                                            \
	X(0x0E, RDMA_READ_RESPONSE_MIDDLE, TR_RC_RD_XRC, 0, ROCE_NO_HDR, ROCE_NO_HDR,             \
	  ROCE_NO_HDR, PL_PMTU, POS_MIDDLE, FAM_READ_RESP, 0)                                     \
	X(0x0F, RDMA_READ_RESPONSE_LAST, TR_RC_RD_XRC, 4, ROCE_NO_HDR, 0, ROCE_NO_HDR, PL_LAST,   \
	  POS_LAST, FAM_READ_RESP, 0)                                                             \
	X(0x10, RDMA_READ_RESPONSE_ONLY, TR_RC_RD_XRC, 4, ROCE_NO_HDR, 0, ROCE_NO_HDR, PL_ONLY,   \
	  POS_ONLY, FAM_READ_RESP, 0)                                                             \
	X(0x11, ACKNOWLEDGE, TR_RC_RD_XRC, 4, ROCE_NO_HDR, 0, ROCE_NO_HDR, PL_NONE, POS_NONE,     \
	  FAM_ACK, 0)                                                                             \
	X(0x12, ATOMIC_ACKNOWLEDGE, TR_RC_RD_XRC, 12, ROCE_NO_HDR, 0, ROCE_NO_HDR, PL_NONE,       \
	  POS_NONE, FAM_ATOMIC_ACK, 0)                                                            \
	X(0x13, COMPARE_SWAP, TR_RC_RD_XRC, 28, ROCE_NO_HDR, ROCE_NO_HDR, 0, PL_NONE, POS_ONLY,   \
	  FAM_ATOMIC, OPF_REQUEST)                                                                \
	X(0x14, FETCH_ADD, TR_RC_RD_XRC, 28, ROCE_NO_HDR, ROCE_NO_HDR, 0, PL_NONE, POS_ONLY,      \
	  FAM_ATOMIC, OPF_REQUEST)                                                                \
	X(0x15, RESYNC, TRB(RD), 0, ROCE_NO_HDR, ROCE_NO_HDR, ROCE_NO_HDR, PL_NONE, POS_ONLY,     \
	  FAM_RESYNC, OPF_REQUEST)                                                                \
	X(0x16, SEND_LAST_WITH_INVALIDATE, TR_RC_XRC, 4, ROCE_NO_HDR, ROCE_NO_HDR, ROCE_NO_HDR,   \
	  PL_LAST, POS_LAST, FAM_SEND, OPF_REQUEST | OPF_SE_OK | OPF_IETH)                        \
	X(0x17, SEND_ONLY_WITH_INVALIDATE, TR_RC_XRC, 4, ROCE_NO_HDR, ROCE_NO_HDR, ROCE_NO_HDR,   \
	  PL_ONLY, POS_ONLY, FAM_SEND, OPF_REQUEST | OPF_SE_OK | OPF_IETH)                        \
	X(0x1C, FLUSH, TR_RC_RD_XRC, 20, 4, ROCE_NO_HDR, ROCE_NO_HDR, PL_NONE, POS_ONLY,          \
	  FAM_FLUSH, OPF_REQUEST)                                                                 \
	X(0x1D, ATOMIC_WRITE, TR_RC_XRC, 16, 0, ROCE_NO_HDR, ROCE_NO_HDR, PL_EIGHT, POS_ONLY,     \
	  FAM_ATOMIC_WRITE, OPF_REQUEST)

#define ROCE_OP_ROW(code, name, tr, xl, reth, aeth, atomic, pl, pos, fam, fl) \
	[code] = { tr, xl, reth, aeth, atomic, pl, pos, fam, fl },

/* Indexed by OpCode[4:0]; rows left zero define no transport, i.e. reserved. */
static const struct roce_op roce_ops[32] = { ROCE_OPS(ROCE_OP_ROW) };

/*
 * Bytes of the transport's own extended headers, which precede the
 * operation-specific ones: RD carries RDETH on every packet and DETH on
 * requests, UD carries DETH, XRC carries XRCETH on requests.  `dc` reads
 * the RD range as mlx5 DC instead: its header on every packet, and the
 * connect body on RESYNC.
 */
static inline unsigned int roce_transport_hdr_len(unsigned int transport, unsigned int op,
						  unsigned int op_flags, int dc)
{
	int request = (op_flags & OPF_REQUEST) != 0;

	switch (transport) {
	case ROCE_TR_RD:
		if (dc)
			return ROCE_DC_HDR_LEN + ((op & 0x1F) == 0x15 ? ROCE_DC_CONNECT_LEN : 0);
		return ROCE_RDETH_LEN + (request ? ROCE_DETH_LEN : 0);
	case ROCE_TR_UD:
		return ROCE_DETH_LEN;
	case ROCE_TR_XRC:
		return request ? ROCE_XRCETH_LEN : 0;
	default:
		return 0;
	}
}

/* AETH syndromes (IBA 9.3.5): 001xxxxx an RNR NAK with its timer code, 01100000 a PSN sequence error NAK. */
#define ROCE_AETH_RNR_NAK 0x20
#define ROCE_AETH_NAK_PSN_SEQ 0x60

/*
 * RNR NAK timer codes (AETH syndrome 001xxxxx), IBA 9.7.5.2.8 table 45: the
 * least time the requester must wait before it retries, in units of 10 us.
 * Code 0 is the longest, 655.36 ms.
 */
static const unsigned int roce_rnr_timer_10us[32] = {
	65536, 1,    2,	   3,	 4,    6,    8,	   12,	 16,   24,   32,
	48,    64,   96,   128,	 192,  256,  384,  512,	 768,  1024, 1536,
	2048,  3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
};

#define ROCE_PMTU_IS_LEGAL(n) \
	((n) == 256 || (n) == 512 || (n) == 1024 || (n) == 2048 || (n) == 4096)
#define ROCE_PMTU_MAX 4096

#endif /* ROCEVAL_PROTO_H */
