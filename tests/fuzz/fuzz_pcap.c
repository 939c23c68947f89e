// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target for the capture reading path of `roceval replay`: the
 * input is a pcap or pcapng file, handed to the real do_replay() through a
 * memfd, with the BPF side replaced by tests/fuzz/stub_replay.c.  Damaged
 * or hostile captures must give exit status 0 or 2 with a message, never a
 * crash or a read past the data.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cmd.h"
#include "fuzz_input.h"

extern const struct command cmd_replay;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], arg0[] = "replay", arg1[] = "--json";
	char *argv[] = { arg0, arg1, path, NULL };
	int fd = fuzz_input_file(data, size, path, sizeof(path)), rc;

	if (fd < 0)
		return 0;
	rc = cmd_replay.run(3, argv);
	close(fd);
	if (rc != 0 && rc != 2) {
		fprintf(stderr, "replay exited %d\n", rc);
		abort();
	}
	return 0;
}
