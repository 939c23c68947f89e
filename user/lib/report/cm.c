// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* RDMA CM names and tables for the CLI: ServiceIDs, REJ reasons, flows' connections. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cm.h"
#include "counters.h"
#include "flows.h"
#include "json.h"
#include "live/live.h"

/* Applications known by their RDMA CM port.  X(port space, port, name) */
#define CM_APPS(X)                  \
	X(0x06, 4420, "NVMe-oF")    \
	X(0x06, 3260, "iSER")       \
	X(0x06, 445, "SMB Direct")  \
	X(0x06, 2049, "NFS/RDMA")   \
	X(0x06, 20049, "NFS/RDMA")

const char *cm_service_name(__u64 sid, char *buf, size_t len)
{
	unsigned int space = (sid >> 16) & 0xFF, port = sid & 0xFFFF;
	const char *sname = NULL, *app = NULL;

	if ((sid >> 24) != 1) {
		snprintf(buf, len, "0x%016llx", (unsigned long long)sid);
		return buf;
	}
#define CM_SPACE_NAME(ps, name) \
	if (space == (ps))      \
		sname = name;
	ROCEVAL_CM_PORT_SPACES(CM_SPACE_NAME)
#undef CM_SPACE_NAME
#define CM_APP_NAME(ps, p, name)               \
	if (!app && space == (ps) && port == (p)) \
		app = name;
	CM_APPS(CM_APP_NAME)
#undef CM_APP_NAME
	if (sname)
		snprintf(buf, len, "%s/%u%s%s%s", sname, port, app ? " (" : "", app ?: "", app ? ")" : "");
	else
		snprintf(buf, len, "ps0x%02x/%u", space, port);
	return buf;
}

bool cm_end_lookup(int ends_fd, const __u8 *saddr, const __u8 *daddr, bool ipv6, __u32 dqpn,
		   struct roceval_cm_end *out)
{
	struct roceval_cm_end_key k = { 0 };

	if (ends_fd < 0)
		return false;
	memcpy(k.addr, daddr, 16);
	k.qpn = dqpn;
	k.ipv6 = ipv6;
	return !bpf_map_lookup_elem(ends_fd, &k, out) && !memcmp(out->peer, saddr, 16);
}

void cm_annotate(int ends_fd, struct flow_entry *e, int n)
{
	for (int i = 0; i < n; i++)
		e[i].has_cm = cm_end_lookup(ends_fd, e[i].val.key.saddr, e[i].val.key.daddr, e[i].val.key.ipv6,
					    e[i].val.key.dqpn, &e[i].cm);
}

int cm_rej_read(int rej_fd, __u64 out[ROCEVAL_CM_REJ_SLOTS])
{
	int err = 0;

	memset(out, 0, ROCEVAL_CM_REJ_SLOTS * sizeof(*out));
	for (__u32 r = 0; rej_fd >= 0 && r < ROCEVAL_CM_REJ_SLOTS && !err; r++)
		err = percpu_sum(rej_fd, r, &out[r], 1);
	return err;
}

void cm_rej_json(struct json_writer *w, int rej_fd)
{
	__u64 n[ROCEVAL_CM_REJ_SLOTS];
	char buf[32];

	json_object_begin(w, "cm_rej_reasons");
	if (!cm_rej_read(rej_fd, n))
		for (__u32 r = 0; r < ROCEVAL_CM_REJ_SLOTS; r++)
			if (n[r])
				json_u64(w, cm_rej_reason_name(r, buf, sizeof(buf)), n[r]);
	json_object_end(w);
}

static const char *const cm_state_names[] = {
	[CM_STATE_REQ] = "req",
	[CM_STATE_REP] = "rep",
	[CM_STATE_ESTABLISHED] = "established",
	[CM_STATE_DISCONNECTING] = "disconnecting",
	[CM_STATE_CLOSED] = "closed",
	[CM_STATE_EXPIRED] = "expired",
};

static void side_json(struct json_writer *w, const char *name, const struct roceval_cm_side *s, bool ipv6)
{
	char a[INET6_ADDRSTRLEN];

	if (!inet_ntop(ipv6 ? AF_INET6 : AF_INET, s->addr, a, sizeof(a)))
		strcpy(a, "?");
	json_object_begin(w, name);
	json_string(w, "addr", a);
	json_u64(w, "qpn", s->qpn);
	json_u64(w, "start_psn", s->start_psn);
	json_u64(w, "comm_id", s->comm_id);
	json_object_end(w);
}

static void conn_json(struct json_writer *w, const struct roceval_conn *c)
{
	char svc[64];

	json_object_begin(w, NULL);
	json_string(w, "state", c->state < sizeof(cm_state_names) / sizeof(*cm_state_names) &&
					cm_state_names[c->state] ? cm_state_names[c->state] : "?");
	json_string(w, "service", cm_service_name(c->service_id, svc, sizeof(svc)));
	json_u64(w, "service_id", c->service_id);
	side_json(w, "initiator", &c->ini, c->ipv6);
	side_json(w, "responder", &c->rsp, c->ipv6);
	json_u64(w, "pmtu", c->pmtu);
	json_u64(w, "pkey", c->pkey);
	json_u64(w, "retry_count", c->retry_count);
	json_u64(w, "rnr_retry_initiator", c->rnr_retry_ini);
	json_u64(w, "rnr_retry_responder", c->rnr_retry_rsp);
	json_u64(w, "ack_timeout", c->ack_timeout);
	json_object_end(w);
}

void cm_connections_json(struct json_writer *w, int conns_fd)
{
	struct roceval_cm_key key, next, *prev = NULL;

	json_array_begin(w, "connections");
	while (conns_fd >= 0 && !bpf_map_get_next_key(conns_fd, prev, &next)) {
		struct roceval_conn c;

		key = next;
		prev = &key;
		if (!bpf_map_lookup_elem(conns_fd, &key, &c))
			conn_json(w, &c);
	}
	json_array_end(w);
}
