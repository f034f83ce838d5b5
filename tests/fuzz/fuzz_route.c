/* The libFuzzer harness of one route; CMake (PM_FUZZ=ON, clang) builds it
 * once per route as fuzz_<route>, with PM_FUZZ_ROUTE naming it. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_one.h"
#include "pipeline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const pm_api_generator *gen;
    if (!gen && !(gen = pm_pipeline_generator(PM_FUZZ_ROUTE))) abort();
    pm_fuzz_one(gen, data, size);
    return 0;
}
