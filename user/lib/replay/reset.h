/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Every map of the loaded object put back as the load left it, so that one
 * load judges many captures, each as if alone.  The maps are found by
 * walking the object, not named: a map added to the program is reset
 * without a word here, and one of a kind this cannot reset is refused when
 * the replay starts.  batch.c's own.
 */
#ifndef ROCEVAL_REPLAY_RESET_H
#define ROCEVAL_REPLAY_RESET_H

struct roceval_bpf;
struct map_reset;

/*
 * Before the load: the plain arrays made mappable (BPF_F_MMAPABLE), so that
 * the flow-sized tables are cleared in one memset rather than an update of
 * each entry.
 */
void map_reset_prepare(struct roceval_bpf *skel);
/* After the load and the settings: how each map is reset; NULL with the reason printed. */
struct map_reset *map_reset_new(struct roceval_bpf *skel);
int map_reset_run(struct map_reset *m);
void map_reset_free(struct map_reset *m);

#endif
