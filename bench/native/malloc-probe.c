/*
 * A Node addon that reads glibc's allocator statistics, for docs/benchmarks.md ("What glibc holds").
 * Not part of the build: compile it by hand where Node's headers are installed, then load it through
 * bench/malloc-probe.ts:
 *
 *   gcc -shared -fPIC -O2 -I/usr/include/node -o /tmp/malloc-probe.node bench/native/malloc-probe.c
 *
 * info() returns mallinfo2()'s fields (bytes in the arenas, in use, free, mmapped); xml(path) writes
 * malloc_info()'s per-arena report, with its histogram of free chunks by size.
 */
#include <malloc.h>
#include <node_api.h>
#include <stdio.h>

static napi_value Info(napi_env env, napi_callback_info info) {
  (void)info;
  struct mallinfo2 m = mallinfo2();
  napi_value obj, v;
  napi_create_object(env, &obj);
#define SET(name, val)                                                                                 \
  napi_create_double(env, (double)(val), &v);                                                          \
  napi_set_named_property(env, obj, name, v);
  SET("arena", m.arena)
  SET("ordblks", m.ordblks)
  SET("hblks", m.hblks)
  SET("hblkhd", m.hblkhd)
  SET("uordblks", m.uordblks)
  SET("fordblks", m.fordblks)
  SET("keepcost", m.keepcost)
  return obj;
}

static napi_value Xml(napi_env env, napi_callback_info info) {
  size_t argc = 1, len;
  napi_value argv[1];
  char path[512];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 1 || napi_get_value_string_utf8(env, argv[0], path, sizeof path, &len) != napi_ok) return NULL;
  FILE *f = fopen(path, "w");
  if (f) {
    malloc_info(0, f);
    fclose(f);
  }
  return NULL;
}

static napi_value Init(napi_env env, napi_value exports) {
  napi_value fn;
  napi_create_function(env, "info", NAPI_AUTO_LENGTH, Info, NULL, &fn);
  napi_set_named_property(env, exports, "info", fn);
  napi_create_function(env, "xml", NAPI_AUTO_LENGTH, Xml, NULL, &fn);
  napi_set_named_property(env, exports, "xml", fn);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
