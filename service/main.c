#include <stdio.h>

int main(void) {
    printf("procmesh %s\n", PM_VERSION);
    return 0;
}
