// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target for the run-time settings parser (user/lib/settings.c), which
 * the CLI (--set), `roceval config` and the daemon's config file all use.
 * The input is lines of KEY=VALUE applied in order.  Besides the sanitizers
 * it checks that a rejected assignment leaves the settings as they were
 * (the running config must survive a bad line) and says why, and that what
 * settings_format() prints parses back to the same settings.
 */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#include "settings.h"

static void check_round_trip(const struct roceval_settings *s)
{
	struct roceval_settings t;
	char val[512], err[256];

	settings_defaults(&t);
	for (int i = 0; settings_keys[i]; i++) {
		assert(!settings_format(s, settings_keys[i], val, sizeof(val)));
		if (settings_set(&t, settings_keys[i], val, err, sizeof(err))) {
			fprintf(stderr, "%s=%s does not parse back: %s\n", settings_keys[i], val, err);
			abort();
		}
	}
	if (memcmp(s, &t, sizeof(t))) {
		fprintf(stderr, "settings differ after a format/parse round trip\n");
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct roceval_settings s, before;
	char *text, *line, *save;
	char err[256];

	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	settings_defaults(&s);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int rc;

		before = s;
		err[0] = '\0';
		rc = settings_assign(&s, line, err, sizeof(err));
		if (rc) {
			if (rc != -EINVAL || !err[0]) {
				fprintf(stderr, "'%s' failed with %d and no reason\n", line, rc);
				abort();
			}
			if (memcmp(&s, &before, sizeof(s))) {
				fprintf(stderr, "'%s' was rejected (%s) but changed the settings\n", line, err);
				abort();
			}
		}
		check_round_trip(&s);
	}
	free(text);
	return 0;
}
