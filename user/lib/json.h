/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The one JSON string writer every --json output and the daemon's log lines
 * go through.  Numbers and fixed keys are printed directly; anything that
 * comes from outside (interface names, file names, messages) is a string and
 * passes through here, so the output parses whatever the input was.
 */
#ifndef ROCEVAL_JSON_H
#define ROCEVAL_JSON_H

#include <stdio.h>

/*
 * Writes s as a quoted JSON string: '"', '\\' and control characters escaped,
 * valid UTF-8 copied, each byte that is not valid UTF-8 written as U+FFFD
 * (Linux interface and file names are bytes, JSON text is Unicode).
 */
void json_str(FILE *f, const char *s);

#endif
