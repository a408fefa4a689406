/*
 * main.c: the shoal-ha command line: read the settings (config.c), then run
 * one command: register, route, advise, watch or status. docs/ha-agent.md is the
 * reference.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <mysql.h>

#include "ha/advise.h"
#include "ha/config.h"
#include "ha/register.h"
#include "ha/route.h"
#include "ha/status.h"
#include "ha/util.h"
#include "ha/watch.h"

#ifndef SHOAL_VERSION
#define SHOAL_VERSION "dev"
#endif

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: shoal-ha COMMAND [options] [arguments]\n"
		"Shoal %s: keeps ProxySQL's view of the Shoal cache nodes right.\n\n"
		"Commands:\n"
		"  register               put the nodes (and the fallback) into the cache hostgroup\n"
		"  route DIGEST...        send these digests to the cache hostgroup (query rules)\n"
		"  route --remove DIGEST... | route --remove --all\n"
		"                         take the agent's rules for them (or all) out again\n"
		"  route                  list the agent's rules\n"
		"  advise [--apply]       rank ProxySQL's digests, ask the nodes which are cacheable,\n"
		"                         print the routing that saves the most; --apply adds it\n"
		"  watch [--once]         take failing nodes and nodes whose hit counter is flat out\n"
		"                         of rotation (OFFLINE_SOFT), put them back when they recover\n"
		"  status [--html [FILE]]  the nodes (ProxySQL status, health, counters, taken out?)\n"
		"                         and the routed digests (text, hits, hit ratio); --html\n"
		"                         writes the same as one self-contained page\n\n"
		"Options: --config FILE (env SHOAL_HA_CONFIG; key = value lines), --help, --version,\n"
		"and the settings below. Precedence: defaults < config file < environment < flags.\n"
		"Flags take --name=value or --name value.\n\n"
		"Exit status: 0 done; 1 a statement or file write failed; 2 usage or configuration\n"
		"error; 3 no ProxySQL admin reachable; 4 a node unreachable (advise) or not serving\n"
		"(watch --once).\n\nSettings:\n", SHOAL_VERSION);
	config_usage(out);
}

int main(int argc, char **argv)
{
	struct ha_config *cfg = calloc(1, sizeof *cfg);
	char err[1200];
	int rc;

	if (!cfg)
		return HA_EXIT_FAIL;
	if (config_load(cfg, argc, argv, err, sizeof err)) {
		fprintf(stderr, "shoal-ha: %s\n", err);
		free(cfg);
		return HA_EXIT_USAGE;
	}
	if (cfg->help || (cfg->command && strcmp(cfg->command, "help") == 0)) {
		usage(stdout);
		free(cfg);
		return HA_EXIT_OK;
	}
	if (cfg->version) {
		printf("shoal-ha %s\n", SHOAL_VERSION);
		free(cfg);
		return HA_EXIT_OK;
	}
	if (!cfg->command) {
		usage(stderr);
		free(cfg);
		return HA_EXIT_USAGE;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0 || mysql_library_init(0, NULL, NULL)) {
		fprintf(stderr, "shoal-ha: cannot initialise libcurl or the MySQL client library\n");
		free(cfg);
		return HA_EXIT_FAIL;
	}
	if (strcmp(cfg->command, "register") == 0)
		rc = cmd_register(cfg);
	else if (strcmp(cfg->command, "route") == 0)
		rc = cmd_route(cfg);
	else if (strcmp(cfg->command, "advise") == 0)
		rc = cmd_advise(cfg);
	else if (strcmp(cfg->command, "watch") == 0)
		rc = cmd_watch(cfg);
	else if (strcmp(cfg->command, "status") == 0)
		rc = cmd_status(cfg);
	else {
		fprintf(stderr, "shoal-ha: unknown command '%s' (see shoal-ha --help)\n", cfg->command);
		rc = HA_EXIT_USAGE;
	}
	mysql_library_end();
	curl_global_cleanup();
	free(cfg);
	return rc;
}
