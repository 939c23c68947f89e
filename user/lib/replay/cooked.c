// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>
#include <linux/if_ether.h>
#include <pcap/pcap.h>

#include "cooked.h"
#include "roceval.h"
#include "roceval_proto.h"

#ifndef DLT_LINUX_SLL2
#define DLT_LINUX_SLL2 276
#endif

/*
 * Where the fields are in the two cooked headers (libpcap's pcap/sll.h,
 * all big-endian): LINUX_SLL is packet type, ARPHRD type, address length,
 * 8 address bytes, protocol (16 bytes); LINUX_SLL2 is protocol, reserved,
 * interface index, ARPHRD type, packet type, address length, 8 address
 * bytes (20 bytes).
 */
struct cooked_layout {
	unsigned int hdr_len, proto_off, halen_off, halen_size, addr_off;
};

static const struct cooked_layout sll = { 16, 14, 4, 2, 6 };
static const struct cooked_layout sll2 = { 20, 0, 11, 1, 12 };

const char *to_ether_refused(int dlt)
{
	static char why[160];
	char num[16];

	if (dlt == DLT_EN10MB || dlt == DLT_LINUX_SLL || dlt == DLT_LINUX_SLL2 || dlt == DLT_RAW || dlt == DLT_IPV4 ||
	    dlt == DLT_IPV6)
		return NULL;
	snprintf(num, sizeof(num), "%d", dlt);
	snprintf(why, sizeof(why),
		 "link type %s is not Ethernet; roceval reads Ethernet, Linux cooked (LINUX_SLL, LINUX_SLL2) "
		 "and raw IP (RAW, IPV4, IPV6) captures only",
		 pcap_datalink_val_to_name(dlt) ?: num);
	return why;
}

void to_ether_init(struct to_ether *t, int dlt)
{
	memset(t, 0, sizeof(*t));
	t->dlt = dlt;
}

/* The frame buffer, `len` bytes at least; NULL when out of memory. */
static unsigned char *frame_room(struct to_ether *t, size_t len)
{
	if (t->size < len) {
		unsigned char *grown = realloc(t->buf, len);

		if (!grown)
			return NULL;
		t->buf = grown;
		t->size = len;
	}
	return t->buf;
}

static const unsigned char *cooked_frame(struct to_ether *t, const unsigned char *data, __u32 *caplen,
					 __u32 *wirelen)
{
	const struct cooked_layout *l = t->dlt == DLT_LINUX_SLL ? &sll : &sll2;
	unsigned char *eth;
	unsigned int halen;
	__u32 body;

	if (*caplen < l->hdr_len) {
		*caplen = 0;
		*wirelen = *wirelen > l->hdr_len ? *wirelen - l->hdr_len : 0;
		return data;
	}
	body = *caplen - l->hdr_len;
	eth = frame_room(t, ETH_HLEN + body);
	if (!eth)
		return NULL;
	memset(eth, 0, 2 * ETH_ALEN);
	/* The address is the sender's link-layer address: a source MAC when it has a MAC's length. */
	halen = l->halen_size == 2 ? (data[l->halen_off] << 8 | data[l->halen_off + 1]) : data[l->halen_off];
	if (halen == ETH_ALEN)
		memcpy(eth + ETH_ALEN, data + l->addr_off, ETH_ALEN);
	/*
	 * The protocol becomes the EtherType as it is.  A VLAN tag the kernel
	 * left in the data keeps its 0x8100 here and its TCI after it, so the
	 * frame comes out tagged; Linux's own protocol numbers (below 0x600:
	 * 802.2 LLC, raw 802.3, CAN, netlink...) read as an 802.3 length, which
	 * the program passes as not RoCE.
	 */
	memcpy(eth + 2 * ETH_ALEN, data + l->proto_off, 2);
	memcpy(eth + ETH_HLEN, data + l->hdr_len, body);
	*caplen = ETH_HLEN + body;
	*wirelen = *wirelen >= l->hdr_len ? *wirelen - l->hdr_len + ETH_HLEN : *caplen;
	return eth;
}

/*
 * The EtherType of a raw IP record: its link type's, or for RAW, which
 * carries both, the IP version of its first nibble.  0, an 802.3 length
 * the program passes as not RoCE, when RAW's record is empty or neither.
 */
static __u16 raw_ethertype(int dlt, const unsigned char *data, __u32 caplen)
{
	if (dlt == DLT_IPV4 || (dlt == DLT_RAW && caplen && data[0] >> 4 == 4))
		return ETH_P_IP;
	if (dlt == DLT_IPV6 || (dlt == DLT_RAW && caplen && data[0] >> 4 == 6))
		return ETH_P_IPV6;
	return 0;
}

static const unsigned char *raw_frame(struct to_ether *t, const unsigned char *data, __u32 *caplen,
				      __u32 *wirelen)
{
	__u16 proto = raw_ethertype(t->dlt, data, *caplen);
	unsigned char *eth = frame_room(t, (size_t)ETH_HLEN + *caplen);

	if (!eth)
		return NULL;
	memset(eth, 0, 2 * ETH_ALEN);
	eth[2 * ETH_ALEN] = proto >> 8;
	eth[2 * ETH_ALEN + 1] = proto & 0xFF;
	memcpy(eth + ETH_HLEN, data, *caplen);
	*caplen += ETH_HLEN;
	/* A wire length beyond any frame stays one: it neither wraps nor becomes "unknown". */
	*wirelen = *wirelen < ROCEVAL_WIRE_UNKNOWN - 1 - ETH_HLEN ? *wirelen + ETH_HLEN : ROCEVAL_WIRE_UNKNOWN - 1;
	return eth;
}

const unsigned char *to_ether_frame(struct to_ether *t, const unsigned char *data, __u32 *caplen,
				    __u32 *wirelen)
{
	if (t->dlt == DLT_LINUX_SLL || t->dlt == DLT_LINUX_SLL2)
		return cooked_frame(t, data, caplen, wirelen);
	if (t->dlt == DLT_RAW || t->dlt == DLT_IPV4 || t->dlt == DLT_IPV6)
		return raw_frame(t, data, caplen, wirelen);
	return data;
}

void to_ether_free(struct to_ether *t)
{
	free(t->buf);
	t->buf = NULL;
	t->size = 0;
}
