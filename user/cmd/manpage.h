/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef ROCEVAL_MANPAGE_H
#define ROCEVAL_MANPAGE_H

#include <stdio.h>

#include "cmd.h"

/* roceval(8) in roff: the commands' own texts, the rule, total and settings tables. */
void print_manpage(FILE *f, const struct command *const *cmds, size_t n, const char *options);

#endif
