/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef ROCEVAL_NUMBERS_H
#define ROCEVAL_NUMBERS_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>

/*
 * Option and setting values: each returns true and stores the value only when
 * the whole string is one (numbers in C notation, at most max; booleans as
 * on/off, yes/no, true/false, 1/0, any case).
 */
bool parse_u32(const char *s, unsigned long max, __u32 *out);
bool parse_u64(const char *s, uint64_t max, uint64_t *out);
bool parse_bool(const char *s, bool *out);

#endif
