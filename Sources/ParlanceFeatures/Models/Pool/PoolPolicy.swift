import Foundation

/// Every number a pool routes, checks and retries by, in one place. Each default names
/// where it comes from (see /work/notes/pools-research.md for the sources); a pool entry in
/// the config file may override the health and wait settings.
///
/// **Routing.** For each request and each endpoint `e` that may take it:
///
///     cost(e) = weight(e) × (promptTokens − predictedCached(e))
///             + promptTokens × inFlight(e) / capacity(e)
///
/// `predictedCached(e)` is the part of the rendered conversation whose leading blocks `e`
/// was sent before (`PrefixIndex`), in tokens, when it covers at least `affinityThreshold`
/// of the prompt (else 0). `inFlight(e)` is Parlance's own calls in flight plus the others
/// the server last reported working on (`/slots`, vLLM's metrics). The load term prices a fully busy endpoint
/// like evaluating the whole prompt again (Dynamo's default overlap weight 1.0 between
/// prefill and active load). The lowest cost wins; ties go to fewer in flight, then to the
/// endpoint that holds the fewest prefixes (SGLang's "smallest tree"), then to the order
/// of the endpoints.
///
/// **Load wins over affinity** when it is badly imbalanced: with `u = inFlight / capacity`,
/// if the cheapest endpoint's `u` exceeds the least loaded one's by `imbalanceAbsolute`
/// and is at least `imbalanceRelative` times it, the least loaded endpoint is taken
/// (SGLang's cache-aware policy, its thresholds rescaled from queued requests to slots).
public struct PoolPolicy: Sendable, Equatable {
    /// Bytes of rendered conversation per prefix block: 128, vLLM production-stack's
    /// prefix-aware router's chunk (`prefix/hashtrie.py`).
    public var blockBytes = 128
    /// Blocks remembered per endpoint before the least recently used go: 65,536 (8 MiB of
    /// text, ~2.7 M tokens at 3 bytes a token), above what a llama-server's default
    /// `--cache-ram` 8 GiB keeps for the small models a pool of CPU servers runs.
    public var maxBlocks = 65_536
    /// A response that reports fewer than this share of the predicted cached tokens as
    /// cached says the endpoint evicted them: the older prefixes it was sent are forgotten.
    public var confirmShare = 0.5
    /// A cached prefix counts only when it covers at least this share of the prompt:
    /// SGLang's cache-aware policy `cache_threshold` (0.5 in its Rust defaults). Below it
    /// (a system prompt shared by every request) the endpoints tie on the prefix, and the
    /// one holding the fewest prefixes takes the new conversation, which spreads them.
    public var affinityThreshold = 0.5
    /// SGLang `balance_abs_threshold`, rescaled from requests to a share of the slots.
    public var imbalanceAbsolute = 0.5
    /// SGLang router CLI `balance_rel_threshold` 1.5.
    public var imbalanceRelative = 1.5

    /// Consecutive failures (calls or health checks) that open an endpoint's breaker:
    /// LiteLLM `DEFAULT_ALLOWED_FAILS` 3.
    public var failureThreshold = 3
    /// How long an open breaker stays open before one trial: LiteLLM
    /// `DEFAULT_COOLDOWN_TIME_SECONDS` 5.
    public var cooldown = Duration.seconds(5)
    /// How often each endpoint's `/health` is asked: 10 s (SGLang's 60 s is slow for a
    /// local daemon; the research brief's choice).
    public var healthInterval = Duration.seconds(10)
    /// A health check with no answer this long fails: SGLang `health_check_timeout_secs` 5
    /// (the endpoint's own timeout when that is shorter).
    public var healthTimeout = Duration.seconds(5)

    /// Calls per request, the first included: LiteLLM `DEFAULT_MAX_RETRIES` 2, plus one.
    public var maxAttempts = 3
    /// `Retry-After` is honoured up to this long (LiteLLM and openai-python honour 0–60 s);
    /// longer, the endpoint is skipped and the wait reported.
    public var maxRetryAfter = Duration.seconds(60)
    /// A request waits this long at most for a free place when every endpoint is full,
    /// then fails with `poolSaturated`: SGLang `queue_timeout_secs` 60 (capped by the
    /// request's own budget, twice the endpoint timeout).
    public var queueTimeout = Duration.seconds(60)

    /// A stream cut after its first token continues on another endpoint serving the same
    /// model, from the text streamed so far (`continue_final_message`), once at most, and
    /// never for schema output (`"continueOnFailure": true`). Off by default: what a client
    /// has seen then ends with -32011 and the partial, as on one endpoint.
    public var continueOnFailure = false

    /// Round-robin instead of cost (`"routing": "roundRobin"`): what a plain balancer does,
    /// kept to measure cost routing against. Health, failover and capacity still apply.
    public var roundRobin = false

    public init() {}

    /// The routing cost of one endpoint for a request of `promptTokens`.
    public func cost(promptTokens: Int, predictedCached: Int, weight: Double, inFlight: Int, capacity: Int) -> Double {
        let uncached = Double(max(0, promptTokens - predictedCached))
        return weight * uncached + Double(promptTokens) * Double(inFlight) / Double(max(1, capacity))
    }

    /// Whether `chosen`'s load is so far above the least loaded that load wins.
    public func imbalanced(chosen: Double, least: Double) -> Bool {
        chosen - least >= imbalanceAbsolute && chosen >= imbalanceRelative * least
    }
}
