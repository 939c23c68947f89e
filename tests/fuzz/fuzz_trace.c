// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target for the trace sample decoder of `roceval trace`
 * (sample_report() in user/lib/report/sample.c).  The first input byte picks text
 * or JSON output and whether a pcapng file is written; the rest is one ring
 * buffer sample: a struct roceval_trace_event and the frame bytes after it,
 * any of them hostile (cap_len larger than the sample, truncated headers,
 * IHL below 5, ...).  Samples come from the kernel 8-byte aligned, so the
 * input is copied into an aligned buffer of exactly its size: a read past
 * it is ASan's to see.  The frame is the attacker's; the event fields are
 * the program's own, and ts_ns is bpf_ktime_get_ns(), so it is kept below
 * 2^62 (146 years of uptime).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sample_output out = {};
	struct capture pcap = {};
	const char *names[] = { "fuzz0" };
	void *sample;

	if (size < 1)
		return 0;
	out.json = data[0] & 1;
	if (data[0] & 2) {
		FILE *f = fopen("/dev/null", "w");

		if (f && !capture_start(&pcap, f, true, "fuzz", names, 1))
			out.pcap = &pcap;
	}
	sample = malloc(size - 1 ? size - 1 : 1);
	if (sample) {
		memcpy(sample, data + 1, size - 1);
		if (size - 1 >= sizeof(struct roceval_trace_event))
			((struct roceval_trace_event *)sample)->ts_ns &= (1ULL << 62) - 1;
		sample_report(&out, "fuzz0", 0, -1, sample, size - 1);
		free(sample);
	}
	if (pcap.f)
		fclose(pcap.f);
	return 0;
}
