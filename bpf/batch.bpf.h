/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Walking a replay batch: a 4-byte little-endian frame count, then that many
 * records of the captured length and the wire length (4 bytes little-endian
 * each) and the captured bytes.  roceval_replay and the bench's baseline
 * share it, so the baseline walks a batch exactly as the validator does.
 */
#ifndef ROCEVAL_BATCH_BPF_H
#define ROCEVAL_BATCH_BPF_H

struct batch_rec {
	__u32 off;  /* where the captured bytes start */
	__u32 len;  /* captured bytes */
	__u32 wire; /* the frame's length on the wire */
};

/* The record at *next, with *next moved past it; false at the end or at a malformed record. */
static __always_inline bool batch_next(struct xdp_md *ctx, __u32 total, __u32 *next, struct batch_rec *r)
{
	__u32 hdr[2];
	__u32 off = *next;

	if (off + ROCEVAL_REC_HDR > total || bpf_xdp_load_bytes(ctx, off, hdr, sizeof(hdr)))
		return false;
	off += ROCEVAL_REC_HDR;
	if (hdr[0] > total - off)
		return false;
	r->off = off;
	r->len = hdr[0];
	r->wire = hdr[1];
	*next = off + hdr[0];
	return true;
}

#endif /* ROCEVAL_BATCH_BPF_H */
