// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target for the trace event decoder of `roceval trace`
 * (on_event() in user/cmd/trace.c, included here to reach its static
 * functions).  The first input byte picks text or JSON output and whether a
 * pcapng file is written; the rest is one ring buffer sample: a struct
 * roceval_trace_event and the frame bytes after it, any of them hostile
 * (cap_len larger than the sample, truncated headers, IHL below 5, ...).
 * Samples come from the kernel 8-byte aligned, so the input is copied into
 * an aligned buffer of exactly its size: a read past it is ASan's to see.
 * The frame is the attacker's; the event fields are the program's own, and
 * ts_ns is bpf_ktime_get_ns(), so it is kept below 2^62 (146 years of uptime).
 */
#include "../../user/cmd/trace.c"

#include <stdint.h>

int command_usage_error(const struct command *cmd, const char *fmt, ...)
{
	return EXIT_USAGE;
}

int command_bad_option(const struct command *cmd, char **argv)
{
	return EXIT_USAGE;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct trace t;
	struct trace_iface *ti = &t.ifs[0];
	void *sample;

	if (size < 1)
		return 0;
	memset(&t, 0, sizeof(t));
	t.n = 1;
	t.json = data[0] & 1;
	t.pcap = (data[0] & 2) ? fopen("/dev/null", "w") : NULL;
	ti->t = &t;
	snprintf(ti->li.ifname, sizeof(ti->li.ifname), "fuzz0");
	sample = malloc(size - 1 ? size - 1 : 1);
	if (!sample)
		return 0;
	memcpy(sample, data + 1, size - 1);
	if (size - 1 >= sizeof(struct roceval_trace_event))
		((struct roceval_trace_event *)sample)->ts_ns &= (1ULL << 62) - 1;
	on_event(ti, sample, size - 1);
	free(sample);
	if (t.pcap)
		fclose(t.pcap);
	return 0;
}
