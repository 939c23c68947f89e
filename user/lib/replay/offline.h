/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the rest of roceval uses of replay/: the batch program run over frames
 * (batch.h), a capture file read through it (reader.h), and the link types
 * read as Ethernet (cooked.h), which a feed's stream is read with too.
 */
#ifndef ROCEVAL_OFFLINE_H
#define ROCEVAL_OFFLINE_H

#include "batch.h"
#include "cooked.h"
#include "reader.h"

#endif
