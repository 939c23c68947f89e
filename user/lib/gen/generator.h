/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The traffic generator behind `roceval gen`: spec-valid RoCEv2
 * conversations with faults injected at known rates, so a capture or a
 * live run can be checked against exact expected counters.
 *
 * The traffic is planned first (planner.c), one list of packets per
 * connection (PSNs, MSNs, ACKs and READ responses worked out in order);
 * the command interleaves the lists at random and hands each packet to
 * gen_send() (faults.c), which builds it, maybe faults it, and writes
 * it through the output (output.c).  Every random choice comes from the
 * seed through separate streams (plan, interleaving, packet contents,
 * faults), so the same seed gives the same conversation with or without
 * faults.
 */
#ifndef ROCEVAL_GENERATOR_H
#define ROCEVAL_GENERATOR_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <linux/types.h>

#include "capture.h"
#include "pktgen.h"
#include "roceval.h"

/* Faults, in the order the summary lists them. */
#define GEN_FAULTS(X)                                                                        \
	X(CORRUPT_ICRC, "corrupt-icrc", "corrupt_icrc", RULE_ICRC)                           \
	X(FLIP, "flip-invariant", "flip_invariant", RULE_ICRC)                               \
	X(MUTATE, "mutate-variant", "mutate_variant", -1)                                    \
	X(DROP, "drop", "drop", RULE_PSN_GAP)                                                \
	X(DUP, "duplicate", "duplicate", RULE_PSN_DUPLICATE)                                 \
	X(RETX_CHANGED, "retx-changed", "retx_changed", RULE_RETX_CHANGED)                   \
	X(RNR_EARLY, "rnr-early", "rnr_early", RULE_RNR_RETRY_EARLY)                          \
	X(NAK_WRONG, "nak-wrong-psn", "nak_wrong_psn", RULE_NAK_PSN_WRONG)                    \
	X(GO_BACK_0, "go-back-0", "go_back_0", RULE_GO_BACK_EARLY)                            \
	X(REORDER, "reorder", "reorder", RULE_PSN_REORDER)                                   \
	X(BAD_OPCODE, "bad-opcode", "bad_opcode", RULE_OPCODE)                               \
	X(BAD_PAD, "bad-pad", "bad_pad", RULE_PAD)                                           \
	X(SE, "se-misuse", "se_misuse", RULE_SE)                                             \
	X(START_PSN, "wrong-start-psn", "wrong_start_psn", RULE_CM_START_PSN)                \
	X(CM_PMTU, "mismatched-pmtu", "mismatched_pmtu", RULE_PAYLOAD_LENGTH)                \
	X(DSCP, "dscp", "dscp", RULE_DSCP)                                                   \
	X(CNP_DSCP, "cnp-dscp", "cnp_dscp", RULE_CNP_DSCP)                                   \
	X(NOT_ECT, "not-ect", "not_ect", RULE_NOT_ECT)                                       \
	X(CNP_BURST, "cnp-burst", "cnp_burst", RULE_CNP_GAP)                                 \
	X(CE_UNANSWERED, "ce-unanswered", "ce_unanswered", RULE_CE_UNANSWERED)               \
	X(PFC, "pfc", "pfc", -1)                                                             \
	X(MIRROR_LOSS, "mirror-loss", "mirror_loss", RULE_PSN_GAP)

enum fault {
#define FAULT_ENUM(e, opt, json, rule) F_##e,
	GEN_FAULTS(FAULT_ENUM)
#undef FAULT_ENUM
	F__COUNT,
	F_NONE = F__COUNT,
};

struct gen_fault {
	const char *opt, *json;
	int rule; /* what roceval counts for it, -1 for nothing */
};
extern const struct gen_fault gen_faults[F__COUNT];

/* What --mutate-variant changes: only fields the ICRC masks. */
#define GEN_MUTATIONS(X) \
	X(TTL, "ttl") X(DSCP, "dscp") X(ECN_CE, "ecn_ce") X(UDP_CSUM, "udp_checksum") \
	X(FECN, "fecn") X(BECN, "becn") X(FLOW_LABEL, "flow_label")

enum mutation {
#define MUT_ENUM(e, name) M_##e,
	GEN_MUTATIONS(MUT_ENUM)
#undef MUT_ENUM
	M__COUNT
};

extern const char *const gen_mutation_names[M__COUNT];

/* --traffic kinds */
enum kind { K_SEND, K_WRITE, K_READ, K_ATOMIC, K_UC, K_UD, K_CNP, K__COUNT };
extern const char *const gen_kind_names[K__COUNT];

/* --reorder's D when not given, and at most (within roceval's default reorder window). */
#define GEN_REORDER_DEPTH 3
#define GEN_REORDER_DEPTH_MAX ROCEVAL_REORDER_DEFAULT

/* The plan is held in memory (32 bytes a packet) so flows' first and last requests are known. */
#define GEN_MAX_FRAMES 10000000u

#define DF_SE 0x01
#define DF_ACKREQ 0x02
#define DF_REQUEST 0x04	  /* requester-to-responder packet on RC/UC */
#define DF_FIRST_REQ 0x08 /* first request of its flow */
#define DF_LAST_REQ 0x10  /* last request of its flow */
#define DF_CM 0x20	  /* an RDMA CM MAD (d->cm_attr) on QP1 */
#define DF_CM_REJECTED 0x40 /* of the connection attempt --cm has rejected */
#define DF_CM_AGAIN 0x80 /* of the connection --reconnect makes again on the same QPNs */

/*
 * The ACK timeout the REQ announces, 4.096 us << 10 = 4.2 ms, and how long a
 * resent request waits first: a requester retransmits on its timer.
 */
#define GEN_CM_ACK_TIMEOUT 10
#define GEN_RETX_WAIT_NS 5000000ULL
/* The RNR timer --rnr-early's NAK names: code 0, 655.36 ms, which its retry never waits out. */
#define GEN_RNR_TIMER 0

/*
 * The traffic classes gen sends in, and the settings its congestion faults'
 * predictions assume (gen_summary_json's "settings"): data at DSCP 26 and
 * ECT(0), CNPs at DSCP 48 Not-ECT, as NVIDIA's defaults put them.
 */
#define GEN_DSCP 26
#define GEN_CNP_DSCP 48
#define GEN_CNP_GAP_NS 4000ULL
#define GEN_CNP_DELAY_NS 50000ULL

/* With --cm: RDMA CM names every RC connection as NVMe-oF's (TCP port 4420). */
#define GEN_CM_SERVICE_ID (0x0000000001ULL << 24 | 0x06 << 16 | 4420)
#define GEN_CM_REJ_REASON 28 /* consumer reject */

/* One planned packet; the bytes are made when it is sent. */
struct desc {
	uint64_t idx; /* plan order: seeds the packet's contents */
	uint32_t psn, len, dmalen, aeth;
	uint8_t side; /* sender: 0 is host A, 1 host B */
	uint8_t opcode;
	uint8_t flags;
	uint8_t cm_attr; /* with DF_CM: the CM attribute id */
};

struct conn {
	unsigned int transport;
	bool ipv6;
	uint32_t qpn[2];
	uint16_t sport[2];
	uint32_t flow_label[2];
	uint32_t psn[2];	  /* next request PSN of each side */
	uint32_t msn[2];	  /* each side's MSN as a responder */
	uint32_t ack_owed[2];	  /* each side owes an ACK for messages up to this PSN */
	bool ack_pending[2];
	uint32_t qkey;
	/* RDMA CM (--cm, RC only) */
	uint32_t psn0[2];	/* each side's first request PSN: what the other side announces */
	uint32_t comm[2];	/* each side's Local Communication ID */
	uint32_t cm_pmtu;	/* PMTU the REQ announced, once it is sent */
	bool gets_request[2][2]; /* per connection (--reconnect: two), the side receives a request */
	/*
	 * A side sends a READ before its flow shows the PMTU (a FIRST or MIDDLE
	 * packet): roceval counts that READ's PSNs by the PMTU the REQ
	 * announced, so --mismatched-pmtu would move every PSN after it.
	 */
	bool read_before_pmtu[2]; /* per connection (--reconnect: two) */
	/* the planned packets, and how far sending has got */
	struct desc *d;
	size_t n, cap, next;
	/* while sending: the state of each side's request flow, for --drop */
	bool prev_dropped[2];
	bool dropped_once[2]; /* --drop lost a request of the side, the last at drop_psn */
	uint32_t drop_psn[2];
	uint32_t msn_sent[2]; /* the last MSN each side sent as a responder, for the NAKs gen makes */
	/*
	 * --nak-wrong-psn and --go-back-0: a request lost on the way (held
	 * back until the side's next request, which the NAK and the go-back
	 * follow), and the side's last request sent, which go-back-0 resends.
	 */
	bool holding[2];
	int held_fault[2];
	struct desc held[2], last_req[2];
	bool last_req_ok[2]; /* last_req is a SEND/WRITE packet sent without a fault */
	/*
	 * The side's flow has sent a FIRST or MIDDLE packet (a request or a READ
	 * response), so roceval knows its PMTU without --pmtu, and with it how
	 * many PSNs a READ takes.
	 */
	bool pmtu_shown[2];
	/* the last CNP each side sent to the other's QP, for the cnp_gap it predicts (ns + 1, 0 none) */
	uint64_t last_cnp[2];
};

struct gen {
	/* options */
	uint64_t seed;
	uint64_t count, messages;
	uint32_t pmtu, max_size, nqps, kinds, pkey;
	bool cm; /* RDMA CM handshakes around the RC conversations */
	bool reconnect;	  /* --reconnect: half way, every RC connection closed and made again */
	bool reconnected; /* the plan has got past that point */
	uint64_t ack_delay_ns; /* each RC ACK waits this long first */
	int family; /* 4, 6 or 0 for mixed */
	int vlan;
	uint8_t mac[2][6];
	uint8_t addr4[2][16], addr6[2][16];
	double rate[F__COUNT];
	uint32_t reorder_depth; /* --reorder P:D: a request swapped with one up to D requests later */
	/* state */
	uint64_t plan_rng, merge_rng, fault_rng;
	uint64_t ndesc;
	struct conn *conns;
	uint32_t next_bad_qpn;
	uint16_t ip_id[2];
	/* results */
	uint64_t cnp, first_last_drops;
	uint64_t cm_mads, cm_established, cm_rej;
	uint64_t pmtu_breaks; /* frames the --mismatched-pmtu announcements make illegal */
	uint64_t pkey_breaks; /* --flip-invariant P_Key flips on a CM-learned connection */
	uint64_t retx_episodes;	  /* resent RC requests: each opens an episode */
	uint64_t retx_uncompared; /* of them, READ requests (never compared) */
	uint64_t retx_after_nak;  /* of them, after a NAK (--rnr-early, --nak-wrong-psn, --go-back-0) */
	/* --reorder: the requests that came late, and how far behind the newest (roceval_counters') */
	uint64_t reorder[ROCEVAL_REORDER_BUCKETS];
	uint64_t reorder_packets, reorder_sum;
	uint64_t injected[F__COUNT];
	uint64_t mutated[M__COUNT];
	/* congestion (congestion.c): a fault of it asked for, so its settings are predicted under */
	bool qos;
	uint64_t now_ns;	       /* the capture time of the frame being sent */
	uint64_t last_cnp_to[2][2];    /* the last CNP to each host, by family, ns + 1, 0 none */
	uint64_t cnp_gaps;	       /* CNPs sooner than GEN_CNP_GAP_NS after the last to their QP */
	uint64_t dscp_mutated[2];      /* --mutate-variant's DSCP changes, of data [0] and of CNPs [1] */
	uint64_t pfc_frames;
	struct roceval_pfc_prio pfc[ROCEVAL_PFC_PRIOS];
};


/*
 * --encap: every frame wrapped as one mirror session of a switch delivers
 * it to a collector (encap.c).  kind is an enum roceval_mirror_encap,
 * MIRROR_NONE for bare frames.
 */
struct gen_encap {
	int kind;
	int family;	  /* the outer header's: 4 or 6, 0 unset (4) */
	int64_t session;  /* ERSPAN session ID, GRE key or VXLAN VNI; -1 unset */
	uint32_t seq;	  /* the next sequence number: --mirror-loss skips some */
	uint16_t ip_id;
	uint64_t bytes;	  /* of the wrapped frames written */
};

/* The bytes --encap puts in front of a frame at most: Ethernet, IPv6, GRE with key and sequence, ERSPAN III. */
#define GEN_ENCAP_ROOM (14 + 40 + 12 + 12)

/* Where the frames go: a capture, or an interface through an AF_PACKET socket. */
struct gen_out {
	struct capture cap; /* cap.f: the capture file, or NULL */
	int fd; /* AF_PACKET socket, or -1 */
	int ifindex;
	const char *ifname;
	unsigned int mtu;
	uint64_t pps; /* 0: as fast as possible */
	struct timespec start, last_progress;
	bool progress;
	uint64_t n;
	uint64_t late_ns; /* capture time added by waits: frames are a microsecond apart plus this */
	uint64_t tx_dropped0;
	volatile sig_atomic_t *stop; /* set by a signal: a full device queue is no longer waited for */
	struct gen_encap encap;
};

/* splitmix64: small, fast, and good enough to make traffic from a seed. */
static inline uint64_t rnd(uint64_t *state)
{
	uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* Uniform in 0 .. n-1 (n > 0). */
static inline uint32_t rnd_below(uint64_t *state, uint32_t n)
{
	return (uint32_t)(((rnd(state) >> 32) * n) >> 32);
}

static inline double rnd_unit(uint64_t *state)
{
	return (rnd(state) >> 11) * (1.0 / 9007199254740992.0);
}

/* planner.c */
int gen_setup_conns(struct gen *g);
int gen_plan(struct gen *g);

/* output.c */
int gen_out_open_iface(struct gen_out *o, const char *ifname);
int gen_out_frame(struct gen_out *o, const uint8_t *frame, size_t len);
/*
 * Time passes before the next frame, as a sender waiting on a timer would:
 * live, gen sleeps; into a capture, every later frame is stamped that much
 * later.
 */
void gen_out_wait(struct gen_out *o, uint64_t ns);
void gen_out_progress(struct gen_out *o, bool final);
/* The capture time the next frame gets, ns: a microsecond a frame, and the waits. */
uint64_t gen_out_time(const struct gen_out *o);
uint64_t gen_if_tx_dropped(const char *ifname);

/* encap.c: --encap's names, what its options allow, and the wrapping */
int gen_encap_kind(const char *name);
/* The encapsulation numbers its frames (the GRE S bit). */
bool gen_encap_numbered(int kind);
/* NULL when the --encap options fit together (the defaults then filled in), else what is wrong with them. */
const char *gen_encap_settle(struct gen_encap *e, double loss_rate);
/* frame wrapped into out (len + GEN_ENCAP_ROOM bytes at least); returns the wrapped length. */
size_t gen_encap_wrap(struct gen_encap *e, const uint8_t *frame, size_t len, uint8_t *out, uint64_t now_ns);
/* The outer source address, as text, for the summary. */
const char *gen_encap_source(const struct gen_encap *e);

/* faults.c: builds, maybe faults, and writes one planned packet. */
int gen_send(struct gen *g, struct gen_out *o, struct conn *c, const struct desc *d);
/* congestion.c: the traffic-class, pacing, CE and PFC faults */
bool gen_cc_fault(int f);
bool gen_cc_eligible(const struct gen *g, const struct conn *c, const struct desc *d, int f);
bool gen_cc_np_answers(const struct desc *d);
/* The frame's traffic class as fault f wants it (spec->tos). */
void gen_cc_spec(int f, struct pkt_spec *s);
/* A CNP about to be written: counted, and judged against the last to its QP. */
void gen_cc_cnp(struct gen *g, struct conn *c, uint8_t side);
/* What follows the frame for f: the burst's second CNP, the late CNP after a CE mark. */
int gen_cc_after(struct gen *g, struct gen_out *o, struct conn *c, const struct desc *d, int f,
		 const uint8_t *frame, size_t len);
/* --pfc: a PFC pause frame from `side`, before the frame it is drawn for. */
int gen_cc_pfc(struct gen *g, struct gen_out *o, uint8_t side);
/* The settings the predictions of the congestion faults assume, "key=value key=value". */
extern const char *const gen_cc_settings[];

/*
 * The run's summary: the faults injected and, in the replay schema, what
 * must be counted for the frames written (JSON), or the same for people to
 * `dest` (text).
 */
void gen_summary_json(FILE *f, const struct gen *g, const struct gen_out *o);
void gen_summary_text(FILE *f, const struct gen *g, const struct gen_out *o, const char *dest);

#endif
