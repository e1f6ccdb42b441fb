// swift-tools-version: 6.0
// Parlance: a local language-model daemon speaking JSON-RPC 2.0 over stdio.
// Layers, bottom to top (each target has one job; see README "Architecture"):
//   CLlama → LlamaShim → ParlanceEngine        the llama.cpp boundary and the scheduler
//   ParlanceJSON → JSONRPC                     JSON values, framing, messages
//   ParlanceJSON → ParlanceSchema              JSON Schema: derive from types, validate, grammar
//   ParlanceSchema → ParlanceProtocol          every method's params/result types
//   ParlanceHash → ParlanceDocuments                        transcripts: parse, chunk, language, retrieval
//   ParlanceJSON → ParlanceRemote              an OpenAI-compatible server's API (remote engines)
//   ParlanceEngine, ParlanceRemote → ParlanceModelStores   models in other tools' stores; names; pulls
//   JSONRPC → ParlanceMCP                      MCP's words; an MCP server as a child process (sessions' tools)
//   ParlanceFeatures                           one file per method family
//   ParlanceLSP                                the standard LSP surface: editor buffers, rewrite code actions
//   ParlanceServer                             lifecycle, the one registration list, dispatch
//   ParlanceInProcess                          the server in this process: its client, FILE arguments, results as text
//   ParlanceMCPServer                          `parlance mcp`: the MCP server, its method table, tools, resources, prompts
//   ParlanceCLI                                options, --help/man/completions, commands, the daemon on stdio
//   ParlanceClient                             drives a daemon over pipes (tests, bench)
//   parlance, parlance-bench                   executables
import PackageDescription

let swiftSettings: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "Parlance",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "parlance", targets: ["parlance"]),
        .executable(name: "parlance-bench", targets: ["parlance-bench"]),
    ],
    targets: [
        // MARK: llama.cpp boundary
        .systemLibrary(name: "CLlama", pkgConfig: "llama"),
        .target(name: "LlamaShim", dependencies: ["CLlama"]),

        // MARK: JSON and transport
        .target(name: "ParlanceJSON", swiftSettings: swiftSettings),
        .target(name: "ParlanceHash", swiftSettings: swiftSettings),
        .target(name: "JSONRPC", dependencies: ["ParlanceJSON"], swiftSettings: swiftSettings),

        // MARK: Protocol
        .target(name: "ParlanceSchema", dependencies: ["ParlanceJSON"], swiftSettings: swiftSettings),
        .target(name: "ParlanceProtocol", dependencies: ["ParlanceJSON", "ParlanceSchema"], swiftSettings: swiftSettings),

        // MARK: Engine and documents
        .target(name: "ParlanceEngine", dependencies: ["LlamaShim", "ParlanceJSON", "ParlanceHash"], swiftSettings: swiftSettings),
        .target(name: "ParlanceDocuments", dependencies: ["ParlanceHash"], swiftSettings: swiftSettings),
        // An OpenAI-compatible server's API over Foundation's URLSession (remote engines).
        .target(name: "ParlanceRemote", dependencies: ["ParlanceJSON"], swiftSettings: swiftSettings),
        // Models on disk in other tools' stores (Ollama, the Hugging Face cache, LM Studio…), read
        // never written; names for them; and pulls into the HF cache or Parlance's own folder.
        .target(name: "ParlanceModelStores", dependencies: ["ParlanceEngine", "ParlanceRemote", "ParlanceJSON", "ParlanceHash"], swiftSettings: swiftSettings),
        // The Model Context Protocol's words, and an MCP server run as a child process (sessions' tools).
        .target(name: "ParlanceMCP", dependencies: ["ParlanceJSON", "JSONRPC"], swiftSettings: swiftSettings),

        // MARK: Features and server
        .target(
            name: "ParlanceFeatures",
            dependencies: ["ParlanceProtocol", "ParlanceSchema", "ParlanceEngine", "ParlanceDocuments", "ParlanceRemote", "ParlanceMCP", "ParlanceModelStores", "JSONRPC"],
            swiftSettings: swiftSettings),
        .target(
            name: "ParlanceLSP",
            dependencies: ["JSONRPC", "ParlanceJSON", "ParlanceProtocol", "ParlanceSchema", "ParlanceFeatures", "ParlanceDocuments"],
            swiftSettings: swiftSettings),
        .target(
            name: "ParlanceServer",
            dependencies: ["JSONRPC", "ParlanceProtocol", "ParlanceSchema", "ParlanceEngine", "ParlanceFeatures", "ParlanceDocuments", "ParlanceLSP"],
            swiftSettings: swiftSettings),

        // MARK: Front ends over an in-process server: `parlance mcp`, and the command line
        // The daemon's server in this process, as both front ends use it: a client over a
        // pipe pair, FILE arguments, and results as plain text.
        .target(
            name: "ParlanceInProcess",
            dependencies: ["ParlanceServer", "ParlanceProtocol", "JSONRPC", "ParlanceJSON"],
            swiftSettings: swiftSettings),
        // `parlance mcp`: Parlance's methods as an MCP server's tools (beside ParlanceLSP,
        // the other standard protocol Parlance speaks), with a method table like the daemon's.
        .target(
            name: "ParlanceMCPServer",
            dependencies: ["ParlanceInProcess", "ParlanceServer", "ParlanceProtocol", "ParlanceMCP", "ParlanceSchema", "JSONRPC", "ParlanceJSON"],
            swiftSettings: swiftSettings),
        // The command line: the daemon's options, and one-off commands through an in-process server.
        .target(
            name: "ParlanceCLI",
            dependencies: ["ParlanceInProcess", "ParlanceMCPServer", "ParlanceServer", "ParlanceProtocol", "ParlanceFeatures", "ParlanceEngine", "ParlanceMCP", "ParlanceModelStores", "ParlanceSchema", "JSONRPC", "ParlanceJSON"],
            swiftSettings: swiftSettings),

        // MARK: Client (tests, benchmark, and anyone driving the daemon from Swift)
        .target(name: "ParlanceClient", dependencies: ["ParlanceJSON"], swiftSettings: swiftSettings),

        // MARK: Executables
        .executableTarget(name: "parlance", dependencies: ["ParlanceCLI"], swiftSettings: swiftSettings),
        .executableTarget(name: "parlance-bench", dependencies: ["ParlanceJSON", "ParlanceEngine", "ParlanceClient", "ParlanceDocuments", "ParlanceModelStores"], swiftSettings: swiftSettings),

        // MARK: Tests
        .testTarget(name: "JSONRPCTests", dependencies: ["JSONRPC", "ParlanceJSON"], swiftSettings: swiftSettings),
        // ParlanceFeatures: its grammars (FactInsertion) are checked by the recognizer here.
        .testTarget(name: "SchemaTests", dependencies: ["ParlanceSchema", "ParlanceJSON", "ParlanceFeatures"], swiftSettings: swiftSettings),
        .testTarget(name: "ModelStoresTests", dependencies: ["ParlanceModelStores", "ParlanceEngine", "ParlanceHash"], swiftSettings: swiftSettings),
        .testTarget(name: "DocumentsTests", dependencies: ["ParlanceDocuments", "ParlanceHash"], swiftSettings: swiftSettings),
        .testTarget(
            name: "ServerTests",
            dependencies: ["ParlanceServer", "ParlanceProtocol", "ParlanceFeatures", "ParlanceEngine", "ParlanceDocuments", "ParlanceLSP", "ParlanceRemote", "JSONRPC", "ParlanceJSON", "ParlanceSchema"],
            swiftSettings: swiftSettings),
        // The command line's options (parsing, --help, man page, completions) and `parlance mcp`'s method table.
        .testTarget(
            name: "CLITests",
            dependencies: ["ParlanceCLI", "ParlanceMCPServer", "ParlanceInProcess", "ParlanceServer", "ParlanceFeatures", "ParlanceEngine", "ParlanceMCP", "JSONRPC", "ParlanceJSON"],
            swiftSettings: swiftSettings),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["ParlanceJSON", "ParlanceSchema", "ParlanceProtocol", "ParlanceClient", "ParlanceHash"],
            swiftSettings: swiftSettings),
    ]
)
