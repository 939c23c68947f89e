/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef ROCEVAL_BENCH_VETH_H
#define ROCEVAL_BENCH_VETH_H

#include <stdbool.h>

/*
 * What sends the frames: the sender program in XDP live-frames mode, an
 * AF_PACKET socket, or the first unless the kernel refuses it (auto).
 */
enum live_sender { SENDER_AUTO, SENDER_LIVE, SENDER_PACKET };

/*
 * roceval bench --live: Mpps per core through a veth pair, roceval against
 * a do-nothing program, for `count` frames a run and the median of `rounds`.
 */
int bench_live(bool json, unsigned int count, unsigned int rounds, enum live_sender sender);
/*
 * --live --mirror: the same with ERSPAN II mirror copies of an RC ACK, a
 * 1 KB and a 4 KB RDMA WRITE, roceval at icrc_sample 1 and 8, with the
 * cores a collector needs per 100 Gb/s of mirrored traffic.
 */
int bench_live_mirror(bool json, unsigned int count, unsigned int rounds, enum live_sender sender);

#endif
