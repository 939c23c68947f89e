/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef ROCEVAL_REPLAY_H
#define ROCEVAL_REPLAY_H

#include <stddef.h>
#include <linux/types.h>
#include "roceval.h"
#include "live/live.h"

/*
 * Runs frames through the same XDP object that runs live, in batches of many
 * frames per BPF_PROG_TEST_RUN call.
 */
struct replay;

struct replay *replay_new(const struct roceval_settings *cfg);
struct roceval_bpf;
/* The same over an object loaded with LOAD_REPLAY (a feed's, its maps pinned), which it takes over. */
struct replay *replay_from(struct roceval_bpf *skel, const struct roceval_settings *cfg);
/*
 * Queues one frame of `len` captured bytes that was `wire` bytes long on the
 * wire (ROCEVAL_WIRE_UNKNOWN: cut at an unknown length); runs the batch when
 * it is full.  time_ns is its capture time (nanoseconds since the epoch):
 * what connections idle by.
 */
int replay_frame(struct replay *r, const void *data, size_t len, __u32 wire, __u64 time_ns);
/* Runs what is queued. */
int replay_flush(struct replay *r);
/*
 * Runs what is queued, then ends the capture: what only a later frame
 * could have settled is settled (a reorder window's holes are psn_gap, its
 * requests awaiting a verdict psn_reorder).
 */
int replay_finish(struct replay *r);
/*
 * Every map the program writes back as the load left it (the settings
 * kept): the next frames are judged as the first of a replay.  replay_new()
 * only: a feed, from replay_from(), continues its counters.
 */
int replay_reset(struct replay *r);
int replay_counters(struct replay *r, struct roceval_counters *out);
int replay_counters_fd(struct replay *r);
int replay_flows_fd(struct replay *r);
int replay_flow_sets_fd(struct replay *r);
int replay_flow_cold_fd(struct replay *r); /* each flow's cold part (roceval.h) */
int replay_latency_fd(struct replay *r);
int replay_congestion_fd(struct replay *r); /* PFC and the cnp_reaction histogram (roceval_cc.h) */
/* The RDMA CM maps: connections, connection ends, REJ reasons (-1 where there are none). */
void replay_cm_fds(struct replay *r, int *conns_fd, int *ends_fd, int *rej_fd);
/* The mirror sessions: the session table and its per-CPU counts (report/mirrors.h). */
struct mirror_fds replay_mirror_fds(struct replay *r);
struct roceval_bpf *replay_skel(struct replay *r);
void replay_free(struct replay *r);

#endif
