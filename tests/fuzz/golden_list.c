#include "golden_list.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int pm__format(const char *s, pm_api_format *f) {
    for (int k = PM_API_FMT_JSON; k <= PM_API_FMT_GLB; k++)
        if (strcmp(s, pm_api_format_name((pm_api_format)k)) == 0) {
            *f = (pm_api_format)k;
            return 0;
        }
    return -1;
}

int pm_golden_list_read(const char *path, pm_golden_list *l) {
    *l = (pm_golden_list){0};
    FILE *fp = fopen(path, "r");
    if (!fp) {
        fprintf(stderr, "%s: cannot open\n", path);
        return -1;
    }
    char line[512];
    size_t cap = 0;
    int lineno = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, fp)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) *hash = 0;
        char name[160], fmt[16], h[40], extra[2];
        int got = sscanf(line, "%159s %15s %39s %1s", name, fmt, h, extra);
        if (got <= 0) continue;
        pm_golden_entry e = {0};
        char *slash = strchr(name, '/'), *end = NULL;
        if (got == 3 && slash && (size_t)(slash - name) < sizeof e.route &&
            strlen(slash + 1) < sizeof e.file) {
            memcpy(e.route, name, (size_t)(slash - name));
            strcpy(e.file, slash + 1);
            if (strcmp(fmt, "refused") == 0) {
                long st = strtol(h, &end, 10);
                e.refused = st >= 400 && st < 600 ? (int)st : 0;
                if (!e.refused) end = NULL;
            } else if (pm__format(fmt, &e.format) == 0 && strncmp(h, "0x", 2) == 0) {
                e.hash = strtoull(h, &end, 16);
            }
        }
        if (!end || *end) {
            fprintf(stderr, "%s:%d: want \"<route>/<file> <json|gltf|glb> 0x<hash>\" or "
                    "\"<route>/<file> refused <status>\"\n", path, lineno);
            rc = -1;
            break;
        }
        if (l->n == cap) {
            cap = cap ? 2 * cap : 16;
            pm_golden_entry *g = realloc(l->e, cap * sizeof *g);
            if (!g) { rc = -1; break; }
            l->e = g;
        }
        l->e[l->n++] = e;
    }
    fclose(fp);
    if (rc != 0) pm_golden_list_free(l);
    return rc;
}

void pm_golden_list_free(pm_golden_list *l) {
    free(l->e);
    *l = (pm_golden_list){0};
}

char *pm_golden_read_file(const char *path, size_t *len) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0, got;
    do {
        if (n == cap) {
            char *b = realloc(buf, cap = cap ? 2 * cap : 4096);
            if (!b) {
                free(buf);
                fclose(fp);
                return NULL;
            }
            buf = b;
        }
        n += got = fread(buf + n, 1, cap - n, fp);
    } while (got > 0);
    fclose(fp);
    *len = n;
    return buf;
}

char *pm_golden_read_seed(const char *src_dir, const pm_golden_entry *e, size_t *len) {
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/fuzz/corpus/%s/%s", src_dir, e->route, e->file);
    char *buf = pm_golden_read_file(path, len);
    if (!buf) fprintf(stderr, "%s: cannot read\n", path);
    return buf;
}
