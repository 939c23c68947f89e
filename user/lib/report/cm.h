/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef ROCEVAL_USER_CM_H
#define ROCEVAL_USER_CM_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>
#include "roceval.h"
#include "roceval_cm.h"

struct flow_entry;
struct json_writer;

/*
 * "connections": [...] into the object being written: every connection in the
 * table, its state, both sides' address, QPN and Starting PSN, and the
 * negotiated parameters.
 */
void cm_connections_json(struct json_writer *w, int conns_fd);
/* "tcp/4420 (NVMe-oF)" for an RDMA CM IP ServiceID, else "0x<16 hex digits>". */
const char *cm_service_name(__u64 service_id, char *buf, size_t len);
/*
 * The connection end a packet (saddr -> daddr, DestQP dqpn) goes to, if CM
 * announced it and saddr is its peer.  Addresses are 16 bytes, IPv4 in the
 * first 4 and the rest zero.
 */
bool cm_end_lookup(int ends_fd, const __u8 *saddr, const __u8 *daddr, bool ipv6, __u32 dqpn,
		   struct roceval_cm_end *out);
/* Fills each flow's CM fields from the connection ends table (fd < 0: none). */
void cm_annotate(int ends_fd, struct flow_entry *e, int n);
/* "cm_rej_reasons": {"id": N, ...} from the per-CPU REJ reason map (fd < 0: empty). */
void cm_rej_json(struct json_writer *w, int rej_fd);
/* The REJ counts per reason slot, summed over the CPUs (fd < 0: all 0); 0 or -errno. */
int cm_rej_read(int rej_fd, __u64 out[ROCEVAL_CM_REJ_SLOTS]);
/* The id of a reason slot: its name in the table, else "reason_<n>" (buf holds that). */
const char *cm_rej_reason_name(unsigned int slot, char *buf, size_t len);

#endif
