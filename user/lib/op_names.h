/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef ROCEVAL_OP_NAMES_H
#define ROCEVAL_OP_NAMES_H

#include <stddef.h>

/* Opcode names from the opcode table in roceval_proto.h, e.g. "RC SEND_ONLY". */
const char *roce_opcode_name(unsigned int opcode, char *buf, size_t len);
const char *roce_transport_name(unsigned int transport);

#endif
