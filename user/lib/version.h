/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The release: --version, the manual page, roceval_build_info, the .deb (the Makefile reads it here). */
#ifndef ROCEVAL_VERSION_H
#define ROCEVAL_VERSION_H

#define ROCEVAL_VERSION "0.1.0"

#endif
