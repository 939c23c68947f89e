# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# Fuzzing, included by the top Makefile.
#   make fuzz SECONDS=N        the data-path fuzzer for N seconds (default 60), then each
#                              libFuzzer target for N/4 seconds
#   make fuzz-datapath         the data-path fuzzer alone (SECONDS, SEED)
#   make fuzz-userspace        the libFuzzer targets alone (FUZZ_SECONDS each)

# The libFuzzer runtime and valgrind, for tests/test_fuzz.py.
DEPS += libclang-rt-14-dev valgrind

SECONDS      ?= 60
SEED         ?= 1
FUZZ_SECONDS ?= $(shell echo $$(( $(SECONDS) / 4 > 5 ? $(SECONDS) / 4 : 5 )))
FUZZ_CC      ?= clang
FUZZ_CFLAGS  := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-std=gnu11 -Iinclude -Iuser/lib -Iuser/cmd -I$(OUTPUT) -D_GNU_SOURCE $(DLOPEN_CFLAGS)

DATAPATH_SRCS := tests/fuzz/datapath.c tests/fuzz/oracle.c tests/fuzz/seeds.c tests/fuzz/mutate.c tests/fuzz/mirror.c
$(OUTPUT)/fuzz-datapath: $(DATAPATH_SRCS) tests/fuzz/datapath.h $(OUTPUT)/libroceval.a $(USER_HDRS) $(HEADERS) | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(DATAPATH_SRCS) $(OUTPUT)/libroceval.a -o $@ $(LDLIBS)

# libFuzzer targets: tests/fuzz/fuzz_<name>.c, each built with the user sources it
# names in its FUZZ_SRCS_<name> (compiled again with the sanitizers).
FUZZ_TARGETS := settings pcap config trace http
BASE := user/lib/log.c user/lib/numbers.c user/lib/json.c
FUZZ_SRCS_settings := user/lib/settings.c $(BASE)
FUZZ_SRCS_pcap := user/lib/replay/reader.c user/lib/replay/cooked.c user/lib/log.c tests/fuzz/stub_replay.c
FUZZ_SRCS_config := user/lib/daemon/conf_file.c user/lib/live/iface.c user/lib/settings.c $(BASE)
FUZZ_SRCS_trace := user/lib/report/sample.c user/lib/capture.c user/lib/report/cm.c user/lib/report/counters.c \
	user/lib/report/cm_names.c user/lib/rule_names.c user/lib/op_names.c $(BASE)
# the http target serves user/lib/daemon/http.c on loopback
FUZZ_SRCS_http := user/lib/daemon/http.c user/lib/report/prom.c user/lib/report/latency.c user/lib/report/counters.c \
	user/lib/report/congestion.c user/lib/report/mirrors.c \
	user/lib/report/cm_names.c user/lib/rule_names.c $(BASE)

define fuzz_target
$(OUTPUT)/fuzz-$(1): tests/fuzz/fuzz_$(1).c tests/fuzz/fuzz_input.h $(FUZZ_SRCS_$(1)) $(USER_HDRS) $(HEADERS) $(FUZZ_DEPS_$(1)) | $(OUTPUT)
	$$(call msg,FUZZ-CC,$$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) $$< $(FUZZ_SRCS_$(1)) -o $$@ $(LDLIBS)
endef
$(foreach t,$(FUZZ_TARGETS),$(eval $(call fuzz_target,$(t))))

.PHONY: fuzz fuzz-datapath fuzz-userspace fuzz-build
fuzz-build: $(OUTPUT)/fuzz-datapath $(foreach t,$(FUZZ_TARGETS),$(OUTPUT)/fuzz-$(t))

fuzz-datapath: $(OUTPUT)/fuzz-datapath
	$(OUTPUT)/fuzz-datapath -s $(SECONDS) -S $(SEED)

# Each target starts from its shipped corpus (read-only) and keeps what it finds in $(OUTPUT).
fuzz-userspace: $(foreach t,$(FUZZ_TARGETS),$(OUTPUT)/fuzz-$(t))
	$(Q)for t in $(FUZZ_TARGETS); do \
		mkdir -p $(OUTPUT)/corpus-$$t $(OUTPUT)/crashes-$$t; \
		echo "fuzz-$$t: $(FUZZ_SECONDS) s"; \
		$(OUTPUT)/fuzz-$$t -max_total_time=$(FUZZ_SECONDS) -seed=$(SEED) -print_final_stats=1 \
			-artifact_prefix=$(OUTPUT)/crashes-$$t/ -close_fd_mask=1 \
			$(OUTPUT)/corpus-$$t tests/fuzz/corpus/$$t > $(OUTPUT)/fuzz-$$t.log 2>&1; \
		rc=$$?; \
		grep -E 'stat::number_of_executed_units|ERROR|SUMMARY|runtime error' $(OUTPUT)/fuzz-$$t.log; \
		test $$rc -eq 0 || exit 1; \
	done

fuzz: fuzz-datapath fuzz-userspace

# make test builds the fuzzers too: tests/test_fuzz.py runs each for a bounded time.
test: fuzz-build
test: export ROCEVAL_FUZZ_DIR := $(abspath $(OUTPUT))

# The whole test suite once more against a roceval built with ASan and UBSan.
# (.out-* is git-ignored: .output gives .out-asan, .out-x gives .out-x-asan)
ASAN_OUTPUT ?= $(if $(filter .output,$(OUTPUT)),.out-asan,$(OUTPUT)-asan)
.PHONY: test-asan clean-asan
clean: clean-asan
clean-asan:
	rm -rf $(ASAN_OUTPUT)

test-asan:
	$(MAKE) OUTPUT=$(ASAN_OUTPUT) BIN=$(ASAN_OUTPUT)/roceval \
		CC="clang -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
		TESTS="$(TESTS)" PYTEST_ARGS="$(PYTEST_ARGS)" \
		ASAN_OPTIONS=detect_leaks=1 ROCEVAL_ASAN=1 ROCEVAL_FUZZ_SECONDS=10 test
