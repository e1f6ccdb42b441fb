import Foundation
import ParlanceEngine
import ParlanceJSON
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

    public struct ModelEntry: Codable, Sendable, Schematic {
        public var path: String
        public var contextSize: Int?
        public var threads: Int?
        public var parallel: Int?
        public var batchSize: Int?
        public var cacheTypeK: String?
        public var cacheTypeV: String?
        public var flashAttention: Bool?
        /// auto, all or a count, as `--gpu-layers`.
        public var gpuLayers: String?
        public var keepAlive: Double?
        public static let schemaHints: [String: SchemaHint] = [
            "path": SchemaHint(description: "A GGUF file; relative paths are relative to the config file.", minLength: 1),
            "contextSize": SchemaHint(minimum: 128, maximum: 131072),
            "threads": SchemaHint(minimum: 1, maximum: 256),
            "parallel": SchemaHint(minimum: 1, maximum: 64),
            "batchSize": SchemaHint(minimum: 32, maximum: 4096),
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
        for (name, m) in file.models ?? [:] where !m.path.hasPrefix("/") && !m.path.hasPrefix("~") {
            file.models?[name]?.path = dir.isEmpty ? m.path : dir + "/" + m.path
        }
        for (name, m) in file.models ?? [:] where m.path.hasPrefix("~/") {
            file.models?[name]?.path = NSHomeDirectory() + String(m.path.dropFirst())
        }
        return file
    }

    /// This model's engine settings over `base` (the flags' defaults); `explicit` flags
    /// (given on the command line) win over the file.
    public func engine(_ m: ModelEntry, base: EngineConfig, explicit: Set<String>) throws -> EngineConfig {
        var c = base
        c.modelPath = m.path
        func take<T>(_ flag: String, _ value: T?, _ apply: (T) -> Void) { if let value, !explicit.contains(flag) { apply(value) } }
        take("--ctx", m.contextSize) { c.contextSize = $0 }
        take("--threads", m.threads) { c.threads = $0 }
        take("--parallel", m.parallel) { c.parallel = $0 }
        take("--batch", m.batchSize) { c.batchSize = $0; c.microBatch = $0 }
        take("--cache-type-k", m.cacheTypeK.flatMap(KVCacheTypes.Element.init(rawValue:))) { c.cache.keys = $0 }
        take("--cache-type-v", m.cacheTypeV.flatMap(KVCacheTypes.Element.init(rawValue:))) { c.cache.values = $0 }
        take("--flash-attn", m.flashAttention) { c.flashAttention = $0 }
        if let g = m.gpuLayers, !explicit.contains("--gpu-layers") {
            guard let v = GPULayers(g) else { throw Problem(description: "gpuLayers must be auto, all or a non-negative integer, got '\(g)'") }
            c.gpuLayers = v
        }
        return c
    }
}

/// Builds the registry from the config file and the command line.
public struct RegistryBuilder {
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
    /// default model) is the one.
    public func build(file: ConfigFile?, base: EngineConfig, explicit: Set<String>, fallback: String) throws -> RegistrySettings {
        var models: [RegisteredModel] = []
        let defaultKeep = keepAlive ?? file?.keepAlive ?? 300
        func add(_ name: String, _ engine: EngineConfig, keep: Double?) {
            let m = RegisteredModel(name: name, engine: engine, keepAlive: keepAlive ?? keep ?? defaultKeep)
            if let i = models.firstIndex(where: { $0.name == name }) { models[i] = m } else { models.append(m) }
        }
        for (name, entry) in (file?.models ?? [:]).sorted(by: { $0.key < $1.key }) {
            add(name, try file!.engine(entry, base: base, explicit: explicit), keep: entry.keepAlive)
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
            if let entry = file?.models?[n] { c = try file!.engine(entry, base: base, explicit: explicit) }
            c.modelPath = path.hasPrefix("~/") ? NSHomeDirectory() + String(path.dropFirst()) : path
            add(n, c, keep: file?.models?[n]?.keepAlive)
            firstFlag = firstFlag ?? n
        }
        if models.isEmpty {
            var c = base
            c.modelPath = fallback
            add(ModelNames.fromPath(fallback), c, keep: nil)
        }
        let names = Set(models.map(\.name))
        let chosenDefault = defaultModel ?? firstFlag ?? file?.defaultModel ?? models[0].name
        guard names.contains(chosenDefault) else {
            throw ConfigFile.Problem(description: "default model '\(chosenDefault)' is not in the registry (\(models.map(\.name).joined(separator: ", ")))")
        }
        let allRoutes = (file?.routes ?? [:]).merging(routes) { _, flag in flag }
        for (route, model) in allRoutes where !names.contains(model) {
            throw ConfigFile.Problem(description: "route '\(route)' names model '\(model)', which is not in the registry (\(models.map(\.name).joined(separator: ", ")))")
        }
        return RegistrySettings(models: models, defaultModel: chosenDefault, routes: allRoutes,
                                maxLoadedModels: maxLoadedModels ?? file?.maxLoadedModels, maxModelBytes: maxModelBytes ?? file?.maxModelBytes)
    }
}
