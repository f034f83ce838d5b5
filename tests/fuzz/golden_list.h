#ifndef PM_FUZZ_GOLDEN_LIST_H
#define PM_FUZZ_GOLDEN_LIST_H
#include <stddef.h>
#include <stdint.h>

#include "pm_api/encode.h"

/* tests/fuzz/readme.golden: the golden hashes of the README examples, one
 * a line: "<route>/<seed file> <format> 0x<XXH3-64 of the output>", or,
 * for an example the service refuses, "<route>/<seed file> refused
 * <status>"; the seed file in tests/fuzz/corpus/<route>/; '#' starts a
 * comment. */
typedef struct pm_golden_entry {
    char route[32], file[96];
    pm_api_format format;
    uint64_t hash;
    int refused;            /* the refusal's HTTP status, 0 for an output */
} pm_golden_entry;

typedef struct pm_golden_list { pm_golden_entry *e; size_t n; } pm_golden_list;

/* Reads a list; 0, or -1 with a message on stderr (a line it cannot read
 * is an error, not skipped). */
int pm_golden_list_read(const char *path, pm_golden_list *l);
void pm_golden_list_free(pm_golden_list *l);

/* A whole file (malloc'd, *len bytes), or NULL. */
char *pm_golden_read_file(const char *path, size_t *len);

/* The seed file of e under src_dir (malloc'd, *len bytes), or NULL with a
 * message on stderr. */
char *pm_golden_read_seed(const char *src_dir, const pm_golden_entry *e, size_t *len);
#endif
