// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target for the capture reading path of `roceval replay`
 * (user/lib/replay/reader.c): the input is a pcap or pcapng file, opened
 * through a memfd and run frame by frame, with the BPF side replaced by
 * tests/fuzz/stub_replay.c.  A damaged or hostile capture is refused or
 * read as far as it is sound; what is checked here is that it never
 * crashes or reads past the data (AddressSanitizer, UBSan).
 */
#include <stdint.h>
#include <unistd.h>

#include "fuzz_input.h"
#include "replay/offline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct roceval_settings cfg = {};
	struct replay_file f;
	struct replay *r;
	char path[64];
	int fd = fuzz_input_file(data, size, path, sizeof(path));

	if (fd < 0)
		return 0;
	if (replay_file_open(&f, path)) {
		close(fd);
		return 0;
	}
	r = replay_new(&cfg);
	if (r && !replay_file_run(&f, r))
		replay_finish(r);
	replay_free(r);
	replay_file_close(&f);
	close(fd);
	return 0;
}
