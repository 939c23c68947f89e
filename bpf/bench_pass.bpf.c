// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The harness baseline of `roceval bench`: what BPF_PROG_TEST_RUN costs for
 * a frame when the program does nothing.  xdp.frags so it takes the same
 * multi-buffer frames as roceval.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("xdp.frags")
int bench_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}
