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

	/* the helper refuses a record header past the end: no test of its own (see batch_walk) */
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

/*
 * Runs `each` on each frame of the batch in ctx; returns how many it ran,
 * so userspace can tell a malformed batch from a complete one.  The replay
 * program and the bench's baseline both walk batches through it, so the
 * baseline costs exactly what the walk does.
 */
static __always_inline int batch_walk(struct xdp_md *ctx,
				      int (*each)(struct xdp_md *ctx, __u32 base, __u32 len, __u32 wire, __u32 session))
{
	__u32 total = bpf_xdp_get_buff_len(ctx);
	__u32 off = 4, done = 0, nframes;

	if (bpf_xdp_load_bytes(ctx, 0, &nframes, sizeof(nframes)))
		return 0;
	replay_clock = true;
	/*
	 * The verifier walks this loop once for each of a batch's frames and
	 * keeps every branch not yet taken for later, up to 8192: four a frame
	 * at most (the loop's end, the record's two tests, a mirrored frame).
	 */
	for (int i = 0; i < ROCEVAL_BATCH_MAX_FRAMES && i < nframes; i++) {
		struct batch_rec r;

		if (!batch_next(ctx, total, &off, &r))
			break;
		/* a mirrored frame: its inner frame next, where the walk keeps it (mirror.bpf.h) */
		if (each(ctx, r.off, r.len, r.wire, 0) == BATCH_INNER)
			each(ctx, r.off + batch_inner.at, batch_inner.len, batch_inner.wire, batch_inner.session);
		done++;
	}
	return done;
}

#endif /* ROCEVAL_BATCH_BPF_H */
