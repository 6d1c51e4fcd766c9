/* vigil — finding the functions the wrappers stand in front of. */
#include <dlfcn.h>

#include "preload.h"

void *preload_real_resolve(void **slot, const char *name)
{
    /* Resolved once per function (the constructor resolves them all; a call
     * that comes earlier, from another library's constructor, resolves its
     * own). dlsym does no I/O of its own, so this cannot recurse. */
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
