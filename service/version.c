const char *pm_svc_version(void);
const char *pm_svc_version(void) { return PM_VERSION; }
