/*
 * capi_connect.h: the connect step the Connector/C test clients share
 * (stmt_client.c, bulk_client.c): app/pw in shoaltest at HOST:PORT, or the
 * program ends with status 1.
 */
#ifndef SHOAL_TEST_CAPI_CONNECT_H
#define SHOAL_TEST_CAPI_CONNECT_H

#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>

static MYSQL *connect_to(const char *host, unsigned port)
{
	MYSQL *m = mysql_init(NULL);

	if (!m || !mysql_real_connect(m, host, "app", "pw", "shoaltest", port, NULL, 0)) {
		fprintf(stderr, "connect %s:%u: %s\n", host, port, m ? mysql_error(m) : "no memory");
		exit(1);
	}
	return m;
}

#endif
