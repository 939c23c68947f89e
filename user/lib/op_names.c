// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdio.h>

#include "op_names.h"
#include "roceval_proto.h"

#define OP_NAME_ROW(code, name, ...) [code] = #name,
static const char *const op_names[32] = { ROCE_OPS(OP_NAME_ROW) };

const char *roce_transport_name(unsigned int transport)
{
	static const char *const names[8] = { "RC", "UC", "RD", "UD", "CNP", "XRC", "VENDOR", "VENDOR" };

	return names[transport & 7];
}

const char *roce_opcode_name(unsigned int opcode, char *buf, size_t len)
{
	unsigned int tr = (opcode >> 5) & 7;
	const struct roce_op *op = &roce_ops[opcode & 0x1F];

	if (opcode == ROCE_OPCODE_CNP)
		snprintf(buf, len, "CNP");
	else if (tr == ROCE_TR_CNP || tr >= ROCE_TR_VENDOR6 || !(op->transports & (1u << tr)))
		snprintf(buf, len, "%s opcode 0x%02x", tr >= ROCE_TR_VENDOR6 ? "VENDOR" : "RESERVED", opcode);
	else
		snprintf(buf, len, "%s %s", roce_transport_name(tr), op_names[opcode & 0x1F]);
	return buf;
}
