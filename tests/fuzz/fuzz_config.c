/*
 * fuzz_config: the configuration parsers of src/config/config.c:
 * config_parse_upstream_url and config_parse_addr on the input as a C string
 * (it ends at the first NUL), config_redact_url (used on every log line
 * that names the upstream) with a small and a large output buffer, and
 * config_load() with the whole input as the config file named by
 * SHOAL_CONFIG (argv and the environment otherwise empty).
 *
 * The file lives in a memfd, read through /proc/self/fd/N: nothing touches
 * the disk. config_load prints its complaints to stderr: scripts/fuzz runs
 * this target with -close_fd_mask=2 (libFuzzer's and the sanitizers' own
 * reports still go to the real stderr).
 *
 * Checked: return values in their documented sets; a failed URL parse leaves
 * the config unchanged; every string field stays NUL-terminated; a loaded
 * config has an upstream URL, 1..8 listeners and a non-zero upstream port;
 * a redacted URL is terminated inside its buffer.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "config/config.h"
#include "config/config_parse.h"
#include "fuzz_util.h"

static struct shoal_config cfg, before;
static int cfg_fd = -1;
static char env_config[64];

static void check_cfg(const struct shoal_config *c)
{
#define TERM(f) FUZZ_CHECK(fuzz_terminated(c->f, sizeof c->f), #f " not terminated")
	TERM(upstream_url);
	TERM(upstream_user.name);
	TERM(upstream_user.password);
	TERM(upstream_host);
	TERM(upstream_db);
	TERM(upstream_tls_ca);
	TERM(rsa_private_key);
	TERM(rsa_public_key);
	TERM(tls_cert);
	TERM(tls_key);
	TERM(config_file);
	TERM(admin_user.name);
	TERM(admin_user.password);
	TERM(monitor_user.name);
	TERM(data_dir);
	TERM(metrics.host);
	TERM(admin.host);
#undef TERM
	FUZZ_CHECK(c->n_listen >= 0 && c->n_listen <= SHOAL_MAX_LISTEN, "n_listen %d", c->n_listen);
	for (int i = 0; i < c->n_listen; i++)
		FUZZ_CHECK(fuzz_terminated(c->listen[i].host, sizeof c->listen[i].host), "listen host");
	FUZZ_CHECK(c->n_allowed_users >= 0 && c->n_allowed_users <= SHOAL_MAX_USERS,
		   "n_allowed_users %d", c->n_allowed_users);
	for (int i = 0; i < c->n_allowed_users; i++)
		FUZZ_CHECK(fuzz_terminated(c->allowed_users[i].name, sizeof c->allowed_users[i].name) &&
			   fuzz_terminated(c->allowed_users[i].password,
					   sizeof c->allowed_users[i].password), "allowed user");
}

static void fuzz_strings(const uint8_t *data, size_t size)
{
	char *s = fuzz_dup_cstr(data, size);
	char err[512], out[1024], small[24];
	struct shoal_addr a;
	int rc;

	config_defaults(&cfg);
	memcpy(&before, &cfg, sizeof cfg);
	err[0] = '\0';
	rc = config_parse_upstream_url(&cfg, s, err, sizeof err);
	FUZZ_CHECK(rc == 0 || rc == -1, "url rc %d", rc);
	if (rc == 0) {
		FUZZ_CHECK(cfg.upstream_host[0] && cfg.upstream_port != 0, "accepted URL without host/port");
		FUZZ_CHECK(strcmp(cfg.upstream_url, s) == 0, "upstream_url not kept as given");
		FUZZ_CHECK(cfg.upstream_user.name[0], "accepted URL without user");
	} else {
		FUZZ_CHECK(memcmp(&cfg, &before, sizeof cfg) == 0, "failed URL parse changed the config");
		FUZZ_CHECK(fuzz_terminated(err, sizeof err) && err[0], "URL error message");
	}
	check_cfg(&cfg);

	rc = config_parse_addr(s, &a);
	FUZZ_CHECK(rc == 0 || rc == -1, "addr rc %d", rc);
	if (rc == 0)
		FUZZ_CHECK(fuzz_terminated(a.host, sizeof a.host) && a.host[0], "addr host");

	memset(out, 0x5a, sizeof out);
	config_redact_url(s, out, sizeof out);
	FUZZ_CHECK(fuzz_terminated(out, sizeof out), "redacted URL not terminated");
	memset(small, 0x5a, sizeof small);
	config_redact_url(s, small, sizeof small);
	FUZZ_CHECK(fuzz_terminated(small, sizeof small), "redacted URL not terminated (small)");
	free(s);
}

static void fuzz_file(const uint8_t *data, size_t size)
{
	char *argv[] = { "shoal", NULL };
	char *envp[] = { env_config, NULL };
	int rc;

	if (ftruncate(cfg_fd, 0) < 0 || pwrite(cfg_fd, data, size, 0) != (ssize_t)size)
		abort();
	rc = config_load(&cfg, 1, argv, envp);
	FUZZ_CHECK(rc == 0 || rc == 2, "config_load returned %d", rc);
	check_cfg(&cfg);
	if (rc == 0) {
		FUZZ_CHECK(cfg.upstream_url[0] && cfg.upstream_port != 0, "loaded without an upstream");
		FUZZ_CHECK(cfg.n_listen >= 1, "loaded without a listener");
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	cfg_fd = memfd_create("shoal-fuzz-config", 0);
	if (cfg_fd < 0) {
		perror("memfd_create");
		abort();
	}
	snprintf(env_config, sizeof env_config, "SHOAL_CONFIG=/proc/self/fd/%d", cfg_fd);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_strings(data, size);
	fuzz_file(data, size);
	return 0;
}
