import Foundation
import ParlanceEngine
import ParlanceFeatures
import ParlanceMCP
import ParlanceModelStores
import ParlanceServer

/// The daemon's options: models, engine, caches, logging. Every command takes them too;
/// `--help`, the man page and the completions list them in this order.
enum DaemonOptions {
    /// `parlance --stdio`: serve JSON-RPC on stdin/stdout (the daemon's, not a command's).
    static let stdio = Option("--stdio", nil, .none, "serve JSON-RPC 2.0 on stdin/stdout", inline: .unmatched) { v, _ in v.stdio = true }

    static let all: [Option] = {
        let e = EngineConfig(modelPath: "")
        let s = ServiceOptions(cacheDirectory: "", dataDirectory: "", historyEnabled: true)
        return [
            flag("--model", "[NAME=]PATH", .file, """
                a GGUF model, named NAME (default: its file name without .gguf); repeat for several; the first is \
                the default model. NAME=openai:URL#MODEL: MODEL served by an OpenAI-compatible server at URL \
                (http:// on loopback only). Default: $PARLANCE_MODEL, else the installed Qwen2.5-Coder-1.5B-Instruct
                """) { $0.registry.flagModels.append(RegistryBuilder.parseModelFlag($1)) },
            flag("--config", "PATH", .file, "models, routes, keep-alive and budget from a JSON file (default: $XDG_CONFIG_HOME/parlance/config.json when it exists); flags win") { $0.configPath = $1 },
            flag("--default-model", "NAME", "the model for requests that name none and match no route") { $0.registry.defaultModel = $1 },
            flag("--route", "KEY=NAME", "send a method family (analysis, ask, compose, session) or one method to NAME; repeatable") { d, v in
                guard let eq = v.firstIndex(of: "="), eq != v.startIndex, v.index(after: eq) != v.endIndex else {
                    throw UsageError("--route must be KEY=NAME, got '\(v)'")
                }
                d.registry.routes[String(v[..<eq])] = String(v[v.index(after: eq)...])
            },
            flag("--keep-alive", "SECONDS", "unload a model idle this long, saving its KV prefixes first (default 300; 0: never; also 5m, 1h)") { $0.registry.keepAlive = try seconds("--keep-alive", $1) },
            flag("--max-loaded-models", "N", "at most N models loaded; the least recently used idle one is unloaded for another") { $0.registry.maxLoadedModels = try integer("--max-loaded-models", $1, 1...64) },
            flag("--max-model-bytes", "N", "at most N bytes of loaded models; a request that cannot fit gets memoryBudget") { $0.registry.maxModelBytes = try integer("--max-model-bytes", $1, 1...(1 << 50)) },
            flag("--ctx", "N", "context size in tokens, shared by all sequences (default \(e.contextSize))") { $0.engine.contextSize = try integer("--ctx", $1, 128...131072) },
            flag("--threads", "N", "CPU threads (default: the physical cores this process may run on, as llama.cpp counts them)") { $0.engine.threads = try integer("--threads", $1, 1...256) },
            flag("--parallel", "N", "requests decoded together (default \(e.parallel))") { $0.engine.parallel = try integer("--parallel", $1, 1...64) },
            flag("--batch", "N", "tokens per llama_decode batch (default \(e.batchSize): 512 on a CPU, 2048 with a GPU)") { d, v in
                d.engine.batchSize = try integer("--batch", v, 32...4096)
            },
            flag("--micro-batch", "N", "tokens llama.cpp computes at once within a batch (default \(e.microBatch); at most --batch; its compute buffer grows with it)") { d, v in
                d.engine.microBatch = try integer("--micro-batch", v, 32...4096)
            },
            flag("--cache-type-k", "TYPE", .choices(["f16", "q8_0"]), """
                KV cache keys: f16 or q8_0 (default f16, or q8_0 where the model and an f16 cache would take over half the \
                memory available; q8_0 saves a quarter of the cache, 21 MB for the default model at 4,096 tokens, 120 MB for \
                an 8B Llama, and halves prompt speed at 2,000-4,000 tokens on a CPU)
                """) { d, v in
                guard let t = KVCacheTypes.Element(rawValue: v) else { throw UsageError("--cache-type-k must be f16 or q8_0, got '\(v)'") }
                d.engine.cache = .init(keys: t, values: d.engine.cache?.values ?? .f16)
            },
            flag("--cache-type-v", "TYPE", .choices(["f16", "q8_0"]), """
                KV cache values: f16 or q8_0 (default f16, or q8_0 where the model and an f16 cache would take over three \
                quarters of the memory available; q8_0 saves another quarter of the cache and slows prompts ~20%)
                """) { d, v in
                guard let t = KVCacheTypes.Element(rawValue: v) else { throw UsageError("--cache-type-v must be f16 or q8_0, got '\(v)'") }
                d.engine.cache = .init(keys: d.engine.cache?.keys ?? .f16, values: t)
            },
            flag("--gpu-layers", "N|auto|all", "layers on a GPU (default auto: all when llama.cpp has a GPU device, none otherwise; N: the last N)") { d, v in
                guard let g = GPULayers(v) else { throw UsageError("--gpu-layers must be auto, all or a non-negative integer, got '\(v)'") }
                d.engine.gpuLayers = g
            },
            flag("--flash-attn", "on|off", .choices(["on", "off"]), "flash attention (default \(e.flashAttention ? "on" : "off"); q8_0 values need it)") { d, v in
                guard v == "on" || v == "off" else { throw UsageError("--flash-attn must be on or off, got '\(v)'") }
                d.engine.flashAttention = v == "on"
            },
            flag("--speculative", "on|off", .choices(["on", "off"]), "speculative decoding drafted from the text (default \(e.speculative ? "on" : "off"); for output that copies text: compose, refine, ask, LSP rewrites; same output, faster where it copies; per request: speculative)") { d, v in
                guard v == "on" || v == "off" else { throw UsageError("--speculative must be on or off, got '\(v)'") }
                d.engine.speculative = v == "on"
            },
            flag("--mcp-server", "NAME=COMMAND [ARGS...]", "an MCP server sessions may use (session/create mcpServers, tools named NAME/tool): COMMAND and its arguments in one value, split at spaces (quote an argument with spaces); started on first use; repeatable; over the config file's mcpServers") { d, v in
                let spec = try MCPServerFlag.parse(v).get()
                d.mcpServers.removeAll { $0.name == spec.name }
                d.mcpServers.append(spec)
            },
            flag("--max-message-bytes", "N", "largest accepted message (default 16777216)") { $0.maxMessage = try integer("--max-message-bytes", $1, 1024...(1 << 30)) },
            flag("--log-level", "LEVEL", .choices(["debug", "info", "warning", "error", "off"]), "debug|info|warning|error|off (default warning; env PARLANCE_LOG_LEVEL)") { d, v in
                guard let l = LogLevel(name: v) else { throw UsageError("unknown log level '\(v)'") }
                d.logLevel = l
            },
            flag("--log-file", "PATH", .file, "append logs to PATH instead of stderr (env PARLANCE_LOG_FILE)") { $0.logFile = $1 },
            flag("--cache-dir", "DIR", .directory, "analysis results and KV state files (default $XDG_CACHE_HOME/parlance or ~/.cache/parlance)") { $0.cacheDir = $1 },
            flag("--data-dir", "DIR", .directory, "compose history, and models pulled from an Ollama registry (default $XDG_DATA_HOME/parlance or ~/.local/share/parlance)") { $0.dataDir = $1 },
            flag("--no-history", "do not store compose history") { d, _ in d.services.historyEnabled = false },
            flag("--document-cache-bytes", "N", "open documents' text, at most (default \(s.documentCacheBytes))") { $0.services.documentCacheBytes = try integer("--document-cache-bytes", $1, 1024...(1 << 40)) },
            flag("--analysis-cache-bytes", "N", "analysis results kept in memory (default \(s.analysisCacheBytes); disk copies still answer)") { $0.services.analysisCacheBytes = try integer("--analysis-cache-bytes", $1, 0...(1 << 40)) },
            flag("--kv-state-bytes", "N", "long prompt prefixes' KV states kept under the cache dir (default \(e.stateLimitBytes); 0: none)") { $0.engine.stateLimitBytes = try integer("--kv-state-bytes", $1, 0...(1 << 44)) },
        ]
    }()

    /// A daemon option: `apply` sets the daemon's settings, and the option counts as given
    /// (`explicit`: the config file does not override it). Its switches take no value.
    private static func flag(_ name: String, _ value: String?, _ kind: ValueKind, _ help: String,
                             _ apply: @escaping @Sendable (inout DaemonSettings, String) throws -> Void) -> Option {
        Option(name, value, kind, help, inline: .refused) { v, s in
            v.settings.explicit.insert(name)
            try apply(&v.settings, s)
        }
    }
    private static func flag(_ name: String, _ value: String, _ help: String, _ apply: @escaping @Sendable (inout DaemonSettings, String) throws -> Void) -> Option {
        flag(name, value, .text, help, apply)
    }
    private static func flag(_ name: String, _ help: String, _ apply: @escaping @Sendable (inout DaemonSettings, String) throws -> Void) -> Option {
        flag(name, nil, .none, help, apply)
    }

    private static func integer(_ flag: String, _ v: String, _ range: ClosedRange<Int>) throws -> Int {
        guard let n = Int(v), range.contains(n) else {
            throw UsageError("\(flag) must be an integer in \(range.lowerBound)...\(range.upperBound), got '\(v)'")
        }
        return n
    }

    private static func seconds(_ flag: String, _ v: String) throws -> Double {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600]
        let unit = v.last.flatMap { units[$0] }
        guard let n = Double(unit == nil ? v : String(v.dropLast())), n >= 0, n * (unit ?? 1) <= ConfigFile.maxKeepAlive else {
            throw UsageError("\(flag) must be seconds (0 to \(Int(ConfigFile.maxKeepAlive)), or with s, m or h), got '\(v)'")
        }
        return n * (unit ?? 1)
    }
}

/// `--mcp-server NAME=COMMAND [ARGS...]`: one value, split at spaces; single or double
/// quotes keep spaces inside an argument.
enum MCPServerFlag {
    static func parse(_ v: String) -> Result<MCPServerSpec, UsageError> {
        guard let eq = v.firstIndex(of: "=") else { return .failure(UsageError("--mcp-server must be NAME=COMMAND [ARGS...], got '\(v)'")) }
        let name = String(v[..<eq])
        guard name.range(of: MCPServerNames.pattern, options: .regularExpression) != nil else {
            return .failure(UsageError("--mcp-server '\(name)': \(MCPServerNames.rule)"))
        }
        var words: [String] = []
        var word = ""
        var quote: Character? = nil
        var inWord = false
        for c in v[v.index(after: eq)...] {
            if let q = quote {
                if c == q { quote = nil } else { word.append(c) }
            } else if c == "'" || c == "\"" {
                quote = c
                inWord = true
            } else if c == " " || c == "\t" {
                if inWord { words.append(word) }
                word = ""
                inWord = false
            } else {
                word.append(c)
                inWord = true
            }
        }
        if quote != nil { return .failure(UsageError("--mcp-server \(name): an unclosed quote in '\(v)'")) }
        if inWord { words.append(word) }
        guard let command = words.first else { return .failure(UsageError("--mcp-server \(name) needs a COMMAND after '='")) }
        return .success(MCPServerSpec(name: name, command: command, args: Array(words.dropFirst())))
    }
}
