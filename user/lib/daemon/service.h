/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The daemon: keeps the configured interfaces attached (or adopts every
 * attachment of its namespace), serves the counters to Prometheus and logs
 * what moved, re-reading its configuration on SIGHUP.
 */
#ifndef ROCEVAL_DAEMON_H
#define ROCEVAL_DAEMON_H

#include <stdbool.h>

#include "conf_file.h"
#include "http.h"

/* Where each served interface's lock is: daemon-netns-INODE-IFACE.lock */
#define DAEMON_LOCK_DIR "/run/roceval"

struct daemon_options {
	const char *config_path;	/* NULL: the defaults and the options only */
	struct daemon_config overrides; /* command-line options, re-applied on every reload */
	bool have_listen, have_interval;
};

/* The file (if any), then the options over it: 0, or -EINVAL with the reason printed. */
int daemon_config_load(const struct daemon_options *o, struct daemon_config *cfg);
/* Serves cfg (as daemon_config_load() made it) until SIGTERM or SIGINT; the exit status. */
int daemon_run(const struct daemon_options *o, const struct daemon_config *cfg);

#endif
