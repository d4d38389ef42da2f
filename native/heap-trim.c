/*
 * heap_trim.node: glibc's malloc_trim for the single executable (scripts/package.mjs builds it,
 * bin/sea-entry.ts loads it, src/main.ts calls it once a burst of work is over).
 *
 * Why: glibc keeps the memory free() returns inside its arenas. Only the top of the main
 * heap goes back to the system on its own; freed chunks below a live one stay resident. After
 * bench:ingest's 20,000 messages the main arena ([heap]) held 81 MB and the threads' arenas
 * 51 MB, most of it free; malloc_trim(0) (called through gdb in that state) took the process
 * from 307 to 213 MB (anonymous 209 -> 115). Node has no binding for it.
 *
 * dropPages(start, length) takes pages of a file mapping out of the process's resident set
 * (madvise MADV_DONTNEED): src/workers/native-memory.ts calls it only for the executable's own
 * read-only mappings that hold no private copy of a page, where the next touch maps the same
 * bytes again from the page cache (a minor fault). Start-up reads the whole JS source and code
 * cache out of the executable and runs code it never runs again; those pages stayed resident
 * (72 MB of the idle executable's 124 MB), all of it file pages the process no longer used.
 *
 * Node-API only, so the one file works on any Node the executable is built on. Where the C
 * library is not glibc (musl, macOS) trim() does nothing and answers false; off Linux
 * dropPages() does nothing and answers false.
 */
#include <node_api.h>
#include <stdint.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

/* trim(): hands every arena's free pages back to the system; true when some were. */
static napi_value Trim(napi_env env, napi_callback_info info) {
  (void)info;
  int released = 0;
#if defined(__GLIBC__)
  released = malloc_trim(0);
#endif
  napi_value result;
  napi_get_boolean(env, released != 0, &result);
  return result;
}

/* dropPages(start, length): madvise(MADV_DONTNEED) on a page-aligned range; true when done. */
static napi_value DropPages(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  int64_t start = 0, length = 0;
  int dropped = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) == napi_ok && argc == 2 &&
      napi_get_value_int64(env, argv[0], &start) == napi_ok && napi_get_value_int64(env, argv[1], &length) == napi_ok) {
#if defined(__linux__)
    int64_t page = sysconf(_SC_PAGESIZE);
    if (start > 0 && length > 0 && page > 0 && start % page == 0 && length % page == 0) {
      dropped = madvise((void *)(uintptr_t)start, (size_t)length, MADV_DONTNEED) == 0;
    }
#endif
  }
  napi_value result;
  napi_get_boolean(env, dropped != 0, &result);
  return result;
}

static void Export(napi_env env, napi_value exports, const char *name, napi_callback callback) {
  napi_value function;
  napi_create_function(env, name, NAPI_AUTO_LENGTH, callback, NULL, &function);
  napi_set_named_property(env, exports, name, function);
}

NAPI_MODULE_INIT() {
  Export(env, exports, "trim", Trim);
  Export(env, exports, "dropPages", DropPages);
  return exports;
}
