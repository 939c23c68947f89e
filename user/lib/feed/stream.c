// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* A pcap or pcapng stream into a feed, record by record as it arrives. */
#include <errno.h>
#include <string.h>

#include <pcap/pcap.h>

#include "feeder.h"
#include "replay/offline.h"

enum feed_end feed_pcap(struct feed *f, pcap_t *pcap, const char **msg)
{
	static char why[PCAP_ERRBUF_SIZE + 64];
	enum feed_end end = FEED_END_EOF;
	struct pcap_pkthdr *hdr;
	const unsigned char *data;
	struct to_ether conv;
	int ret, err;

	to_ether_init(&conv, pcap_datalink(pcap));
	while ((ret = pcap_next_ex(pcap, &hdr, &data)) == 1) {
		__u32 caplen = hdr->caplen, wire = hdr->len;

		data = to_ether_frame(&conv, data, &caplen, &wire);
		if (!data) {
			*msg = strerror(ENOMEM);
			end = FEED_END_FAILED;
			break;
		}
		/* opened with nanosecond precision: tv_usec holds nanoseconds */
		err = feed_frame(f, data, caplen, wire, hdr->ts.tv_sec * 1000000000ULL + hdr->ts.tv_usec);
		if (err) {
			snprintf(why, sizeof(why), "%s", strerror(-err));
			*msg = why;
			end = FEED_END_FAILED;
			break;
		}
	}
	to_ether_free(&conv);
	if (end == FEED_END_FAILED)
		return end;
	if (feed_stop)
		return FEED_END_STOPPED;
	if (ret == PCAP_ERROR) {
		snprintf(why, sizeof(why), "%s", pcap_geterr(pcap));
		*msg = why;
		return FEED_END_BROKEN;
	}
	return FEED_END_EOF;
}
