/*
 * identity.c - function identity across builds (include/prof/identity.h):
 * name normalization (demangling, Rust hashes, LLVM and GCC suffixes),
 * module roles (the program, sonames), clashes of static functions told
 * apart by their source file, overrides, and the join of clones only one
 * build has.  The one implementation behind every join of two profiles.
 *
 * Why these rules:
 *  - Rust legacy symbols end in "::h" + 16 hex digits, a hash of the crate's
 *    metadata: it changes with any `-C metadata` or dependency change, so it
 *    is never part of an identity (libiberty and valgrind hide it too).
 *  - ".llvm.<n>" is added by ThinLTO to promoted local symbols; <n> is a
 *    module hash that changes between builds.
 *  - GCC clones (.constprop.N, .isra.N, .part.N, .cold) are separate code,
 *    and a build can have both "f" and "f.cold": they stay apart, and are
 *    joined only when a clone exists in one build and not in the other.
 *  - The program is "the module that is not a shared object", not a path:
 *    a recording of deps/bench-3f9a and a callgrind file of
 *    /home/runner/work/x/bench-77be must agree on it.
 */
#include "prof/identity.h"
#include "prof/symbol.h"
#include <ctype.h>
#include <errno.h>
#include <string.h>

/* --- Rust legacy escapes (names a C++ demangler left half done) ------------------------------------------------------ */

static bool is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return false;
	return true;
}

/* "h0123456789abcdef": the hash component of a legacy Rust symbol. */
static bool is_rust_hash(const char *s, size_t n)
{
	return n == 17 && s[0] == 'h' && is_hex(s + 1, 16);
}

static const struct { const char *esc; char c; } rust_escapes[] = {
	{ "$SP$", '@' }, { "$BP$", '*' }, { "$RF$", '&' }, { "$LT$", '<' },
	{ "$GT$", '>' }, { "$LP$", '(' }, { "$RP$", ')' }, { "$C$", ',' },
};

/* Decodes one "$..$" escape at s: its length and the character, or 0. */
static size_t rust_escape(const char *s, size_t n, char *c)
{
	for (size_t i = 0; i < ARRAY_SIZE(rust_escapes); i++) {
		size_t len = strlen(rust_escapes[i].esc);
		if (n >= len && !memcmp(s, rust_escapes[i].esc, len)) {
			*c = rust_escapes[i].c;
			return len;
		}
	}
	/* $uXX$: one character by its hex code */
	if (n >= 5 && s[1] == 'u' && is_hex(s + 2, 2) && s[4] == '$') {
		*c = (char)strtol((char[]){ s[2], s[3], 0 }, NULL, 16);
		return 5;
	}
	return 0;
}

/* Appends a legacy-escaped Rust path ("_$LT$impl$u20$a..B$GT$") decoded. */
static void rust_unescape(struct strbuf *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		bool at_start = i == 0 || (i >= 2 && s[i - 1] == ':' && s[i - 2] == ':');
		char c;
		size_t len;
		if (at_start && s[i] == '_' && i + 1 < n && s[i + 1] == '$') {
			i++;	/* a component starting with '$' gets a '_' in front */
			continue;
		}
		if (s[i] == '$' && (len = rust_escape(s + i, n - i, &c))) {
			sb_addch(out, c);
			i += len;
		} else if (s[i] == '.' && i + 1 < n && s[i + 1] == '.') {
			sb_adds(out, "::");
			i += 2;
		} else {
			sb_addch(out, s[i++]);
		}
	}
}

/* _ZN<len><ident>...17h<hash>E: the components joined by "::", no hash. */
/* The one demangler (src/symbol/demangle.c, libiberty): C++, Rust legacy
 * and v0; normalize() then peels what is left of compiler noise. */
/* The demangled form of a mangled symbol (malloc'ed), or NULL when raw is
 * not mangled or cannot be demangled here.  Handles Rust legacy (_ZN..17h<hash>E);
 * C++ and Rust v0 names come demangled from the symbolizer. */
static char *prof_ident_demangle(const char *raw)
{
	char *d = prof_sym_demangle(raw);
	const char *dot = d ? NULL : strchr(raw, '.');

	if (!dot)
		return d;
	/* "_ZN..E.llvm.123": libiberty refuses the suffix; keep it for peel() */
	char *head = xstrndup(raw, (size_t)(dot - raw));
	d = prof_sym_demangle(head);
	free(head);
	if (!d)
		return NULL;
	char *full = xasprintf("%s%s", d, dot);
	free(d);
	return full;
}

/* --- suffixes ----------------------------------------------------------------- */

static bool all_digits(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

static bool ends_with(const char *s, size_t n, const char *tail)
{
	size_t t = strlen(tail);
	return n >= t && !memcmp(s + n - t, tail, t);
}

/* Length of a GCC clone suffix at the end of s[0..n) (".constprop.0",
 * ".cold", ".isra.1"), 0 if none. */
static size_t clone_suffix(const char *s, size_t n)
{
	static const char *const words[] = {
		"cold", "isra", "constprop", "part", "lto_priv", "localalias", "clone", "specialized",
	};
	size_t end = n;
	const char *dot = memrchr(s, '.', end);

	if (dot && all_digits(dot + 1, (size_t)(s + end - dot - 1)))
		end = (size_t)(dot - s);	/* ".constprop.0": the number goes with the word */
	dot = memrchr(s, '.', end);
	if (!dot || dot == s)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if ((size_t)(s + end - dot - 1) == strlen(words[i]) &&
		    !memcmp(dot + 1, words[i], strlen(words[i])))
			return n - (size_t)(dot - s);
	return 0;
}

/* "memcpy@@GLIBC_2.14", "stat@GLIBC_2.2.5": a symbol version, not a name. */
static size_t symbol_version(const char *s, size_t n)
{
	const char *at = memchr(s, '@', n);

	if (!at || at == s || at + strspn(at, "@") >= s + n)
		return 0;
	for (const char *p = at; p < s + n; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != '.' && *p != '@')
			return 0;
	return (size_t)(s + n - at);
}

/* Peels one noise or clone suffix off s[0..*n); false when none is left. */
static bool peel(const char *s, size_t *n, struct strbuf *clone, bool *rust)
{
	const char *dot = memrchr(s, '.', *n);
	size_t len;

	if ((len = symbol_version(s, *n))) {
		*n -= len;
		return true;
	}
	if (*n > 19 && ends_with(s, *n - 17, "::") && is_rust_hash(s + *n - 17, 17)) {
		*n -= 19;
		*rust = true;
		return true;
	}
	if (dot && dot - s >= 5 && !memcmp(dot - 5, ".llvm", 5) &&
	    all_digits(dot + 1, (size_t)(s + *n - dot - 1))) {
		*n = (size_t)(dot - 5 - s);
		return true;
	}
	if (ends_with(s, *n, "]")) {	/* C++: "f(int) [clone .constprop.0]" */
		const char *open = NULL;
		for (size_t i = *n; i >= 8 && !open; i--)
			if (!memcmp(s + i - 8, " [clone ", 8))
				open = s + i - 8;
		if (open) {
			char *prev = xstrdup(sb_str(clone));
			sb_reset(clone);
			sb_add(clone, open + 8, (size_t)(s + *n - 1 - (open + 8)));
			sb_adds(clone, prev);
			free(prev);
			*n = (size_t)(open - s);
			return true;
		}
	}
	if ((len = clone_suffix(s, *n))) {
		char *prev = xstrdup(sb_str(clone));
		sb_reset(clone);
		sb_add(clone, s + *n - len, len);
		sb_adds(clone, prev);
		free(prev);
		*n -= len;
		return true;
	}
	return false;
}

/* Length of a Python frame's " (file.py:LINE)" (its def line, which moves
 * with every edit above it: never part of an identity), 0 if none. */
static size_t python_suffix(const char *s, size_t n)
{
	const char *open = NULL;

	if (n < 9 || s[n - 1] != ')')
		return 0;
	for (size_t i = n - 1; i >= 2 && !open; i--)
		if (s[i - 2] == ' ' && s[i - 1] == '(')
			open = s + i - 2;
	if (!open)
		return 0;
	const char *colon = memrchr(open, ':', (size_t)(s + n - open));
	if (!colon || colon - open < 5 || memcmp(colon - 3, ".py", 3) ||
	    !all_digits(colon + 1, (size_t)(s + n - 1 - colon - 1)))
		return 0;
	return (size_t)(s + n - open);
}

/* A Rust closure is "{closure#N}" where DWARF or v0 mangling numbers it
 * and "{{closure}}" where only a legacy symbol names it (callgrind files,
 * binaries without DWARF): one key for both, or the two sides of a
 * cross-check never join. */
static void closures_as_legacy(struct strbuf *name)
{
	static const char v0[] = "{closure#";
	char *p;

	while ((p = strstr(name->buf, v0))) {
		char *end = strchr(p, '}');
		if (!end)
			return;
		struct strbuf out = STRBUF_INIT;
		sb_add(&out, name->buf, (size_t)(p - name->buf));
		sb_adds(&out, "{{closure}}");
		sb_adds(&out, end + 1);
		sb_reset(name);
		sb_adds(name, sb_str(&out));
		sb_release(&out);
	}
}

void prof_ident_normalize(const char *raw, struct strbuf *name, struct strbuf *clone)
{
	char *dem = prof_ident_demangle(raw);
	const char *s = dem ? dem : raw;
	size_t n = strlen(s);
	bool rust = false;

	sb_reset(name);
	sb_reset(clone);
	n -= python_suffix(s, n);
	while (n && peel(s, &n, clone, &rust))
		;
	/* a legacy Rust name demangled by a C++ demangler keeps its escapes */
	if (rust && (memmem(s, n, "$", 1) || memmem(s, n, "..", 2)))
		rust_unescape(name, s, n);
	else
		sb_add(name, s, n);
	if (!name->len)
		sb_adds(name, raw);
	closures_as_legacy(name);
	free(dem);
}

/* --- modules ------------------------------------------------------------------ */

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* Offset just past ".so" in a file name, 0 if it is not a shared object. */
static size_t so_end(const char *base)
{
	for (const char *p = strstr(base, ".so"); p; p = strstr(p + 1, ".so"))
		if (p[3] == '\0' || (p[3] == '.' && isdigit((unsigned char)p[4])))
			return (size_t)(p + 3 - base);
	return 0;
}

bool prof_ident_is_shared_object(const char *path)
{
	return so_end(base_of(path)) > 0;
}

static bool is_pseudo_module(const char *path)
{
	return !*path || path[0] == '[' || !strcmp(path, "???") || !strncmp(path, "//anon", 6);
}

void prof_ident_module_role(const char *path, struct strbuf *out)
{
	const char *base = base_of(path);
	size_t end = so_end(base);

	sb_reset(out);
	if (is_pseudo_module(path)) {
		sb_adds(out, *path ? path : "[none]");
		return;
	}
	if (strlen(base) > 3 && !strcmp(base + strlen(base) - 3, ".py")) {
		sb_adds(out, base);	/* a Python module: its file name */
		return;
	}
	if (!end)
		return;		/* the program */
	/* the soname keeps the major version only: libstdc++.so.6.0.30 -> .so.6 */
	if (base[end] == '.')
		end += 1 + strspn(base + end + 1, "0123456789");
	sb_add(out, base, end);
}

/* --- the set ------------------------------------------------------------------- */

void prof_idset_init(struct prof_idset *s)
{
	memset(s, 0, sizeof(*s));
	strtab_init(&s->strs);
	strtab_init(&s->keys);
}

static void free_maps(struct prof_ident_map *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(m[i].from);
		free(m[i].to);
	}
}

void prof_idset_free(struct prof_idset *s)
{
	strtab_free(&s->strs);
	strtab_free(&s->keys);
	VEC_FREE(&s->ids);
	free_maps(s->map_modules.v, s->map_modules.n);
	free_maps(s->map_functions.v, s->map_functions.n);
	VEC_FREE(&s->map_modules);
	VEC_FREE(&s->map_functions);
}

static int add_map(prof_ident_maps *maps, const char *spec)
{
	const char *eq = strchr(spec, '=');

	if (!eq || eq == spec || !eq[1])
		return -EINVAL;
	struct prof_ident_map m = { xstrndup(spec, (size_t)(eq - spec)), xstrdup(eq + 1) };
	VEC_PUSH(maps, m);
	return 0;
}

int prof_idset_map_module(struct prof_idset *s, const char *spec)
{
	return add_map(&s->map_modules, spec);
}

int prof_idset_map_function(struct prof_idset *s, const char *spec)
{
	return add_map(&s->map_functions, spec);
}

/* The module path after --map-module (matched on path, file name or soname). */
static const char *mapped_module(const struct prof_idset *s, const char *path, struct strbuf *tmp)
{
	if (!s->map_modules.n)
		return path;
	prof_ident_module_role(path, tmp);
	for (size_t i = 0; i < s->map_modules.n; i++) {
		const char *from = s->map_modules.v[i].from;
		if (!strcmp(from, path) || !strcmp(from, base_of(path)) ||
		    (tmp->len && !strcmp(from, tmp->buf)))
			return s->map_modules.v[i].to;
	}
	return path;
}

/* name and clone of raw after --map-function (matched on raw, name, name+clone). */
static void mapped_name(const struct prof_idset *s, const char *raw, struct strbuf *name,
			struct strbuf *clone)
{
	prof_ident_normalize(raw, name, clone);
	for (size_t i = 0; i < s->map_functions.n; i++) {
		const char *from = s->map_functions.v[i].from;
		size_t nl = name->len;
		if (strcmp(from, raw) && strcmp(from, sb_str(name)) &&
		    !(clone->len && !strncmp(from, name->buf, nl) && !strcmp(from + nl, clone->buf)))
			continue;
		prof_ident_normalize(s->map_functions.v[i].to, name, clone);
		return;
	}
}

/*
 * The key of a shared object's function: without leading underscores and
 * glibc's "__GI_" prefix.  Libraries export one function under several
 * names (snprintf, __snprintf, __GI___snprintf) and every tool picks its
 * own: valgrind says snprintf where the symbol table walk says __snprintf.
 */
static const char *alias_key(const char *name)
{
	if (!strncmp(name, "__GI_", 5) && name[5])
		name += 5;
	while (name[0] == '_' && name[1] && name[1] != ':')
		name++;
	return name;
}

struct rec_key {
	uint32_t name, clone, module;	/* s->strs ids: the key */
	uint32_t shown;			/* s->strs id: the name as normalized (display) */
	uint32_t group;			/* clash group (same name, clone, module) */
	const char *path, *file;
};

static uint32_t intern_ident(struct prof_idset *s, const struct rec_key *k, const char *file,
			     struct strbuf *sb)
{
	sb_reset(sb);
	sb_addf(sb, "%s\x1f%s\x1f%s\x1f%s", prof_ident_str(s, k->name), prof_ident_str(s, k->clone),
		prof_ident_str(s, k->module), file);
	size_t before = s->keys.strs.n;
	uint32_t key = strtab_intern_n(&s->keys, sb->buf, sb->len);
	if (s->keys.strs.n != before) {
		const char *shown = *prof_ident_str(s, k->module) ? prof_ident_str(s, k->module)
								  : base_of(k->path);
		struct prof_ident id = {
			.name = k->name, .clone = k->clone, .module = k->module,
			.file = strtab_intern(&s->strs, file),
			.shown_module = strtab_intern(&s->strs, shown),
		};
		sb_reset(sb);
		sb_addf(sb, "%s%s", prof_ident_str(s, k->shown), prof_ident_str(s, k->clone));
		id.shown_name = strtab_intern(&s->strs, sb_str(sb));
		VEC_PUSH(&s->ids, id);
	}
	return key - 1;		/* key ids are dense from 1 ("" is 0) */
}

/* Length of the directory prefix every path of files shares ("/a/src/"). */
static size_t common_root(const char **files, size_t n)
{
	size_t len = strlen(files[0]);

	for (size_t i = 1; i < n; i++) {
		size_t k = 0;
		while (k < len && files[i][k] == files[0][k])
			k++;
		len = k;
	}
	while (len && files[0][len - 1] != '/')
		len--;
	return len;
}

struct clash {
	uint64_t token;		/* first non-zero token */
	bool clashes;		/* a second, different token */
	VEC(const char *) files;	/* distinct non-empty files, when clashing */
	size_t root;
};

static void add_file(struct clash *c, const char *file)
{
	if (!*file)
		return;
	for (size_t i = 0; i < c->files.n; i++)
		if (!strcmp(c->files.v[i], file))
			return;
	VEC_PUSH(&c->files, file);
}

void prof_idset_add_input(struct prof_idset *s, const struct prof_ident_rec *recs, size_t n,
			  uint32_t *ids)
{
	struct strbuf name = STRBUF_INIT, clone = STRBUF_INIT, role = STRBUF_INIT, tmp = STRBUF_INIT;
	struct rec_key *keys = xcalloc(n + 1, sizeof(*keys));
	struct clash *groups = xcalloc(n + 1, sizeof(*groups));
	struct strtab group_keys;

	strtab_init(&group_keys);
	for (size_t i = 0; i < n; i++) {
		struct rec_key *k = &keys[i];
		k->path = mapped_module(s, recs[i].module ? recs[i].module : "", &tmp);
		k->file = recs[i].file ? recs[i].file : "";
		prof_ident_module_role(k->path, &role);
		mapped_name(s, recs[i].name && *recs[i].name ? recs[i].name : "[unknown]", &name, &clone);
		k->shown = strtab_intern(&s->strs, sb_str(&name));
		k->name = role.len && !is_pseudo_module(role.buf) ?
			  strtab_intern(&s->strs, alias_key(sb_str(&name))) : k->shown;
		k->clone = strtab_intern(&s->strs, sb_str(&clone));
		k->module = strtab_intern(&s->strs, sb_str(&role));
		sb_reset(&tmp);
		sb_addf(&tmp, "%u.%u.%u", k->name, k->clone, k->module);
		k->group = strtab_intern(&group_keys, sb_str(&tmp));
		struct clash *g = &groups[k->group];
		if (!recs[i].token)
			continue;
		if (!g->token)
			g->token = recs[i].token;
		else if (g->token != recs[i].token)
			g->clashes = true;
	}
	for (size_t i = 0; i < n; i++)
		if (groups[keys[i].group].clashes)
			add_file(&groups[keys[i].group], keys[i].file);
	for (size_t g = 0; g <= n; g++)
		if (groups[g].files.n > 1)
			groups[g].root = common_root(groups[g].files.v, groups[g].files.n);
	for (size_t i = 0; i < n; i++) {
		const struct clash *g = &groups[keys[i].group];
		/* two functions, one name: the file tells them apart (if it can) */
		const char *file = g->files.n > 1 && strlen(keys[i].file) > g->root ?
				   keys[i].file + g->root : "";
		ids[i] = intern_ident(s, &keys[i], file, &tmp);
	}
	for (size_t g = 0; g <= n; g++)
		VEC_FREE(&groups[g].files);
	strtab_free(&group_keys);
	free(groups);
	free(keys);
	sb_release(&name);
	sb_release(&clone);
	sb_release(&role);
	sb_release(&tmp);
}

uint32_t *prof_idset_add_profile(struct prof_idset *s, const struct prof_profile *p)
{
	struct prof_ident_rec *recs = xcalloc(p->frames.n + 1, sizeof(*recs));
	uint32_t *ids = xcalloc(p->frames.n + 1, sizeof(*ids));

	for (size_t i = 0; i < p->frames.n; i++) {
		const struct prof_frame *f = &p->frames.v[i];
		bool has_module = f->module < p->modules.n;
		bool python = has_module && (p->modules.v[f->module].flags & PROF_MOD_PYTHON);
		recs[i] = (struct prof_ident_rec){
			.name = prof_str(p, f->func),
			.module = has_module ? prof_str(p, p->modules.v[f->module].path) : "",
			.file = prof_str(p, f->file),
			/* an inlined frame's addr is its caller's entry: no evidence;
			 * a Python function's module is its .py file */
			.token = python ? ((uint64_t)f->module + 1) << 48 :
				 !f->inlined && f->addr ? ((uint64_t)f->module + 1) << 48 ^ f->addr : 0,
		};
	}
	prof_idset_add_input(s, recs, p->frames.n, ids);
	free(recs);
	return ids;
}

void prof_idset_merge_clones(const struct prof_idset *s, const uint8_t *present, uint32_t *canon)
{
	struct strtab groups;
	struct strbuf sb = STRBUF_INIT;
	uint32_t *group = xcalloc(s->ids.n + 1, sizeof(*group));
	/* per group: the base-only and head-only ids, and how many of each */
	uint32_t (*only)[2] = xcalloc(s->ids.n + 2, sizeof(*only));
	uint32_t (*count)[2] = xcalloc(s->ids.n + 2, sizeof(*count));

	strtab_init(&groups);
	for (uint32_t id = 0; id < s->ids.n; id++) {
		const struct prof_ident *x = &s->ids.v[id];
		canon[id] = id;
		sb_reset(&sb);
		sb_addf(&sb, "%u.%u.%u", x->name, x->module, x->file);
		group[id] = strtab_intern(&groups, sb_str(&sb));
		int side = present[id] == 1 ? 0 : present[id] == 2 ? 1 : -1;
		if (side < 0)
			continue;
		only[group[id]][side] = id;
		count[group[id]][side]++;
	}
	for (uint32_t id = 0; id < s->ids.n; id++) {
		uint32_t g = group[id];
		if (count[g][0] == 1 && count[g][1] == 1 && only[g][1] == id)
			canon[id] = only[g][0];
	}
	strtab_free(&groups);
	sb_release(&sb);
	free(group);
	free(only);
	free(count);
}

uint32_t prof_idset_find(const struct prof_idset *s, const char *name, const char *module)
{
	struct strbuf n = STRBUF_INIT, clone = STRBUF_INIT, role = STRBUF_INIT;
	uint32_t found = PROF_NONE;
	bool ambiguous = false;

	prof_ident_normalize(name, &n, &clone);
	if (module)
		prof_ident_module_role(module, &role);
	for (uint32_t id = 0; id < s->ids.n; id++) {
		const struct prof_ident *x = &s->ids.v[id];
		if (strcmp(prof_ident_str(s, x->name), sb_str(&n)) ||
		    strcmp(prof_ident_str(s, x->clone), sb_str(&clone)) ||
		    (module && strcmp(prof_ident_str(s, x->module), sb_str(&role))))
			continue;
		ambiguous |= found != PROF_NONE;
		found = id;
	}
	sb_release(&n);
	sb_release(&clone);
	sb_release(&role);
	return ambiguous ? PROF_NONE : found;
}
