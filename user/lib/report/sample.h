/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A trace sample (struct roceval_trace_event and the frame bytes after it,
 * as the program puts it in a ring buffer) told to the user: one line of
 * text like tcpdump's, or one JSON object, and optionally a pcapng packet
 * whose comment names the rules the frame broke.
 */
#ifndef ROCEVAL_SAMPLE_H
#define ROCEVAL_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture.h"

struct sample_output {
	bool json;		 /* else text */
	bool quiet;		 /* neither: the pcapng goes to stdout */
	struct capture *pcap;	 /* or NULL */
	int64_t mono_to_real_ns; /* added to the sample's bpf_ktime_get_ns() for wall-clock time */
};

/*
 * Reports the `size`-byte sample `data` seen on `ifname`, interface
 * `ifidx` of the pcapng; `cm_ends_fd` (or -1) names the connection CM
 * announced.  A sample shorter than its event is ignored; a cap_len larger
 * than the sample is cut to it.  0, or -EIO when the pcapng could not be
 * written.
 */
int sample_report(const struct sample_output *o, const char *ifname, uint32_t ifidx, int cm_ends_fd,
		  const void *data, size_t size);

#endif
