#include "llama_shim.h"
#include <llama.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

struct pl_model { struct llama_model *model; const struct llama_vocab *vocab; };
struct pl_context { struct llama_context *ctx; pl_model *m; int32_t abort_flag; };
struct pl_batch { struct llama_batch batch; int32_t capacity; };
struct pl_sampler {
    struct llama_sampler *chain;    // penalties, top-k, top-p, min-p, temperature, dist/greedy
    struct llama_sampler *grammar;  // NULL when unconstrained
    llama_token_data *cur;
    int32_t n_vocab;
};

static pl_log_fn g_log_fn = NULL;
static void *g_log_ud = NULL;

static void pl_log_trampoline(enum ggml_log_level level, const char *text, void *ud) {
    (void)ud;
    if (!g_log_fn) return;
    int l = 2;
    switch (level) {
        case GGML_LOG_LEVEL_DEBUG: l = 1; break;
        case GGML_LOG_LEVEL_INFO: l = 2; break;
        case GGML_LOG_LEVEL_WARN: l = 3; break;
        case GGML_LOG_LEVEL_ERROR: l = 4; break;
        default: l = 1; break;  // CONT and NONE: continuation lines, treat as debug
    }
    g_log_fn(l, text, g_log_ud);
}

void pl_log_forward(int level, const char *text) {
    if (g_log_fn) g_log_fn(level, text, g_log_ud);
}

void pl_init(pl_log_fn fn, void *user_data) {
    static int initialised = 0;
    g_log_fn = fn;
    g_log_ud = user_data;
    llama_log_set(pl_log_trampoline, NULL);
    if (!initialised) {
        llama_backend_init();
        initialised = 1;
    }
}

static void set_err(char *err, size_t len, const char *msg) {
    if (err && len) { snprintf(err, len, "%s", msg); }
}

// MARK: model

pl_model *pl_model_load(const char *path, int32_t n_gpu_layers, bool vocab_only, char *err, size_t err_len) {
    struct llama_model_params mp = llama_model_default_params();
    mp.n_gpu_layers = n_gpu_layers;
    mp.vocab_only = vocab_only;
    struct llama_model *model = llama_model_load_from_file(path, mp);
    if (!model) { set_err(err, err_len, "llama.cpp could not load the model file"); return NULL; }
    pl_model *m = calloc(1, sizeof(pl_model));
    if (!m) { llama_model_free(model); set_err(err, err_len, "out of memory"); return NULL; }
    m->model = model;
    m->vocab = llama_model_get_vocab(model);
    return m;
}

int32_t pl_model_n_layer(const pl_model *m) { return llama_model_n_layer(m->model); }

// MARK: devices

size_t pl_device_count(void) { return ggml_backend_dev_count(); }

bool pl_device_get(size_t i, pl_device *out) {
    if (!out || i >= ggml_backend_dev_count()) return false;
    ggml_backend_dev_t d = ggml_backend_dev_get(i);
    if (!d) return false;
    memset(out, 0, sizeof(*out));
    const char *name = ggml_backend_dev_name(d);
    const char *desc = ggml_backend_dev_description(d);
    snprintf(out->name, sizeof(out->name), "%s", name ? name : "");
    snprintf(out->description, sizeof(out->description), "%s", desc ? desc : "");
    switch (ggml_backend_dev_type(d)) {
        case GGML_BACKEND_DEVICE_TYPE_CPU: out->type = 0; break;
        case GGML_BACKEND_DEVICE_TYPE_GPU: out->type = 1; break;
        case GGML_BACKEND_DEVICE_TYPE_IGPU: out->type = 2; break;
        case GGML_BACKEND_DEVICE_TYPE_ACCEL: out->type = 3; break;
        default: out->type = 4; break;
    }
    size_t free_b = 0, total_b = 0;
    ggml_backend_dev_memory(d, &free_b, &total_b);
    out->free_bytes = free_b;
    out->total_bytes = total_b;
    return true;
}

void pl_model_free(pl_model *m) {
    if (!m) return;
    llama_model_free(m->model);
    free(m);
}

int32_t pl_model_n_ctx_train(const pl_model *m) { return llama_model_n_ctx_train(m->model); }
uint64_t pl_model_n_params(const pl_model *m) { return llama_model_n_params(m->model); }
uint64_t pl_model_size(const pl_model *m) { return llama_model_size(m->model); }
int32_t pl_model_n_vocab(const pl_model *m) { return llama_vocab_n_tokens(m->vocab); }

int32_t pl_model_meta(const pl_model *m, const char *key, char *buf, size_t buf_len) {
    return llama_model_meta_val_str(m->model, key, buf, buf_len);
}

int32_t pl_model_desc(const pl_model *m, char *buf, size_t buf_len) {
    return llama_model_desc(m->model, buf, buf_len);
}

const char *pl_model_chat_template(const pl_model *m) { return llama_model_chat_template(m->model, NULL); }
bool pl_token_is_eog(const pl_model *m, int32_t token) { return llama_vocab_is_eog(m->vocab, token); }
int32_t pl_token_bos(const pl_model *m) { return llama_vocab_bos(m->vocab); }
bool pl_add_bos(const pl_model *m) { return llama_vocab_get_add_bos(m->vocab); }

int32_t pl_tokenize(const pl_model *m, const char *text, int32_t len, int32_t *out, int32_t cap,
                    bool add_special, bool parse_special) {
    return llama_tokenize(m->vocab, text, len, out, cap, add_special, parse_special);
}

int32_t pl_token_piece(const pl_model *m, int32_t token, char *buf, int32_t cap, bool special) {
    return llama_token_to_piece(m->vocab, token, buf, cap, 0, special);
}

int32_t pl_chat_apply(const pl_model *m, const char *tmpl, const char *const *roles,
                      const char *const *contents, size_t n, bool add_assistant, char *buf, int32_t cap) {
    const char *t = tmpl ? tmpl : llama_model_chat_template(m->model, NULL);
    if (!t) return -1;
    struct llama_chat_message *msgs = calloc(n ? n : 1, sizeof(struct llama_chat_message));
    if (!msgs) return -1;
    for (size_t i = 0; i < n; i++) { msgs[i].role = roles[i]; msgs[i].content = contents[i]; }
    int32_t r = llama_chat_apply_template(t, msgs, n, add_assistant, buf, cap);
    free(msgs);
    return r;
}

// MARK: context

static bool pl_abort_cb(void *data) {
    pl_context *c = data;
    return __atomic_load_n(&c->abort_flag, __ATOMIC_ACQUIRE) != 0;
}

pl_context *pl_context_new(pl_model *m, pl_context_params p, char *err, size_t err_len) {
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = p.n_ctx;
    cp.n_batch = p.n_batch;
    cp.n_ubatch = p.n_ubatch;
    cp.n_seq_max = p.n_seq_max;
    cp.n_outputs_max = p.n_outputs_max;
    cp.n_threads = p.n_threads;
    cp.n_threads_batch = p.n_threads;
    cp.kv_unified = true;  // sequences share one pool of cells, so prefix copies cost nothing
    cp.no_perf = true;
    cp.flash_attn_type = p.flash_attn || p.v_q8 ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
    if (p.k_q8) cp.type_k = GGML_TYPE_Q8_0;
    if (p.v_q8) cp.type_v = GGML_TYPE_Q8_0;
    pl_context *c = calloc(1, sizeof(pl_context));
    if (!c) { set_err(err, err_len, "out of memory"); return NULL; }
    cp.abort_callback = pl_abort_cb;
    cp.abort_callback_data = c;
    c->ctx = llama_init_from_model(m->model, cp);
    if (!c->ctx) { free(c); set_err(err, err_len, "llama.cpp could not create a context (context size too large for memory?)"); return NULL; }
    c->m = m;
    return c;
}

void pl_context_free(pl_context *c) {
    if (!c) return;
    llama_free(c->ctx);
    free(c);
}

uint32_t pl_context_n_ctx(const pl_context *c) { return llama_n_ctx(c->ctx); }
void pl_context_set_abort(pl_context *c, bool abort) { __atomic_store_n(&c->abort_flag, abort ? 1 : 0, __ATOMIC_RELEASE); }
int32_t pl_decode(pl_context *c, pl_batch *b) { return llama_decode(c->ctx, b->batch); }

bool pl_memory_seq_rm(pl_context *c, int32_t seq, int32_t p0, int32_t p1) {
    return llama_memory_seq_rm(llama_get_memory(c->ctx), seq, p0, p1);
}
void pl_memory_seq_cp(pl_context *c, int32_t src, int32_t dst, int32_t p0, int32_t p1) {
    llama_memory_seq_cp(llama_get_memory(c->ctx), src, dst, p0, p1);
}
int32_t pl_memory_seq_pos_min(pl_context *c, int32_t seq) {
    return llama_memory_seq_pos_min(llama_get_memory(c->ctx), seq);
}
int32_t pl_memory_seq_pos_max(pl_context *c, int32_t seq) {
    return llama_memory_seq_pos_max(llama_get_memory(c->ctx), seq);
}
void pl_memory_clear(pl_context *c) { llama_memory_clear(llama_get_memory(c->ctx), true); }

size_t pl_state_seq_save(pl_context *c, const char *path, int32_t seq, const int32_t *tokens, size_t n) {
    return llama_state_seq_save_file(c->ctx, path, seq, tokens, n);
}
size_t pl_state_seq_load(pl_context *c, const char *path, int32_t seq, int32_t *tokens_out, size_t cap, size_t *n_out) {
    return llama_state_seq_load_file(c->ctx, path, seq, tokens_out, cap, n_out);
}

// MARK: batch

pl_batch *pl_batch_new(int32_t capacity, int32_t n_seq_max) {
    pl_batch *b = calloc(1, sizeof(pl_batch));
    if (!b) return NULL;
    b->batch = llama_batch_init(capacity, 0, n_seq_max);
    b->capacity = capacity;
    return b;
}

void pl_batch_free(pl_batch *b) {
    if (!b) return;
    llama_batch_free(b->batch);
    free(b);
}

void pl_batch_clear(pl_batch *b) { b->batch.n_tokens = 0; }

int32_t pl_batch_add(pl_batch *b, int32_t token, int32_t pos, int32_t seq, bool logits) {
    int32_t i = b->batch.n_tokens;
    if (i >= b->capacity) return -1;
    b->batch.token[i] = token;
    b->batch.pos[i] = pos;
    b->batch.n_seq_id[i] = 1;
    b->batch.seq_id[i][0] = seq;
    b->batch.logits[i] = logits;
    b->batch.n_tokens = i + 1;
    return i;
}

int32_t pl_batch_count(const pl_batch *b) { return b->batch.n_tokens; }

// MARK: sampling

pl_sampler *pl_sampler_new(const pl_model *m, pl_sampler_params p, const char *grammar, char *err, size_t err_len) {
    pl_sampler *s = calloc(1, sizeof(pl_sampler));
    if (!s) { set_err(err, err_len, "out of memory"); return NULL; }
    s->n_vocab = llama_vocab_n_tokens(m->vocab);
    s->cur = malloc(sizeof(llama_token_data) * (size_t)s->n_vocab);
    if (!s->cur) { free(s); set_err(err, err_len, "out of memory"); return NULL; }
    if (grammar && grammar[0]) {
        s->grammar = llama_sampler_init_grammar(m->vocab, grammar, "root");
        if (!s->grammar) {
            free(s->cur); free(s);
            set_err(err, err_len, "llama.cpp rejected the grammar");
            return NULL;
        }
    }
    struct llama_sampler_chain_params cp = llama_sampler_chain_default_params();
    cp.no_perf = true;
    s->chain = llama_sampler_chain_init(cp);
    if (p.repeat_penalty != 1.0f) {
        llama_sampler_chain_add(s->chain, llama_sampler_init_penalties(s->n_vocab, p.repeat_last_n, p.repeat_penalty, 0.0f, 0.0f));
    }
    if (p.temperature <= 0.0f) {
        llama_sampler_chain_add(s->chain, llama_sampler_init_greedy());
    } else {
        if (p.top_k > 0) llama_sampler_chain_add(s->chain, llama_sampler_init_top_k(p.top_k));
        if (p.top_p < 1.0f) llama_sampler_chain_add(s->chain, llama_sampler_init_top_p(p.top_p, 1));
        if (p.min_p > 0.0f) llama_sampler_chain_add(s->chain, llama_sampler_init_min_p(p.min_p, 1));
        llama_sampler_chain_add(s->chain, llama_sampler_init_temp(p.temperature));
        llama_sampler_chain_add(s->chain, llama_sampler_init_dist(p.seed));
    }
    return s;
}

void pl_sampler_free(pl_sampler *s) {
    if (!s) return;
    if (s->grammar) llama_sampler_free(s->grammar);
    llama_sampler_free(s->chain);
    free(s->cur);
    free(s);
}

static void fill_candidates(pl_sampler *s, const float *logits, llama_token_data_array *arr, const int32_t *banned, int32_t n_banned) {
    for (int32_t t = 0; t < s->n_vocab; t++) {
        s->cur[t].id = t;
        s->cur[t].logit = logits[t];
        s->cur[t].p = 0.0f;
    }
    for (int32_t i = 0; i < n_banned; i++) {
        if (banned[i] >= 0 && banned[i] < s->n_vocab) s->cur[banned[i]].logit = -INFINITY;
    }
    arr->data = s->cur;
    arr->size = (size_t)s->n_vocab;
    arr->selected = -1;
    arr->sorted = false;
}

static int32_t sample_row(pl_sampler *s, const float *logits, const int32_t *banned, int32_t n_banned) {
    llama_token_data_array arr;
    fill_candidates(s, logits, &arr, banned, n_banned);
    llama_sampler_apply(s->chain, &arr);
    if (arr.selected < 0 || (size_t)arr.selected >= arr.size) return -1;
    llama_token tok = arr.data[arr.selected].id;
    if (isinf(arr.data[arr.selected].logit) && arr.data[arr.selected].logit < 0) return -1;  // everything was banned
    if (!s->grammar) return tok;
    // Fast path: is the unconstrained choice allowed by the grammar?
    llama_token_data single = { tok, 1.0f, 0.0f };
    llama_token_data_array one = { &single, 1, -1, false };
    llama_sampler_apply(s->grammar, &one);
    if (!isinf(single.logit)) return tok;
    // Rejected: constrain the whole vocabulary, then sample again.
    fill_candidates(s, logits, &arr, banned, n_banned);
    llama_sampler_apply(s->grammar, &arr);
    llama_sampler_apply(s->chain, &arr);
    if (arr.selected < 0 || (size_t)arr.selected >= arr.size) return -1;
    tok = arr.data[arr.selected].id;
    if (isinf(arr.data[arr.selected].logit)) return -1;  // the grammar allows nothing here
    return tok;
}

int32_t pl_sampler_sample(pl_sampler *s, pl_context *c, int32_t idx, const int32_t *banned, int32_t n_banned) {
    const float *logits = llama_get_logits_ith(c->ctx, idx);
    return logits ? sample_row(s, logits, banned, n_banned) : -1;
}

int32_t pl_sampler_sample_row(pl_sampler *s, const float *logits, int32_t n, const int32_t *banned, int32_t n_banned) {
    return logits && n == s->n_vocab ? sample_row(s, logits, banned, n_banned) : -1;
}

bool pl_logits_copy(pl_context *c, int32_t idx, float *out, int32_t n) {
    const float *logits = llama_get_logits_ith(c->ctx, idx);
    if (logits && n > 0) memcpy(out, logits, sizeof(float) * (size_t)n);
    return logits && n > 0;
}

bool pl_sampler_admits_top(pl_sampler *s, pl_context *c, int32_t idx) {
    if (!s->grammar) return true;
    const float *logits = llama_get_logits_ith(c->ctx, idx);
    if (!logits) return true;
    llama_token top = 0;
    for (int32_t t = 1; t < s->n_vocab; t++) if (logits[t] > logits[top]) top = t;
    llama_token_data single = { top, 1.0f, 0.0f };
    llama_token_data_array one = { &single, 1, -1, false };
    llama_sampler_apply(s->grammar, &one);
    return !isinf(single.logit);
}

pl_sampler *pl_sampler_clone(const pl_sampler *s) {
    pl_sampler *c = calloc(1, sizeof(pl_sampler));
    if (!c) return NULL;
    c->n_vocab = s->n_vocab;
    c->cur = malloc(sizeof(llama_token_data) * (size_t)s->n_vocab);
    c->chain = llama_sampler_clone(s->chain);
    c->grammar = s->grammar ? llama_sampler_clone(s->grammar) : NULL;
    if (c->cur && c->chain && (!s->grammar || c->grammar)) return c;
    if (c->chain) llama_sampler_free(c->chain);
    if (c->grammar) llama_sampler_free(c->grammar);
    free(c->cur);
    free(c);
    return NULL;
}

void pl_sampler_accept(pl_sampler *s, int32_t token) {
    if (s->grammar) llama_sampler_accept(s->grammar, token);
    llama_sampler_accept(s->chain, token);
}

int32_t pl_sampler_grammar_prefix(pl_sampler *s, const int32_t *tokens, int32_t n) {
    if (!s->grammar || n <= 0) return n < 0 ? 0 : n;
    struct llama_sampler *g = llama_sampler_clone(s->grammar);
    if (!g) return 0;
    int32_t i = 0;
    for (; i < n; i++) {
        llama_token_data single = { tokens[i], 1.0f, 0.0f };
        llama_token_data_array one = { &single, 1, -1, false };
        llama_sampler_apply(g, &one);
        if (isinf(single.logit)) break;
        llama_sampler_accept(g, tokens[i]);
    }
    llama_sampler_free(g);
    return i;
}

bool pl_grammar_check(const pl_model *m, const char *grammar, char *err, size_t err_len) {
    struct llama_sampler *g = llama_sampler_init_grammar(m->vocab, grammar, "root");
    if (!g) { set_err(err, err_len, "llama.cpp rejected the grammar"); return false; }
    llama_sampler_free(g);
    return true;
}

void pl_release_memory(void) {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}

void pl_tune_malloc(void) {
#if defined(__GLIBC__)
    mallopt(M_ARENA_MAX, 2);
#endif
}
