// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json.h"
#include "numbers.h"
#include "settings.h"

#define SETTING_KEY(key, syntax, desc) #key,
const char *const settings_keys[] = { ROCEVAL_SETTINGS(SETTING_KEY) NULL };
/* "pmtu, pkeys, ..." for error messages, from the same table. */
#define SETTING_KEY_ITEM(key, syntax, desc) ", " #key
#define SETTINGS_KEY_LIST (&(ROCEVAL_SETTINGS(SETTING_KEY_ITEM))[2])

void settings_defaults(struct roceval_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->icrc_sample = 1;
	s->latency_sample = 1;
	s->trace_rate = ROCEVAL_DEFAULT_TRACE_RATE;
	s->trace_burst = ROCEVAL_DEFAULT_TRACE_BURST;
	s->conn_idle = ROCEVAL_DEFAULT_CONN_IDLE;
}

#define FAIL(...)                                  \
	do {                                       \
		snprintf(err, errlen, __VA_ARGS__); \
		return -EINVAL;                    \
	} while (0)

/* Parses "a,b,c" of numbers in [lo, hi] into out[max]; returns the count or -1. */
static int parse_list(const char *value, __u32 lo, __u32 hi, __u16 *out, int max)
{
	char tmp[256], *save, *tok;
	int n = 0;

	if (strlen(value) >= sizeof(tmp))
		return -1;
	strcpy(tmp, value);
	for (tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		__u32 v;

		if (n == max || !parse_u32(tok, hi, &v) || v < lo)
			return -1;
		out[n++] = (__u16)v;
	}
	return n ? n : -1;
}

int settings_set(struct roceval_settings *s, const char *key, const char *value, char *err,
		 size_t errlen)
{
	__u32 v;

	if (!strcmp(key, "pmtu")) {
		if (!parse_u32(value, 4096, &v) || (v && !ROCE_PMTU_IS_LEGAL(v)))
			FAIL("pmtu=%s: must be 0, 256, 512, 1024, 2048 or 4096", value);
		s->pmtu = v;
	} else if (!strcmp(key, "pkeys")) {
		__u16 keys[ROCEVAL_MAX_PKEYS];
		int n;

		if (!strcasecmp(value, "any")) {
			s->n_pkeys = 0;
			memset(s->pkeys, 0, sizeof(s->pkeys));
			return 0;
		}
		n = parse_list(value, 1, 0xFFFF, keys, ROCEVAL_MAX_PKEYS);
		if (n < 0)
			FAIL("pkeys=%s: expected 'any' or up to 16 P_Keys 0x0001-0xffff", value);
		for (int i = 0; i < n; i++)
			if (!(keys[i] & 0x7FFF))
				FAIL("pkeys=%s: a P_Key whose low 15 bits are 0 is invalid", value);
		memset(s->pkeys, 0, sizeof(s->pkeys));
		memcpy(s->pkeys, keys, n * sizeof(keys[0]));
		s->n_pkeys = n;
	} else if (!strcmp(key, "ports")) {
		__u16 ports[ROCEVAL_MAX_PORTS];
		int n;

		if (!strcasecmp(value, "none")) {
			memset(s->ports, 0, sizeof(s->ports));
			return 0;
		}
		n = parse_list(value, 1, 0xFFFF, ports, ROCEVAL_MAX_PORTS);
		if (n < 0)
			FAIL("ports=%s: expected 'none' or up to 4 UDP ports 1-65535", value);
		/* Cleared only now: a rejected value must leave the running settings alone. */
		memset(s->ports, 0, sizeof(s->ports));
		memcpy(s->ports, ports, n * sizeof(ports[0]));
	} else if (!strcmp(key, "enforce")) {
		bool b;

		if (!parse_bool(value, &b))
			FAIL("enforce=%s: expected on or off", value);
		s->enforce = b;
	} else if (!strcmp(key, "resv6")) {
		if (strcmp(value, "ignore") && strcmp(value, "check"))
			FAIL("resv6=%s: expected ignore or check", value);
		s->check_resv6 = !strcmp(value, "check");
	} else if (!strcmp(key, "rd")) {
		if (strcmp(value, "dc") && strcmp(value, "strict"))
			FAIL("rd=%s: expected dc or strict", value);
		s->rd_strict = !strcmp(value, "strict");
	} else if (!strcmp(key, "icrc_sample")) {
		if (!parse_u32(value, 1000000000, &v) || !v)
			FAIL("icrc_sample=%s: expected a whole number from 1 (check every frame) up", value);
		s->icrc_sample = v;
	} else if (!strcmp(key, "latency_sample")) {
		if (!strcmp(value, "flow"))
			v = ROCEVAL_LATENCY_PER_FLOW;
		else if (!parse_u32(value, 1000000000, &v) || !v)
			FAIL("latency_sample=%s: expected flow, or a whole number from 1 (time every request) up", value);
		s->latency_sample = v;
	} else if (!strcmp(key, "trace_rate")) {
		if (!parse_u32(value, 1000000, &v) || !v)
			FAIL("trace_rate=%s: expected samples per second, 1-1000000", value);
		s->trace_rate = v;
	} else if (!strcmp(key, "trace_burst")) {
		if (!parse_u32(value, 1000000, &v) || !v)
			FAIL("trace_burst=%s: expected a whole number, 1-1000000", value);
		s->trace_burst = v;
	} else if (!strcmp(key, "conn_idle")) {
		if (!parse_u32(value, 100u * 365 * 86400, &v))
			FAIL("conn_idle=%s: expected seconds, 0 (never) to 3153600000", value);
		s->conn_idle = v;
	} else {
		FAIL("unknown setting '%s' (settings: %s)", key, SETTINGS_KEY_LIST);
	}
	return 0;
}

int settings_assign(struct roceval_settings *s, const char *assignment, char *err, size_t errlen)
{
	char key[64];
	const char *eq = strchr(assignment, '=');

	if (!eq || eq == assignment || (size_t)(eq - assignment) >= sizeof(key)) {
		snprintf(err, errlen, "'%s': expected KEY=VALUE", assignment);
		return -EINVAL;
	}
	memcpy(key, assignment, eq - assignment);
	key[eq - assignment] = '\0';
	return settings_set(s, key, eq + 1, err, errlen);
}

static void format_list(const __u16 *v, int n, bool hex, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < n && used < len; i++)
		used += snprintf(buf + used, len - used, hex ? "%s0x%04x" : "%s%u", i ? "," : "", v[i]);
}

int settings_format(const struct roceval_settings *s, const char *key, char *buf, size_t len)
{
	if (!strcmp(key, "pmtu")) {
		snprintf(buf, len, "%u", s->pmtu);
	} else if (!strcmp(key, "pkeys")) {
		if (!s->n_pkeys)
			snprintf(buf, len, "any");
		else
			format_list(s->pkeys, s->n_pkeys, true, buf, len);
	} else if (!strcmp(key, "ports")) {
		int n = 0;

		while (n < ROCEVAL_MAX_PORTS && s->ports[n])
			n++;
		if (!n)
			snprintf(buf, len, "none");
		else
			format_list(s->ports, n, false, buf, len);
	} else if (!strcmp(key, "enforce")) {
		snprintf(buf, len, "%s", s->enforce ? "on" : "off");
	} else if (!strcmp(key, "resv6")) {
		snprintf(buf, len, "%s", s->check_resv6 ? "check" : "ignore");
	} else if (!strcmp(key, "rd")) {
		snprintf(buf, len, "%s", s->rd_strict ? "strict" : "dc");
	} else if (!strcmp(key, "icrc_sample")) {
		snprintf(buf, len, "%u", s->icrc_sample ? s->icrc_sample : 1);
	} else if (!strcmp(key, "latency_sample")) {
		if (s->latency_sample == ROCEVAL_LATENCY_PER_FLOW)
			snprintf(buf, len, "flow");
		else
			snprintf(buf, len, "%u", s->latency_sample ? s->latency_sample : 1);
	} else if (!strcmp(key, "trace_rate")) {
		snprintf(buf, len, "%u", s->trace_rate);
	} else if (!strcmp(key, "trace_burst")) {
		snprintf(buf, len, "%u", s->trace_burst);
	} else if (!strcmp(key, "conn_idle")) {
		snprintf(buf, len, "%u", s->conn_idle);
	} else {
		return -EINVAL;
	}
	return 0;
}

void settings_print(FILE *f, const struct roceval_settings *s, const char *indent)
{
	char val[160];
	int width = 0;

	for (int i = 0; settings_keys[i]; i++)
		if ((int)strlen(settings_keys[i]) > width)
			width = strlen(settings_keys[i]);
	for (int i = 0; settings_keys[i]; i++) {
		settings_format(s, settings_keys[i], val, sizeof(val));
		fprintf(f, "%s%-*s %s\n", indent, width, settings_keys[i], val);
	}
}

void settings_json(struct json_writer *w, const char *key, const struct roceval_settings *s)
{
	char val[160];

	json_object_begin(w, key);
	for (int i = 0; settings_keys[i]; i++) {
		settings_format(s, settings_keys[i], val, sizeof(val));
		json_string(w, settings_keys[i], val);
	}
	json_object_end(w);
}

void settings_usage(FILE *f)
{
	fputs(ROCEVAL_SETTINGS(SETTING_HELP_ARG), f);
}
