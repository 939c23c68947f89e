// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * What the command line and the daemon's configuration accept as an
 * interface name and an attach mode: no BPF here, so the configuration
 * parser (and its fuzzer) need nothing else.
 */
#include <ctype.h>
#include <string.h>

#include "iface.h"

bool live_ifname_valid(const char *name)
{
	/* the kernel's rule (dev_valid_name()), and no leading dot: listings skip those */
	if (!*name || strlen(name) >= IF_NAMESIZE || name[0] == '.')
		return false;
	for (const char *p = name; *p; p++)
		if (*p == '/' || *p == ':' || isspace((unsigned char)*p))
			return false;
	return true;
}

/* Each mode's name, then the name ip-link and xdp-loader give it, if another. */
static const char *const mode_names[][2] = {
	[LIVE_MODE_AUTO] = { "auto", NULL },
	[LIVE_MODE_NATIVE] = { "native", "drv" },
	[LIVE_MODE_GENERIC] = { "generic", "skb" },
	[LIVE_MODE_TC] = { "tc", NULL },
	[LIVE_MODE_FEED] = { "feed", NULL },
};

const char *live_mode_name(enum live_mode mode)
{
	return (unsigned int)mode < sizeof(mode_names) / sizeof(mode_names[0]) ? mode_names[mode][0] : "auto";
}

bool live_mode_parse(const char *s, enum live_mode *mode)
{
	/* a feed is not a mode an interface can be attached in */
	for (unsigned int m = 0; m < LIVE_MODE_FEED; m++) {
		if (!strcmp(s, mode_names[m][0]) || (mode_names[m][1] && !strcmp(s, mode_names[m][1]))) {
			*mode = m;
			return true;
		}
	}
	return false;
}

const char *live_hook_name(enum live_mode mode)
{
	return mode == LIVE_MODE_TC ? "tc" : mode == LIVE_MODE_FEED ? "feed" : "xdp";
}

const char *live_pcp_source_name(enum live_pcp_source source)
{
	return source == LIVE_PCP_RX_META ? "rx_metadata" : source == LIVE_PCP_SKB ? "skb_tag" : "frame_tag";
}
