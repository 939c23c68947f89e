// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json.h"
#include "numbers.h"
#include "settings.h"

enum setting_kind { KIND_NUMBER, KIND_DURATION, KIND_WORDS, KIND_SWITCH, KIND_LIST };

/* A row of roceval_settings.h, as the parser and the printer read it. */
struct setting {
	const char *key, *expect;
	enum setting_kind kind;
	size_t off;	/* the __u32, or the list's __u16[] */
	size_t n_off;	/* the list's count */
	__u32 def, min, max, cap;
	const char *word; /* NUMBER: the name of word_value; WORDS: "a|b"; LIST: the empty list */
	__u32 word_value;
	unsigned long long unit_ns; /* DURATION */
	bool hex;		    /* LIST */
	const char *(*check)(__u32 v);
};

/* pmtu: 0, or a PMTU IBA defines. */
static const char *setting_pmtu_check(__u32 v)
{
	return v && !ROCE_PMTU_IS_LEGAL(v) ? "must be 0, 256, 512, 1024, 2048 or 4096" : NULL;
}

/* pkeys: the low 15 bits are the partition, and partition 0 is nobody's. */
static const char *setting_pkey_check(__u32 v)
{
	return v & 0x7FFF ? NULL : "a P_Key whose low 15 bits are 0 is invalid";
}

#define FIELD(f) offsetof(struct roceval_settings, f)
#define ROW_NUMBER(k, f, d, lo, hi, w, wv, chk, syntax, desc, exp)                                     \
	{ .key = #k, .expect = exp, .kind = KIND_NUMBER, .off = FIELD(f), .def = d, .min = lo, .max = hi, \
	  .word = w, .word_value = wv, .check = chk },
#define ROW_DURATION(k, f, unit, d, hi, syntax, desc, exp)                                    \
	{ .key = #k, .expect = exp, .kind = KIND_DURATION, .off = FIELD(f), .def = d, .max = hi, \
	  .unit_ns = unit },
#define ROW_WORDS(k, f, words, desc, exp) \
	{ .key = #k, .expect = exp, .kind = KIND_WORDS, .off = FIELD(f), .word = words },
#define ROW_SWITCH(k, f, d, desc, exp) \
	{ .key = #k, .expect = exp, .kind = KIND_SWITCH, .off = FIELD(f), .def = d },
#define ROW_LIST(k, f, capacity, lo, hi, empty, hx, chk, syntax, desc, exp)                                  \
	{ .key = #k, .expect = exp, .kind = KIND_LIST, .off = FIELD(f), .n_off = FIELD(n_##f), .min = lo, \
	  .max = hi, .cap = capacity, .word = empty, .hex = hx, .check = chk },
#define NOTHING(...)
#define LIST_MAX 64
#define LIST_FITS(k, f, capacity, ...) \
	_Static_assert(capacity <= LIST_MAX, #k ": a longer list than parse_value() holds");
ROCEVAL_SETTINGS(NOTHING, NOTHING, NOTHING, NOTHING, LIST_FITS)

static const struct setting table[] = {
	ROCEVAL_SETTINGS(ROW_NUMBER, ROW_DURATION, ROW_WORDS, ROW_SWITCH, ROW_LIST)
};
#define NSETTINGS (sizeof(table) / sizeof(table[0]))

#define KEY_NUMBER(k, ...) #k,
const char *const settings_keys[] = {
	ROCEVAL_SETTINGS(KEY_NUMBER, KEY_NUMBER, KEY_NUMBER, KEY_NUMBER, KEY_NUMBER) NULL
};
/* "pmtu, pkeys, ..." for error messages, from the same table. */
#define KEY_ITEM(k, ...) ", " #k
#define SETTINGS_KEY_LIST (&(ROCEVAL_SETTINGS(KEY_ITEM, KEY_ITEM, KEY_ITEM, KEY_ITEM, KEY_ITEM))[2])

static __u32 *u32_of(struct roceval_settings *s, const struct setting *d)
{
	return (__u32 *)((char *)s + d->off);
}

static __u32 u32_in(const struct roceval_settings *s, const struct setting *d)
{
	return *(const __u32 *)((const char *)s + d->off);
}

void settings_derive(struct roceval_settings *s)
{
	s->cc_on = (s->n_dscp || s->cnp_dscp != ROCEVAL_SETTING_ANY || s->pcp != ROCEVAL_SETTING_ANY ||
		    s->cnp_pcp != ROCEVAL_SETTING_ANY || s->ect_required ? ROCEVAL_CC_QOS : 0) |
		   (s->cnp_gap ? ROCEVAL_CC_GAP : 0) | (s->cnp_delay ? ROCEVAL_CC_CE : 0) |
		   (s->cnp_reaction ? ROCEVAL_CC_REACTION : 0);
}

void settings_defaults(struct roceval_settings *s)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < NSETTINGS; i++)
		if (table[i].kind != KIND_LIST)
			*u32_of(s, &table[i]) = table[i].def;
}

/* The index of `value` among the words "a|b|c", or -1. */
static int word_index(const char *words, const char *value)
{
	size_t len = strlen(value);
	int i = 0;

	for (const char *w = words; w; w = strchr(w, '|'), w = w ? w + 1 : NULL, i++)
		if (!strncmp(w, value, len) && (w[len] == '|' || !w[len]))
			return len ? i : -1;
	return -1;
}

/* Copies the index-th of the words "a|b|c" into buf. */
static void word_at(const char *words, __u32 index, char *buf, size_t len)
{
	const char *w = words, *end;

	while (index-- && (end = strchr(w, '|')))
		w = end + 1;
	end = strchr(w, '|');
	snprintf(buf, len, "%.*s", end ? (int)(end - w) : (int)strlen(w), w);
}

/* A whole number of the row's units: bare, or with ns, us, ms or s. */
static bool parse_duration(const struct setting *d, const char *value, __u32 *out)
{
	static const struct {
		const char *suffix;
		unsigned long long ns;
	} units[] = { { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 } };
	unsigned long long max_ns = (unsigned long long)d->max * d->unit_ns;
	char num[32];
	uint64_t v;

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t len = strlen(value), slen = strlen(units[i].suffix);

		if (len <= slen || len - slen >= sizeof(num) || strcmp(value + len - slen, units[i].suffix))
			continue;
		snprintf(num, sizeof(num), "%.*s", (int)(len - slen), value);
		if (!parse_u64(num, max_ns / units[i].ns, &v) || (v * units[i].ns) % d->unit_ns)
			return false;
		*out = v * units[i].ns / d->unit_ns;
		return true;
	}
	if (!parse_u64(value, d->max, &v))
		return false;
	*out = v;
	return true;
}

/* v of the row's units in the largest unit that divides it, as parse_duration() reads it back. */
static void format_duration(const struct setting *d, __u32 v, char *buf, size_t len)
{
	static const struct {
		const char *suffix;
		unsigned long long ns;
	} units[] = { { "s", 1000000000 }, { "ms", 1000000 }, { "us", 1000 }, { "ns", 1 } };
	unsigned long long ns = (unsigned long long)v * d->unit_ns;
	size_t i = 0;

	if (!ns) {
		snprintf(buf, len, "0");
		return;
	}
	while (ns % units[i].ns)
		i++;
	snprintf(buf, len, "%llu%s", ns / units[i].ns, units[i].suffix);
}

/* "a,b,c" of numbers in the row's range into out[cap]; the count or -1. */
static int parse_list(const struct setting *d, const char *value, __u16 *out, const char **why)
{
	char tmp[256], *save, *tok;
	int n = 0;

	if (strlen(value) >= sizeof(tmp))
		return -1;
	strcpy(tmp, value);
	for (tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		__u32 v;

		if ((__u32)n == d->cap || !parse_u32(tok, d->max, &v) || v < d->min)
			return -1;
		out[n++] = (__u16)v;
	}
	for (int i = 0; i < n && d->check; i++)
		if ((*why = d->check(out[i])))
			return -1;
	return n ? n : -1;
}

/* The value into s, or false with *why the reason when it is not the row's expect. */
static bool parse_value(const struct setting *d, struct roceval_settings *s, const char *value,
			const char **why)
{
	__u16 list[LIST_MAX];
	__u32 v = 0;
	bool b;
	int n;

	switch (d->kind) {
	case KIND_NUMBER:
		if (d->word && !strcmp(value, d->word))
			v = d->word_value;
		else if (!parse_u32(value, d->max, &v) || v < d->min || (d->check && (*why = d->check(v))))
			return false;
		break;
	case KIND_DURATION:
		if (!parse_duration(d, value, &v))
			return false;
		break;
	case KIND_WORDS:
		n = word_index(d->word, value);
		if (n < 0)
			return false;
		v = n;
		break;
	case KIND_SWITCH:
		if (!parse_bool(value, &b))
			return false;
		v = b;
		break;
	case KIND_LIST:
		n = strcasecmp(value, d->word) ? parse_list(d, value, list, why) : 0;
		if (n < 0)
			return false;
		/* Written only now: a rejected value must leave the running settings alone. */
		memset((char *)s + d->off, 0, d->cap * sizeof(__u16));
		memcpy((char *)s + d->off, list, n * sizeof(__u16));
		*(__u32 *)((char *)s + d->n_off) = n;
		return true;
	}
	*u32_of(s, d) = v;
	return true;
}

static const struct setting *find(const char *key)
{
	for (size_t i = 0; i < NSETTINGS; i++)
		if (!strcmp(table[i].key, key))
			return &table[i];
	return NULL;
}

int settings_set(struct roceval_settings *s, const char *key, const char *value, char *err,
		 size_t errlen)
{
	const struct setting *d = find(key);
	const char *why = NULL;

	if (!d) {
		snprintf(err, errlen, "unknown setting '%s' (settings: %s)", key, SETTINGS_KEY_LIST);
		return -EINVAL;
	}
	if (!parse_value(d, s, value, &why)) {
		snprintf(err, errlen, "%s=%s: %s", key, value, why ?: d->expect);
		return -EINVAL;
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

static void format_list(const struct setting *d, const struct roceval_settings *s, char *buf, size_t len)
{
	const __u16 *v = (const __u16 *)((const char *)s + d->off);
	__u32 n = *(const __u32 *)((const char *)s + d->n_off);
	size_t used = 0;

	if (!n)
		snprintf(buf, len, "%s", d->word);
	for (__u32 i = 0; i < n && i < d->cap && used < len; i++)
		used += snprintf(buf + used, len - used, d->hex ? "%s0x%04x" : "%s%u", i ? "," : "", v[i]);
}

int settings_format(const struct roceval_settings *s, const char *key, char *buf, size_t len)
{
	const struct setting *d = find(key);
	__u32 v;

	if (!d)
		return -EINVAL;
	v = d->kind == KIND_LIST ? 0 : u32_in(s, d);
	switch (d->kind) {
	case KIND_NUMBER:
		if (d->word && v == d->word_value)
			snprintf(buf, len, "%s", d->word);
		else
			snprintf(buf, len, "%u", v < d->min ? d->min : v);
		break;
	case KIND_DURATION:
		format_duration(d, v, buf, len);
		break;
	case KIND_WORDS:
		word_at(d->word, v, buf, len);
		break;
	case KIND_SWITCH:
		snprintf(buf, len, "%s", v ? "on" : "off");
		break;
	case KIND_LIST:
		format_list(d, s, buf, len);
		break;
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
	fputs(SETTINGS_HELP_ARG, f);
}
