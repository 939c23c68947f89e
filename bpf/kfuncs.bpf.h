/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The kfuncs roceval_xdp_nic asks the driver through (kernel 6.3+, 6.8+).
 * A kfunc makes libbpf read and parse the kernel's BTF (several MB) at every
 * load, whichever programs are loaded, so the object is built twice: as
 * is, for the one load bound to a device, and with ROCEVAL_PLAIN (every
 * other load: replay, feed, attach), where the calls are stand-ins that
 * find nothing and the device-bound program is never loaded.
 */
#ifndef ROCEVAL_KFUNCS_BPF_H
#define ROCEVAL_KFUNCS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#ifdef ROCEVAL_PLAIN
static __always_inline int bpf_xdp_metadata_rx_timestamp(const struct xdp_md *ctx, __u64 *timestamp)
{
	return -1;
}

static __always_inline int bpf_xdp_metadata_rx_vlan_tag(const struct xdp_md *ctx, __be16 *vlan_proto, __u16 *vlan_tci)
{
	return -1;
}
#else
extern int bpf_xdp_metadata_rx_timestamp(const struct xdp_md *ctx, __u64 *timestamp) __ksym __weak;
extern int bpf_xdp_metadata_rx_vlan_tag(const struct xdp_md *ctx, __be16 *vlan_proto, __u16 *vlan_tci) __ksym __weak;
#endif

#endif
