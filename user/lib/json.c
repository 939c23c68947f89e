// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <assert.h>
#include <inttypes.h>
#include <math.h>

#include "json.h"

/* Length of the valid UTF-8 sequence at p (1-4), or 0 if it is not one. */
static int utf8_len(const unsigned char *p)
{
	int n;
	unsigned int cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xC2 && p[0] <= 0xDF)
		n = 2, cp = p[0] & 0x1F;
	else if (p[0] >= 0xE0 && p[0] <= 0xEF)
		n = 3, cp = p[0] & 0x0F;
	else if (p[0] >= 0xF0 && p[0] <= 0xF4)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	for (int i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0; /* also stops at the terminating NUL */
		cp = cp << 6 | (p[i] & 0x3F);
	}
	/* overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8 */
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
	    (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return n;
}

void json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	while (*p) {
		int n = utf8_len(p);

		if (!n) {
			fputs("\\ufffd", f);
			p++;
		} else if (*p == '"' || *p == '\\') {
			fputc('\\', f);
			fputc(*p++, f);
		} else if (*p == '\n') {
			fputs("\\n", f);
			p++;
		} else if (*p == '\t') {
			fputs("\\t", f);
			p++;
		} else if (*p < 0x20 || *p == 0x7F) {
			fprintf(f, "\\u%04x", *p++);
		} else {
			fwrite(p, 1, n, f);
			p += n;
		}
	}
	fputc('"', f);
}

void json_init(struct json_writer *w, FILE *f)
{
	w->f = f;
	w->depth = 0;
	w->need_comma[0] = false;
}

/* The separator before a value, then its key when it has one. */
static void json_member(struct json_writer *w, const char *key)
{
	if (w->need_comma[w->depth])
		fputs(", ", w->f);
	w->need_comma[w->depth] = true;
	if (key) {
		json_str(w->f, key);
		fputs(": ", w->f);
	}
}

static void json_open(struct json_writer *w, const char *key, char bracket)
{
	assert(w->depth < JSON_MAX_DEPTH);
	json_member(w, key);
	fputc(bracket, w->f);
	w->need_comma[++w->depth] = false;
}

static void json_close(struct json_writer *w, char bracket)
{
	assert(w->depth > 0);
	w->depth--;
	fputc(bracket, w->f);
}

void json_object_begin(struct json_writer *w, const char *key)
{
	json_open(w, key, '{');
}

void json_object_end(struct json_writer *w)
{
	json_close(w, '}');
}

void json_array_begin(struct json_writer *w, const char *key)
{
	json_open(w, key, '[');
}

void json_array_end(struct json_writer *w)
{
	json_close(w, ']');
}

void json_u64(struct json_writer *w, const char *key, uint64_t v)
{
	json_member(w, key);
	fprintf(w->f, "%" PRIu64, v);
}

void json_i64(struct json_writer *w, const char *key, int64_t v)
{
	json_member(w, key);
	fprintf(w->f, "%" PRId64, v);
}

void json_double(struct json_writer *w, const char *key, double v, int digits)
{
	json_member(w, key);
	if (isfinite(v))
		fprintf(w->f, "%.*f", digits, v);
	else
		fputs("null", w->f);
}

void json_bool(struct json_writer *w, const char *key, bool v)
{
	json_member(w, key);
	fputs(v ? "true" : "false", w->f);
}

void json_null(struct json_writer *w, const char *key)
{
	json_member(w, key);
	fputs("null", w->f);
}

void json_string(struct json_writer *w, const char *key, const char *s)
{
	json_member(w, key);
	json_str(w->f, s);
}

void json_end(struct json_writer *w)
{
	assert(w->depth == 0);
	fputc('\n', w->f);
	fflush(w->f);
}
