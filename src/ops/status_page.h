/*
 * status_page.h: the status page, src/ops/status_page.html, embedded in the
 * binary at build time (scripts/embed-text writes status_page_data.c).
 */
#ifndef SHOAL_STATUS_PAGE_H
#define SHOAL_STATUS_PAGE_H

#include <stddef.h>

extern const char status_page_html[];
extern const size_t status_page_html_len;

#endif
