/*
 * main.c: start-up and shutdown of the node: configuration, process limits,
 * the upstream probe and check, TLS and RSA keys, worker threads,
 * listeners, and the signals: SIGTERM/SIGINT drain and stop it (drain.c;
 * a second one stops it at once), SIGHUP reloads the settings. With
 * --health it starts nothing and probes the running node (healthcheck.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <ev.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <mysql.h>

#include "admin/admin.h"
#include "config/argscrub.h"
#include "proto/auth.h"
#include "admin/cache_admin.h"
#include "cache/cache_metrics.h"
#include "cache/commands.h"
#include "cache/session.h"
#include "config/config.h"

#ifndef SHOAL_VERSION
#define SHOAL_VERSION "unknown"
#endif
#include "cache/consistency.h"
#include "ops/drain.h"
#include "base/health.h"
#include "cache/snapshot.h"
#include "cache/warm.h"
#include "core/refill.h"
#include "ops/healthcheck.h"
#include "ops/http.h"
#include "ops/status.h"
#include "proto/metrics.h"
#include "core/listener.h"
#include "base/log.h"
#include "upstream/probe.h"
#include "ops/pxadmin.h"
#include "ops/reload.h"
#include "base/stats.h"
#include "proto/tls.h"
#include "upstream/upstream.h"
#include "core/worker.h"

static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
		log_warn("getrlimit: %s", strerror(errno));
		return;
	}
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			log_warn("setrlimit: %s", strerror(errno));
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		unsigned long long need = (unsigned long long)g_config.max_client_connections +
					  (unsigned long long)g_config.max_upstream_connections + 64;

		log_info("open files limit (RLIMIT_NOFILE): %llu (max_client_connections %d, "
			 "max_upstream_connections %d)", (unsigned long long)rl.rlim_cur,
			 g_config.max_client_connections, g_config.max_upstream_connections);
		if (rl.rlim_cur < need)
			log_warn("open files limit %llu is below max_client_connections + "
				 "max_upstream_connections + 64 = %llu: clients past it are refused; raise "
				 "the hard limit (LimitNOFILE= in systemd, --ulimit nofile= in Docker)",
				 (unsigned long long)rl.rlim_cur, need);
	}
}

/* The command line, for SIGHUP. */
static int start_argc;
static char **start_argv;

static void on_stop_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
	(void)revents;
	drain_signal(loop, w->signum);
}

static void on_hup(struct ev_loop *loop, ev_signal *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
	log_info("received SIGHUP: reloading the configuration");
	config_reload(start_argc, start_argv);
}

/* The outage after which the node leaves rotation: shun acts at once;
 * serve-stale keeps serving while entries can be within max_stale_ms. */
static void setup_thresholds(void)
{
	int after = g_config.upstream_down_after_ms;

	if (g_config.upstream_down_policy == DOWN_POLICY_SERVE_STALE)
		after += g_config.max_stale_ms;
	health_set_down_after_ms(after);
	http_set_down_after_ms(after);
	log_info("upstream down policy: %s (out of rotation after %d ms down)",
		 g_config.upstream_down_policy == DOWN_POLICY_SHUN ? "shun" : "serve-stale", after);
}

static SSL_CTX *setup_tls(void)
{
	char err[512];
	SSL_CTX *ctx;

	if (!g_config.tls_cert[0] || g_config.tls_mode == TLS_MODE_DISABLED)
		return NULL;
	ctx = tls_server_ctx(g_config.tls_cert, g_config.tls_key, err, sizeof(err));
	if (!ctx) {
		log_error("%s", err);
		exit(2);
	}
	log_info("TLS for clients: %s", g_config.tls_mode == TLS_MODE_REQUIRED ? "required" : "optional");
	return ctx;
}

static void setup_upstream(void)
{
	char err[512];

	if (upstream_global_init() < 0) {
		log_error("cannot initialise the MySQL client library");
		exit(1);
	}
	if (upstream_probe(err, sizeof(err)) < 0)
		log_warn("upstream %s:%u not reachable at start: %s (will retry per connection)",
			 g_config.upstream_host, g_config.upstream_port, err);
	else
		log_info("upstream %s:%u reachable", g_config.upstream_host, g_config.upstream_port);
	if (g_config.shared_upstream_user)
		log_warn("shared_upstream_user is on: every client login acts upstream as '%s' and "
			 "gets that user's privileges, whatever its own grants (docs/security.md)",
			 g_config.upstream_user.name);
}

/* `shoal --health`: a bad setting is "not healthy" too (exit 1: Docker
 * reserves 2), not a start-up error. */
static bool wants_health(int argc, char **argv)
{
	for (int i = 1; i < argc && argv[i]; i++)
		if (strcmp(argv[i], "--health") == 0)
			return true;
	return false;
}

/* cache_snapshot: the cache written at the end of a stop, after the
 * workers and the binlog follower have stopped (the position is final). */
static void save_snapshot(void)
{
	struct snapshot_stats st;
	char err[512];

	snapshot_save("at the stop", &st, err, sizeof err);
}

/* The snapshot's replay, looked at every 0.2 s until it ends: the look
 * that sees it end logs what it left (warm_status), whoever makes it. */
static ev_timer warm_watch;

static void on_warm_watch(struct ev_loop *loop, ev_timer *t, int revents)
{
	struct warm_status w;

	(void)revents;
	warm_status(&w);
	if (w.state != WARM_LOADING && w.state != WARM_REPLAYING)
		ev_timer_stop(loop, t);
}

static void warm_watch_start(struct ev_loop *loop)
{
	ev_timer_init(&warm_watch, on_warm_watch, 0.1, 0.2);
	ev_timer_start(loop, &warm_watch);
}

/* `shoal --check-snapshot PATH` (or =PATH): read a snapshot file, say
 * whether it is sound and what it holds; starts nothing. -1: not asked. */
static int check_snapshot(int argc, char **argv)
{
	static const char flag[] = "--check-snapshot";

	if (argc == 3 && strcmp(argv[1], flag) == 0)
		return snapshot_check_file(argv[2], stdout);
	if (argc == 2 && strncmp(argv[1], flag, sizeof flag - 1) == 0 && argv[1][sizeof flag - 1] == '=')
		return snapshot_check_file(argv[1] + sizeof flag, stdout);
	return -1;
}

/* The cache, the consistency follower, the workers, the ports: everything
 * the node serves with, in the order each needs the one before. 0, or the
 * exit status (each failure is logged where it is found). */
static int start_serving(struct ev_loop *loop, SSL_CTX *tls)
{
	char err[512];
	int rc;

	if (cache_global_init(worker_wake) < 0) {
		log_error("cannot set up the cache");
		return 1;
	}
	cache_persist_load();
	/* a warm restart from the node's own file, else a warm join from a peer */
	if (warm_read(g_config.cache_snapshot) != 0)
		warm_fetch(g_config.warm_from);
	rc = consistency_start();
	if (rc != 0)
		return rc;  /* consistency_start said why */
	setup_thresholds();
	probe_start(loop);
	if (workers_start(g_config.workers, tls) < 0) {
		log_error("cannot start workers");
		return 1;
	}
	if (listeners_open(loop, &g_config) < 0)
		return 1;  /* listeners_open said which address */
	cache_admin_register();
	if (admin_start(loop, err, sizeof(err)) < 0) {
		log_error("admin interface: %s", err);
		return 1;
	}
	warm_restore(); /* the users are known now: their keys name them */
	warm_watch_start(loop);
	refill_start(); /* the saved keys whose data is not served, read again */
	metrics_register_provider(cache_metrics_render);
	metrics_register_provider(consistency_metrics_render);
	status_start(loop); /* the status page's samples: before the HTTP thread reads them */
	if (http_start(&g_config.metrics, err, sizeof(err)) < 0) {
		log_error("metrics endpoint: %s", err);
		return 1;
	}
	return 0;
}

/* Run the loop until SIGTERM or SIGINT (SIGHUP re-reads the configuration). */
static void serve_until_stopped(struct ev_loop *loop)
{
	ev_signal sig_term, sig_int, sig_hup;

	ev_signal_init(&sig_term, on_stop_signal, SIGTERM);
	ev_signal_start(loop, &sig_term);
	ev_signal_init(&sig_int, on_stop_signal, SIGINT);
	ev_signal_start(loop, &sig_int);
	ev_signal_init(&sig_hup, on_hup, SIGHUP);
	ev_signal_start(loop, &sig_hup);
	log_info("shoal %s started with %d workers", SHOAL_VERSION, g_config.workers);
	/* back in rotation if a drain (this node's, before a restart) took it out */
	pxadmin_set_status("ONLINE");
	ev_run(loop, 0);
}

/* Everything start_serving started, stopped in reverse; the snapshot saved. */
static void stop_serving(struct ev_loop *loop, SSL_CTX *tls)
{
	refill_stop();
	listeners_close(loop); /* (already closed when draining) */
	pxadmin_wait(3000);
	admin_stop();
	http_stop();
	status_stop(loop);
	workers_stop();
	probe_stop();
	consistency_stop();
	save_snapshot();
	cache_global_free();
	warm_free();
	auth_rsa_free();
	argscrub_free(start_argv);
	SSL_CTX_free(tls);
	mysql_library_end();
}

int main(int argc, char **argv)
{
	struct ev_loop *loop = EV_DEFAULT;
	char err[512];
	SSL_CTX *tls;
	int rc = check_snapshot(argc, argv);

	if (rc >= 0)
		return rc;  /* --check-snapshot: its verdict */
	rc = config_load(&g_config, argc, argv, NULL);

	if (rc == CONFIG_HEALTH)
		return healthcheck_run(&g_config.metrics, HEALTHCHECK_TIMEOUT_MS);
	if (rc == 1)
		return 0;  /* --help or --version printed */
	if (rc != 0)
		return wants_health(argc, argv) ? 1 : 2;  /* config_load said why */
	log_set_level(g_config.log_level);
	start_argc = argc;
	/* ps must not show passwords: SIGHUP re-reads a private copy */
	start_argv = argscrub_apply(argc, argv);
	if (!start_argv) {
		log_error("out of memory copying the command line");
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	raise_fd_limit();
	if (auth_rsa_init(g_config.rsa_private_key, g_config.rsa_public_key, err, sizeof(err)) < 0) {
		log_error("RSA key: %s", err);
		return 2;
	}
	tls = setup_tls();
	setup_upstream();
	rc = start_serving(loop, tls);
	if (rc != 0)
		return rc;
	serve_until_stopped(loop);
	stop_serving(loop, tls);
	log_info("stopped");
	return 0;
}
