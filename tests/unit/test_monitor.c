/*
 * test_monitor.c: unit tests for monitor_match() (src/core/monitor.c): the exact
 * texts of ProxySQL's read_only and replication checks and the status
 * queries, in any case, with whitespace runs, leading/trailing whitespace
 * and trailing ';'; and texts that must not match (other spacing around
 * operators, comments, other variables, other statements, long input).
 */
#include "core/monitor.h"
#include "tap.h"

#include <string.h>

#include <stdlib.h>

static enum monitor_query m(const char *q)
{
	return monitor_match(q, strlen(q));
}

static void exact_texts(void)
{
	is_int(m("SELECT @@global.read_only read_only"), MQ_READ_ONLY, "read_only");
	is_int(m("SELECT @@global.innodb_read_only read_only"), MQ_READ_ONLY, "innodb_read_only");
	is_int(m("SELECT @@global.super_read_only read_only"), MQ_READ_ONLY, "super_read_only");
	is_int(m("SELECT @@global.read_only&@@global.innodb_read_only read_only"), MQ_READ_ONLY,
	       "read_only&innodb_read_only");
	is_int(m("SELECT @@global.read_only|@@global.innodb_read_only read_only"), MQ_READ_ONLY,
	       "read_only|innodb_read_only");
	is_int(m("SHOW SLAVE STATUS"), MQ_SLAVE_STATUS, "SHOW SLAVE STATUS");
	is_int(m("SHOW REPLICA STATUS"), MQ_REPLICA_STATUS, "SHOW REPLICA STATUS");
	is_int(m("SHOW READYSET STATUS"), MQ_READYSET_STATUS, "SHOW READYSET STATUS");
	is_int(m("SHOW SHOAL STATUS"), MQ_SHOAL_STATUS, "SHOW SHOAL STATUS");
}

static void spelling(void)
{
	is_int(m("select @@GLOBAL.READ_ONLY Read_Only"), MQ_READ_ONLY, "any case");
	is_int(m("  SELECT\t@@global.read_only \n  read_only ;"), MQ_READ_ONLY,
	       "whitespace runs, leading and trailing whitespace, trailing ;");
	is_int(m("show   slave\r\nstatus;;"), MQ_SLAVE_STATUS, "show slave status, spaced, two ;");
	is_int(m("SHOW SLAVE STATUS "), MQ_SLAVE_STATUS, "trailing space");
}

static void not_matched(void)
{
	char *big = malloc(5000);

	is_int(m("SELECT @@global.read_only & @@global.innodb_read_only read_only"), MQ_NONE,
	       "spaces around & are a different text");
	is_int(m("SELECT @@global.read_only"), MQ_NONE, "no alias");
	is_int(m("SELECT @@global.read_only AS read_only"), MQ_NONE, "AS alias");
	is_int(m("SELECT @@global.read_only read_only, 1"), MQ_NONE, "more columns");
	is_int(m("/* x */ SELECT @@global.read_only read_only"), MQ_NONE, "leading comment");
	is_int(m("SELECT @@global.wsrep_on read_only"), MQ_NONE, "another variable");
	is_int(m("SHOW SLAVE HOSTS"), MQ_NONE, "SHOW SLAVE HOSTS");
	is_int(m("SHOW ALL SLAVES STATUS"), MQ_NONE, "SHOW ALL SLAVES STATUS");
	is_int(m("SELECT 1"), MQ_NONE, "SELECT 1");
	is_int(m(""), MQ_NONE, "empty");
	is_int(m("   "), MQ_NONE, "blank");
	is_int(m(";"), MQ_NONE, "a lone ;");
	is_int(monitor_match("SHOW SLAVE STATUS", 10), MQ_NONE, "only the first bytes of a text");
	/* the one lexer's edges: a comment anywhere, an executable one, a
	 * quoted name, a string: none is the known text */
	is_int(m("SHOW SLAVE /* x */ STATUS"), MQ_NONE, "a comment inside");
	is_int(m("SHOW SLAVE STATUS -- x"), MQ_NONE, "a -- comment after");
	is_int(m("SHOW SLAVE STATUS # x"), MQ_NONE, "a # comment after");
	is_int(m("/*!50000 SHOW SLAVE STATUS */"), MQ_NONE, "an executable comment");
	is_int(m("/*M!100100 SHOW SLAVE STATUS */"), MQ_NONE, "a MariaDB executable comment");
	is_int(m("SHOW `SLAVE` STATUS"), MQ_NONE, "a `quoted` word");
	is_int(m("SELECT @@global.`read_only` read_only"), MQ_NONE, "a `quoted` variable");
	is_int(m("SELECT @@global.read_only 'read_only'"), MQ_NONE, "a string alias");
	is_int(m("SELECT @@global .read_only read_only"), MQ_NONE, "a space where the text has none");
	is_int(m("SELECT@@global.read_only read_only"), MQ_NONE, "none where it has one");
	is_int(m("         SHOW SLAVE STATUS"), MQ_NONE, "more than 8 bytes of white space before it");
	is_int(m("\tSHOW\tSLAVE\tSTATUS\t;\t;"), MQ_SLAVE_STATUS, "tabs and a ';' between white space");
	if (big) {
		memset(big, ' ', 5000);
		memcpy(big + 4000, "SHOW SLAVE STATUS", 17);
		is_int(monitor_match(big, 5000), MQ_NONE, "very long input is not read through");
		memset(big, 'x', 5000);
		memcpy(big, "SHOW SLAVE STATUS", 17);
		is_int(monitor_match(big, 5000), MQ_NONE, "a known text with a long tail");
		free(big);
	}
}

int main(void)
{
	exact_texts();
	spelling();
	not_matched();
	return done_testing();
}
