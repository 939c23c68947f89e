/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * RDMA CM: connections learned from their handshake (IBA ch. 12), and the
 * first packets of a learned connection judged against what it announced.
 *
 * A REQ creates a connection keyed by (initiator address, Local
 * Communication ID); the REP completes it; RTU establishes it; DREQ starts
 * its end, DREP closes it and REJ removes it.  Each side's (address, QPN)
 * is also an entry of cm_ends so that a data packet, which names only its
 * receiver's QPN, finds its connection with one lookup.  Which PSN is
 * which (observed on ConnectX captures): each side announces the PSN its
 * own QP receives first, so requests to the REQ's QPN start at the REQ's
 * Starting PSN, requests to the REP's QPN at the REP's.  The first request
 * and the first response to an end of a new connection start its flow's
 * spaces afresh (CONN_FRESH_*), whatever an earlier connection on the same
 * QPN left there: rxe and many NICs give a closed QP's number to the next.
 *
 * The table is bounded like the flow table, with the same creation-order
 * eviction ring, so conn_evicted says exactly how many open connections
 * were forgotten (closed and expired ones are kept only to name their
 * flows).  A forgotten or expired connection's traffic is judged as if no
 * CM had been seen: missed detections, never false alarms.
 *
 * No lock: the CM messages of one connection are milliseconds apart, and
 * the data path writes two fields of an end (req_seen, resp_seen), each once.
 */
#ifndef ROCEVAL_CM_BPF_H
#define ROCEVAL_CM_BPF_H

#include "clock.bpf.h"
#include "frame.bpf.h"
#include "roceval_cm.h"

/* Set by the loader with the maps' sizes: the flow table's, as every connection has two flows. */
const volatile __u32 conn_capacity = ROCEVAL_DEFAULT_FLOWS;
/* Connections ever created: the next eviction-ring slot. */
__u64 conn_ring_head;
/* No connection learned yet: data frames skip the lookup, so traffic without CM pays nothing. */
__u32 cm_active;

/*
 * Not preallocated, unlike the flow table: connections are created only by
 * CM messages, never on the data path, so allocating then is cheap, and the
 * memory follows the connections seen rather than the bound.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, ROCEVAL_DEFAULT_FLOWS);
	__type(key, struct roceval_cm_key);
	__type(value, struct roceval_conn);
} cm_conns SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 2 * ROCEVAL_DEFAULT_FLOWS);
	__type(key, struct roceval_cm_end_key);
	__type(value, struct roceval_cm_end);
} cm_ends SEC(".maps");

/*
 * A connection's tables are read off the data path, where a call costs
 * nothing that counts: through rare_lookup (frame.bpf.h), one call each.
 */
static __noinline struct roceval_conn *cm_conn_get(const struct roceval_cm_key *k)
{
	return rare_lookup(&cm_conns, k);
}

static __noinline struct roceval_cm_end *cm_end_get(const struct roceval_cm_end_key *k)
{
	return rare_lookup(&cm_ends, k);
}

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ROCEVAL_DEFAULT_FLOWS);
	__type(key, __u32);
	__type(value, struct roceval_cm_key);
} conn_ring SEC(".maps");

/* REJ frames by reason; userspace sums the CPUs. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ROCEVAL_CM_REJ_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} cm_rej_reasons SEC(".maps");

struct cm_scratch {
	__u8 mad[CM_MAD_READ] __attribute__((aligned(8)));
	struct roceval_conn conn_new;
	struct roceval_cm_end end_new;
	struct roceval_cm_key key;
	struct roceval_cm_key old_key;
	struct roceval_cm_key keep; /* here, not on the stack: the deepest call chain must fit 512 bytes */
	struct roceval_cm_end_key end_key;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cm_scratch);
} cm_scratch SEC(".maps");

/* Off the data path: rare_lookup (frame.bpf.h). */
static __noinline struct cm_scratch *cm_scratch_get(void)
{
	return rare_lookup(&cm_scratch, &map_zero);
}

static __always_inline __u64 rd64(const __u8 *p)
{
	return (__u64)rd32(p) << 32 | rd32(p + 4);
}

static __always_inline bool addr_eq(const __u8 *a, const __u8 *b)
{
	__u64 a0, a1, b0, b1;

	__builtin_memcpy(&a0, a, 8);
	__builtin_memcpy(&a1, a + 8, 8);
	__builtin_memcpy(&b0, b, 8);
	__builtin_memcpy(&b1, b + 8, 8);
	return a0 == b0 && a1 == b1;
}

/*
 * The keys' setters are one copy each, called: their byte-wise copies of an
 * address were thousands of the instructions the verifier checks, once per
 * caller and path.
 */
static __noinline void cm_key_set(struct roceval_cm_key *k, const __u8 *addr, __u32 comm_id, __u8 ipv6)
{
	__builtin_memcpy(k->addr, addr, 16);
	k->comm_id = comm_id;
	k->ipv6 = ipv6;
	k->pad[0] = k->pad[1] = k->pad[2] = 0;
}

static __noinline void cm_end_key_set(struct roceval_cm_end_key *k, const __u8 *addr, __u32 qpn, __u8 ipv6)
{
	__builtin_memcpy(k->addr, addr, 16);
	k->qpn = qpn;
	k->ipv6 = ipv6;
	k->pad[0] = k->pad[1] = k->pad[2] = 0;
}

/* Which side of a connection sent a CM message. */
#define CM_SIDE_INI 0
#define CM_SIDE_RSP 1

/*
 * The connection a CM message after the REQ belongs to.  Its sender is
 * either the initiator (its own address and Local Communication ID) or the
 * responder (the initiator is the destination, named by the Remote
 * Communication ID), which *side says.  Leaves the key found in c->key.
 */
static __always_inline struct roceval_conn *cm_find(struct cm_scratch *c, const struct frame_info *fi,
						    __u32 local, __u32 remote, int *side)
{
	struct roceval_conn *conn;

	*side = CM_SIDE_INI;
	cm_key_set(&c->key, fi->saddr, local, fi->ipv6);
	conn = cm_conn_get(&c->key);
	if (conn)
		return conn;
	*side = CM_SIDE_RSP;
	cm_key_set(&c->key, fi->daddr, remote, fi->ipv6);
	return cm_conn_get(&c->key);
}

/*
 * Marks a message sent by `side` on the connection; true if that side sent
 * it before with the same TID: a resend, counted.  The same message from
 * the other side (the two sides' DREQs crossing, and the DREPs answering
 * them) or in another transaction is not.
 */
static __always_inline bool cm_repeat(struct roceval_scratch *s, struct roceval_counters *cnt,
				      struct roceval_conn *conn, __u16 attr, __u64 tid, int side)
{
	__u32 i = attr - CM_ATTR_REQ;

	if (i >= ROCEVAL_CM_SENT)
		return false;
	side &= 1;
	if ((conn->sent[side] & (1u << i)) && conn->tid[side][i] == tid) {
		violate(s, cnt, RULE_CM_RETRY);
		return true;
	}
	conn->sent[side] |= 1u << i;
	conn->tid[side][i] = tid;
	return false;
}

/*
 * Copies the connection's state (and the peer's QPN, once known) into both
 * of its ends; a CM message is activity, so both ends' idle time restarts.
 */
static __always_inline void cm_ends_sync(struct cm_scratch *c, const struct roceval_conn *conn)
{
	__u64 now = frame_time_ns();
	struct roceval_cm_end *e;

	cm_end_key_set(&c->end_key, conn->ini.addr, conn->ini.qpn, conn->ipv6);
	e = cm_end_get(&c->end_key);
	if (e && e->conn.comm_id == conn->ini.comm_id) {
		e->state = conn->state;
		e->peer_qpn = conn->rsp.qpn;
		e->last_ns = now;
	}
	if (conn->state < CM_STATE_REP)
		return;
	cm_end_key_set(&c->end_key, conn->rsp.addr, conn->rsp.qpn, conn->ipv6);
	e = cm_end_get(&c->end_key);
	if (e && e->conn.comm_id == conn->ini.comm_id) {
		e->state = conn->state;
		e->last_ns = now;
	}
}

/* Adds one end; a QPN reused by a newer connection replaces the older one's entry. */
static __always_inline void cm_end_add(struct cm_scratch *c, const struct roceval_conn *conn,
				       const struct roceval_cm_side *self, const struct roceval_cm_side *peer,
				       __u8 initiator)
{
	struct roceval_cm_end *e = &c->end_new;

	__builtin_memset(e, 0, sizeof(*e));
	__builtin_memcpy(e->peer, peer->addr, 16);
	__builtin_memcpy(&e->conn, &c->key, sizeof(e->conn));
	e->service_id = conn->service_id;
	e->peer_qpn = peer->qpn;
	e->start_psn = self->start_psn;
	e->pmtu = conn->pmtu;
	e->pkey = conn->pkey;
	e->initiator = initiator;
	e->ack_timeout = conn->ack_timeout;
	e->state = conn->state;
	e->last_ns = frame_time_ns();
	cm_end_key_set(&c->end_key, self->addr, self->qpn, conn->ipv6);
	bpf_map_update_elem(&cm_ends, &c->end_key, e, BPF_ANY);
}

/* Removes the connection in c->key and those of its ends that are still its own. */
static __always_inline void cm_remove(struct cm_scratch *c, const struct roceval_conn *conn)
{
	struct roceval_cm_end *e;
	__u32 id = conn->ini.comm_id;
	bool rsp = conn->state >= CM_STATE_REP;

	cm_end_key_set(&c->end_key, conn->ini.addr, conn->ini.qpn, conn->ipv6);
	e = cm_end_get(&c->end_key);
	if (e && e->conn.comm_id == id)
		bpf_map_delete_elem(&cm_ends, &c->end_key);
	if (rsp) {
		cm_end_key_set(&c->end_key, conn->rsp.addr, conn->rsp.qpn, conn->ipv6);
		e = cm_end_get(&c->end_key);
		if (e && e->conn.comm_id == id)
			bpf_map_delete_elem(&cm_ends, &c->end_key);
	}
	bpf_map_delete_elem(&cm_conns, &c->key);
}

/*
 * Inserts c->conn_new under c->key, first evicting the connection created
 * `capacity` connections ago if it is still there: so the table never
 * refuses a new connection and every one it forgets is counted.
 */
static __always_inline struct roceval_conn *cm_create(struct cm_scratch *c, struct roceval_counters *cnt)
{
	__u64 seq = __sync_fetch_and_add(&conn_ring_head, 1);
	__u32 cap = conn_capacity;
	struct roceval_cm_key *slot_key;
	struct roceval_conn *old;
	__u32 slot;

	if (!cap)
		return 0;
	slot = seq % cap;
	slot_key = rare_lookup(&conn_ring, &slot);
	if (!slot_key)
		return 0;
	if (seq >= cap) {
		__builtin_memcpy(&c->old_key, slot_key, sizeof(c->old_key));
		old = cm_conn_get(&c->old_key);
		/* The same key may since have been closed and created again in a later slot. */
		if (old && old->seq + cap == seq) {
			bool open = old->state < CM_STATE_CLOSED;

			__builtin_memcpy(&c->keep, &c->key, sizeof(c->keep));
			__builtin_memcpy(&c->key, &c->old_key, sizeof(c->key));
			cm_remove(c, old);
			__builtin_memcpy(&c->key, &c->keep, sizeof(c->key));
			/* Counted on the totals only: the eviction is not this frame's doing. */
			if (open)
				cnt->rule[RULE_CONN_EVICTED]++;
		}
	}
	__builtin_memcpy(slot_key, &c->key, sizeof(*slot_key));
	c->conn_new.seq = seq;
	bpf_map_update_elem(&cm_conns, &c->key, &c->conn_new, BPF_ANY);
	return cm_conn_get(&c->key);
}

static __always_inline void cm_req(struct cm_scratch *c, struct roceval_scratch *s,
				   struct roceval_counters *cnt, const __u8 *m, __u32 local, __u64 tid)
{
	struct frame_info *fi = &s->fi;
	struct roceval_conn *conn, *n = &c->conn_new;

	cm_key_set(&c->key, fi->saddr, local, fi->ipv6);
	conn = cm_conn_get(&c->key);
	if (conn && conn->state < CM_STATE_CLOSED) {
		cm_repeat(s, cnt, conn, CM_ATTR_REQ, tid, CM_SIDE_INI);
		return;
	}
	__builtin_memset(n, 0, sizeof(*n));
	__builtin_memcpy(n->ini.addr, fi->saddr, 16);
	__builtin_memcpy(n->rsp.addr, fi->daddr, 16);
	n->ini.qpn = rd24(m + CM_REQ_LOCAL_QPN);
	n->ini.start_psn = rd24(m + CM_REQ_START_PSN);
	n->ini.comm_id = local;
	n->service_id = rd64(m + CM_REQ_SERVICE_ID);
	n->tid[CM_SIDE_INI][0] = tid;
	n->retry_count = m[CM_REQ_START_PSN + 3] & 7;
	n->pkey = rd16(m + CM_REQ_PKEY);
	n->pmtu = roceval_cm_pmtu(m[CM_REQ_MTU_RNR] >> 4);
	n->rnr_retry_ini = m[CM_REQ_MTU_RNR] & 7;
	n->ack_timeout = m[CM_REQ_ACK_TIMEOUT] >> 3;
	n->state = CM_STATE_REQ;
	n->sent[CM_SIDE_INI] = 1 << (CM_ATTR_REQ - CM_ATTR_REQ);
	n->ipv6 = fi->ipv6;
	conn = cm_create(c, cnt);
	if (!conn)
		return;
	cm_end_add(c, conn, &conn->ini, &conn->rsp, 1);
	cm_active = 1;
}

static __always_inline void cm_rep(struct cm_scratch *c, struct roceval_scratch *s,
				   struct roceval_counters *cnt, const __u8 *m, __u32 local, __u32 remote,
				   __u64 tid)
{
	struct frame_info *fi = &s->fi;
	struct roceval_conn *conn;

	/* Sent by the responder: the initiator is the destination. */
	cm_key_set(&c->key, fi->daddr, remote, fi->ipv6);
	conn = cm_conn_get(&c->key);
	if (!conn) {
		violate(s, cnt, RULE_CM_REP_UNKNOWN);
		return;
	}
	if (cm_repeat(s, cnt, conn, CM_ATTR_REP, tid, CM_SIDE_RSP))
		return;
	__builtin_memcpy(conn->rsp.addr, fi->saddr, 16);
	conn->rsp.qpn = rd24(m + CM_REP_LOCAL_QPN);
	conn->rsp.start_psn = rd24(m + CM_REP_START_PSN);
	conn->rsp.comm_id = local;
	conn->rnr_retry_rsp = m[CM_REP_START_PSN + 7] >> 5;
	if (conn->state < CM_STATE_REP)
		conn->state = CM_STATE_REP;
	cm_end_add(c, conn, &conn->rsp, &conn->ini, 0);
	cm_ends_sync(c, conn);
}

/* Sent by the initiator once it has the REP: the connection is up. */
static __always_inline void cm_rtu(struct cm_scratch *c, struct roceval_scratch *s,
				   struct roceval_counters *cnt, __u32 local, __u64 tid)
{
	struct roceval_conn *conn;

	cm_key_set(&c->key, s->fi.saddr, local, s->fi.ipv6);
	conn = cm_conn_get(&c->key);
	if (!conn || conn->state < CM_STATE_REP) {
		violate(s, cnt, RULE_CM_RTU_UNKNOWN);
		return;
	}
	if (cm_repeat(s, cnt, conn, CM_ATTR_RTU, tid, CM_SIDE_INI))
		return;
	if (conn->state == CM_STATE_REP)
		conn->state = CM_STATE_ESTABLISHED;
	violate(s, cnt, RULE_CM_ESTABLISHED);
	cm_ends_sync(c, conn);
}

static __always_inline void cm_rej(struct cm_scratch *c, struct roceval_scratch *s,
				   struct roceval_counters *cnt, const __u8 *m, __u32 local, __u32 remote)
{
	__u32 reason = rd16(m + CM_REJ_REASON);
	struct roceval_conn *conn;
	__u64 *slot;
	int side;

	violate(s, cnt, RULE_CM_REJ);
	reason = reason < ROCEVAL_CM_REJ_SLOTS ? reason : ROCEVAL_CM_REJ_SLOTS - 1;
	slot = rare_lookup(&cm_rej_reasons, &reason);
	if (slot)
		(*slot)++;
	conn = cm_find(c, &s->fi, local, remote, &side);
	if (conn)
		cm_remove(c, conn);
}

/*
 * DREQ and DREP.  Either side may send the DREQ.  A DREQ does not revive a
 * connection that idled out: its traffic stays judged as if no CM was seen.
 */
static __always_inline void cm_disconnect(struct cm_scratch *c, struct roceval_scratch *s,
					  struct roceval_counters *cnt, __u16 attr, __u32 local,
					  __u32 remote, __u64 tid)
{
	int side;
	struct roceval_conn *conn = cm_find(c, &s->fi, local, remote, &side);

	if (!conn) {
		if (attr == CM_ATTR_DREQ)
			violate(s, cnt, RULE_CM_DREQ_UNKNOWN);
		return;
	}
	if (cm_repeat(s, cnt, conn, attr, tid, side))
		return;
	if (attr == CM_ATTR_DREQ) {
		if (conn->state < CM_STATE_DISCONNECTING)
			conn->state = CM_STATE_DISCONNECTING;
	} else {
		conn->state = CM_STATE_CLOSED;
	}
	cm_ends_sync(c, conn);
}

/* The MAD after the BTH and DETH of a UD SEND_ONLY to QP1, at frame offset `off`. */
static __always_inline void cm_mad(void *ctx, bool tc, __u32 off, __u32 payload, struct cm_scratch *c,
				   struct roceval_scratch *s, struct roceval_counters *cnt)
{
	const __u8 *m = c->mad + CM_MAD_HDR_LEN;
	struct roceval_conn *conn;
	__u32 local, remote;
	__u64 tid;
	__u16 attr;
	int side;

	if (payload < CM_MAD_LEN || frame_load(ctx, tc, off, c->mad, CM_MAD_READ))
		return;
	/* QP1 carries every general-services class; only the CM's are ours. */
	if (c->mad[CM_MAD_BASE_VERSION] != 1 || c->mad[CM_MAD_CLASS] != CM_MGMT_CLASS)
		return;
	violate(s, cnt, RULE_CM);
	attr = rd16(c->mad + CM_MAD_ATTR);
	tid = rd64(c->mad + CM_MAD_TID);
	local = rd32(m + CM_LOCAL_COMM_ID);
	remote = rd32(m + CM_REMOTE_COMM_ID);

	switch (attr) {
	case CM_ATTR_REQ:
		cm_req(c, s, cnt, m, local, tid);
		return;
	case CM_ATTR_REP:
		cm_rep(c, s, cnt, m, local, remote, tid);
		return;
	case CM_ATTR_RTU:
		cm_rtu(c, s, cnt, local, tid);
		return;
	case CM_ATTR_REJ:
		cm_rej(c, s, cnt, m, local, remote);
		return;
	case CM_ATTR_MRA:
		violate(s, cnt, RULE_CM_MRA);
		conn = cm_find(c, &s->fi, local, remote, &side);
		if (conn)
			cm_repeat(s, cnt, conn, CM_ATTR_MRA, tid, side);
		return;
	case CM_ATTR_DREQ:
	case CM_ATTR_DREP:
		cm_disconnect(c, s, cnt, attr, local, remote, tid);
		return;
	}
}

/*
 * A CM MAD, decoded after the frame's ICRC was judged: a receiver drops a
 * corrupted MAD and the sender resends it with the same TID, which would
 * then count as a retry and leave the corrupted values learned.  A global
 * function, so the verifier checks it once.
 */
static __always_inline int cm_mad_body(void *ctx, bool tc, __u32 bth_off, __u32 payload)
{
	struct roceval_scratch *s = scratch_get();
	struct roceval_counters *cnt = counters_get();
	struct cm_scratch *c = cm_scratch_get();

	if (!ctx || !s || !cnt || !c)
		return 0;
	cm_mad(ctx, tc, bth_off + ROCE_BTH_LEN + ROCE_DETH_LEN, payload, c, s, cnt);
	return 0;
}

/* One per context type: a global function's context argument has the program's type. */
__noinline int roceval_cm_mad(struct xdp_md *ctx, __u32 bth_off, __u32 payload)
{
	return cm_mad_body(ctx, false, bth_off, payload);
}

__noinline int roceval_cm_mad_skb(struct __sk_buff *skb, __u32 bth_off, __u32 payload)
{
	return cm_mad_body(skb, true, bth_off, payload);
}

/*
 * Whether the connection of end e (found idle at `now`) has expired: its
 * other end idled as long.  If so it is marked, for both ends, and counted
 * on the totals only, as eviction is: the expiry is not this frame's doing.
 */
static __always_inline bool cm_expired(struct cm_scratch *c, struct roceval_counters *cnt,
				       const struct roceval_cm_end *e, __u8 ipv6, __u64 now, __u64 idle_ns)
{
	struct roceval_cm_end *peer;
	struct roceval_conn *conn;

	cm_end_key_set(&c->end_key, e->peer, e->peer_qpn, ipv6);
	peer = cm_end_get(&c->end_key);
	if (peer && peer->conn.comm_id == e->conn.comm_id && (__s64)(now - peer->last_ns) <= (__s64)idle_ns)
		return false;
	__builtin_memcpy(&c->key, &e->conn, sizeof(c->key));
	conn = cm_conn_get(&c->key);
	if (!conn)
		return true;
	conn->state = CM_STATE_EXPIRED;
	cm_ends_sync(c, conn);
	cnt->rule[RULE_CONN_EXPIRED]++;
	return true;
}

/*
 * An RC or UC packet of a learned connection, judged against what CM
 * announced.  Returns the PMTU to judge its payload against: the
 * connection's negotiated one, else `pmtu` (the setting).
 */
__noinline int roceval_cm_data(__u32 pkey, __u32 pmtu, __u32 idle_s)
{
	struct roceval_scratch *s = scratch_get();
	struct roceval_counters *cnt = counters_get();
	struct cm_scratch *c = cm_scratch_get();
	const struct roce_op *op;
	struct roceval_cm_end *e;
	struct frame_info *fi;
	__u64 now;

	if (!s || !cnt || !c)
		return pmtu;
	fi = &s->fi;
	cm_end_key_set(&c->end_key, fi->daddr, fi->dqpn, fi->ipv6);
	e = cm_end_get(&c->end_key);
	if (!e || e->state >= CM_STATE_CLOSED || !addr_eq(e->peer, fi->saddr))
		return pmtu;
	now = frame_time_ns();
	/* Signed: a capture's clock may step back. */
	if (idle_s && (__s64)(now - e->last_ns) > (__s64)(idle_s * 1000000000ULL) &&
	    cm_expired(c, cnt, e, fi->ipv6, now, idle_s * 1000000000ULL))
		return pmtu;
	/*
	 * Idle time is judged in seconds: refreshing it once a second, not per
	 * packet, keeps the end's cache line from bouncing between CPUs.
	 */
	if ((__s64)(now - e->last_ns) > 1000000000LL)
		e->last_ns = now;

	op = &roce_ops[fi->opcode & 0x1F];
	if ((pkey ^ e->pkey) & 0x7FFF)
		violate(s, cnt, RULE_CM_PKEY);
	if (op->flags & OPF_REQUEST) {
		/*
		 * Until the RTU only the initiator may send: the responder waits
		 * in RTR.  Its sending shows the connection is up all the same
		 * (or the capture missed the RTU), so this end counts it once.
		 */
		if (e->initiator && e->state < CM_STATE_ESTABLISHED) {
			violate(s, cnt, RULE_CM_PENDING);
			e->state = CM_STATE_ESTABLISHED;
		}
		if (!e->req_seen) {
			e->req_seen = 1;
			fi->conn_fresh |= CONN_FRESH_REQ;
			if (fi->psn != e->start_psn)
				violate(s, cnt, RULE_CM_START_PSN);
		}
	} else if (!e->resp_seen) {
		e->resp_seen = 1;
		fi->conn_fresh |= CONN_FRESH_RESP;
	}
	return e->pmtu ? e->pmtu : pmtu;
}

/*
 * The data-path hook: traffic of no learned connection, the common case,
 * costs two tests and no call.  CM connects RC and UC QPs alike.
 */
static __always_inline __u32 cm_data_pmtu(const struct frame_info *fi, const struct roceval_settings *cfg,
					  __u32 pkey, __u32 pmtu)
{
	__u32 tr = fi->opcode >> 5;

	if ((tr != ROCE_TR_RC && tr != ROCE_TR_UC) || !cm_active)
		return pmtu;
	return roceval_cm_data(pkey, pmtu, cfg->conn_idle);
}

/*
 * The MAD hook, at the verdict: a UD SEND_ONLY to QP1 whose ICRC did not
 * fail, and whose frame, which ends at `end`, holds the MAD's bytes: a
 * replay batch's next record is another frame, not the rest of a MAD the
 * capture (or a truncating mirror) cut.
 */
static __always_inline void cm_verdict(void *ctx, bool tc, const struct roceval_scratch *s, __u32 bth_off,
				       __u32 end)
{
	const struct frame_info *fi = &s->fi;

	if (fi->headers_ok && fi->opcode == ROCE_OPCODE_UD_SEND_ONLY && fi->dqpn == ROCE_GSI_QPN &&
	    !rule_set_has(&s->rules, RULE_ICRC) && bth_off + ROCE_BTH_LEN + ROCE_DETH_LEN + CM_MAD_READ <= end)
		tc ? roceval_cm_mad_skb(ctx, bth_off, fi->payload) : roceval_cm_mad(ctx, bth_off, fi->payload);
}

#endif /* ROCEVAL_CM_BPF_H */
