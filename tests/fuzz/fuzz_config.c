// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target for the daemon's config file parser (user/lib/daemon/conf_file.c).
 * The input is the file, read through a memfd by the real config_load().
 * Besides the sanitizers it checks the contract the daemon relies on: a
 * rejected file says where ("PATH:LINE: reason" or "PATH: reason"), and
 * every setting an accepted file holds applies without error, since the
 * daemon applies them after the file was read and cannot report then.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>

#include "daemon/service.h"
#include "fuzz_input.h"
#include "settings.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct daemon_config c;
	struct roceval_settings s;
	char path[64], err[512], msg[256];
	int fd = fuzz_input_file(data, size, path, sizeof(path)), rc;

	if (fd < 0)
		return 0;
	config_defaults(&c);
	err[0] = '\0';
	rc = config_load(&c, path, err, sizeof(err));
	close(fd);
	if (rc) {
		if (strncmp(err, path, strlen(path)) || err[strlen(path)] != ':') {
			fprintf(stderr, "config_load failed (%d) without saying where: '%s'\n", rc, err);
			abort();
		}
		return 0;
	}
	if (c.n_ifaces < 0 || c.n_ifaces > DAEMON_MAX_IFACES || c.n_settings < 0 ||
	    c.n_settings > DAEMON_MAX_SETTINGS || !c.interval || c.interval > DAEMON_MAX_INTERVAL) {
		fprintf(stderr, "accepted a configuration out of range\n");
		abort();
	}
	settings_defaults(&s);
	for (int i = 0; i < c.n_settings; i++) {
		if (settings_set(&s, c.settings[i].key, c.settings[i].value, msg, sizeof(msg))) {
			fprintf(stderr, "accepted '%s = %s', which does not apply: %s\n", c.settings[i].key,
				c.settings[i].value, msg);
			abort();
		}
	}
	return 0;
}
