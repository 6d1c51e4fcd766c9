/* vigil — finding the functions the wrappers stand in front of. */
#include <dlfcn.h>

#include "preload.h"

void *preload_real_resolve(void **slot, const char *name)
{
    /* Resolved once per function: the constructor resolves them all, and a
     * call that comes earlier (from another library's constructor) resolves
     * its own. dlsym does no I/O of its own, so this cannot recurse. */
    void *fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (fn == NULL) {
        fn = dlsym(RTLD_NEXT, name);
        __atomic_store_n(slot, fn, __ATOMIC_RELEASE);
    }
    return fn;
}

void *preload_real_resolve_versioned(void **slot, const char *name, const char *version)
{
    void *fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (fn == NULL) {
        fn = dlvsym(RTLD_NEXT, name, version);
        if (fn == NULL)
            fn = dlsym(RTLD_NEXT, name);
        __atomic_store_n(slot, fn, __ATOMIC_RELEASE);
    }
    return fn;
}

/* The linker gathers every PRELOAD_REAL_SLOT entry between these two. */
extern const struct preload_real_entry __start_preload_real[] PRELOAD_HIDDEN;
extern const struct preload_real_entry __stop_preload_real[] PRELOAD_HIDDEN;

void preload_real_resolve_all(void)
{
    /* A compat-only symbol (__xstat…) may not resolve here; its wrapper
     * resolves it by version at first use. */
    /* The section's length from its two ends' addresses: comparing the two
     * pointers directly would compare distinct objects, as far as C knows. */
    size_t count = ((uintptr_t)__stop_preload_real - (uintptr_t)__start_preload_real) /
                   sizeof(struct preload_real_entry);
    for (size_t i = 0; i < count; i++)
        preload_real_resolve(__start_preload_real[i].slot, __start_preload_real[i].name);
}
