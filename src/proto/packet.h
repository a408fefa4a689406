/*
 * packet.h: MySQL packet framing and the wire encodings: 3-byte length +
 * sequence id headers, little-endian integers, length-encoded integers and
 * strings, and builders for the generic OK, ERR and EOF packets that the
 * node itself sends. Protocol constants (capability and status flags)
 * live here too; the command bytes and what each command is are in
 * command.h, included here for the files that build or read commands.
 */
#ifndef SHOAL_PACKET_H
#define SHOAL_PACKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/command.h"

#define PKT_HEADER_LEN 4
#define PKT_MAX_PAYLOAD 0xffffffu /* a payload of this size continues in the next packet */

/* A statement id in an execute (and in the other statement commands) that
 * means the session's last successfully prepared statement (MariaDB: what
 * mariadb_stmt_execute_direct sends right behind its PREPARE). */
#define STMT_ID_LAST 0xffffffffu

/* capability flags */
#define CAP_LONG_PASSWORD        (1u << 0)
#define CAP_FOUND_ROWS           (1u << 1)
#define CAP_LONG_FLAG            (1u << 2)
#define CAP_CONNECT_WITH_DB      (1u << 3)
#define CAP_NO_SCHEMA            (1u << 4)
#define CAP_COMPRESS             (1u << 5)
#define CAP_ODBC                 (1u << 6)
#define CAP_LOCAL_FILES          (1u << 7)
#define CAP_IGNORE_SPACE         (1u << 8)
#define CAP_PROTOCOL_41          (1u << 9)
#define CAP_INTERACTIVE          (1u << 10)
#define CAP_SSL                  (1u << 11)
#define CAP_IGNORE_SIGPIPE       (1u << 12)
#define CAP_TRANSACTIONS         (1u << 13)
#define CAP_RESERVED             (1u << 14)
#define CAP_SECURE_CONNECTION    (1u << 15)
#define CAP_MULTI_STATEMENTS     (1u << 16)
#define CAP_MULTI_RESULTS        (1u << 17)
#define CAP_PS_MULTI_RESULTS     (1u << 18)
#define CAP_PLUGIN_AUTH          (1u << 19)
#define CAP_CONNECT_ATTRS        (1u << 20)
#define CAP_PLUGIN_AUTH_LENENC   (1u << 21)
#define CAP_CAN_HANDLE_EXPIRED   (1u << 22)
#define CAP_SESSION_TRACK        (1u << 23)
#define CAP_DEPRECATE_EOF        (1u << 24)
/* MySQL 8.0.18+: compressed frames whose payloads are zstd, not zlib; the
 * handshake response then ends with the level byte (compress.h) */
#define CAP_ZSTD_COMPRESSION     (1u << 26)

/* MariaDB's extended capabilities (the upper 32 bits, sent in the greeting's
 * and the handshake response's filler when CLIENT_MYSQL is not set) */
#define MCAP_PROGRESS            (1u << 0)
#define MCAP_STMT_BULK           (1u << 2)
#define MCAP_EXTENDED_METADATA   (1u << 3)
#define MCAP_CACHE_METADATA      (1u << 4)
/* The extended capabilities the node relays, when the upstream offers them:
 * extended metadata changes the column definitions, bulk allows
 * COM_STMT_BULK_EXECUTE. (Progress reports and metadata caching are not
 * offered: docs/architecture.md.) */
#define MCAP_RELAYED             (MCAP_EXTENDED_METADATA | MCAP_STMT_BULK)
/* Not wire bits: mark, in a session's negotiated capabilities (c->caps,
 * whose bits 25 and 27-31 no client gets from the node), a client that
 * negotiated MariaDB's extended metadata, or its bulk operations. */
#define CAP_X_EXT_METADATA       (1u << 28)
#define CAP_X_BULK               (1u << 29)
#define CAP_X_MARIADB            (CAP_X_EXT_METADATA | CAP_X_BULK)

/* status flags */
#define ST_IN_TRANS          0x0001
#define ST_AUTOCOMMIT        0x0002
#define ST_MORE_RESULTS_EXISTS      0x0008
#define ST_CURSOR_EXISTS     0x0040
#define ST_LAST_ROW_SENT     0x0080
#define ST_NO_BACKSLASH_ESCAPES 0x0200
#define ST_IN_TRANS_READONLY 0x2000
#define ST_SESSION_STATE_CHANGED    0x4000
/* The status bits that describe the session rather than one answer: a
 * cached or node-made answer carries the receiving session's values of
 * these (cache hits patch them in, see cache/session.c). */
#define SESSION_STATUS_BITS (ST_IN_TRANS | ST_AUTOCOMMIT | ST_NO_BACKSLASH_ESCAPES | ST_IN_TRANS_READONLY)

/* Inside a transaction: the status says so, or autocommit is off. */
static inline bool status_in_txn(uint16_t status)
{
	return (status & ST_IN_TRANS) || !(status & ST_AUTOCOMMIT);
}

/* error codes the node itself raises */
#define ERR_CON_COUNT_ERROR      1040
#define ERR_HANDSHAKE_ERROR      1043
#define ERR_ACCESS_DENIED_ERROR  1045
#define ERR_UNKNOWN_COM_ERROR    1047
#define ERR_SERVER_SHUTDOWN      1053 /* the node drains */
#define ERR_NET_PACKET_TOO_LARGE 1153
#define ERR_OUT_OF_RESOURCES     1041
#define ERR_NET_UNCOMPRESS_ERROR 1157
#define ERR_NET_READ_ERROR       1158
#define ERR_NET_PACKETS_OUT_OF_ORDER 1156
#define ERR_UNKNOWN_ERROR        1105 /* ER_UNKNOWN_ERROR (HY000): out of memory, ... */
#define ERR_UNKNOWN_STMT_HANDLER 1243
#define ERR_UNSUPPORTED_PS       1295 /* ER_UNSUPPORTED_PS */
#define ERR_INVALID_CHARACTER_STRING 1300 /* ER_INVALID_CHARACTER_STRING */
#define ERR_MALFORMED_PACKET     1835 /* ER_MALFORMED_PACKET */
#define ERR_STMT_HAS_NO_OPEN_CURSOR 1421
#define ERR_NOT_SUPPORTED_AUTH_MODE 1251
#define ERR_SECURE_TRANSPORT_REQUIRED 3159
#define ERR_WRONG_COMPRESSION_LEVEL_CLIENT 3923 /* MySQL's, for a zstd level outside 1..22 */
#define ERR_CONN_HOST_ERROR      2003 /* client-side code: never sent to clients */
/* Sent when the upstream is unreachable: a server-range code, since client
 * libraries (libmariadb) reject error packets carrying 2000..2999. */
#define ERR_UPSTREAM_UNREACHABLE 1429 /* ER_CONNECT_TO_FOREIGN_DATA_SOURCE */

/* A growable byte buffer. */
struct pbuf {
	uint8_t *data;
	size_t len;
	size_t cap;
};

int pbuf_reserve(struct pbuf *b, size_t extra);   /* 0 or -1 (ENOMEM) */
int pbuf_append(struct pbuf *b, const void *p, size_t n);
void pbuf_consume(struct pbuf *b, size_t n);      /* drop n bytes from the front */
void pbuf_free(struct pbuf *b);
/* Release memory above keep bytes when empty (buffers shrink back). */
void pbuf_shrink(struct pbuf *b, size_t keep);

/* little-endian readers; callers check bounds */
static inline uint16_t rd_u16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t rd_u24(const uint8_t *p) { return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16); }
static inline uint32_t rd_u32(const uint8_t *p) { return rd_u24(p) | ((uint32_t)p[3] << 24); }
static inline void wr_u16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void wr_u24(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); }
static inline void wr_u32(uint8_t *p, uint32_t v) { wr_u24(p, v); p[3] = (uint8_t)(v >> 24); }

/* Bounded cursor over a payload, for parsing. Reads past the end set err. */
struct pcur {
	const uint8_t *p;
	const uint8_t *end;
	bool err;
};

static inline void pcur_init(struct pcur *c, const uint8_t *p, size_t n) { c->p = p; c->end = p + n; c->err = false; }
static inline size_t pcur_left(const struct pcur *c) { return (size_t)(c->end - c->p); }
uint8_t pcur_u8(struct pcur *c);
uint16_t pcur_u16(struct pcur *c);
uint32_t pcur_u32(struct pcur *c);
uint64_t pcur_lenenc(struct pcur *c, bool *is_null);
const uint8_t *pcur_bytes(struct pcur *c, size_t n);
/* NUL-terminated string; returns pointer and length (without the NUL). */
const char *pcur_cstr(struct pcur *c, size_t *len);
/* length-encoded string */
const uint8_t *pcur_lenenc_str(struct pcur *c, size_t *len);

/* Writers into a pbuf (all return 0 or -1). */
int put_u8(struct pbuf *b, uint8_t v);
int put_u16(struct pbuf *b, uint16_t v);
int put_u32(struct pbuf *b, uint32_t v);
int put_lenenc(struct pbuf *b, uint64_t v);
int put_lenenc_str(struct pbuf *b, const void *s, size_t n);
size_t lenenc_size(uint64_t v);

/* Start a packet: reserves the header; pkt_end fills in the length. A payload
 * over 16 MiB - 1 is not supported by these builders (the node's own packets
 * are small). */
int pkt_begin(struct pbuf *b, size_t *start);
void pkt_end(struct pbuf *b, size_t start, uint8_t seq);

/* Whole packets. */
int pkt_put_ok(struct pbuf *b, uint8_t seq, uint64_t affected, uint64_t insert_id,
	       uint16_t status, uint16_t warnings, uint32_t caps);
int pkt_put_eof(struct pbuf *b, uint8_t seq, uint16_t status, uint16_t warnings, uint32_t caps);
int pkt_put_err(struct pbuf *b, uint8_t seq, uint16_t code, const char *sqlstate, const char *msg);
/* The same with a printf-style message (cut at 511 bytes). Every ERR the
 * node makes for a client goes through one of these two. */
int pkt_put_errf(struct pbuf *b, uint8_t seq, uint16_t code, const char *sqlstate, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Classify a response payload's first packet. */
static inline bool pkt_is_ok(const uint8_t *pl, size_t n) { return n >= 7 && pl[0] == 0x00; }
static inline bool pkt_is_err(const uint8_t *pl, size_t n) { return n >= 1 && pl[0] == 0xff; }
static inline bool pkt_is_eof(const uint8_t *pl, size_t n) { return n >= 1 && n < 9 && pl[0] == 0xfe; }

#endif
