/*
 * tokenizer_stages.h: tokenizer.c's own half (see tokenizer.c for the four
 * stages): the character classes, the tokenizer's state, the sink and the
 * streaming filters of stages 2 to 4 that stage 1 feeds. Included by
 * tokenizer.c only: the stages are static, and the hot ones inline into
 * stage 1's loop, which they could not across two translation units.
 */
#ifndef SHOAL_SQL_TOKENIZER_STAGES_H
#define SHOAL_SQL_TOKENIZER_STAGES_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "sql/tokenizer.h"

#define HOT static inline __attribute__((always_inline))
#define COLD static __attribute__((noinline, cold))

#define NOSRC UINT32_MAX        /* "no query offset" tag for stage-2 input */
#define CMD_COMMENT_MAX 1023    /* ProxySQL keeps this much of a / *! body */
#define GHOSTS 4                /* remembered number write-backs (stage 1) */
#define S3_QUEUE 8              /* stage-3 push-back capacity */
#define TAIL_PACK 0x2c2e2e2eu   /* ",..." as the last four output bytes */

/* ---- character classes (ProxySQL's, on bytes) -------------------------- */

#define C_IDENT 0x01   /* [A-Za-z0-9$_]: ProxySQL's "normal" characters */
#define C_SPACE 0x02   /* ' ' \t \n \r */
#define C_DIGIT 0x04
#define C_MARK  0x08   /* may open a comment or a string: / # - ' " */

static const unsigned char cclass[256] = {
	['a' ... 'z'] = C_IDENT, ['A' ... 'Z'] = C_IDENT,
	['0' ... '9'] = C_IDENT | C_DIGIT, ['$'] = C_IDENT, ['_'] = C_IDENT,
	[' '] = C_SPACE, ['\t'] = C_SPACE, ['\n'] = C_SPACE, ['\r'] = C_SPACE,
	['/'] = C_MARK, ['#'] = C_MARK, ['-'] = C_MARK, ['\''] = C_MARK,
	['"'] = C_MARK,
};

static inline bool is_ident(unsigned char c)
{
	return cclass[c] & C_IDENT;
}

static inline bool is_sp(unsigned char c)
{
	return cclass[c] & C_SPACE;
}

static inline bool is_dig(unsigned char c)
{
	return cclass[c] & C_DIGIT;
}

static inline bool is_hexd(unsigned char c)
{
	return is_dig(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

static inline bool is_arith(unsigned char c)
{
	return c == '+' || c == '-' || c == '*' || c == '/' || c == '%';
}

static inline unsigned char lower(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') ? (unsigned char)(c | 0x20) : c;
}

/* ---- state ------------------------------------------------------------ */

/* Output buffer; len is the logical length, bytes past cap are dropped. */
struct sink {
	char *buf;
	size_t cap;     /* storable characters (text_cap - 1) */
	size_t len;
	size_t trail;   /* trailing ' ' / ';' count, trimmed at the end */
};

/* Stage 2: operator and space removal (one character of look-ahead). */
struct ops {
	bool have;              /* a character is waiting for its successor */
	unsigned char cur;      /* that character ... */
	uint32_t cur_src;       /* ... its query offset (NOSRC if none) ... */
	int cur_lit;            /* ... and its literal index when it is a '?' */
	unsigned char p1, p2;   /* the two stage-1 characters before it ('0' if none) */
	unsigned char out_last; /* last character this stage let through ('0' if none) */
	unsigned skips;         /* characters dropped so far, saturating at 2 */
	uint32_t sign_src;      /* dropped unary sign waiting for its literal */
	int sign_wait;
};

enum { V_SCAN, V_RUN, V_EXP };

/* Stage 3: value-list grouping. */
struct vals {
	unsigned gl;
	int mode;
	bool gc;                 /* inside '(' (ProxySQL's group_candidate) */
	unsigned char prev;      /* input character before the current one */
	uint32_t tail;           /* last four output characters, newest low */
	unsigned wcount;         /* output characters, saturating */
	size_t pairs;            /* "?," pairs counted by RUN / EXP */
	unsigned char look[2];
	unsigned nlook;
	bool comma;              /* EXP skipped a leading ',' */
	unsigned exp_count;      /* characters consumed by EXP, saturating */
	unsigned char entry_prev;
	unsigned char qc[S3_QUEUE];
	bool qf[S3_QUEUE];       /* true: skip the "...," check for it */
	unsigned qn;
};

enum { G_NORMAL, G_TRACK, G_AFTER, G_ATTEMPT };

/* Stage 4: groups grouping, speculating inside the sink. */
struct grp {
	bool on;
	unsigned gl, ggl;
	size_t gsize;   /* "(?,..,...)," = 2*gl + 6 characters */
	int mode;
	unsigned k;     /* group being matched (TRACK) */
	size_t j;       /* position inside the group pattern */
	size_t start;   /* sink position of the run or of the attempt */
};

/* A number stage 1 wrote out and then replaced by '?' (see ghost_at). */
struct ghost {
	size_t s, m, qoff;
};

struct tk {
	const unsigned char *q;
	size_t len, pos;
	unsigned char pc;       /* ProxySQL's prev_char */
	bool lower, rnull;
	size_t alen;            /* characters emitted by stage 1 */
	unsigned char alast;
	size_t ph_pos;          /* stage-1 slot last given a placeholder ' ' */
	bool ph_set;
	struct ghost gh[GHOSTS];
	unsigned gh_n, gh_head;
	unsigned flags;
	bool semi;              /* stage 1 emitted a ';' ... */
	bool multi;             /* ... and then something else */
	struct sql_tok_result *out;
	struct ops s2;
	struct vals s3;
	struct grp s4;
	struct sink sink;
};

/* ---- sink ------------------------------------------------------------- */

HOT void sink_put(struct sink *k, unsigned char c)
{
	if (k->len < k->cap)
		k->buf[k->len] = (char)c;
	k->len++;
	k->trail = (c == ' ' || c == ';') ? k->trail + 1 : 0;
}

/* Only ever cuts back to just after a ',' or '.', so nothing trails. */
static void sink_cut(struct sink *k, size_t len)
{
	k->len = len;
	k->trail = 0;
}

/* ---- stage 4: groups of groups ---------------------------------------- */

static unsigned char group_char(const struct grp *g, size_t j)
{
	if (j == 0)
		return '(';
	if (j <= 2 * (size_t)g->gl)
		return (j & 1) ? '?' : ',';
	if (j <= 2 * (size_t)g->gl + 3)
		return '.';
	return ')';
}

/* TRACK: a '(' may start "(g),(g),..."; returns false to re-read c. */
static bool grp_track(struct grp *g, struct sink *k, unsigned char c)
{
	size_t glen = g->gsize - 1;

	if (g->j == glen) {             /* between groups: need a ',' */
		if (c != ',')
			return false;
		sink_put(k, c);
		g->k++;
		g->j = 0;
		return true;
	}
	if (c != group_char(g, g->j))
		return false;
	sink_put(k, c);
	if (++g->j == glen && g->k == g->ggl + 1) {
		/* ggl+1 comma-separated groups: keep ggl of them, then "..." */
		sink_cut(k, g->start + g->gsize * g->ggl);
		sink_put(k, '.');
		sink_put(k, '.');
		sink_put(k, '.');
		g->mode = G_AFTER;
	}
	return true;
}

/* ATTEMPT (after a collapse): swallow further groups; false to re-read c. */
static bool grp_attempt(struct grp *g, struct sink *k, unsigned char c)
{
	if (c != group_char(g, g->j)) {
		g->mode = G_NORMAL;
		if (g->j > 0)
			return false;
		sink_put(k, c);         /* ProxySQL copies it unexamined */
		return true;
	}
	sink_put(k, c);
	if (++g->j == g->gsize - 1) {
		sink_cut(k, g->start);
		g->mode = G_AFTER;
	}
	return true;
}

HOT void s4_push(struct tk *t, unsigned char c)
{
	struct grp *g = &t->s4;
	struct sink *k = &t->sink;

	if (!g->on || (g->mode == G_NORMAL && c != '(')) {
		sink_put(k, c);
		return;
	}
	for (;;) {
		switch (g->mode) {
		case G_TRACK:
			if (grp_track(g, k, c))
				return;
			g->mode = G_NORMAL;
			continue;
		case G_AFTER:
			g->mode = G_ATTEMPT;
			g->j = 0;
			g->start = k->len;
			if (c == ',')
				return;
			continue;
		case G_ATTEMPT:
			if (grp_attempt(g, k, c))
				return;
			continue;
		default:
			if (c != '(') {
				sink_put(k, c);
				return;
			}
			g->mode = G_TRACK;
			g->k = 1;
			g->j = 0;
			g->start = k->len;
			continue;
		}
	}
}

/* ---- stage 3: value lists --------------------------------------------- */

HOT void s3_emit(struct tk *t, unsigned char c)
{
	struct vals *v = &t->s3;

	v->tail = v->tail << 8 | c;
	if (v->wcount < 8)
		v->wcount++;
	s4_push(t, c);
}

static void s3_emit_pairs(struct tk *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		s3_emit(t, '?');
		s3_emit(t, ',');
	}
}

/* Puts cs[0..n) back in front of the queue, in order. */
static void s3_unget(struct vals *v, const unsigned char *cs, unsigned n,
		     bool first_plain)
{
	if (n == 0 || v->qn + n > S3_QUEUE)
		return;         /* cannot happen: at most 3 come back at once */
	memmove(v->qc + n, v->qc, v->qn);
	memmove(v->qf + n, v->qf, v->qn * sizeof(v->qf[0]));
	for (unsigned i = 0; i < n; i++) {
		v->qc[i] = cs[i];
		v->qf[i] = first_plain && i == 0;
	}
	v->qn += n;
}

/* End of a "?," run that started at a '?' (broken: 0 end, 1 other, 2 ')'). */
static void run_resolve(struct tk *t, int broken)
{
	struct vals *v = &t->s3;
	unsigned char back[3];
	unsigned nb = 0;
	size_t f = 2 * v->pairs + (broken == 2);

	v->mode = V_SCAN;
	if (v->pairs >= 1 && f >= 2 * (size_t)v->gl + 3) {
		s3_emit_pairs(t, v->gl);
		s3_emit(t, '.');
		s3_emit(t, '.');
		s3_emit(t, '.');
		if (broken == 2) {      /* the char before ')' is dropped */
			back[nb++] = v->look[1];
			v->prev = v->look[0];
		} else {                /* resume at the run's last ',' */
			back[nb++] = ',';
			for (unsigned i = 0; i < v->nlook; i++)
				back[nb++] = v->look[i];
			v->prev = '?';
		}
	} else if (v->pairs >= 1) {
		s3_emit_pairs(t, v->pairs);
		for (unsigned i = 0; i < v->nlook; i++)
			back[nb++] = v->look[i];
		v->prev = ',';
	} else {                        /* a lone '?' */
		s3_emit(t, '?');
		v->prev = '?';
		for (unsigned i = 1; i < v->nlook; i++)
			back[nb++] = v->look[i];
	}
	v->nlook = 0;
	s3_unget(v, back, nb, false);
}

/*
 * End of the check ProxySQL runs after emitting ",...": it skips an optional
 * ',' and following "?," pairs (and a '?' before ')').  Only has an effect
 * when the query itself contains ",...".
 */
COLD void exp_resolve(struct tk *t, bool is_last, bool short_input)
{
	struct vals *v = &t->s3;
	unsigned char back[3];
	unsigned nb = 0;

	v->mode = V_SCAN;
	if (!short_input && (v->pairs >= 1 || is_last)) {
		if (is_last) {
			back[nb++] = v->look[1];
			v->prev = '?';
		} else {
			for (unsigned i = 0; i < v->nlook; i++)
				back[nb++] = v->look[i];
			v->prev = ',';
		}
	} else {
		if (v->comma)
			back[nb++] = ',';
		for (unsigned i = 0; i < v->nlook; i++)
			back[nb++] = v->look[i];
		v->prev = v->entry_prev;
	}
	v->nlook = 0;
	s3_unget(v, back, nb, true);
}

/* Collects B[p], B[p+1]; counts "?," pairs; true when a pair completed. */
static bool s3_look(struct vals *v, unsigned char c)
{
	v->look[v->nlook++] = c;
	if (v->nlook < 2)
		return true;
	if (v->look[0] == '?' && v->look[1] == ',') {
		v->pairs++;
		v->nlook = 0;
		return true;
	}
	return false;
}

HOT void s3_scan(struct tk *t, unsigned char c)
{
	struct vals *v = &t->s3;

	if (v->gc && c == '?' && !is_arith(v->prev)) {
		v->mode = V_RUN;
		v->pairs = 0;
		v->look[0] = c;
		v->nlook = 1;
		return;
	}
	s3_emit(t, c);
	if (c == '(')
		v->gc = true;
	else if (c == ')')
		v->gc = false;
	v->prev = c;
}

/* RUN and EXP modes: feed the look-ahead. */
static void s3_pending(struct tk *t, unsigned char c)
{
	struct vals *v = &t->s3;

	if (v->mode == V_RUN) {
		if (!s3_look(v, c))
			run_resolve(t, v->look[1] == ')' ? 2 : 1);
		return;
	}
	if (v->exp_count < 8)
		v->exp_count++;
	if (!s3_look(v, c))
		exp_resolve(t, v->look[0] == '?' && v->look[1] == ')', false);
}

/* ProxySQL checks the input after each ",..." it emitted inside '('. */
COLD void s3_exp_start(struct tk *t, unsigned char c)
{
	struct vals *v = &t->s3;

	v->mode = V_EXP;
	v->entry_prev = v->prev;
	v->pairs = 0;
	v->nlook = 0;
	v->exp_count = 1;
	v->comma = c == ',';
	if (!v->comma)
		v->look[v->nlook++] = c;
}

HOT void s3_step(struct tk *t, unsigned char c, bool plain)
{
	struct vals *v = &t->s3;

	if (v->mode != V_SCAN)
		s3_pending(t, c);
	else if (!plain && v->gc && v->wcount > 4 && v->tail == TAIL_PACK)
		s3_exp_start(t, c);
	else
		s3_scan(t, c);
}

static void s3_drain(struct tk *t)
{
	struct vals *v = &t->s3;

	while (v->qn > 0) {
		unsigned char c = v->qc[0];
		bool plain = v->qf[0];

		v->qn--;
		memmove(v->qc, v->qc + 1, v->qn);
		memmove(v->qf, v->qf + 1, v->qn * sizeof(v->qf[0]));
		s3_step(t, c, plain);
	}
}

HOT void s3_push(struct tk *t, unsigned char c)
{
	if (t->s3.gl == 0) {
		s4_push(t, c);
		return;
	}
	s3_step(t, c, false);
	if (t->s3.qn > 0)
		s3_drain(t);
}

static void s3_finish(struct tk *t)
{
	struct vals *v = &t->s3;

	if (v->gl == 0)
		return;
	for (;;) {
		s3_drain(t);
		if (v->mode == V_RUN)
			run_resolve(t, 0);
		else if (v->mode == V_EXP)
			exp_resolve(t, false, v->exp_count < 2);
		else
			break;
	}
}

/* ---- stage 2: spaces and unary operators ------------------------------ */

COLD void fold_sign(struct tk *t, unsigned char c, int lit)
{
	struct ops *s = &t->s2;
	struct sql_tok_result *o = t->out;

	if (c == '?' && lit >= 0) {
		struct sql_lit *l = &o->lits[lit];

		if (s->sign_src < l->off) {
			l->len += l->off - s->sign_src;
			l->off = s->sign_src;
			l->flags |= SQL_LIT_SIGNED;
		}
		s->sign_wait = 0;
	} else if (c == ' ' && s->sign_wait == 2) {
		s->sign_wait = 1;
	} else {
		s->sign_wait = 0;
	}
}

/* Decides the waiting character now that its successor rc is known. */
HOT void s2_step(struct tk *t, unsigned char rc)
{
	struct ops *s = &t->s2;
	unsigned char c = s->cur;
	unsigned char lc = s->p1;
	bool drop = false;

	if (s->sign_wait)
		fold_sign(t, c, s->cur_lit);
	if (c == ' ') {
		drop = lc == '(' || rc == ')' || lc == ',' || rc == ',' ||
		       (is_arith(lc) && rc == '?') || (is_arith(rc) && lc == '?');
	} else if (c == '+' || c == '-') {
		/* ProxySQL reads c[-2] from its partly rewritten buffer */
		unsigned char llc = s->skips == 1 ? s->out_last : s->p2;
		unsigned char x = lc == ' ' ? llc : lc;

		if (lc == ' ' && is_ident(llc))
			drop = true;
		else
			drop = !is_ident(x) && x != '?' && x != ')' &&
			       (rc == '?' || rc == ' ');
		if (drop && s->cur_src != NOSRC) {
			s->sign_src = s->cur_src;
			s->sign_wait = 2;
		}
	}
	if (drop) {
		if (s->skips < 2)
			s->skips++;
	} else {
		s->out_last = c;
		s3_push(t, c);
	}
	s->p2 = s->p1;
	s->p1 = c;
}

HOT void s2_push(struct tk *t, unsigned char c, uint32_t src, int lit)
{
	struct ops *s = &t->s2;

	if (s->have)
		s2_step(t, c);
	s->have = true;
	s->cur = c;
	s->cur_src = src;
	s->cur_lit = lit;
}

#endif
