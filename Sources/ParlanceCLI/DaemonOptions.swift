import Foundation
import ParlanceEngine
import ParlanceFeatures
import ParlanceModelStores
import ParlanceMCP
import ParlanceServer

/// A usage error: the message, then exit 2.
public struct UsageError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public let command: String?
    init(_ message: String, command: String? = nil) {
        description = message
        self.command = command
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

/// How a shell completes an option's value.
enum ValueKind: Equatable, Sendable {
    case none, file, directory, text
    case choices([String])
}

/// One flag: its name, its value, its help line and what it does. The table of these is
/// the only place a flag is described: `--help`, the man page and the shell completions
/// are generated from it.
struct Flag: Sendable {
    let name: String
    let value: String?  // the value's name in help (`N`, `PATH`); nil: takes none
    let kind: ValueKind
    let help: String
    let apply: @Sendable (inout DaemonSettings, String) throws -> Void
    init(_ name: String, _ value: String?, _ kind: ValueKind, _ help: String,
         apply: @escaping @Sendable (inout DaemonSettings, String) throws -> Void) {
        self.name = name
        self.value = value
        self.kind = value == nil ? .none : kind
        self.help = help
        self.apply = apply
    }
    init(_ name: String, _ value: String, _ help: String, apply: @escaping @Sendable (inout DaemonSettings, String) throws -> Void) {
        self.init(name, value, .text, help, apply: apply)
    }
    init(_ name: String, _ help: String, apply: @escaping @Sendable (inout DaemonSettings, String) throws -> Void) {
        self.init(name, nil, .none, help, apply: apply)
    }
}

/// Everything the daemon's flags and environment decide: models, engine defaults, caches,
/// logging. `parlance --stdio` and every command build their server from it.
public struct DaemonSettings: Sendable {
    var engine = EngineConfig(modelPath: "")
    var services = ServiceOptions(cacheDirectory: "", dataDirectory: "", historyEnabled: true)
    var registry = RegistryBuilder()
    var flagModels: [(name: String?, path: String)] = []
    var mcpServers: [MCPServerSpec] = []
    var configPath: String? = nil
    var explicit: Set<String> = []
    var maxMessage = 16 << 20
    var logLevel: LogLevel
    var logFile: String?
    var cacheDir: String
    var dataDir: String
    let env: [String: String]

    init(env: [String: String]) {
        self.env = env
        let home = env["HOME"] ?? NSHomeDirectory()
        logLevel = LogLevel(name: env["PARLANCE_LOG_LEVEL"] ?? "warning") ?? .warning
        logFile = env["PARLANCE_LOG_FILE"]
        cacheDir = env["PARLANCE_CACHE_DIR"] ?? (env["XDG_CACHE_HOME"] ?? "\(home)/.cache") + "/parlance"
        dataDir = env["PARLANCE_DATA_DIR"] ?? (env["XDG_DATA_HOME"] ?? "\(home)/.local/share") + "/parlance"
        if let m = env["PARLANCE_MODEL"] { registry.flagModels.append(RegistryBuilder.parseModelFlag(m)) }
    }

    static func integer(_ flag: String, _ v: String, _ range: ClosedRange<Int>) throws -> Int {
        guard let n = Int(v), range.contains(n) else {
            throw UsageError("\(flag) must be an integer in \(range.lowerBound)...\(range.upperBound), got '\(v)'")
        }
        return n
    }

    static func seconds(_ flag: String, _ v: String) throws -> Double {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600]
        let unit = v.last.flatMap { units[$0] }
        guard let n = Double(unit == nil ? v : String(v.dropLast())), n >= 0, n * (unit ?? 1) <= ConfigFile.maxKeepAlive else {
            throw UsageError("\(flag) must be seconds (0 to \(Int(ConfigFile.maxKeepAlive)), or with s, m or h), got '\(v)'")
        }
        return n * (unit ?? 1)
    }

    /// The daemon's flags, in the order `--help` lists them.
    static let flags: [Flag] = {
        let e = EngineConfig(modelPath: "")
        let s = ServiceOptions(cacheDirectory: "", dataDirectory: "", historyEnabled: true)
        return [
            Flag("--model", "[NAME=]PATH", .file, """
                a GGUF model, named NAME (default: its file name without .gguf); repeat for several; the first is \
                the default model. NAME=openai:URL#MODEL: MODEL served by an OpenAI-compatible server at URL \
                (http:// on loopback only). Default: $PARLANCE_MODEL, else the installed SmolLM2-135M-Instruct
                """) { $0.flagModels.append(RegistryBuilder.parseModelFlag($1)) },
            Flag("--config", "PATH", .file, "models, routes, keep-alive and budget from a JSON file (default: $XDG_CONFIG_HOME/parlance/config.json when it exists); flags win") { $0.configPath = $1 },
            Flag("--default-model", "NAME", "the model for requests that name none and match no route") { $0.registry.defaultModel = $1 },
            Flag("--route", "KEY=NAME", "send a method family (analysis, ask, compose, session) or one method to NAME; repeatable") { d, v in
                guard let eq = v.firstIndex(of: "="), eq != v.startIndex, v.index(after: eq) != v.endIndex else {
                    throw UsageError("--route must be KEY=NAME, got '\(v)'")
                }
                d.registry.routes[String(v[..<eq])] = String(v[v.index(after: eq)...])
            },
            Flag("--keep-alive", "SECONDS", "unload a model idle this long, saving its KV prefixes first (default 300; 0: never; also 5m, 1h)") { $0.registry.keepAlive = try seconds("--keep-alive", $1) },
            Flag("--max-loaded-models", "N", "at most N models loaded; the least recently used idle one is unloaded for another") { $0.registry.maxLoadedModels = try integer("--max-loaded-models", $1, 1...64) },
            Flag("--max-model-bytes", "N", "at most N bytes of loaded models; a request that cannot fit gets memoryBudget") { $0.registry.maxModelBytes = try integer("--max-model-bytes", $1, 1...(1 << 50)) },
            Flag("--ctx", "N", "context size in tokens, shared by all sequences (default \(e.contextSize))") { $0.engine.contextSize = try integer("--ctx", $1, 128...131072) },
            Flag("--threads", "N", "CPU threads (default: the physical cores this process may run on, as llama.cpp counts them)") { $0.engine.threads = try integer("--threads", $1, 1...256) },
            Flag("--parallel", "N", "requests decoded together (default \(e.parallel))") { $0.engine.parallel = try integer("--parallel", $1, 1...64) },
            Flag("--batch", "N", "tokens per llama_decode batch (default \(e.batchSize): 512 on a CPU, 2048 with a GPU)") { d, v in
                d.engine.batchSize = try integer("--batch", v, 32...4096)
            },
            Flag("--micro-batch", "N", "tokens llama.cpp computes at once within a batch (default \(e.microBatch); at most --batch; its compute buffer grows with it)") { d, v in
                d.engine.microBatch = try integer("--micro-batch", v, 32...4096)
            },
            Flag("--cache-type-k", "TYPE", .choices(["f16", "q8_0"]), """
                KV cache keys: f16 or q8_0 (default f16, or q8_0 where the model and an f16 cache would take over half the \
                memory available; q8_0 saves a quarter of the cache, 21 MB for the default model at 4,096 tokens, 120 MB for \
                an 8B Llama, and halves prompt speed at 2,000-4,000 tokens on a CPU)
                """) { d, v in
                guard let t = KVCacheTypes.Element(rawValue: v) else { throw UsageError("--cache-type-k must be f16 or q8_0, got '\(v)'") }
                d.engine.cache = .init(keys: t, values: d.engine.cache?.values ?? .f16)
            },
            Flag("--cache-type-v", "TYPE", .choices(["f16", "q8_0"]), """
                KV cache values: f16 or q8_0 (default f16, or q8_0 where the model and an f16 cache would take over three \
                quarters of the memory available; q8_0 saves another quarter of the cache and slows prompts ~20%)
                """) { d, v in
                guard let t = KVCacheTypes.Element(rawValue: v) else { throw UsageError("--cache-type-v must be f16 or q8_0, got '\(v)'") }
                d.engine.cache = .init(keys: d.engine.cache?.keys ?? .f16, values: t)
            },
            Flag("--gpu-layers", "N|auto|all", "layers on a GPU (default auto: all when llama.cpp has a GPU device, none otherwise; N: the last N)") { d, v in
                guard let g = GPULayers(v) else { throw UsageError("--gpu-layers must be auto, all or a non-negative integer, got '\(v)'") }
                d.engine.gpuLayers = g
            },
            Flag("--flash-attn", "on|off", .choices(["on", "off"]), "flash attention (default \(e.flashAttention ? "on" : "off"); q8_0 values need it)") { d, v in
                guard v == "on" || v == "off" else { throw UsageError("--flash-attn must be on or off, got '\(v)'") }
                d.engine.flashAttention = v == "on"
            },
            Flag("--speculative", "on|off", .choices(["on", "off"]), "speculative decoding drafted from the text (default \(e.speculative ? "on" : "off"); for output that copies text: compose, refine, ask, LSP rewrites; same output, faster where it copies; per request: speculative)") { d, v in
                guard v == "on" || v == "off" else { throw UsageError("--speculative must be on or off, got '\(v)'") }
                d.engine.speculative = v == "on"
            },
            Flag("--mcp-server", "NAME=COMMAND [ARGS...]", "an MCP server sessions may use (session/create mcpServers, tools named NAME/tool): COMMAND and its arguments in one value, split at spaces (quote an argument with spaces); started on first use; repeatable; over the config file's mcpServers") { d, v in
                let spec = try MCPServerFlag.parse(v).get()
                d.mcpServers.removeAll { $0.name == spec.name }
                d.mcpServers.append(spec)
            },
            Flag("--max-message-bytes", "N", "largest accepted message (default 16777216)") { $0.maxMessage = try integer("--max-message-bytes", $1, 1024...(1 << 30)) },
            Flag("--log-level", "LEVEL", .choices(["debug", "info", "warning", "error", "off"]), "debug|info|warning|error|off (default warning; env PARLANCE_LOG_LEVEL)") { d, v in
                guard let l = LogLevel(name: v) else { throw UsageError("unknown log level '\(v)'") }
                d.logLevel = l
            },
            Flag("--log-file", "PATH", .file, "append logs to PATH instead of stderr (env PARLANCE_LOG_FILE)") { $0.logFile = $1 },
            Flag("--cache-dir", "DIR", .directory, "analysis results and KV state files (default $XDG_CACHE_HOME/parlance or ~/.cache/parlance)") { $0.cacheDir = $1 },
            Flag("--data-dir", "DIR", .directory, "compose history, and models pulled from an Ollama registry (default $XDG_DATA_HOME/parlance or ~/.local/share/parlance)") { $0.dataDir = $1 },
            Flag("--no-history", "do not store compose history") { d, _ in d.services.historyEnabled = false },
            Flag("--document-cache-bytes", "N", "open documents' text, at most (default \(s.documentCacheBytes))") { $0.services.documentCacheBytes = try integer("--document-cache-bytes", $1, 1024...(1 << 40)) },
            Flag("--analysis-cache-bytes", "N", "analysis results kept in memory (default \(s.analysisCacheBytes); disk copies still answer)") { $0.services.analysisCacheBytes = try integer("--analysis-cache-bytes", $1, 0...(1 << 40)) },
            Flag("--kv-state-bytes", "N", "long prompt prefixes' KV states kept under the cache dir (default \(e.stateLimitBytes); 0: none)") { $0.engine.stateLimitBytes = try integer("--kv-state-bytes", $1, 0...(1 << 44)) },
        ]
    }()

    /// Applies a daemon flag at `args[i]` (and its value); returns false when it is not one.
    mutating func take(_ args: [String], _ i: inout Int) throws -> Bool {
        let (name, inline) = Self.split(args[i])
        guard let flag = Self.flags.first(where: { $0.name == name }) else { return false }
        explicit.insert(name)
        var v = ""
        if flag.value != nil {
            if let inline { v = inline } else {
                guard i + 1 < args.count else { throw UsageError("\(name) needs a value (\(flag.value!))") }
                i += 1
                v = args[i]
            }
        } else if inline != nil {
            throw UsageError("\(name) takes no value")
        }
        try flag.apply(&self, v)
        i += 1
        return true
    }

    /// `--flag=value` → ("--flag", "value").
    static func split(_ a: String) -> (String, String?) {
        guard a.hasPrefix("--"), let eq = a.firstIndex(of: "=") else { return (a, nil) }
        return (String(a[..<eq]), String(a[a.index(after: eq)...]))
    }

    /// The server's options: the registry (flags over the config file over the default
    /// model), caches, history. Throws a UsageError for a bad config file or model name.
    /// The engines' warnings (a GPU asked for that is not there, a KV state file dropped) go to `log`.
    func serverOptions(log: Logger) throws -> ServerOptions {
        var engine = self.engine
        engine.onWarning = { log.warning($0) }
        var services = self.services
        var registry = self.registry
        services.cacheDirectory = cacheDir
        engine.stateDirectory = cacheDir + "/kv"
        services.dataDirectory = dataDir
        if !flagModels.isEmpty { registry.flagModels = flagModels }  // --model replaces PARLANCE_MODEL
        let search = DefaultModel.search(env: env)
        do {
            let path = configPath ?? (FileManager.default.fileExists(atPath: defaultConfigPath) ? defaultConfigPath : nil)
            let file = try path.map { try ConfigFile.load(path: $0) }
            var models = try registry.build(file: file, base: engine, explicit: explicit, fallback: search.path, fallbackSearch: search.tried)
            models.stores = StoreEnvironment(variables: env, modelDirs: models.stores.modelDirs)
            models.stores.dataDirectory = dataDir
            services.mcpServers = (file?.mcpServerSpecs ?? []).filter { s in !mcpServers.contains { $0.name == s.name } } + mcpServers
            services.version = Server.version
            return ServerOptions(models: models, maxMessageBytes: maxMessage, services: services)
        } catch {
            throw UsageError("\(error)")
        }
    }

    /// The user's config file: `$XDG_CONFIG_HOME/parlance/config.json` (read when it exists).
    var defaultConfigPath: String {
        (env["XDG_CONFIG_HOME"] ?? "\(env["HOME"] ?? NSHomeDirectory())/.config") + "/parlance/config.json"
    }

    /// The log (stderr or --log-file), with llama.cpp's own lines routed into it.
    func startLogging() -> Logger {
        let log = Logger(level: logLevel, file: logFile)
        LlamaLog.install { level, line in
            let text = line.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !text.isEmpty else { return }
            log.log(level >= 4 ? .error : level == 3 ? .warning : .debug, "llama.cpp: \(text)")
        }
        return log
    }
}
