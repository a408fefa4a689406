/*
 * tokenizer.c: Shoal's single-pass SQL tokenizer (see tokenizer.h).  Owns the
 * ProxySQL-compatible digest_text/digest, the literal spans and the flags.
 *
 * ProxySQL 2.x builds digest_text in four stages over a buffer:
 *   1. literals -> '?', comments dropped ('/ *!NNNNN x * /' keeps "x "),
 *      whitespace folded to one ' ';
 *   2. spaces dropped after '(', before ')', around ',' and between '?' and
 *      an arithmetic operator; unary '+'/'-' before a value dropped;
 *   3. "?,?,?,?,?" runs inside parentheses collapsed to "?,?,?,..."
 *      (grouping_limit);
 *   4. runs of collapsed groups "(?,?,?,...),(..)" cut to
 *      groups_grouping_limit groups followed by "..." ;
 *   and finally trailing ' ' and ';' are trimmed.
 * Here the same stages run as a chain of streaming filters fed by one pass
 * over the query: stage 1 reads the query, each later stage keeps only a
 * few characters of look-ahead plus counters for "?," runs, and stage 4
 * writes straight into the caller's buffer (which also serves as its
 * look-ahead store: a group run is written, then cut back when it
 * collapses).  Nothing is allocated.
 *
 * The stages reproduce ProxySQL's observable behaviour, including quirks
 * that operators will see in its stats (e.g. "a - b" -> "a  b", a number
 * followed directly by a normal character at the very end of the query
 * loses that character, "#"/"-- " comments do not insert a space).  Where
 * ProxySQL reads a byte it never wrote (a stale buffer slot after a "#"
 * comment glued to a token and followed by indentation) we use what its own
 * earlier writes left there when that is known, else ' '.
 *
 * Known divergences (none reachable from valid SQL outside identifiers):
 *   - stage 4 "(..)(..)" groups not separated by ',' among the first
 *     groups_grouping_limit groups are not collapsed;
 *   - stage 4's continuation check after a literal "),..." already present
 *     in the query text is not emulated;
 *   - queries over ProxySQL's 65000-byte query_digests_max_query_length are
 *     normalised in full instead of in 65000-byte refills.
 */
#include "sql/tokenizer.h"

#include <string.h>

#include "sql/spooky.h"

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

/* ---- stage 1: literals, comments, whitespace --------------------------- */

HOT void s1_emit(struct tk *t, unsigned char c, size_t src, int lit)
{
	if (c == ';')
		t->semi = true;
	else if (t->semi && c != ' ')
		t->multi = true;
	t->alen++;
	t->alast = c;
	s2_push(t, c, src < NOSRC ? (uint32_t)src : NOSRC, lit);
}

HOT void s1_copy(struct tk *t, unsigned char c, size_t src)
{
	if (is_sp(c))
		c = ' ';
	else if (t->lower)
		c = lower(c);
	s1_emit(t, c, src, -1);
}

/*
 * Fast path for q[from, to), identifier bytes following the identifier byte
 * stage 2 holds.  Every stage passes such bytes through unchanged, so all
 * but the last (which stage 2 keeps waiting for its successor) go straight
 * to the sink, and each stage's bookkeeping is updated as if they had been
 * pushed one by one.  Callers check that no stage is mid-pattern.
 */
static void s1_word_bulk(struct tk *t, size_t from, size_t to)
{
	const unsigned char *q = t->q;
	struct ops *s = &t->s2;
	struct vals *v = &t->s3;
	struct sink *k = &t->sink;
	size_t m = to - from;   /* bytes let through: the held one + all but last */
	unsigned char c = s->cur;

	for (size_t i = 0; i < m; i++) {
		if (k->len < k->cap)
			k->buf[k->len] = (char)c;
		k->len++;
		v->tail = v->tail << 8 | c;
		s->p2 = s->p1;
		s->p1 = c;
		c = t->lower ? lower(q[from + i]) : q[from + i];
	}
	k->trail = 0;
	s->out_last = s->p1;
	s->sign_wait = 0;
	v->prev = s->p1;
	v->wcount = v->wcount + m < 8 ? v->wcount + (unsigned)m : 8;
	s->cur = c;
	s->cur_src = (uint32_t)(to - 1);
	s->cur_lit = -1;
	t->alen += m;
	t->alast = c;
}

/* True when the identifier byte stage 2 holds would pass every stage as is. */
static bool word_passes(const struct tk *t)
{
	const struct vals *v = &t->s3;

	if (v->gl > 0 && (v->mode != V_SCAN || v->qn > 0 ||
			  (v->gc && v->wcount > 4 && v->tail == TAIL_PACK)))
		return false;
	return !t->s4.on || t->s4.mode == G_NORMAL;
}

/* A run of identifier bytes (copied as is by ProxySQL). */
static void s1_word(struct tk *t)
{
	const unsigned char *q = t->q;
	size_t s = t->pos, e = s + 1;

	while (e < t->len && is_ident(q[e]))
		e++;
	s1_copy(t, q[s], s);
	if (e - s >= 2 && word_passes(t)) {
		s1_word_bulk(t, s + 1, e);  /* s1_copy saw q[s]: multi is up to date */
	} else {
		for (size_t i = s + 1; i < e; i++)
			s1_copy(t, q[i], i);
	}
	t->pc = q[e - 1];
	t->pos = e;
}

static int lit_add(struct tk *t, size_t off, size_t end, int kind, int flags)
{
	struct sql_tok_result *o = t->out;
	struct sql_lit *l;

	if (o->nlits >= SQL_TOK_MAX_LITERALS) {
		o->lits_overflow = true;
		return -1;
	}
	l = &o->lits[o->nlits];
	l->off = (uint32_t)off;
	l->len = (uint32_t)(end - off);
	l->kind = (uint8_t)kind;
	l->flags = (uint8_t)flags;
	return (int)o->nlits++;
}

/*
 * Byte in stage 1's buffer at slot p (== alen) that ProxySQL never wrote in
 * this pass for the output: either the ' ' placeholder its space folding
 * writes ahead, or a leftover character of a number it wrote out before
 * replacing it by '?'.  Unknown slots are taken as ' '.
 */
static unsigned char ghost_at(const struct tk *t, size_t p)
{
	if (t->ph_set && t->ph_pos == p)
		return ' ';
	for (unsigned i = 0; i < t->gh_n; i++) {
		const struct ghost *g = &t->gh[(t->gh_head + GHOSTS - i) % GHOSTS];

		if (p > g->s && p < g->s + g->m) {
			unsigned char c = t->q[g->qoff + (p - g->s)];

			return t->lower ? lower(c) : c;
		}
	}
	return ' ';
}

static void s1_fold_space(struct tk *t)
{
	if (!is_sp(t->alast))
		s1_emit(t, ghost_at(t, t->alen), NOSRC, -1);
	t->ph_pos = t->alen;
	t->ph_set = true;
	t->pc = ' ';
	t->pos++;
}

static void s1_plain(struct tk *t, unsigned char c)
{
	if (t->alen == 0 && is_sp(c)) {
		t->pos++;
		return;
	}
	if (is_sp(t->pc) && is_sp(c)) {
		s1_fold_space(t);
		return;
	}
	if (is_ident(c)) {
		s1_word(t);
		return;
	}
	s1_copy(t, c, t->pos);
	t->pc = c;
	t->pos++;
}

/*
 * '#' to end of line, newline included.  Like ProxySQL 2.7, a '#' found when
 * exactly two bytes follow it ends the comment early and those two bytes are
 * read as SQL again.
 */
static void s1_hash_comment(struct tk *t)
{
	const unsigned char *q = t->q;
	size_t i = t->pos, n = t->len;

	t->flags |= SQL_TOK_HAS_COMMENT;
	for (;;) {
		if (q[i] == '#' && i + 2 <= n) {
			if (++i + 2 == n)
				break;
		}
		if (q[i] == '\n' || q[i] == '\r' || i + 1 == n) {
			t->pc = ' ';
			i++;
			break;
		}
		t->pc = q[i++];
		if (i >= n)
			break;
	}
	t->pos = i;
}

/*
 * "-- " to end of line, newline included.  Like ProxySQL 2.7, any
 * "--<space>" is skipped whole, even when the space is a newline (so "--\n"
 * swallows the next line, which the server would run: SQL_TOK_HIDDEN_SQL),
 * and one that leaves exactly four bytes ends the comment with those bytes
 * read as SQL again.
 */
static void s1_dash_comment(struct tk *t)
{
	const unsigned char *q = t->q;
	size_t i = t->pos, n = t->len;

	t->flags |= SQL_TOK_HAS_COMMENT;
	for (;;) {
		if (i + 4 <= n && q[i] == '-' && q[i + 1] == '-' && is_sp(q[i + 2])) {
			i += 3;
			if (i + 4 == n)
				break;
			if ((q[i - 1] == '\n' || q[i - 1] == '\r') &&
			    q[i] != '\n' && q[i] != '\r')
				t->flags |= SQL_TOK_HIDDEN_SQL;  /* the server ends it there */
		}
		if (q[i] == '\n' || q[i] == '\r' || i + 1 == n) {
			t->pc = ' ';
			i++;
			break;
		}
		t->pc = q[i++];
		if (i >= n)
			break;
	}
	t->pos = i;
}

static bool is_annotation(unsigned char c)
{
	return c == '/' || c == '*' || c == '!' || c == ' ' || is_dig(c);
}

/* Body of a / *! comment: q[from..close] minus "* /", version and spaces. */
static void s1_cmd_text(struct tk *t, size_t from, size_t close)
{
	size_t n = close - from + 1, a = 0;

	if (n > CMD_COMMENT_MAX) {
		n = CMD_COMMENT_MAX;
		t->flags |= SQL_TOK_HIDDEN_SQL; /* the digest keeps only a part */
	}
	if (n >= 2)
		n -= 2;
	while (a < n && is_annotation(t->q[from + a]))
		a++;
	if (a == n)
		return;
	for (size_t i = a; i < n; i++)
		s1_emit(t, t->q[from + i], from + i, -1);
	if (t->alast != ' ')
		s1_emit(t, ' ', NOSRC, -1);
}

static void s1_block_comment(struct tk *t)
{
	const unsigned char *q = t->q;
	size_t n = t->len, from = t->pos;
	bool cmd = false;

	t->flags |= SQL_TOK_HAS_COMMENT;
	for (;;) {
		if (t->pos + 1 < n && q[t->pos] == '/' && q[t->pos + 1] == '*') {
			if (t->pos + 2 < n && q[t->pos + 2] == '!')
				cmd = true;
			/* MariaDB runs the body of / *M! as code, and ProxySQL's
			 * digest drops it: the digest hides SQL */
			else if (t->pos + 3 < n && q[t->pos + 2] == 'M' && q[t->pos + 3] == '!')
				t->flags |= SQL_TOK_HIDDEN_SQL;
			t->pos += 2 + cmd;
			if (t->pos + 1 >= n) {  /* too short: given up */
				t->flags |= SQL_TOK_UNTERMINATED_COMMENT;
				return;
			}
			from = t->pos;
		}
		if (t->pc == '*' && q[t->pos] == '/') {
			if (cmd)
				s1_cmd_text(t, from, t->pos);
			if (t->alen > 0 && t->alast != ' ')
				s1_emit(t, ' ', NOSRC, -1);
			t->pc = ' ';
			t->pos++;
			return;
		}
		t->pc = q[t->pos++];
		if (t->pos >= n) {
			t->flags |= SQL_TOK_UNTERMINATED_COMMENT;
			return;
		}
	}
}

/* Span of a string literal, widened over an adjacent N/X/B/_charset. */
static void s1_string_lit(struct tk *t, size_t start, size_t end)
{
	size_t b = start;
	int kind = SQL_LIT_STRING, flags = 0;

	while (b > 0 && is_ident(t->q[b - 1]))
		b--;
	if (start - b == 1 && strchr("nNxXbB", t->q[b])) {
		unsigned char c = lower(t->q[b]);

		kind = c == 'x' ? SQL_LIT_HEX : c == 'b' ? SQL_LIT_BIT : kind;
		flags = SQL_LIT_INTRODUCER;
	} else if (start - b >= 2 && t->q[b] == '_') {
		flags = SQL_LIT_INTRODUCER;
	} else {
		b = start;
	}
	s1_emit(t, '?', start, lit_add(t, b, end, kind, flags));
}

static void s1_string(struct tk *t)
{
	const unsigned char *q = t->q;
	size_t start = t->pos, n = t->len;
	unsigned char d = q[start];

	t->pc = d;
	t->pos++;
	while (t->pos < n) {
		unsigned char c = q[t->pos];

		if (t->pos > start + 1 &&
		    ((t->pc == '\\' && (c == '\\' || c == d)) ||
		     (t->pc == d && c == d))) {
			if (t->pc == '\\')
				t->flags |= SQL_TOK_BACKSLASH_ESCAPE;
			t->pc = 'X';    /* escape pair: neither half pairs again */
			t->pos++;
			continue;
		}
		if (c == d && (t->pos + 1 == n || q[t->pos + 1] != d)) {
			s1_string_lit(t, start, t->pos + 1);
			t->pc = t->pos + 1 == n ? d : 0;
			t->pos++;
			return;
		}
		t->pc = c;
		t->pos++;
	}
	t->flags |= SQL_TOK_UNTERMINATED_STRING;
}

/* ProxySQL's number test: digits, '.', 'e', e+/e-, or 0x + hex digits. */
static bool is_number(const unsigned char *s, size_t m)
{
	bool hex = false;

	for (size_t k = 0; k < m; k++) {
		unsigned char c = s[k];
		bool fl = c == '.' || (c | 0x20) == 'e' ||
			  (k > 0 && (s[k - 1] | 0x20) == 'e' && (c == '+' || c == '-'));

		if (k == 1 && s[0] == '0' && (c | 0x20) == 'x')
			hex = true;
		else if (!hex && !is_dig(c) && !fl)
			return false;
		else if (hex && !is_hexd(c))
			return false;
	}
	return true;
}

/* Remembers the characters a replaced number left behind '?'. */
static void s1_ghost(struct tk *t, size_t s, size_t m, size_t qoff)
{
	t->gh_head = (t->gh_head + 1) % GHOSTS;
	t->gh[t->gh_head] = (struct ghost){ s, m, qoff };
	if (t->gh_n < GHOSTS)
		t->gh_n++;
}

/*
 * Finishes the number token q[start, i) at q[i] (ProxySQL's rules): if it is
 * a number it becomes '?', else it is copied.  At the very end of the query
 * q[i] itself is not checked, and when it is a normal character it is lost.
 * Returns the position to continue from.
 */
static size_t s1_number_end(struct tk *t, size_t start, size_t i)
{
	const unsigned char *q = t->q;
	bool dropped = i + 1 == t->len && is_ident(q[i]);
	size_t end = dropped ? i + 1 : i;
	bool hex;
	int lit;

	if (i > start && !is_number(q + start, i - start)) {
		for (size_t k = start; k < i; k++)
			s1_copy(t, q[k], k);
		return i;
	}
	hex = i - start >= 2 && (q[start + 1] | 0x20) == 'x';
	lit = lit_add(t, start, end, hex ? SQL_LIT_HEX : SQL_LIT_NUMBER, 0);
	if (i - start >= 2)
		s1_ghost(t, t->alen, i - start, start);
	s1_emit(t, '?', start, lit);
	t->pc = '?';
	return end;
}

static void s1_number(struct tk *t)
{
	const unsigned char *q = t->q;
	size_t start = t->pos, i = start;

	for (;;) {
		unsigned char c = q[i];
		bool fl = c == '.' || ((t->pc | 0x20) == 'e' && (c == '+' || c == '-'));

		if ((!is_ident(c) && !fl) || i + 1 == t->len) {
			t->pos = s1_number_end(t, start, i);
			return;
		}
		t->pc = c;
		i++;
	}
}

static void s1_null(struct tk *t)
{
	const unsigned char *q = t->q + t->pos;
	size_t rem = t->len - t->pos;
	bool found = rem >= 4 && lower(q[0]) == 'n' && lower(q[1]) == 'u' &&
		     lower(q[2]) == 'l' && lower(q[3]) == 'l' &&
		     (rem == 4 || !is_ident(q[4]));

	if (!found) {
		s1_copy(t, q[0], t->pos);
		t->pc = q[0];
		t->pos++;
		return;
	}
	s1_emit(t, '?', t->pos, lit_add(t, t->pos, t->pos + 4, SQL_LIT_NULL, 0));
	t->pc = '?';
	t->pos += 4;
}

/* Comment, string, number or NULL starting at q[p]; false if none. */
static bool s1_special(struct tk *t, size_t p, unsigned char c)
{
	const unsigned char *q = t->q;
	size_t n = t->len;

	if (c == '/' && p + 1 < n && q[p + 1] == '*')
		s1_block_comment(t);
	else if (c == '#')
		s1_hash_comment(t);
	else if (c == '-' && p + 2 < n && q[p + 1] == '-' && is_sp(q[p + 2]))
		return (t->pc != '-' || p == 0) ? (s1_dash_comment(t), true) : false;
	else if (c == '\'' || c == '"')
		s1_string(t);
	else if (!is_ident(t->pc) && is_dig(c))
		s1_number(t);
	else if (!is_ident(t->pc) && (c | 0x20) == 'n' && t->rnull)
		s1_null(t);
	else
		return false;
	return true;
}

static void s1_run(struct tk *t)
{
	while (t->pos < t->len) {
		size_t p = t->pos;
		unsigned char c = t->q[p];

		if ((cclass[c] & (C_MARK | C_DIGIT) || (c | 0x20) == 'n') &&
		    s1_special(t, p, c))
			continue;
		s1_plain(t, c);
	}
}

/* ---- driver ----------------------------------------------------------- */

static void tk_init(struct tk *t, const char *q, size_t len,
		    const struct sql_tok_opts *o, struct sql_tok_result *out)
{
	int gl = o->grouping_limit, ggl = o->groups_grouping_limit;

	gl = gl < 0 ? 0 : gl > SQL_TOK_MAX_GROUPING ? SQL_TOK_MAX_GROUPING : gl;
	ggl = ggl < 0 ? 0 : ggl > SQL_TOK_MAX_GROUPING ? SQL_TOK_MAX_GROUPING : ggl;
	memset(t, 0, sizeof(*t));
	t->q = (const unsigned char *)q;
	t->len = len;
	t->lower = o->lowercase;
	t->rnull = o->replace_null;
	t->out = out;
	t->s2.p1 = t->s2.p2 = t->s2.out_last = '0';   /* ProxySQL's "none" */
	t->s3.gl = (unsigned)gl;
	t->s4.on = gl > 0 && ggl > 0;
	t->s4.gl = (unsigned)gl;
	t->s4.ggl = (unsigned)ggl;
	t->s4.gsize = 2 * (size_t)gl + 6;
	t->sink.buf = out->text;
	t->sink.cap = out->text_cap - 1;
}

static const struct {
	const char *name;
	enum sql_keyword kw;
} keywords[] = {
	{ "SELECT", SQL_KW_SELECT }, { "INSERT", SQL_KW_INSERT },
	{ "UPDATE", SQL_KW_UPDATE }, { "DELETE", SQL_KW_DELETE },
	{ "REPLACE", SQL_KW_REPLACE }, { "SET", SQL_KW_SET },
	{ "SHOW", SQL_KW_SHOW }, { "BEGIN", SQL_KW_BEGIN },
	{ "START", SQL_KW_START }, { "COMMIT", SQL_KW_COMMIT },
	{ "ROLLBACK", SQL_KW_ROLLBACK }, { "USE", SQL_KW_USE },
	{ "CALL", SQL_KW_CALL }, { "WITH", SQL_KW_WITH },
	{ "EXPLAIN", SQL_KW_EXPLAIN }, { "DESCRIBE", SQL_KW_DESCRIBE },
	{ "DESC", SQL_KW_DESCRIBE }, { "CREATE", SQL_KW_CREATE },
	{ "ALTER", SQL_KW_ALTER }, { "DROP", SQL_KW_DROP },
	{ "TRUNCATE", SQL_KW_TRUNCATE }, { "LOCK", SQL_KW_LOCK },
	{ "UNLOCK", SQL_KW_UNLOCK }, { "PREPARE", SQL_KW_PREPARE },
	{ "EXECUTE", SQL_KW_EXECUTE }, { "DEALLOCATE", SQL_KW_DEALLOCATE },
	{ "LOAD", SQL_KW_LOAD }, { "GRANT", SQL_KW_GRANT },
	{ "REVOKE", SQL_KW_REVOKE }, { "KILL", SQL_KW_KILL },
	{ "FLUSH", SQL_KW_FLUSH }, { "DO", SQL_KW_DO },
	{ "HANDLER", SQL_KW_HANDLER }, { "SAVEPOINT", SQL_KW_SAVEPOINT },
	{ "RELEASE", SQL_KW_RELEASE }, { "XA", SQL_KW_XA },
	{ "ANALYZE", SQL_KW_ANALYZE }, { "OPTIMIZE", SQL_KW_OPTIMIZE },
};

static enum sql_keyword first_keyword(const char *s, size_t n)
{
	char w[12];
	size_t i = 0, m = 0;

	while (i < n && (s[i] == '(' || s[i] == ' '))
		i++;
	while (i + m < n && m < sizeof(w) && ((s[i + m] | 0x20) >= 'a' &&
					      (s[i + m] | 0x20) <= 'z')) {
		w[m] = (char)(s[i + m] & ~0x20);
		m++;
	}
	if (m == 0)
		return i < n ? SQL_KW_OTHER : SQL_KW_NONE;
	if (m == sizeof(w) || (i + m < n && is_ident((unsigned char)s[i + m])))
		return SQL_KW_OTHER;
	for (size_t k = 0; k < sizeof(keywords) / sizeof(keywords[0]); k++)
		if (strlen(keywords[k].name) == m && memcmp(keywords[k].name, w, m) == 0)
			return keywords[k].kw;
	return SQL_KW_OTHER;
}

static void tk_finish(struct tk *t)
{
	struct sql_tok_result *o = t->out;
	struct sink *k = &t->sink;
	size_t len, vis;

	if (t->s2.have)
		s2_step(t, '\0');
	s3_finish(t);
	/* trailing ' ' and ';' go, but never the first character */
	len = k->len - k->trail;
	if (len == 0 && k->len > 0)
		len = 1;
	vis = len < k->cap ? len : k->cap;
	k->buf[vis] = '\0';
	o->text_len = strlen(k->buf);
	o->digest = spooky_hash64(k->buf, o->text_len < SQL_DIGEST_HASH_MAX ?
				  o->text_len : SQL_DIGEST_HASH_MAX, 0);
	o->keyword = first_keyword(k->buf, o->text_len);
	o->flags = t->flags;
	if (len > k->cap)
		o->flags |= SQL_TOK_TEXT_TRUNCATED;
	if (t->multi)
		o->flags |= SQL_TOK_MULTI_STATEMENT;
	o->ok = !(t->flags & (SQL_TOK_UNTERMINATED_STRING |
			      SQL_TOK_UNTERMINATED_COMMENT));
}

int sql_tokenize_opts(const char *q, size_t len, const struct sql_tok_opts *opts,
		      struct sql_tok_result *out)
{
	static const struct sql_tok_opts defaults = SQL_TOK_OPTS_DEFAULT;
	struct tk t;

	if (!out)
		return -1;
	out->text_len = 0;
	out->digest = 0;
	out->nlits = 0;
	out->lits_overflow = false;
	out->keyword = SQL_KW_NONE;
	out->flags = 0;
	out->ok = false;
	if (!out->text || out->text_cap < SQL_TOK_MIN_TEXT_CAP ||
	    (!q && len > 0) || len >= (size_t)UINT32_MAX)
		return -1;
	tk_init(&t, q, len, opts ? opts : &defaults, out);
	s1_run(&t);
	tk_finish(&t);
	return 0;
}

int sql_tokenize(const char *q, size_t len, struct sql_tok_result *out)
{
	return sql_tokenize_opts(q, len, NULL, out);
}

static void hex16(uint64_t v, char *dst, const char *digits)
{
	for (int i = 15; i >= 0; i--) {
		dst[i] = digits[v & 0xf];
		v >>= 4;
	}
}

void sql_query_id(uint64_t digest, char out[19])
{
	out[0] = 'q';
	out[1] = '_';
	hex16(digest, out + 2, "0123456789abcdef");
	out[18] = '\0';
}

void sql_digest_hex(uint64_t digest, char out[19])
{
	out[0] = '0';
	out[1] = 'x';
	hex16(digest, out + 2, "0123456789ABCDEF");
	out[18] = '\0';
}

const char *sql_keyword_name(enum sql_keyword kw)
{
	if (kw == SQL_KW_NONE)
		return "";
	for (size_t k = 0; k < sizeof(keywords) / sizeof(keywords[0]); k++)
		if (keywords[k].kw == kw)
			return keywords[k].name;
	return "OTHER";
}
