/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The daemon's configuration: `key = value` lines, `#` comments.  Run-time
 * settings keys (ROCEVAL_SETTINGS) are kept as written and applied with
 * settings_set(), so each setting keeps its one definition in settings.c.
 */
#ifndef ROCEVAL_CONFIG_H
#define ROCEVAL_CONFIG_H

#include <limits.h>
#include <net/if.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <linux/types.h>

#include "live/live.h"
#include "roceval.h"

#define DAEMON_MAX_IFACES 64
#define DAEMON_MAX_SETTINGS 32
#define DAEMON_DEFAULT_CONFIG "/etc/roceval/roceval.conf"
#define DAEMON_DEFAULT_LISTEN "127.0.0.1:9435"
#define DAEMON_DEFAULT_INTERVAL 10
#define DAEMON_MAX_INTERVAL 86400

struct daemon_config {
	char ifaces[DAEMON_MAX_IFACES][IF_NAMESIZE];
	int n_ifaces; /* 0: adopt every existing attachment */
	char listen[64]; /* as written: ADDR:PORT or "none" */
	bool listen_off;
	struct sockaddr_storage listen_addr;
	socklen_t listen_len;
	unsigned int interval; /* seconds between JSON lines */
	enum live_mode mode;
	bool detach_on_exit;
	char json_log[PATH_MAX]; /* "-" (stdout), "none" or a file appended to */
	int n_settings;
	struct {
		char key[32];
		char value[160];
	} settings[DAEMON_MAX_SETTINGS];
};

void config_defaults(struct daemon_config *c);
/* One `key = value` (file line or command-line option). 0, or -EINVAL with the reason in err. */
int config_set(struct daemon_config *c, const char *key, const char *value, char *err, size_t errlen);
/* Reads a file into c (on top of what c holds). 0, or -errno with "PATH:LINE: reason" in err. */
int config_load(struct daemon_config *c, const char *path, char *err, size_t errlen);
/* Applies the settings keys the configuration names, in order, to s. */
void config_apply_settings(const struct daemon_config *c, struct roceval_settings *s);
/* ADDR:PORT with a numeric IPv4 or [IPv6] address. */
int config_parse_listen(const char *s, struct sockaddr_storage *addr, socklen_t *len);

#endif
