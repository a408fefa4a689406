/*
 * cache_admin.h: the cache's side of the admin interface: the CACHES module
 * (LOAD CACHES TO RUNTIME / SAVE CACHES FROM RUNTIME over the caches and
 * runtime_caches tables) and the stats_shoal_query_digest(_reset) and
 * stats_shoal_caches providers. Runs on the main thread.
 */
#ifndef SHOAL_CACHE_ADMIN_H
#define SHOAL_CACHE_ADMIN_H

/* Register with the admin (before admin_start). */
void cache_admin_register(void);

#endif
