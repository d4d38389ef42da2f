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
 * Node-API only, so the one file works on any Node the executable is built on. Where the C
 * library is not glibc (musl, macOS) trim() does nothing and answers false.
 */
#include <node_api.h>
#if defined(__GLIBC__)
#include <malloc.h>
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

NAPI_MODULE_INIT() {
  napi_value trim;
  napi_create_function(env, "trim", NAPI_AUTO_LENGTH, Trim, NULL, &trim);
  napi_set_named_property(env, exports, "trim", trim);
  return exports;
}
