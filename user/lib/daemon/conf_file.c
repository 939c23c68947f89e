// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "conf_file.h"
#include "numbers.h"
#include "settings.h"

#define FAIL(...)                                   \
	do {                                        \
		snprintf(err, errlen, __VA_ARGS__); \
		return -EINVAL;                     \
	} while (0)

void config_defaults(struct daemon_config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->listen, sizeof(c->listen), "%s", DAEMON_DEFAULT_LISTEN);
	config_parse_listen(c->listen, &c->listen_addr, &c->listen_len);
	c->interval = DAEMON_DEFAULT_INTERVAL;
	c->mode = LIVE_MODE_AUTO;
	strcpy(c->json_log, "-");
}

int config_parse_listen(const char *s, struct sockaddr_storage *addr, socklen_t *len)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon;
	size_t hlen;
	__u32 port;

	memset(addr, 0, sizeof(*addr));
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':')
			return -EINVAL;
		hlen = close - s - 1;
		colon = close + 1;
		s++;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -EINVAL;
		hlen = colon - s;
	}
	if (!hlen || hlen >= sizeof(host) || !parse_u32(colon + 1, 65535, &port) || !port)
		return -EINVAL;
	memcpy(host, s, hlen);
	host[hlen] = '\0';
	if (inet_pton(AF_INET, host, &((struct sockaddr_in *)addr)->sin_addr) == 1) {
		struct sockaddr_in *sin = (struct sockaddr_in *)addr;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		*len = sizeof(*sin);
	} else if (inet_pton(AF_INET6, host, &((struct sockaddr_in6 *)addr)->sin6_addr) == 1) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)addr;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		*len = sizeof(*sin6);
	} else {
		return -EINVAL;
	}
	return 0;
}

/* The kernel's dev_valid_name(): the name also becomes a path component here. */
static bool is_setting(const char *key)
{
	for (int i = 0; settings_keys[i]; i++)
		if (!strcmp(settings_keys[i], key))
			return true;
	return false;
}

int config_set(struct daemon_config *c, const char *key, const char *value, char *err,
	       size_t errlen)
{
	if (!*value)
		FAIL("%s: a value is required", key);
	if (!strcmp(key, "interface")) {
		if (!live_ifname_valid(value))
			FAIL("interface = %s: not a valid interface name", value);
		for (int i = 0; i < c->n_ifaces; i++)
			if (!strcmp(c->ifaces[i], value))
				FAIL("interface = %s: listed twice", value);
		if (c->n_ifaces == DAEMON_MAX_IFACES)
			FAIL("interface = %s: at most %d interfaces", value, DAEMON_MAX_IFACES);
		strcpy(c->ifaces[c->n_ifaces++], value);
	} else if (!strcmp(key, "listen")) {
		if (strlen(value) >= sizeof(c->listen))
			FAIL("listen = %s: too long", value);
		if (!strcasecmp(value, "none")) {
			c->listen_off = true;
		} else {
			if (config_parse_listen(value, &c->listen_addr, &c->listen_len))
				FAIL("listen = %s: expected IPv4:PORT, [IPv6]:PORT or none", value);
			c->listen_off = false;
		}
		strcpy(c->listen, value);
	} else if (!strcmp(key, "interval")) {
		__u32 v;

		if (!parse_u32(value, DAEMON_MAX_INTERVAL, &v) || !v)
			FAIL("interval = %s: expected whole seconds, 1-%d", value, DAEMON_MAX_INTERVAL);
		c->interval = v;
	} else if (!strcmp(key, "mode")) {
		if (!live_mode_parse(value, &c->mode))
			FAIL("mode = %s: expected native, generic, auto or tc", value);
	} else if (!strcmp(key, "detach_on_exit")) {
		bool b;

		if (!parse_bool(value, &b))
			FAIL("detach_on_exit = %s: expected yes or no", value);
		c->detach_on_exit = b;
	} else if (!strcmp(key, "json_log")) {
		if (strlen(value) >= sizeof(c->json_log))
			FAIL("json_log: path too long");
		strcpy(c->json_log, value);
	} else if (is_setting(key)) {
		struct roceval_settings scratch;
		char msg[256];

		/* Validated now so a bad value is reported with its line, applied later. */
		settings_defaults(&scratch);
		if (settings_set(&scratch, key, value, msg, sizeof(msg)))
			FAIL("%s", msg);
		if (c->n_settings == DAEMON_MAX_SETTINGS)
			FAIL("%s: too many settings lines", key);
		if (strlen(value) >= sizeof(c->settings[0].value))
			FAIL("%s: value too long", key);
		strcpy(c->settings[c->n_settings].key, key);
		strcpy(c->settings[c->n_settings].value, value);
		c->n_settings++;
	} else {
		FAIL("unknown key '%s' (see 'roceval help daemon')", key);
	}
	return 0;
}

static char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

/* A '#' at the start of a line or after white space starts a comment; elsewhere it is data. */
static void strip_comment(char *s)
{
	for (char *p = s; *p; p++) {
		if (*p == '#' && (p == s || isspace((unsigned char)p[-1]))) {
			*p = '\0';
			return;
		}
	}
}

int config_load(struct daemon_config *c, const char *path, char *err, size_t errlen)
{
	char line[1024], msg[384];
	int lineno = 0, ret = 0;
	FILE *f;

	f = fopen(path, "r");
	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return ret;
	}
	while (fgets(line, sizeof(line), f)) {
		char *key, *value, *eq;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, errlen, "%s:%d: line longer than %zu bytes", path, lineno, sizeof(line) - 2);
			ret = -EINVAL;
			break;
		}
		strip_comment(line);
		key = trim(line);
		if (!*key)
			continue;
		eq = strchr(key, '=');
		if (!eq) {
			snprintf(err, errlen, "%s:%d: expected 'key = value', found '%s'", path, lineno, key);
			ret = -EINVAL;
			break;
		}
		*eq = '\0';
		value = trim(eq + 1);
		key = trim(key);
		if (config_set(c, key, value, msg, sizeof(msg))) {
			snprintf(err, errlen, "%s:%d: %s", path, lineno, msg);
			ret = -EINVAL;
			break;
		}
	}
	if (!ret && ferror(f)) {
		snprintf(err, errlen, "%s: read error", path);
		ret = -EIO;
	}
	fclose(f);
	return ret;
}

void config_apply_settings(const struct daemon_config *c, struct roceval_settings *s)
{
	char msg[256];

	/* Every value passed settings_set() when the file was read: this cannot fail. */
	for (int i = 0; i < c->n_settings; i++)
		settings_set(s, c->settings[i].key, c->settings[i].value, msg, sizeof(msg));
}
