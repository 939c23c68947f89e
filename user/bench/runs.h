/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What bench.c measures with: the runs (runs.c) and the streams they send. */
#ifndef ROCEVAL_BENCH_RUNS_H
#define ROCEVAL_BENCH_RUNS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "frame.h"
#include "report/report.h"
#include "roceval.h"

struct roceval_bpf;

/* The requester's QP, which the ACKs go to. */
#define ANSWER_QPN 0x400000
/* An ERSPAN II copy's outer headers at most: Ethernet, IPv6, GRE with its sequence number, ERSPAN II. */
#define MIRROR_OUTER_MAX (14 + 40 + 8 + 8)

/*
 * A steady sequence of one frame's shape over `flows` flows, DestQPs qpn
 * onwards: frame g goes to flow g % flows with PSN 1 + g / flows, so each
 * flow sees the next PSN every time.
 */
struct stream {
	struct frame f; /* a copy: the single-frame runs keep the original */
	__u32 qpn;
	__u32 flows;
	__u64 sent;
	/*
	 * When set, each request is followed by the ACK answering it, from the
	 * responder to QP ANSWER_QPN onwards (one per flow): the commonest frame
	 * on the path it takes when its request was seen.
	 */
	struct frame *ack;
	/*
	 * When outer_len is set, each frame goes as an ERSPAN II copy in these
	 * outer headers (stream_mirror), its GRE sequence number the next of
	 * mseq: a session that loses nothing.
	 */
	__u32 outer_len;
	__u32 mseq;
	unsigned char outer[MIRROR_OUTER_MAX];
};

struct batch {
	__u32 n;
	size_t len;
	unsigned char data[ROCEVAL_BATCH_BYTES];
};

/*
 * Makes the stream's frames ERSPAN II copies of ERSPAN session `session`
 * (10 bits) as a switch sends them to a collector, the outer headers of
 * the frame's own family.
 */
void stream_mirror(struct stream *st, unsigned int session);
/* How a batch of records of this size is read: "in_place" or with the "helper". */
const char *read_mode(size_t record);
/* A batch record of frame f, and of the ACK that answers it, if any: the two go in one batch together. */
size_t record_bytes(const struct frame *f, const struct frame *ack);
/*
 * Average ns per frame over `frames` frames of the stream, in batches
 * through a replay-style program (roceval_replay or bench_walk).
 */
int run_stream(int prog_fd, struct batch *b, struct stream *st, __u64 frames, double *ns);
/* Average ns per run of the frame over `repeat` runs, as the kernel times them. */
int run_prog(int prog_fd, const struct frame *f, unsigned int repeat, double *ns);
/*
 * Average ns per frame over the next `frames` frames of the stream, a test
 * run each of the live program (caches go cold between runs: only a
 * difference of two such figures means anything).
 */
int run_frames(int prog_fd, struct stream *st, unsigned int frames, double *ns);
/* Average ns of zlib's crc32() over the bytes the frame's ICRC covers. */
double zlib_ns(const struct frame *f, unsigned int repeat);
/* The defaults with icrc_sample and latency_sample as given. */
int set_sampling(int settings_fd, struct roceval_settings *cfg, const char *icrc, const char *latency);
/* set_sampling() with every request timed. */
int set_icrc_sample(int settings_fd, struct roceval_settings *cfg, const char *n);
/*
 * The defaults with icrc_sample as given, every request timed (as in the
 * steady rows it is compared with) and every congestion setting on, each
 * of which the bench's frames meet (data at DSCP 26 and ECT(0), untagged).
 */
int set_congestion(int settings_fd, struct roceval_settings *cfg, const char *icrc);
/*
 * Runs each frame once with every check on and makes sure the program saw
 * a RoCEv2 frame with a good ICRC and nothing wrong: a benchmark of frames
 * the program rejects early would time the wrong path.
 */
int check_frames(struct roceval_bpf *skel, struct frame *frames, int n);
/*
 * Makes sure the steady runs took the steady path: every flow of the
 * stream counted each of its frames and none broke a rule (a gap or a
 * duplicate PSN, a bad ICRC); with ACKs, each ACK flow too, and the ACKs
 * were matched to their requests (the requests' latency histogram has
 * samples).
 */
int check_stream(const struct roceval_bpf *skel, const struct stream *st);
/*
 * Makes sure a mirrored stream took the healthy path: its session counted
 * each of its frames, numbered, none lost, cut or nested, and its inner
 * flow each frame with no violation (check_stream).  *out: its counts.
 */
int check_mirror(const struct roceval_bpf *skel, const struct stream *st, struct mirror_entry *out);
/* No mirrored frame was lost, malformed, nested or cut, and `frames` were taken apart in all. */
int check_mirror_totals(const struct roceval_bpf *skel, __u64 frames);
/* Each flow of the stream once, so that it exists before the timed runs. */
int warm_stream(int prog_fd, struct batch *b, struct stream *st);

#endif
