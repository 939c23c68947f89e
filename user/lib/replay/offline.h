/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the rest of roceval uses of replay/: the batch program run over frames
 * (batch.h) and a capture file read through it (reader.h).  cooked.h is the
 * reader's own.
 */
#ifndef ROCEVAL_OFFLINE_H
#define ROCEVAL_OFFLINE_H

#include "batch.h"
#include "reader.h"

#endif
