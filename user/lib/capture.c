// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * pcap: https://www.ietf.org/archive/id/draft-ietf-opsawg-pcap-04.html
 * pcapng: https://www.ietf.org/archive/id/draft-ietf-opsawg-pcapng-02.html
 * Both in the host's byte order, which their magic numbers tell readers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"

#define PCAP_MAGIC_US 0xA1B2C3D4
#define PCAPNG_SHB 0x0A0D0D0A
#define PCAPNG_IDB 0x00000001
#define PCAPNG_EPB 0x00000006
#define PCAPNG_BYTE_ORDER 0x1A2B3C4D
#define PCAPNG_OPT_END 0
#define PCAPNG_OPT_COMMENT 1
#define PCAPNG_OPT_SHB_USERAPPL 4
#define PCAPNG_OPT_IF_NAME 2
#define PCAPNG_OPT_IF_TSRESOL 9
#define LINKTYPE_ETHERNET 1
#define SNAPLEN_CLASSIC 65535

static size_t pad4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

/* Appends one option (code, length, value padded to 4) at buf[*off]. */
static void pcapng_opt(uint8_t *buf, size_t *off, uint16_t code, const void *val, uint16_t len)
{
	memcpy(buf + *off, &code, 2);
	memcpy(buf + *off + 2, &len, 2);
	memcpy(buf + *off + 4, val, len);
	memset(buf + *off + 4 + len, 0, pad4(len) - len);
	*off += 4 + pad4(len);
}

static void pcapng_opt_end(uint8_t *buf, size_t *off)
{
	memset(buf + *off, 0, 4);
	*off += 4;
}

/* A block: type, total length, body, total length again. */
static int pcapng_block(FILE *f, uint32_t type, const uint8_t *body, size_t len)
{
	uint32_t total = 12 + len;

	if (fwrite(&type, 4, 1, f) != 1 || fwrite(&total, 4, 1, f) != 1 ||
	    (len && fwrite(body, len, 1, f) != 1) || fwrite(&total, 4, 1, f) != 1)
		return -EIO;
	return 0;
}

static int pcapng_start(FILE *f, const char *app, const char *const *ifnames, unsigned int n)
{
	uint32_t magic = PCAPNG_BYTE_ORDER;
	uint16_t major = 1, minor = 0;
	int64_t section_len = -1; /* not known */
	uint8_t buf[256];
	size_t off;
	int err;

	memcpy(buf, &magic, 4);
	memcpy(buf + 4, &major, 2);
	memcpy(buf + 6, &minor, 2);
	memcpy(buf + 8, &section_len, 8);
	off = 16;
	pcapng_opt(buf, &off, PCAPNG_OPT_SHB_USERAPPL, app, strnlen(app, 128));
	pcapng_opt_end(buf, &off);
	err = pcapng_block(f, PCAPNG_SHB, buf, off);
	for (unsigned int i = 0; i < n && !err; i++) {
		uint16_t link = LINKTYPE_ETHERNET, reserved = 0;
		uint32_t snaplen = 0; /* no limit */
		uint8_t tsresol = 9;  /* nanoseconds */

		memcpy(buf, &link, 2);
		memcpy(buf + 2, &reserved, 2);
		memcpy(buf + 4, &snaplen, 4);
		off = 8;
		pcapng_opt(buf, &off, PCAPNG_OPT_IF_NAME, ifnames[i], strnlen(ifnames[i], 128));
		pcapng_opt(buf, &off, PCAPNG_OPT_IF_TSRESOL, &tsresol, 1);
		pcapng_opt_end(buf, &off);
		err = pcapng_block(f, PCAPNG_IDB, buf, off);
	}
	return err;
}

int capture_start(struct capture *c, FILE *f, bool pcapng, const char *app, const char *const *ifnames,
		  unsigned int n_ifnames)
{
	uint32_t hdr[6] = { PCAP_MAGIC_US, 0x00040002 /* version 2.4 */, 0, 0, SNAPLEN_CLASSIC,
			    LINKTYPE_ETHERNET };

	c->f = f;
	c->pcapng = pcapng;
	if (pcapng)
		return pcapng_start(f, app, ifnames, n_ifnames);
	return fwrite(hdr, sizeof(hdr), 1, f) == 1 ? 0 : -EIO;
}

static int pcapng_packet(FILE *f, uint32_t ifidx, uint64_t ts_ns, const uint8_t *data, uint32_t cap,
			 uint32_t len, const char *comment)
{
	size_t clen = comment ? strnlen(comment, 60000) : 0, off;
	uint32_t hi = ts_ns >> 32, lo = (uint32_t)ts_ns;
	uint8_t *buf = malloc(20 + pad4(cap) + 4 + pad4(clen) + 4);
	int err;

	if (!buf)
		return -ENOMEM;
	memcpy(buf, &ifidx, 4);
	memcpy(buf + 4, &hi, 4);
	memcpy(buf + 8, &lo, 4);
	memcpy(buf + 12, &cap, 4);
	memcpy(buf + 16, &len, 4);
	memcpy(buf + 20, data, cap);
	memset(buf + 20 + cap, 0, pad4(cap) - cap);
	off = 20 + pad4(cap);
	if (clen)
		pcapng_opt(buf, &off, PCAPNG_OPT_COMMENT, comment, clen);
	pcapng_opt_end(buf, &off);
	err = pcapng_block(f, PCAPNG_EPB, buf, off);
	free(buf);
	return err;
}

int capture_frame(struct capture *c, uint32_t ifidx, uint64_t ts_ns, const uint8_t *data, uint32_t cap,
		  uint32_t len, const char *comment)
{
	uint32_t rec[4] = { ts_ns / 1000000000, ts_ns % 1000000000 / 1000, cap, len };

	if (c->pcapng)
		return pcapng_packet(c->f, ifidx, ts_ns, data, cap, len, comment);
	if (cap > SNAPLEN_CLASSIC)
		rec[2] = cap = SNAPLEN_CLASSIC;
	if (fwrite(rec, sizeof(rec), 1, c->f) != 1 || (cap && fwrite(data, cap, 1, c->f) != 1))
		return -EIO;
	return 0;
}
