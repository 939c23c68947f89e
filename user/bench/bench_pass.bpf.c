// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The harness baselines of `roceval bench`: what BPF_PROG_TEST_RUN costs
 * for a frame when the program does nothing.  xdp.frags so they take the
 * same multi-buffer frames and batches as roceval.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "roceval.h"
#include "batch.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* One frame of a single-frame run, repeated. */
SEC("xdp.frags")
int bench_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

/*
 * Stands where roceval_frame() does: a global function the verifier cannot
 * inline.  The empty asm is a side effect: without one the compiler sees a
 * pure function whose result is unused and drops the call, and the
 * baseline would not pay for the call the validator makes.  It reads
 * every argument so the caller passes each (a global function takes only
 * scalars, and an unread one would be whatever the register held).
 */
__noinline int bench_frame(struct xdp_md *ctx, __u32 base, __u32 len, __u32 wire, __u32 session)
{
	asm volatile("" ::: "memory");
	return ctx && (base | len | wire | session) ? XDP_PASS : XDP_ABORTED;
}

/* A replay batch walked as roceval_replay walks it, each frame to a function that does nothing. */
SEC("xdp.frags")
int bench_walk(struct xdp_md *ctx)
{
	return batch_walk(ctx, bench_frame);
}

/*
 * `roceval bench --live`: the sender, run in live-frames mode on one end
 * of a veth pair, turns each frame around out of that end (XDP_TX in a
 * test run is a redirect to the ingress device), so the peer receives it.
 */
SEC("xdp")
int bench_tx(struct xdp_md *ctx)
{
	return XDP_TX;
}

/* Frames bench_rx saw: one veth queue, so one CPU at a time writes it. */
__u64 bench_rx_frames;

/* The receiving end's do-nothing program; it counts so the run can check nothing was lost. */
SEC("xdp.frags")
int bench_rx(struct xdp_md *ctx)
{
	bench_rx_frames++;
	return XDP_PASS;
}
