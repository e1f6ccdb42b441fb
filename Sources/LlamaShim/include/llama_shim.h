// LlamaShim: the only C that touches llama.cpp. Prefixed names (pl_), opaque handles,
// int/bool status returns, "ask the size, then fill" buffers, logging via a callback.
#ifndef PARLANCE_LLAMA_SHIM_H
#define PARLANCE_LLAMA_SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pl_model pl_model;
typedef struct pl_context pl_context;
typedef struct pl_batch pl_batch;
typedef struct pl_sampler pl_sampler;

/// level: 1 debug, 2 info, 3 warn, 4 error.
typedef void (*pl_log_fn)(int level, const char *text, void *user_data);

/// Initialises the backend once and routes every llama.cpp/ggml log line to `fn`
/// (never to stdout). Safe to call more than once.
void pl_init(pl_log_fn fn, void *user_data);
/* Sends one line down the same path as llama.cpp's own log lines (tests, diagnostics). */
void pl_log_forward(int level, const char *text);

/// Process memory habits for a long-running daemon (glibc): two malloc arenas, so memory a
/// thread frees is reused by the others instead of stranded in its own arena. (Fixed mmap
/// and trim thresholds were tried and dropped: the sampler's per-token vocabulary-sized
/// buffers then cost a map, page faults and an unmap each, slowing generation many times.)
/// Call once, first thing. A no-op elsewhere.
void pl_tune_malloc(void);
/// Gives freed heap memory back to the system (glibc's malloc_trim): after a model is
/// unloaded, buffers llama.cpp reallocated while it ran (logits rows of varying counts)
/// would otherwise stay resident in the heap. A no-op elsewhere.
void pl_release_memory(void);

// MARK: model
/// Loads a GGUF model, n_gpu_layers of its layers (the last ones) on the GPU devices llama.cpp found
/// (negative: all layers; 0: CPU only). On failure returns NULL and writes a reason into err.
/// `vocab_only`: the tokenizer and metadata only, no weights (token counts without a load).
pl_model *pl_model_load(const char *path, int32_t n_gpu_layers, bool vocab_only, char *err, size_t err_len);
/// Repeating layers (blocks) of the model.
int32_t pl_model_n_layer(const pl_model *m);
void pl_model_free(pl_model *m);
int32_t pl_model_n_ctx_train(const pl_model *m);
uint64_t pl_model_n_params(const pl_model *m);
uint64_t pl_model_size(const pl_model *m);
int32_t pl_model_n_vocab(const pl_model *m);
/// Metadata value by key; returns the full length (may exceed buf_len) or -1 if absent.
int32_t pl_model_meta(const pl_model *m, const char *key, char *buf, size_t buf_len);
int32_t pl_model_desc(const pl_model *m, char *buf, size_t buf_len);
/// The model's default chat template, or NULL.
const char *pl_model_chat_template(const pl_model *m);
bool pl_token_is_eog(const pl_model *m, int32_t token);
int32_t pl_token_bos(const pl_model *m);
bool pl_add_bos(const pl_model *m);

/// Tokenizes; returns the count, or -(needed) when `cap` is too small.
int32_t pl_tokenize(const pl_model *m, const char *text, int32_t len, int32_t *out, int32_t cap,
                    bool add_special, bool parse_special);
/// Writes a token's bytes (not NUL-terminated); returns the length, or -(needed).
int32_t pl_token_piece(const pl_model *m, int32_t token, char *buf, int32_t cap, bool special);

/// Applies a chat template (NULL = the model's) to n messages; returns the needed
/// length (may exceed cap), or a negative value when the template is not supported.
int32_t pl_chat_apply(const pl_model *m, const char *tmpl, const char *const *roles,
                      const char *const *contents, size_t n, bool add_assistant, char *buf, int32_t cap);

// MARK: devices
/// The compute devices llama.cpp's backend registry holds (CPU, and GPUs when it was built
/// with Metal, CUDA, Vulkan…). type: 0 CPU, 1 GPU, 2 integrated GPU, 3 accelerator, 4 other.
typedef struct {
    char name[128];
    char description[256];
    int32_t type;
    uint64_t free_bytes;
    uint64_t total_bytes;
} pl_device;
size_t pl_device_count(void);
/// Fills out for device i; false when i is out of range.
bool pl_device_get(size_t i, pl_device *out);

// MARK: context
typedef struct {
    uint32_t n_ctx;
    uint32_t n_batch;
    uint32_t n_ubatch;
    uint32_t n_seq_max;
    uint32_t n_outputs_max;  // logits rows one ubatch may ask for; 0 = llama.cpp's default (n_batch). The
                             // compute buffer reserves n_outputs_max x n_vocab floats for them.
    int32_t n_threads;
    bool k_q8;        // keys stored as q8_0 (half the memory of f16)
    bool v_q8;        // values stored as q8_0 (needs flash attention, which then dequantizes every row it reads)
    bool flash_attn;  // flash attention: no n_kv x n_ubatch score matrix in the compute buffer
} pl_context_params;

pl_context *pl_context_new(pl_model *m, pl_context_params p, char *err, size_t err_len);
void pl_context_free(pl_context *c);
uint32_t pl_context_n_ctx(const pl_context *c);
/// While set, llama_decode aborts at its next check and returns 2. Callable from any thread.
void pl_context_set_abort(pl_context *c, bool abort);
/// llama_decode's return code: 0 ok, 1 no KV slot, 2 aborted, <0 error.
int32_t pl_decode(pl_context *c, pl_batch *b);
/// KV memory per sequence.
bool pl_memory_seq_rm(pl_context *c, int32_t seq, int32_t p0, int32_t p1);
/// The sequence's lowest position in memory, -1 when it holds none.
int32_t pl_memory_seq_pos_min(pl_context *c, int32_t seq);
void pl_memory_seq_cp(pl_context *c, int32_t src, int32_t dst, int32_t p0, int32_t p1);
int32_t pl_memory_seq_pos_max(pl_context *c, int32_t seq);
void pl_memory_clear(pl_context *c);
/// Saves/loads one sequence's state to a file; returns bytes written/read, 0 on failure.
size_t pl_state_seq_save(pl_context *c, const char *path, int32_t seq, const int32_t *tokens, size_t n);
size_t pl_state_seq_load(pl_context *c, const char *path, int32_t seq, int32_t *tokens_out, size_t cap, size_t *n_out);

// MARK: batch
pl_batch *pl_batch_new(int32_t capacity, int32_t n_seq_max);
void pl_batch_free(pl_batch *b);
void pl_batch_clear(pl_batch *b);
/// Adds one token; returns its index in the batch, or -1 when full.
int32_t pl_batch_add(pl_batch *b, int32_t token, int32_t pos, int32_t seq, bool logits);
int32_t pl_batch_count(const pl_batch *b);

// MARK: sampling
typedef struct {
    float temperature;   // <= 0: greedy
    float top_p;         // 1 = off
    int32_t top_k;       // 0 = off
    float min_p;         // 0 = off
    float repeat_penalty;// 1 = off
    int32_t repeat_last_n;
    uint32_t seed;
} pl_sampler_params;

/// A sampler chain, optionally constrained by a GBNF grammar (root rule "root").
/// Returns NULL and a reason in err when the grammar does not parse.
pl_sampler *pl_sampler_new(const pl_model *m, pl_sampler_params p, const char *grammar, char *err, size_t err_len);
void pl_sampler_free(pl_sampler *s);
/// Samples from the logits of batch index idx. With a grammar, tries the unconstrained
/// choice first and only constrains the full vocabulary when that choice is rejected.
/// The n_banned tokens in `banned` are never chosen (their logits are set to -inf first);
/// -1 when nothing is left to choose.
int32_t pl_sampler_sample(pl_sampler *s, pl_context *c, int32_t idx, const int32_t *banned, int32_t n_banned);
/// As pl_sampler_sample, from a logits row saved by pl_logits_copy (n: the vocabulary size).
int32_t pl_sampler_sample_row(pl_sampler *s, const float *logits, int32_t n, const int32_t *banned, int32_t n_banned);
/// Copies the n logits of batch index idx into out (n: the vocabulary size); false when
/// that index has none.
bool pl_logits_copy(pl_context *c, int32_t idx, float *out, int32_t n);
/// Whether the grammar admits the most likely token of batch index idx, the model's own
/// choice before any constraint (true without a grammar). The sampler is left as it was.
bool pl_sampler_admits_top(pl_sampler *s, pl_context *c, int32_t idx);
/// An independent copy of the sampler in its current state: its grammar's position, its
/// penalties' history and its random state. NULL when out of memory.
pl_sampler *pl_sampler_clone(const pl_sampler *s);
void pl_sampler_accept(pl_sampler *s, int32_t token);
/// How many of `tokens`, in order, the grammar accepts from its current state (all of
/// them without a grammar). The sampler itself is left as it was (a draft's check).
int32_t pl_sampler_grammar_prefix(pl_sampler *s, const int32_t *tokens, int32_t n);
/// True when the grammar (if any) allows ending here.
bool pl_grammar_check(const pl_model *m, const char *grammar, char *err, size_t err_len);

#ifdef __cplusplus
}
#endif
#endif
