/* Unknown keys in graph files (record/json_keys.c): the reader calls
 * rp__json_key for every key it meets; independent of the JSON parser. */
#ifndef RP_JSON_KEYS_H
#define RP_JSON_KEYS_H

#include "reprise/record.h"

/* The keys each object of a graph file may have (NULL-terminated). */
extern const char *const rp__keys_top[],
    *const rp__keys_buffer[],
        *const rp__keys_op[], *const rp__keys_access[],
                                  *const rp__keys_box[], *const rp__keys_edge[];

/* Checks @p key of the object at @p path against @p known. Unknown: calls
 * o->warn with "PATH.KEY: unknown key" and returns RP_OK, or, with
 * RP_READ_STRICT, writes that message to @p msg and returns RP_EPARSE.
 * @p o may be NULL (nothing reported). */
rp_status rp__json_key(const rp_read_opts *o, const char *path, const char *key,
                       const char *const *known, char *msg, size_t cap);

/* Bytes the graph reader reads at a time (record/json_scan.c; tests make it
 * small to put chunk boundaries inside every token). */
extern size_t rp__json_chunk;
/* 1 (default): operations and edges as the writer writes them are read by
 * a hand-written scanner; 0: all through cJSON (tests). */
extern int rp__json_fast;

#endif
