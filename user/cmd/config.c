// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdio.h>
#include <string.h>

#include "caps.h"
#include "cmd.h"
#include "live/live.h"
#include "live/loader.h"
#include "log.h"
#include "settings.h"

extern const struct command cmd_config;

static int do_config(int argc, char **argv)
{
	struct roceval_settings cfg;
	struct live_iface li;
	char err[256];
	int ret;

	if (argc < 2 || argv[1][0] == '-')
		return command_usage_error(&cmd_config, "an interface is required");
	if (require_caps(true))
		return 1;
	if (live_open_report(argv[1], &li))
		return 1;
	ret = roceval_settings_read(li.settings_fd, &cfg);
	if (ret) {
		pr_warn("%s: Couldn't read the settings: %s", argv[1], strerror(-ret));
		goto out;
	}
	/* all or nothing: the map is written once every assignment has been checked */
	for (int i = 2; i < argc; i++) {
		if (settings_assign(&cfg, argv[i], err, sizeof(err))) {
			live_close(&li);
			return command_usage_error(&cmd_config, "%s", err);
		}
	}
	if (argc > 2) {
		ret = roceval_settings_write(li.settings_fd, &cfg);
		if (!ret)
			ret = roceval_settings_read(li.settings_fd, &cfg);
		if (ret) {
			pr_warn("%s: Couldn't write the settings: %s", argv[1], strerror(-ret));
			goto out;
		}
	}
	printf("%s:\n", argv[1]);
	settings_print(stdout, &cfg, "  ");
out:
	live_close(&li);
	return ret ? 1 : 0;
}

const struct command cmd_config = {
	.name = "config",
	.args = "IFACE [KEY=VALUE]...",
	.summary = "show or change the settings of an attached interface at run time",
	.help = "Writes the settings into the pinned settings map; the program uses them from the\n"
		"next frame on, and the result is printed back.  Every assignment is checked before\n"
		"any is applied, so a bad value changes nothing.  Without assignments, prints the\n"
		"current settings.\n\n"
		"Settings:\n" SETTINGS_HELP_ARG "\n"
		"Examples:\n"
		"  roceval config eth0 pmtu=1024\n"
		"  roceval config eth0 enforce=on pkeys=0xffff,0x8001\n",
	.run = do_config,
};
