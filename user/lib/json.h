/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The one JSON writer every --json output and the daemon's log lines go
 * through.  Every string, keys included, is escaped by json_str(), so the
 * output parses whatever came from outside (interface names, file names,
 * messages).  The writer places the commas and colons: callers say what, not
 * how, and no two outputs drift apart in punctuation.
 */
#ifndef ROCEVAL_JSON_H
#define ROCEVAL_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Writes s as a quoted JSON string: '"', '\\' and control characters escaped,
 * valid UTF-8 copied, each byte that is not valid UTF-8 written as U+FFFD
 * (Linux interface and file names are bytes, JSON text is Unicode).
 */
void json_str(FILE *f, const char *s);

/* Objects and arrays nest at most this deep; deeper writes are a bug (assert). */
#define JSON_MAX_DEPTH 16

/*
 * A streaming writer: {"a": 1, "b": [2, 3]} comes out of
 *	json_object_begin(w, NULL); json_u64(w, "a", 1);
 *	json_array_begin(w, "b"); json_u64(w, NULL, 2); json_u64(w, NULL, 3);
 *	json_array_end(w); json_object_end(w);
 * A key is given inside objects and NULL inside arrays and at the top.
 * json_end() ends the document with a newline and flushes.
 */
struct json_writer {
	FILE *f;
	unsigned int depth;
	bool need_comma[JSON_MAX_DEPTH + 1];
};

void json_init(struct json_writer *w, FILE *f);
void json_object_begin(struct json_writer *w, const char *key);
void json_object_end(struct json_writer *w);
void json_array_begin(struct json_writer *w, const char *key);
void json_array_end(struct json_writer *w);
void json_u64(struct json_writer *w, const char *key, uint64_t v);
void json_i64(struct json_writer *w, const char *key, int64_t v);
/* digits after the point, as printf's %.*f; NaN and infinities are written as null */
void json_double(struct json_writer *w, const char *key, double v, int digits);
void json_bool(struct json_writer *w, const char *key, bool v);
void json_null(struct json_writer *w, const char *key);
void json_string(struct json_writer *w, const char *key, const char *s);
void json_end(struct json_writer *w);

#endif
