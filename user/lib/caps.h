/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
#ifndef ROCEVAL_CAPS_H
#define ROCEVAL_CAPS_H

#include <stdbool.h>

/*
 * Fails with one clear line unless the effective capabilities cover what BPF
 * and XDP need (CAP_BPF, CAP_NET_ADMIN, CAP_PERFMON), and with pins, what
 * opening root's pins takes from another uid (CAP_DAC_OVERRIDE).
 */
int require_caps(bool pins);
/* Whether the effective set holds cap (CAP_NET_RAW, ...). */
bool caps_have(int cap);

#endif
