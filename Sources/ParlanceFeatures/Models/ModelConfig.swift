import Foundation
import ParlanceDocuments
import ParlanceEngine
import ParlanceJSON
import ParlanceMCP
import ParlanceModelStores
import ParlanceRemote
import ParlanceSchema

/// The config file (`$XDG_CONFIG_HOME/parlance/config.json`, `--config PATH`): named
/// models with their engine settings, the default, routes, keep-alive and the memory
/// budget. Its schema is derived from these types, like every method's; a file that does
/// not match is refused with the path of the first problem.
public struct ConfigFile: Codable, Sendable, Schematic {
    public var models: [String: ModelEntry]?
    /// The model a request gets when it names none and no route matches.
    public var defaultModel: String?
    /// Route key (a method family: analysis, ask, compose, session; or a full method
    /// name) → model name.
    public var routes: [String: String]?
    /// Default keep-alive for every model, seconds (0: never unload).
    public var keepAlive: Double?
    public var maxLoadedModels: Int?
    public var maxModelBytes: Int?
    /// MCP servers sessions may use, in the shape MCP hosts' config files use.
    public var mcpServers: [String: MCPServerEntry]?
    /// Folders of GGUF files to list beside the other tools' stores (`parlance models`);
    /// `~/` and paths relative to the config file are allowed.
    public var modelDirs: [String]?

    /// One endpoint of a pool.
    public struct PoolEndpointEntry: Codable, Sendable, Schematic {
        /// The base URL of an OpenAI-compatible API (`http://gpu-box:8000/v1`; `#served-model` allowed).
        public var url: String
        public var servedModel: String?
        /// Cost per uncached prompt token relative to the others (default 1; 2: twice as slow).
        public var weight: Double?
        /// Calls in flight at once (default: the server's /props total_slots, else 1).
        public var maxConcurrentRequests: Int?
        public var apiKeyEnv: String?
        public static let schemaHints: [String: SchemaHint] = [
            "url": SchemaHint(description: "An OpenAI-compatible API's base URL (http:// only on loopback).", minLength: 1),
            "weight": SchemaHint(minimum: 0.01, maximum: 100),
            "maxConcurrentRequests": SchemaHint(minimum: 1, maximum: 256),
        ]
    }

    public struct MCPServerEntry: Codable, Sendable, Schematic {
        public var command: String
        public var args: [String]?
        public var env: [String: String]?
        public static let schemaHints: [String: SchemaHint] = [
            "command": SchemaHint(description: "The server's executable: a path, or a name looked up on PATH.", minLength: 1),
            "args": SchemaHint(description: "Its arguments."),
            "env": SchemaHint(description: "Environment variables set for it, over the daemon's."),
        ]
    }

    /// The file's MCP servers, by name.
    public var mcpServerSpecs: [MCPServerSpec] {
        (mcpServers ?? [:]).keys.sorted().map { n in
            let e = mcpServers![n]!
            return MCPServerSpec(name: n, command: e.command, args: e.args ?? [], env: e.env ?? [:])
        }
    }

    public struct ModelEntry: Codable, Sendable, Schematic {
        /// A GGUF file; a model on disk by its store name (`ollama:NAME[:TAG]`,
        /// `hf:ORG/REPO[:QUANT]`, `lmstudio:PUBLISHER/REPO[/FILE]`); or `openai:URL#served-model`, like `url`.
        public var path: String?
        /// A remote model: the base URL of an OpenAI-compatible API (`http://gpu-box:8000/v1`).
        public var url: String?
        /// A remote model's name on its server (else the `#` suffix of `url`, else the first it lists).
        public var servedModel: String?
        /// The environment variable holding the remote server's API key.
        public var apiKeyEnv: String?
        /// A remote call's timeout: to its first byte, and between bytes of its stream.
        public var timeoutSeconds: Double?
        /// Remote calls in flight at once; more wait in arrival order.
        public var maxConcurrentRequests: Int?
        public var contextSize: Int?
        public var threads: Int?
        public var parallel: Int?
        public var batchSize: Int?
        public var microBatch: Int?
        public var cacheTypeK: String?
        public var cacheTypeV: String?
        public var flashAttention: Bool?
        /// Speculative decoding drafted from the text, as `--speculative`.
        public var speculative: Bool?
        /// auto, all or a count, as `--gpu-layers`.
        public var gpuLayers: String?
        public var keepAlive: Double?
        /// A pool: one model served by several OpenAI-compatible endpoints (instead of `url`).
        public var endpoints: [PoolEndpointEntry]?
        /// A pool's health check interval, seconds (default 10).
        public var healthCheckSeconds: Double?
        /// Consecutive failures that open an endpoint's circuit breaker (default 3).
        public var failureThreshold: Int?
        /// Seconds an open breaker waits before one trial call (default 5).
        public var cooldownSeconds: Double?
        /// Seconds a request waits when every endpoint is full before `poolSaturated` (default 60).
        public var queueTimeoutSeconds: Double?
        /// A pool's routing: cost (default: uncached prompt tokens × weight + load) or
        /// roundRobin (each endpoint in turn; to compare against).
        public var routing: String?
        /// A pool's stream cut after its first tokens continues on another endpoint of the
        /// same model (default false: it ends with -32011 and its partial).
        public var continueOnFailure: Bool?
        /// The output languages the model writes well (BCP-47), over what its file says
        /// (`general.languages`) and the fixed table.
        public var languages: [String]?
        public static let schemaHints: [String: SchemaHint] = [
            "languages": SchemaHint(description: "The output languages the model writes well, as BCP-47 tags (sv, en-gb; a bare language covers its regions). Over the model file's general.languages; without either, Parlance's fixed table. A request for another language falls back to one of these unless it says languageFallback: keep.", minItems: 1, minLength: 2, maxLength: 64),
            "endpoints": SchemaHint(description: "A pool: the OpenAI-compatible endpoints that serve this one model; each call goes to the one where it costs least.", minItems: 1),
            "healthCheckSeconds": SchemaHint(minimum: 0.1, maximum: 3600),
            "failureThreshold": SchemaHint(minimum: 1, maximum: 100),
            "cooldownSeconds": SchemaHint(minimum: 0.1, maximum: 3600),
            "queueTimeoutSeconds": SchemaHint(minimum: 0, maximum: 3600),
            "routing": SchemaHint(enumValues: ["cost", "roundRobin"]),
            "path": SchemaHint(description: "A GGUF file (relative paths are relative to the config file), or a store name: ollama:NAME[:TAG], hf:ORG/REPO[:QUANT], lmstudio:PUBLISHER/REPO[/FILE].", minLength: 1),
            "url": SchemaHint(description: "A remote model: an OpenAI-compatible API's base URL (http:// only on loopback).", minLength: 1),
            "timeoutSeconds": SchemaHint(minimum: 0.1, maximum: 3600),
            "maxConcurrentRequests": SchemaHint(minimum: 1, maximum: 256),
            "contextSize": SchemaHint(minimum: 128, maximum: 131072),
            "threads": SchemaHint(minimum: 1, maximum: 256),
            "parallel": SchemaHint(minimum: 1, maximum: 64),
            "batchSize": SchemaHint(minimum: 32, maximum: 4096),
            "microBatch": SchemaHint(minimum: 32, maximum: 4096),
            "cacheTypeK": SchemaHint(enumValues: ["f16", "q8_0"]),
            "cacheTypeV": SchemaHint(enumValues: ["f16", "q8_0"]),
            "keepAlive": SchemaHint(description: "Idle seconds before the model unloads (0: never).", minimum: 0, maximum: ConfigFile.maxKeepAlive),
        ]
    }
    public static let schemaHints: [String: SchemaHint] = [
        "keepAlive": SchemaHint(minimum: 0, maximum: ConfigFile.maxKeepAlive),
        "maxLoadedModels": SchemaHint(minimum: 1, maximum: 64),
        "maxModelBytes": SchemaHint(minimum: 1),
    ]

    /// The longest keep-alive (ten years; longer is "never": 0).
    public static let maxKeepAlive: Double = 315_360_000

    public struct Problem: Error, CustomStringConvertible {
        public let description: String
    }

    /// Reads and validates a config file.
    public static func load(path: String) throws -> ConfigFile {
        guard let data = FileManager.default.contents(atPath: path) else { throw Problem(description: "cannot read config file \(path)") }
        let value: JSONValue
        do { value = try JSONParser.parse(Array(data)) } catch { throw Problem(description: "config file \(path) is not valid JSON: \(error)") }
        if let v = SchemaValidator.validate(value, against: SchemaDeriver.schema(for: ConfigFile.self)).first {
            throw Problem(description: "config file \(path): \(v.description)")
        }
        var file: ConfigFile
        do { file = try value.decode(ConfigFile.self) } catch { throw Problem(description: "config file \(path): \(error)") }
        let dir = (path as NSString).deletingLastPathComponent
        for name in (file.mcpServers ?? [:]).keys where name.range(of: MCPServerNames.pattern, options: .regularExpression) == nil {
            throw Problem(description: "config file \(path): mcpServers.\(name): \(MCPServerNames.rule)")
        }
        for (name, m) in file.models ?? [:] {
            if let bad = LanguageSupport.normalize(m.languages ?? []).invalid.first {
                throw Problem(description: "config file \(path): models.\(name).languages: '\(bad)' is not a BCP-47 language tag (e.g. sv, en-gb)")
            }
            guard [m.path != nil, m.url != nil, m.endpoints != nil].filter({ $0 }).count == 1 else {
                throw Problem(description: "config file \(path): models.\(name) needs exactly one of path (a GGUF file), url (a remote server) and endpoints (a pool of remote servers)")
            }
            guard let p = m.path, !RemoteSpec.isRemote(p), !ModelCatalogue.isStoreName(p) else { continue }
            if p.hasPrefix("~/") {
                file.models?[name]?.path = NSHomeDirectory() + String(p.dropFirst())
            } else if !p.hasPrefix("/") {
                file.models?[name]?.path = dir.isEmpty ? p : dir + "/" + p
            }
        }
        file.modelDirs = file.modelDirs?.map { d in
            d.hasPrefix("~/") ? NSHomeDirectory() + String(d.dropFirst()) : d.hasPrefix("/") || dir.isEmpty ? d : dir + "/" + d
        }
        return file
    }

    /// This model's engine settings over `base` (the flags' defaults); `explicit` flags
    /// (given on the command line) win over the file.
    public func engine(_ m: ModelEntry, base: EngineConfig, explicit: Set<String>) throws -> EngineConfig {
        var c = base
        c.modelPath = m.path ?? m.url ?? m.endpoints.map { RemoteSpec.prefix + $0.map(\.url).joined(separator: ",") } ?? ""
        func take<T>(_ flag: String, _ value: T?, _ apply: (T) -> Void) { if let value, !explicit.contains(flag) { apply(value) } }
        take("--ctx", m.contextSize) { c.contextSize = $0 }
        take("--threads", m.threads) { c.threads = $0 }
        take("--parallel", m.parallel) { c.parallel = $0 }
        take("--batch", m.batchSize) { c.batchSize = $0 }
        take("--micro-batch", m.microBatch) { c.microBatch = $0 }
        take("--cache-type-k", m.cacheTypeK.flatMap(KVCacheTypes.Element.init(rawValue:))) { c.cache = .init(keys: $0, values: c.cache?.values ?? .f16) }
        take("--cache-type-v", m.cacheTypeV.flatMap(KVCacheTypes.Element.init(rawValue:))) { c.cache = .init(keys: c.cache?.keys ?? .f16, values: $0) }
        take("--flash-attn", m.flashAttention) { c.flashAttention = $0 }
        take("--speculative", m.speculative) { c.speculative = $0 }
        if let g = m.gpuLayers, !explicit.contains("--gpu-layers") {
            guard let v = GPULayers(g) else { throw Problem(description: "gpuLayers must be auto, all or a non-negative integer, got '\(g)'") }
            c.gpuLayers = v
        }
        return c
    }
}

/// What an MCP server may be called: the part before `/` in a session's `server/tool`.
public enum MCPServerNames {
    public static let pattern = "^[A-Za-z0-9_-]{1,64}$"
    public static let rule = "an MCP server's name is 1 to 64 letters, digits, '_' or '-'"
}

/// Builds the registry from the config file and the command line.
public struct RegistryBuilder: Sendable {
    /// `--model` values in order: `NAME=PATH`, or a bare `PATH` named after its file.
    public var flagModels: [(name: String?, path: String)] = []
    public var keepAlive: Double? = nil
    public var maxLoadedModels: Int? = nil
    public var maxModelBytes: Int? = nil
    public var defaultModel: String? = nil
    public var routes: [String: String] = [:]
    public init() {}

    /// Splits a `--model` value: `NAME=PATH` when the part before `=` is a plain name.
    public static func parseModelFlag(_ v: String) -> (name: String?, path: String) {
        if let eq = v.firstIndex(of: "="), eq != v.startIndex {
            let name = String(v[..<eq])
            if name.range(of: "^[A-Za-z0-9_.:-]{1,64}$", options: .regularExpression) != nil { return (name, String(v[v.index(after: eq)...])) }
        }
        return (nil, v)
    }

    /// Flags over the file over the defaults. Without any model, `fallback` (the embedded
    /// default model) is the one; `fallbackSearch` lists where it was looked for.
    public func build(file: ConfigFile?, base: EngineConfig, explicit: Set<String>, fallback: String,
                      fallbackSearch: [String] = []) throws -> RegistrySettings {
        var models: [RegisteredModel] = []
        let defaultKeep = keepAlive ?? file?.keepAlive ?? 300
        func add(_ name: String, _ engine: EngineConfig, keep: Double?, entry: ConfigFile.ModelEntry? = nil) throws {
            var remote: OpenAIEndpoint? = nil
            var pool: PoolSpec? = nil
            let context = explicit.contains("--ctx") ? base.contextSize : entry?.contextSize
            if entry?.endpoints != nil || RemoteSpec.isPool(engine.modelPath) {
                pool = try RemoteSpec.pool(engine.modelPath, entry: entry, contextSize: context)
            } else if RemoteSpec.isRemote(engine.modelPath) || entry?.url != nil {
                remote = try RemoteSpec.endpoint(engine.modelPath, entry: entry, contextSize: context)
            }
            var m = RegisteredModel(name: name, engine: engine, keepAlive: keepAlive ?? keep ?? defaultKeep, remote: remote,
                                    storeName: ModelCatalogue.isStoreName(engine.modelPath) ? engine.modelPath : nil)
            m.pool = pool
            m.languages = entry?.languages.map { LanguageSupport.normalize($0).tags }
            if let i = models.firstIndex(where: { $0.name == name }) { models[i] = m } else { models.append(m) }
        }
        for (name, entry) in (file?.models ?? [:]).sorted(by: { $0.key < $1.key }) {
            try add(name, try file!.engine(entry, base: base, explicit: explicit), keep: entry.keepAlive, entry: entry)
        }
        var firstFlag: String? = nil
        var seen: [String: String] = [:]
        for (name, path) in flagModels {
            let n = name ?? ModelNames.fromPath(path)
            if let other = seen[n], other != path {
                throw ConfigFile.Problem(description: "two models named '\(n)' (\(other) and \(path)); name them: --model NAME=PATH")
            }
            seen[n] = path
            var c = base
            // A flag naming a model the file configures changes only its path.
            var entry = file?.models?[n]
            if let entry { c = try file!.engine(entry, base: base, explicit: explicit) }
            c.modelPath = path.hasPrefix("~/") ? NSHomeDirectory() + String(path.dropFirst()) : path
            if RemoteSpec.isRemote(path) { entry?.url = nil; entry?.endpoints = nil } else { entry = nil }
            try add(n, c, keep: file?.models?[n]?.keepAlive, entry: entry)
            firstFlag = firstFlag ?? n
        }
        if models.isEmpty {
            var c = base
            c.modelPath = fallback
            c.modelSearch = fallbackSearch
            try add(ModelNames.fromPath(fallback), c, keep: nil)
        }
        let chosenDefault = defaultModel ?? firstFlag ?? file?.defaultModel ?? models[0].name
        // A default named by its store name (`parlance models use hf:…`) is registered as such.
        if !models.contains(where: { $0.name == chosenDefault }), ModelCatalogue.isStoreName(chosenDefault) {
            var c = base
            c.modelPath = chosenDefault
            try add(chosenDefault, c, keep: nil)
        }
        let names = Set(models.map(\.name))
        guard names.contains(chosenDefault) else {
            throw ConfigFile.Problem(description: "default model '\(chosenDefault)' is not in the registry (\(models.map(\.name).joined(separator: ", ")))")
        }
        let allRoutes = (file?.routes ?? [:]).merging(routes) { _, flag in flag }
        for (route, model) in allRoutes where !names.contains(model) {
            throw ConfigFile.Problem(description: "route '\(route)' names model '\(model)', which is not in the registry (\(models.map(\.name).joined(separator: ", ")))")
        }
        var settings = RegistrySettings(models: models, defaultModel: chosenDefault, routes: allRoutes,
                                        maxLoadedModels: maxLoadedModels ?? file?.maxLoadedModels, maxModelBytes: maxModelBytes ?? file?.maxModelBytes)
        settings.stores = StoreEnvironment(modelDirs: file?.modelDirs ?? [])
        var onDemand = base
        onDemand.modelSearch = []
        settings.onDemand = onDemand
        settings.onDemandKeepAlive = defaultKeep
        return settings
    }
}

/// `openai:URL#served-model`: a model served by an OpenAI-compatible server.
public enum RemoteSpec {
    public static let prefix = "openai:"
    public static func isRemote(_ path: String) -> Bool { path.hasPrefix(prefix) }
    /// `openai:URL1,URL2,…`: a pool of endpoints serving one model.
    public static func isPool(_ path: String) -> Bool { isRemote(path) && path.contains(",") }

    /// A pool from `openai:URL1,URL2,…` (each URL may end in `#served-model`) or a config
    /// entry's `endpoints`, with the entry's timeout, key and pool settings.
    public static func pool(_ spec: String, entry: ConfigFile.ModelEntry?, contextSize: Int?) throws -> PoolSpec {
        var policy = PoolPolicy()
        if let s = entry?.healthCheckSeconds { policy.healthInterval = .milliseconds(Int(s * 1000)) }
        if let n = entry?.failureThreshold { policy.failureThreshold = n }
        if let s = entry?.cooldownSeconds { policy.cooldown = .milliseconds(Int(s * 1000)) }
        if let s = entry?.queueTimeoutSeconds { policy.queueTimeout = .milliseconds(Int(s * 1000)) }
        policy.roundRobin = entry?.routing == "roundRobin"
        policy.continueOnFailure = entry?.continueOnFailure ?? false
        var members: [PoolMember] = []
        if let list = entry?.endpoints {
            for (i, ep) in list.enumerated() {
                var one = entry!
                one.url = ep.url
                one.servedModel = ep.servedModel ?? entry?.servedModel
                one.apiKeyEnv = ep.apiKeyEnv ?? entry?.apiKeyEnv
                one.maxConcurrentRequests = ep.maxConcurrentRequests
                do {
                    members.append(PoolMember(endpoint: try endpoint("", entry: one, contextSize: contextSize), weight: ep.weight ?? 1,
                                              maxConcurrentRequests: ep.maxConcurrentRequests))
                } catch let p as ConfigFile.Problem {
                    throw ConfigFile.Problem(description: "endpoints[\(i)]: \(p.description)")
                }
            }
        } else {
            let text = spec.hasPrefix(prefix) ? String(spec.dropFirst(prefix.count)) : spec
            for (i, part) in text.split(separator: ",", omittingEmptySubsequences: false).enumerated() {
                let url = part.trimmingCharacters(in: .whitespaces)
                guard !url.isEmpty else { throw ConfigFile.Problem(description: "pool endpoint \(i + 1) of '\(spec)' is empty (expected openai:URL1,URL2,…)") }
                var one = entry ?? ConfigFile.ModelEntry()
                one.url = nil
                one.maxConcurrentRequests = nil
                do {
                    members.append(PoolMember(endpoint: try endpoint(prefix + url, entry: one, contextSize: contextSize)))
                } catch let p as ConfigFile.Problem {
                    throw ConfigFile.Problem(description: "pool endpoint \(i + 1): \(p.description)")
                }
            }
        }
        let hosts = members.map { $0.endpoint.baseURL.absoluteString }
        if let dup = hosts.first(where: { h in hosts.filter { $0 == h }.count > 1 }) {
            throw ConfigFile.Problem(description: "pool lists the endpoint \(dup) twice")
        }
        guard !members.isEmpty else { throw ConfigFile.Problem(description: "a pool needs at least one endpoint") }
        return PoolSpec(members: members, policy: policy)
    }

    /// `openai:URL#served` (the prefix optional) → the URL and the served model's name.
    public static func split(_ spec: String) -> (url: String, served: String?) {
        let text = spec.hasPrefix(prefix) ? String(spec.dropFirst(prefix.count)) : spec
        guard let hash = text.firstIndex(of: "#") else { return (text, nil) }
        return (String(text[..<hash]), String(text[text.index(after: hash)...]).removingPercentEncoding)
    }

    /// The endpoint from `openai:URL#model` (or a config entry's `url`), the entry's settings
    /// over the defaults (60 s timeout, 4 calls at once).
    public static func endpoint(_ spec: String, entry: ConfigFile.ModelEntry?, contextSize: Int?) throws -> OpenAIEndpoint {
        let (text, served) = split(entry?.url ?? spec)
        guard let url = URL(string: text), url.host != nil else {
            throw ConfigFile.Problem(description: "remote model URL '\(text)' is not a URL (expected openai:http://host:port/v1#model)")
        }
        if url.user != nil || url.password != nil {
            throw ConfigFile.Problem(description: "remote model URL for \(url.host ?? "?") has credentials in it; put the key in an environment variable and name it with apiKeyEnv")
        }
        if let problem = OpenAIEndpoint.checkScheme(url) { throw ConfigFile.Problem(description: "remote model URL: \(problem)") }
        var e = OpenAIEndpoint(baseURL: url, servedModel: entry?.servedModel ?? (served?.isEmpty == false ? served : nil),
                               apiKeyVariable: entry?.apiKeyEnv, contextSize: contextSize)
        if let t = entry?.timeoutSeconds { e.timeout = .milliseconds(Int(t * 1000)) }
        if let n = entry?.maxConcurrentRequests { e.maxConcurrentRequests = n }
        if let v = e.apiKeyVariable, ProcessInfo.processInfo.environment[v]?.isEmpty != false {
            throw ConfigFile.Problem(description: "remote model at \(e.host): the environment variable \(v) (apiKeyEnv) is not set")
        }
        return e
    }
}
