/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Walking a replay batch: a 4-byte little-endian frame count, then that many
 * records of the captured length and the wire length (4 bytes little-endian
 * each), the capture time (8 bytes) and the captured bytes.  roceval_replay and the bench's baseline
 * share it, so the baseline walks a batch exactly as the validator does.
 */
#ifndef ROCEVAL_BATCH_BPF_H
#define ROCEVAL_BATCH_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "clock.bpf.h"
#include "roceval.h"

/*
 * What `each` returns for a frame that holds another, which it has put in
 * batch_inner: global, so that the walk reads it without a lookup (a
 * replay runs on one CPU).
 */
#define BATCH_INNER 0x4D
struct {
	__u32 at, len, wire, session;
} batch_inner;

struct batch_rec {
	__u32 off;  /* where the captured bytes start */
	__u32 len;  /* captured bytes */
	__u32 wire; /* the frame's length on the wire */
};

/* The record at *next, with *next moved past it; false at the end or at a malformed record. */
static __always_inline bool batch_next(struct xdp_md *ctx, __u32 total, __u32 *next, struct batch_rec *r)
{
	__u32 off = *next;

	/* the helper refuses a record header past the end: no test of its own */
	if (bpf_xdp_load_bytes(ctx, off, &batch_hdr, ROCEVAL_REC_HDR))
		return false;
	off += ROCEVAL_REC_HDR;
	if (batch_hdr.len > total - off)
		return false;
	r->off = off;
	r->len = batch_hdr.len;
	r->wire = batch_hdr.wire;
	*next = off + r->len;
	return true;
}

/* Where a walk of the batch in ctx stands: bpf_loop's callbacks take it on the stack. */
struct batch_walk {
	struct xdp_md *ctx;
	__u32 next; /* where the next record starts */
	__u32 done; /* frames run */
};

/*
 * One record of the walk to `each`; 1 (stop) at the end or at a malformed
 * record.  Each program's bpf_loop callback is this with its own `each`.
 */
static __always_inline long batch_step(struct batch_walk *w,
				       int (*each)(struct xdp_md *ctx, __u32 base, __u32 len, __u32 wire, __u32 session))
{
	struct batch_rec r;

	if (!batch_next(w->ctx, bpf_xdp_get_buff_len(w->ctx), &w->next, &r))
		return 1;
	/* a mirrored frame: its inner frame next, where the walk keeps it (mirror.bpf.h) */
	if (each(w->ctx, r.off, r.len, r.wire, 0) == BATCH_INNER)
		each(w->ctx, r.off + batch_inner.at, batch_inner.len, batch_inner.wire, batch_inner.session);
	w->done++;
	return 0;
}

/*
 * Runs `step` (a batch_step) on each frame of the batch in ctx; returns how
 * many it ran, so userspace can tell a malformed batch from a complete one.
 * The replay program and the bench's baseline both walk batches through
 * it, so the baseline costs exactly what the walk does.  bpf_loop, not a
 * loop: the verifier walks a bounded loop's body once per iteration it
 * could take (86k instructions for ROCEVAL_BATCH_MAX_FRAMES), a callback once.
 */
static __always_inline int batch_walk(struct xdp_md *ctx, long (*step)(__u64 i, void *w))
{
	struct batch_walk w = { .ctx = ctx, .next = 4 };
	__u32 n;

	/* the frame count read into `done`: the replay's deepest call chain has no 4 bytes to spare */
	if (bpf_xdp_load_bytes(ctx, 0, &w.done, sizeof(w.done)))
		return 0;
	n = w.done < ROCEVAL_BATCH_MAX_FRAMES ? w.done : ROCEVAL_BATCH_MAX_FRAMES;
	w.done = 0;
	replay_clock = true;
	bpf_loop(n, step, &w, 0);
	return w.done;
}

#endif /* ROCEVAL_BATCH_BPF_H */
