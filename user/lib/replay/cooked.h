/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef ROCEVAL_COOKED_H
#define ROCEVAL_COOKED_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/*
 * The link types replay reads, and their records as the Ethernet frames the
 * XDP program parses.  Linux cooked captures (`tcpdump -i any`: LINUX_SLL2,
 * older tools LINUX_SLL) carry no Ethernet header: one is rebuilt from the
 * cooked header, with the protocol as EtherType, the cooked header's address
 * as source MAC when it is a 6-byte one (else zero) and a zero destination.
 * Raw IP captures (RAW, IPV4, IPV6: tunnel interfaces, cloud capture
 * services) carry no link layer at all: their records get zero MACs and the
 * EtherType of their IP version.
 */
struct to_ether {
	int dlt;
	unsigned char *buf; /* the rebuilt frame */
	size_t size;
};

/* NULL for a link type roceval reads, else why not (one line, no file name). */
const char *to_ether_refused(int dlt);
void to_ether_init(struct to_ether *t, int dlt);
/*
 * Returns the record `data` (caplen bytes captured of wirelen) as an
 * Ethernet frame, updating both lengths; NULL when out of memory.  A cooked
 * record shorter than its own header becomes a frame too short for Ethernet,
 * which the program counts and leaves alone.
 */
const unsigned char *to_ether_frame(struct to_ether *t, const unsigned char *data, __u32 *caplen,
				    __u32 *wirelen);
void to_ether_free(struct to_ether *t);

#endif
