#ifndef PM_FUZZ_ONE_H
#define PM_FUZZ_ONE_H
#include <stddef.h>
#include <stdint.h>

#include "pm_api/generator.h"

/* The limits the fuzzers run under: small, so one input costs
 * milliseconds and the fuzzers explore inputs rather than big meshes, yet
 * every example in the seed corpora within them (at most 4 KB an input). */
void pm_fuzz_limits(pm_api_limits *l);

/* One fuzz input for gen: the pipeline (pipeline.h) under pm_fuzz_limits,
 * all three formats, each output checked (JSON output parses, GLB starts
 * with its header and says its own length). A broken contract aborts, so
 * the fuzzer (or the replay under ASan) reports it as a crash. */
void pm_fuzz_one(const pm_api_generator *gen, const uint8_t *data, size_t size);
#endif
