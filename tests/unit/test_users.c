/*
 * test_users.c: per-user upstream identity: the runtime user store's logins
 * (clear password, or SHA1(password) recovered from the client's token),
 * accounts across LOAD USERS (kept, revoked, the max_connections cap),
 * session identities (own user, shared_upstream_user, the monitor), the
 * upstream login with SHA1(password) (token and the auth-switch rewrite),
 * and the grant verdicts that gate cache hits.
 */
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "upstream/users.h"
#include "proto/auth.h"
#include "cache/grants.h"
#include "config/config.h"
#include "upstream/ident.h"
#include "sql/stmt.h"
#include "tap.h"
#include "upstream/upauth.h"

static void sha1(const char *pw, uint8_t out[20])
{
	unsigned int n = 0;

	EVP_Digest(pw, strlen(pw), out, &n, EVP_sha1(), NULL);
}

static void entry(struct users_entry *e, const char *name, const char *pw, bool clear, bool active)
{
	memset(e, 0, sizeof *e);
	snprintf(e->name, sizeof e->name, "%s", name);
	e->has_password = *pw != '\0';
	if (e->has_password)
		users_native_hash(pw, e->hash);
	e->has_clear = clear && e->has_password;
	if (e->has_clear)
		snprintf(e->clear, sizeof e->clear, "%s", pw);
	e->active = active;
	e->max_connections = 2;
	snprintf(e->default_schema, sizeof e->default_schema, "db_%s", name);
}

static void fixed_nonce(uint8_t nonce[AUTH_NONCE_LEN])
{
	for (int i = 0; i < AUTH_NONCE_LEN; i++)
		nonce[i] = (uint8_t)(i * 11 + 5);
}

static void test_tokens(void)
{
	uint8_t nonce[AUTH_NONCE_LEN], want[20], got[20], h1[20], stored[20], rec[20];
	size_t len;

	fixed_nonce(nonce);
	auth_native_token("correct horse", nonce, want, &len);
	sha1("correct horse", h1);
	ok(upauth_native_token(h1, nonce, got) == 0 && memcmp(got, want, 20) == 0,
	   "the native token from SHA1(pw) equals the one from pw");
	users_native_hash("correct horse", stored);
	ok(users_native_recover(stored, nonce, want, len, rec) && memcmp(rec, h1, 20) == 0,
	   "SHA1(pw) is recovered from the client's token and the stored hash");
	want[3] ^= 1;
	memset(rec, 0, sizeof rec);
	ok(!users_native_recover(stored, nonce, want, len, rec), "a wrong token recovers nothing");
	is_int(rec[0] | rec[19], 0, "  and leaves the output alone");
}

static void test_logins(void)
{
	struct users_entry list[4];
	struct users_login l;
	uint8_t nonce[AUTH_NONCE_LEN], tok[20], h1[20];
	size_t len;

	fixed_nonce(nonce);
	entry(&list[0], "hashonly", "hpw", false, true);
	entry(&list[1], "conf", "cpw", true, true);
	entry(&list[2], "nopw", "", false, true);
	entry(&list[3], "off", "opw", true, false);
	is_int(users_replace(list, 4), 0, "store with 4 users");

	auth_native_token("hpw", nonce, tok, &len);
	sha1("hpw", h1);
	ok(users_login_native("hashonly", nonce, tok, len, &l) && l.cred == USERS_CRED_SHA1 &&
	   memcmp(l.sha1, h1, 20) == 0, "a hash-only user logs in with SHA1(pw) as its credential");
	is_str(l.default_schema, "db_hashonly", "  with its default schema");
	is_int(l.max_connections, 2, "  and its max_connections");
	ok(l.acct && l.acct->id != 0, "  and a reference to its account");
	users_login_clear_secrets(&l);
	ok(!users_login_clear("hashonly", &l), "a hash-only user has no clear password (caching_sha2)");
	users_login_clear_secrets(&l);

	auth_native_token("cpw", nonce, tok, &len);
	ok(users_login_native("conf", nonce, tok, len, &l) && l.cred == USERS_CRED_CLEAR &&
	   strcmp(l.clear, "cpw") == 0, "a configured user acts with its clear password");
	users_login_clear_secrets(&l);
	ok(users_login_clear("conf", &l) && strcmp(l.clear, "cpw") == 0,
	   "  and caching_sha2 finds it");
	users_login_clear_secrets(&l);
	ok(users_login_native("nopw", nonce, NULL, 0, &l) && l.cred == USERS_CRED_NONE,
	   "the empty password: no credential");
	users_login_clear_secrets(&l);
	auth_native_token("opw", nonce, tok, &len);
	ok(!users_login_native("off", nonce, tok, len, &l) && l.acct == NULL, "an inactive user is refused");
	ok(!users_login_clear("off", &l), "  also for caching_sha2");
}

static struct user_account *account_of(const char *name, const uint8_t *nonce)
{
	struct users_login l;
	uint8_t tok[20];
	size_t len;
	struct user_account *a = NULL;

	auth_native_token(strcmp(name, "nopw") == 0 ? "" : name, nonce, tok, &len);
	if (users_login_native(name, nonce, tok, len, &l))
		a = users_account_get(l.acct);
	users_login_clear_secrets(&l);
	return a;
}

static void test_accounts(void)
{
	struct users_entry list[3];
	uint8_t nonce[AUTH_NONCE_LEN];
	struct user_account *stay, *gone, *off, *again;

	fixed_nonce(nonce);
	entry(&list[0], "stay", "stay", false, true);
	entry(&list[1], "gone", "gone", false, true);
	entry(&list[2], "offl", "offl", false, true);
	users_replace(list, 3);
	stay = account_of("stay", nonce);
	gone = account_of("gone", nonce);
	off = account_of("offl", nonce);
	ok(stay && gone && off && stay->id != gone->id, "each user has its own account");
	ok(users_account_enter(stay, 2) && users_account_enter(stay, 2), "two sessions within max_connections 2");
	ok(!users_account_enter(stay, 2), "a third is refused");
	is_int(users_account_sessions(stay), 2, "  and not counted");
	users_account_leave(stay);
	ok(users_account_enter(stay, 2), "one left: the next one is counted in");

	entry(&list[0], "stay", "newpw", false, true); /* password changed */
	entry(&list[1], "offl", "offl", false, false);  /* deactivated; "gone" removed */
	users_replace(list, 2);
	again = account_of("stay", nonce);
	ok(again == NULL, "the old password no longer logs in");
	ok(!users_account_revoked(stay), "a user whose password changed keeps its account (sessions go on)");
	is_int(users_account_sessions(stay), 2, "  with its sessions counted");
	ok(users_account_revoked(gone), "a removed user's account is revoked");
	ok(users_account_revoked(off), "a deactivated user's account is revoked");
	entry(&list[1], "offl", "offl", false, true);
	users_replace(list, 2);
	again = account_of("offl", nonce);
	ok(again && again != off && !users_account_revoked(again), "made active again: a new account");
	users_account_put(again);
	users_account_leave(stay);
	users_account_leave(stay);
	users_account_put(stay);
	users_account_put(gone);
	users_account_put(off);
}

static void test_idents(void)
{
	struct users_entry list[2];
	struct users_login l;
	struct ident *a = NULL, *b = NULL, *c = NULL;
	uint8_t nonce[AUTH_NONCE_LEN], tok[20];
	size_t len;

	fixed_nonce(nonce);
	config_defaults(&g_config);
	snprintf(g_config.upstream_user.name, sizeof g_config.upstream_user.name, "url");
	snprintf(g_config.upstream_user.password, sizeof g_config.upstream_user.password, "urlpw");
	entry(&list[0], "u1", "u1pw", false, true);
	list[0].max_connections = 1;
	entry(&list[1], "mon", "mpw", true, true);
	list[1].is_monitor = true;
	users_replace(list, 2);
	auth_native_token("u1pw", nonce, tok, &len);
	users_login_native("u1", nonce, tok, len, &l);
	is_int(ident_create(&a, "u1", &l), IDENT_OK, "an identity for u1");
	ok(a && strcmp(a->up_user, "u1") == 0 && a->id == a->acct->id && a->cred == USERS_CRED_SHA1,
	   "  acting upstream as itself with SHA1(pw)");
	users_login_native("u1", nonce, tok, len, &l);
	is_int(ident_create(&b, "u1", &l), IDENT_TOO_MANY, "u1 at max_connections 1: refused");
	ok(b == NULL && l.acct == NULL, "  nothing kept");
	ident_destroy(&a);
	ok(a == NULL, "a session ends");
	users_login_native("u1", nonce, tok, len, &l);
	g_config.shared_upstream_user = true;
	is_int(ident_create(&b, "u1", &l), IDENT_OK, "its place is free again");
	ok(b && strcmp(b->up_user, "url") == 0 && b->id == 0 && b->cred == USERS_CRED_CLEAR &&
	   strcmp(b->clear, "urlpw") == 0, "shared_upstream_user: acts as the URL's user");
	ok(ident_conn_account(b) == NULL, "  whose connections no user's removal closes");
	auth_native_token("mpw", nonce, tok, &len);
	users_login_native("mon", nonce, tok, len, &l);
	ok(ident_create(&c, "mon", &l) == IDENT_OK && strcmp(c->up_user, "mon") == 0 && c->id != 0,
	   "the monitor never acts as anyone else");
	g_config.shared_upstream_user = false;
	ident_destroy(&b);
	ident_destroy(&c);
}

/* an auth switch request: 0xFE, the plugin, NUL, 20 bytes of scramble, NUL */
static size_t switch_packet(uint8_t *buf, const char *plugin)
{
	size_t n = 1 + strlen(plugin) + 1 + 21;

	buf[0] = (uint8_t)n;
	buf[1] = buf[2] = 0;
	buf[3] = 2;
	buf[4] = 0xfe;
	memcpy(buf + 5, plugin, strlen(plugin) + 1);
	memset(buf + 5 + strlen(plugin) + 1, 'x', 20);
	buf[4 + n - 1] = 0;
	return 4 + n;
}

static void test_switch_rewrite(void)
{
	uint8_t buf[256];
	char asked[64] = "";
	size_t n;

	n = switch_packet(buf, "mysql_native_password");
	upauth_on_read(true, buf, n, asked, sizeof asked);
	ok(memcmp(buf + 5, UPAUTH_PLUGIN, sizeof(UPAUTH_PLUGIN)) == 0,
	   "SHA1 login: the switch to mysql_native_password leads to the node's plugin");
	is_str(asked, "mysql_native_password", "  what the upstream asked for is recorded");
	n = switch_packet(buf, "mysql_native_password");
	upauth_on_read(false, buf, n, asked, sizeof asked);
	ok(memcmp(buf + 5, "mysql_native_password", 22) == 0, "a login with the clear password: untouched");
	n = switch_packet(buf, "client_ed25519");
	upauth_on_read(true, buf, n, asked, sizeof asked);
	ok(memcmp(buf + 5, "client_ed25519", 15) == 0, "another plugin is left alone");
	is_str(asked, "client_ed25519", "  and recorded (for the error message)");
	n = switch_packet(buf, "mysql_native_password");
	upauth_on_read(true, buf, n - 1, asked, sizeof asked);
	ok(memcmp(buf + 5, "mysql_native_password", 22) == 0, "a packet cut short is not touched");
	/* an OK packet, then the request, in one read */
	memcpy(buf, "\x07\x00\x00\x02\x00\x00\x00\x02\x00\x00\x00", 11);
	n = switch_packet(buf + 11, "mysql_native_password") + 11;
	upauth_on_read(true, buf, n, asked, sizeof asked);
	ok(memcmp(buf + 16, UPAUTH_PLUGIN, sizeof(UPAUTH_PLUGIN)) == 0, "the second packet of a read is seen");
}

static void note(struct ident *id, const char *sql)
{
	static struct stmt st;

	stmt_begin(&st, sql, strlen(sql));
	stmt_read(&st);
	grants_note_statement(id, &st);
}

static void test_grants(void)
{
	struct grant_worker gw = { 0 };
	struct grant_session gs = { 0 };
	struct ident *id = calloc(1, sizeof *id);
	struct cache_def *d1 = (struct cache_def *)(uintptr_t)0x1000, *d2 = (struct cache_def *)(uintptr_t)0x2000;

	id->id = 42;
	g_config.grant_check_ms = 1000;
	g_config.cache_scope = CACHE_SCOPE_USER;
	is_int(grants_key_id(id), 42, "cache_scope=user: the upstream user is part of the key");
	g_config.cache_scope = CACHE_SCOPE_SHARED;
	is_int(grants_key_id(id), 0, "cache_scope=shared: it is not");
	is_int(grants_gate(&gs, &gw, id, d1, 7, 100, false), GRANT_CHECK, "no verdict yet: check upstream");
	grants_note_allowed(&gw, id, d1, 7, 100);
	is_int(grants_gate(&gs, &gw, id, d1, 7, 500, false), GRANT_OK, "the user read it upstream: allowed");
	is_int(grants_gate(&gs, &gw, id, d2, 7, 500, false), GRANT_CHECK, "  for that shape only");
	is_int(grants_gate(&gs, &gw, id, d1, 8, 500, false), GRANT_CHECK,
	       "  and those session settings only (another schema: another verdict)");
	is_int(grants_gate(&gs, &gw, id, d1, 7, 1100, false), GRANT_CHECK, "after grant_check_ms: checked again");
	is_int(grants_gate(&gs, &gw, id, d1, 7, 1100, true), GRANT_OK, "  unless the upstream is down (serve-stale): the last verdict holds");
	grants_note_allowed(&gw, id, d1, 7, 1200);
	id->id = 43;
	is_int(grants_gate(&gs, &gw, id, d1, 7, 1300, false), GRANT_CHECK, "another user has its own verdict");
	id->id = 42;
	note(id, "SELECT * FROM t WHERE id = 1");
	is_int(grants_gate(&gs, &gw, id, d1, 7, 1300, false), GRANT_OK, "a SELECT changes nothing");
	note(id, "REVOKE SELECT ON db.t FROM 'u'@'%'");
	is_int(grants_gate(&gs, &gw, id, d1, 7, 1300, false), GRANT_CHECK, "a REVOKE seen through the node forgets the verdicts");
	grants_note_allowed(&gw, id, d1, 7, 1300);
	note(id, "alter   user u IDENTIFIED BY 'x'");
	is_int(grants_gate(&gs, &gw, id, d1, 7, 1300, false), GRANT_CHECK, "  so does ALTER USER");
	grants_note_allowed(&gw, id, d1, 7, 1300);
	note(id, "CREATE OR REPLACE USER u IDENTIFIED BY 'x'");
	is_int(grants_gate(&gs, &gw, id, d1, 7, 1300, false), GRANT_CHECK, "  so does CREATE OR REPLACE USER");
	grants_note_allowed(&gw, id, d1, 7, 1300);
	{
		uint32_t e = ident_privilege_epoch();

		grants_invalidate("someone");
		ok(ident_privilege_epoch() != e, "grants_invalidate(): new logins use new upstream connections");
	}
	is_int(grants_gate(&gs, &gw, id, d1, 7, 1300, false), GRANT_CHECK, "  and its verdicts are forgotten");
	{
		static const char *const yes[] = {
			"GRANT SELECT ON db.t TO 'u'@'%'", "/* x */ revoke all on *.* from u",
			"ALTER USER u ACCOUNT LOCK", "SET PASSWORD FOR u = PASSWORD('x')",
			"SET DEFAULT ROLE r FOR u", "DROP ROLE r", "FLUSH PRIVILEGES",
			"CREATE OR REPLACE USER u", "RENAME USER a TO b", "DROP USER IF EXISTS u",
			/* a new account may be the better match of a login's host */
			"CREATE USER u", "create role r",
		};
		static const char *const no[] = {
			"CREATE TABLE user (a INT)", "SELECT 1", "SET ROLE r", "SET PASSWORD_X = 1",
			"ALTER TABLE user ADD x INT", "INSERT INTO grants VALUES (1)",
			"CREATE OR REPLACE TABLE user (a INT)", "",
		};

		for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
			ok(grants_text_changes_privileges(yes[i], strlen(yes[i])), "changes privileges: %s", yes[i]);
		for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
			ok(!grants_text_changes_privileges(no[i], strlen(no[i])), "changes none: %s", no[i]);
	}
	ok(grants_table_is_privileges("mysql", 5, "global_priv", 11) &&
	   grants_table_is_privileges("MySQL", 5, "roles_mapping", 13) &&
	   grants_table_is_privileges("mysql", 5, "db", 2),
	   "the mysql schema's privilege tables: a row written there changes privileges");
	ok(!grants_table_is_privileges("mysql", 5, "general_log", 11) &&
	   !grants_table_is_privileges("app", 3, "user", 4) && !grants_table_is_privileges("mysql", 5, "dbx", 3),
	   "  not its other tables, nor a table named user elsewhere");
	ok(grants_session_may_cache(id), "a session may use the cache");
	note(id, "SET ROLE reporting");
	ok(!grants_session_may_cache(id), "  not after SET ROLE");
	grants_worker_free(&gw);
	free(id);
}

int main(void)
{
	test_tokens();
	test_logins();
	test_accounts();
	test_idents();
	test_switch_rewrite();
	test_grants();
	users_clear();
	return done_testing();
}
