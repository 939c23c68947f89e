/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * RDMA CM (IBA ch. 12) as roceval sees it: the MAD layout it decodes, the
 * connection table both the BPF program and userspace read, and the name
 * tables (CM attributes, REJ reasons, RDMA CM port spaces).
 *
 * CM messages are MADs on UD QP1: SEND_ONLY, DETH, then a 256-byte MAD.
 * Offsets were checked against tshark's CM dissector on ConnectX captures
 * (REQ, REP, RTU, DREQ, DREP) and the REJ reason on crafted frames
 * (tests/test_cm.py).  Of MRA, which tshark does not decode, only the two
 * communication ids every CM message starts with are read.
 */
#ifndef ROCEVAL_CM_H
#define ROCEVAL_CM_H

#define ROCE_GSI_QPN 1
#define ROCE_OPCODE_UD_SEND_ONLY 0x64

#define CM_MAD_LEN 256
#define CM_MAD_HDR_LEN 24
#define CM_MGMT_CLASS 0x07
/* MAD header offsets */
#define CM_MAD_BASE_VERSION 0
#define CM_MAD_CLASS 1
#define CM_MAD_TID 8
#define CM_MAD_ATTR 16
/* Bytes of a MAD the decoder reads: the header and a REQ up to its primary path's ACK timeout. */
#define CM_MAD_READ (CM_MAD_HDR_LEN + 96)

/* Message offsets, from the end of the MAD header. */
#define CM_LOCAL_COMM_ID 0
#define CM_REMOTE_COMM_ID 4
#define CM_REQ_SERVICE_ID 8
#define CM_REQ_LOCAL_QPN 32
#define CM_REQ_START_PSN 44  /* 24 bits, then CM response timeout (5) | retry count (3) */
#define CM_REQ_PKEY 48
#define CM_REQ_MTU_RNR 50    /* path MTU (4) | RDC exists (1) | RNR retry count (3) */
#define CM_REQ_ACK_TIMEOUT 95 /* primary path's last byte: local ACK timeout (5) | reserved (3) */
#define CM_REP_LOCAL_QPN 12
#define CM_REP_START_PSN 20
#define CM_REJ_REASON 10
#define CM_DREQ_REMOTE_QPN 8

/* X(ENUM, attribute id, name) */
#define ROCEVAL_CM_ATTRS(X)          \
	X(REQ, 0x10, "REQ")          \
	X(MRA, 0x11, "MRA")          \
	X(REJ, 0x12, "REJ")          \
	X(REP, 0x13, "REP")          \
	X(RTU, 0x14, "RTU")          \
	X(DREQ, 0x15, "DREQ")        \
	X(DREP, 0x16, "DREP")        \
	X(SIDR_REQ, 0x17, "SIDR_REQ") \
	X(SIDR_REP, 0x18, "SIDR_REP") \
	X(LAP, 0x19, "LAP")          \
	X(APR, 0x1A, "APR")

enum roceval_cm_attr {
#define ROCEVAL_CM_ATTR_ENUM(e, id, name) CM_ATTR_##e = id,
	ROCEVAL_CM_ATTRS(ROCEVAL_CM_ATTR_ENUM)
#undef ROCEVAL_CM_ATTR_ENUM
};

/*
 * REJ reasons (IBA ch. 12, the REJ message's Reason field).  Counted per
 * reason in the cm_rej_reasons array; reasons past the last slot share it.
 * X(code, id)
 */
#define ROCEVAL_CM_REJ_REASONS(X)            \
	X(1, "no_qp")                        \
	X(2, "no_eec")                       \
	X(3, "no_resources")                 \
	X(4, "timeout")                      \
	X(5, "unsupported_request")          \
	X(6, "invalid_comm_id")              \
	X(7, "invalid_comm_instance")        \
	X(8, "invalid_service_id")           \
	X(9, "invalid_transport_type")       \
	X(10, "stale_connection")            \
	X(11, "rdc_not_exist")               \
	X(12, "invalid_primary_gid")         \
	X(13, "invalid_primary_lid")         \
	X(14, "invalid_primary_sl")          \
	X(15, "invalid_primary_traffic_class") \
	X(16, "invalid_primary_hop_limit")   \
	X(17, "invalid_primary_rate")        \
	X(18, "invalid_alternate_gid")       \
	X(19, "invalid_alternate_lid")       \
	X(20, "invalid_alternate_sl")        \
	X(21, "invalid_alternate_traffic_class") \
	X(22, "invalid_alternate_hop_limit") \
	X(23, "invalid_alternate_rate")      \
	X(24, "port_cm_redirect")            \
	X(25, "port_redirect")               \
	X(26, "invalid_path_mtu")            \
	X(27, "insufficient_responder_resources") \
	X(28, "consumer")                    \
	X(29, "invalid_rnr_retry")           \
	X(30, "duplicate_local_comm_id")     \
	X(31, "unsupported_class_version")   \
	X(32, "invalid_primary_flow_label")  \
	X(33, "invalid_alternate_flow_label")

#define ROCEVAL_CM_REJ_SLOTS 64 /* slot 0 and slots 34..63 hold reasons without a name */

/*
 * RDMA CM IP ServiceIDs are 0x0000000001 | port space (8) | port (16).
 * X(port space, name)
 */
#define ROCEVAL_CM_PORT_SPACES(X) \
	X(0x02, "ipoib")          \
	X(0x06, "tcp")            \
	X(0x11, "udp")            \
	X(0x3F, "ib")

/*
 * The connection table.  A connection is keyed by its initiator's address
 * and Local Communication ID, which every later CM message of it names
 * (REP, RTU, REJ, DREQ, DREP carry both communication ids, not the QPNs).
 * Each of its two ends, (address, QPN), is also a key of roceval_cm_ends:
 * a data packet (source, destination, DestQP) goes to the end
 * (destination, DestQP), and its sender must be that end's peer.
 */
struct roceval_cm_key {
	__u8 addr[16]; /* IPv4 addresses use the first 4 bytes, the rest zero */
	__u32 comm_id;
	__u8 ipv6;
	__u8 pad[3];
};

enum roceval_cm_state {
	CM_STATE_REQ = 1,	  /* REQ seen */
	CM_STATE_REP = 2,	  /* REP seen, RTU not yet */
	CM_STATE_ESTABLISHED = 3, /* RTU seen */
	CM_STATE_DISCONNECTING = 4, /* DREQ seen: both sides may still drain */
	/*
	 * DREP seen.  Kept, not deleted, so a capture's flows still carry their
	 * connection's names and a late resend is known; its ends are judged as
	 * if no CM had been seen, and the ring reclaims it like any other.
	 */
	CM_STATE_CLOSED = 5,
	/*
	 * Both ends idle for longer than the conn_idle setting: a peer that
	 * died or a DREQ the capture missed.  Kept and judged as CLOSED; a
	 * late DREQ or DREP still finds it.
	 */
	CM_STATE_EXPIRED = 6,
};

/* What one end of a connection announced in its REQ or REP. */
struct roceval_cm_side {
	__u8 addr[16];
	__u32 qpn;
	__u32 start_psn; /* the PSN its own QP receives first */
	__u32 comm_id;
	__u32 pad;
};

/* The messages a side may send on a connection (REQ to DREP), each with the TID it last carried. */
#define ROCEVAL_CM_SENT (CM_ATTR_DREP - CM_ATTR_REQ + 1)

struct roceval_conn {
	struct roceval_cm_side ini; /* the end that sent the REQ */
	struct roceval_cm_side rsp; /* the end that sent the REP, zero until then */
	__u64 service_id;
	/* per side (initiator, responder), per message: the TID it was last sent with */
	__u64 tid[2][ROCEVAL_CM_SENT];
	__u64 seq;	   /* creation order: its eviction-ring slot is seq % capacity */
	__u32 pmtu;	   /* bytes; 0 if the REQ's code was not a legal PMTU */
	__u16 pkey;
	__u16 sent[2];	   /* per side, bit (attribute id - 0x10) per message it sent: a resend is a retry */
	__u8 state;	   /* enum roceval_cm_state */
	__u8 retry_count;  /* the REQ's: transport retries on a timeout, both sides */
	__u8 rnr_retry_ini; /* the REQ's: the initiator's RNR retries */
	__u8 rnr_retry_rsp; /* the REP's: the responder's RNR retries */
	__u8 ack_timeout;  /* primary path Local ACK Timeout: 4.096 us << t, 0 = infinite */
	__u8 ipv6;
};

/* One end of a connection, as a data packet to it needs it. */
struct roceval_cm_end_key {
	__u8 addr[16];
	__u32 qpn;
	__u8 ipv6;
	__u8 pad[3];
};

struct roceval_cm_end {
	__u8 peer[16];	   /* the only address that may send to this end */
	struct roceval_cm_key conn; /* the connection it belongs to */
	__u64 service_id;
	__u32 peer_qpn;	   /* the peer's QP: it sends this end's requests and gets its ACKs */
	__u32 start_psn;   /* the first request PSN this end must receive */
	__u32 pmtu;
	__u16 pkey;
	__u8 initiator;	   /* this end sent the REQ */
	__u8 req_seen;	   /* a request to this end was judged against start_psn */
	__u8 state;	   /* copy of the connection's, for the data path */
	__u8 ack_timeout;  /* the REQ's Local ACK Timeout (the initiator's requests'), as the connection's */
	__u8 resp_seen;	   /* a response to this end was seen: its flow's responses started afresh */
	__u8 pad[5];
	__u64 last_ns;	   /* last CM message or packet to this end: replay's capture time, else ktime */
};

/* Path MTU code (IBA: 1 = 256 ... 5 = 4096) in bytes, 0 if reserved. */
static inline unsigned int roceval_cm_pmtu(unsigned int code)
{
	return code >= 1 && code <= 5 ? 128u << code : 0;
}

#endif /* ROCEVAL_CM_H */
