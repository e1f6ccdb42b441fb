import Foundation
import ParlanceEngine
import ParlanceFeatures
import ParlanceInProcess
import ParlanceMCP
import ParlanceModelStores
import ParlanceServer

/// Everything the daemon's options (DaemonOptions) and environment decide: models, engine
/// defaults, caches, logging. `parlance --stdio`, every command and `parlance mcp` build
/// their server from it.
public struct DaemonSettings: Sendable {
    var engine = EngineConfig(modelPath: "")
    var services = ServiceOptions(cacheDirectory: "", dataDirectory: "", historyEnabled: true)
    /// Models (`--model`, in order; $PARLANCE_MODEL's when there is none), routes, budget.
    var registry = RegistryBuilder()
    var mcpServers: [MCPServerSpec] = []
    var configPath: String? = nil
    /// The options given on the command line: the config file does not override them.
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
        if registry.flagModels.isEmpty, let m = env["PARLANCE_MODEL"] { registry.flagModels = [RegistryBuilder.parseModelFlag(m)] }
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

    /// The daemon's server in this process, with these settings: the client of a command
    /// or of `parlance mcp`.
    func inProcessClient(log: Logger) throws -> InProcessClient {
        let options = try serverOptions(log: log)
        do { return try InProcessClient(options: options, log: log) } catch let e as PipeError { throw UsageError(e.description) }
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
