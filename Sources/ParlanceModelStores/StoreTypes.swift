import Foundation

// The words every store reader, the catalogue and the puller share. The daemon, the
// command line and `model/list` see only these; how each tool lays out its files stays
// inside its reader.

/// Where a model on disk came from: the tool whose store holds it.
public enum ModelSource: String, Sendable, Codable, CaseIterable {
    case ollama            // Ollama's manifests and blobs
    case huggingFace = "hf"  // the Hugging Face cache (huggingface-cli, llama.cpp -hf, …)
    case llamaCpp = "llamacpp"  // llama.cpp's own cache (LLAMA_CACHE), older flat layout
    case lmStudio = "lmstudio"
    case gpt4all
    case folder            // a folder named in the config file's modelDirs
    case parlance          // what `parlance models pull ollama:…` wrote (Parlance's data dir)
}

/// The environment the stores are found from: variables, the home folder, the config
/// file's `modelDirs`, and Parlance's own data folder. Tests build one over a temporary HOME.
public struct StoreEnvironment: Sendable {
    public var variables: [String: String]
    public var home: String
    /// Folders the user named in the config file (`modelDirs`), searched for `*.gguf`.
    public var modelDirs: [String]
    /// The memory a model may use now (bytes), for `fits`; nil: unknown.
    public var availableBytes: Int?
    /// Parlance's data folder when the daemon was given one (`--data-dir`, `$PARLANCE_DATA_DIR`).
    public var dataDirectory: String?

    public init(variables: [String: String] = ProcessInfo.processInfo.environment, home: String? = nil,
                modelDirs: [String] = [], availableBytes: Int? = nil) {
        self.variables = variables
        self.home = home ?? variables["HOME"] ?? NSHomeDirectory()
        self.modelDirs = modelDirs
        self.availableBytes = availableBytes
    }

    /// Parlance's own data folder (`$XDG_DATA_HOME/parlance`, else `~/.local/share/parlance`):
    /// the only place besides the Hugging Face cache that a pull writes to.
    public var dataDir: String {
        if let dataDirectory, !dataDirectory.isEmpty { return dataDirectory }
        return (variables["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? home + "/.local/share") + "/parlance"
    }
}

/// One model found on disk.
public struct StoredModel: Sendable, Hashable, Codable {
    /// The name to type: `ollama:llama3.2:3b`, `hf:bartowski/Llama-3.2-3B-Instruct-GGUF:Q4_K_M`,
    /// `lmstudio:lmstudio-community/Qwen2.5-7B-Instruct-GGUF/Qwen2.5-7B-Instruct-Q4_K_M.gguf`,
    /// or for a folder, the file's path.
    public var name: String
    public var source: ModelSource
    /// The file llama.cpp opens (a split model's first part).
    public var path: String
    /// Every part of a split model, in order (one element for a single file).
    public var parts: [String]
    public var architecture: String?
    /// The size label (`general.size_label`, "3B") or else a parameter count from the name.
    public var parameters: String?
    /// `Q4_K_M`, `Q8_0`, … from the header's file type, else from the file name.
    public var quantization: String?
    public var contextLength: Int?
    public var hasChatTemplate: Bool
    /// Whether the linked llama.cpp knows the architecture (nil: the header names none).
    public var architectureSupported: Bool?
    /// All parts together.
    public var fileBytes: Int
    /// Weights plus an f16 KV cache at the default context, and compute buffers.
    public var estimatedBytes: Int
    /// Whether `estimatedBytes` fits in the memory available now (nil: unknown).
    public var fits: Bool?
    /// Ollama's `.params` layer (sampling defaults), as JSON text, and `.system` layer.
    public var defaultParameters: String?
    public var systemPrompt: String?

    public init(name: String, source: ModelSource, path: String, parts: [String], architecture: String? = nil, parameters: String? = nil,
                quantization: String? = nil, contextLength: Int? = nil, hasChatTemplate: Bool = false, architectureSupported: Bool? = nil,
                fileBytes: Int = 0, estimatedBytes: Int = 0, fits: Bool? = nil, defaultParameters: String? = nil, systemPrompt: String? = nil) {
        self.name = name
        self.source = source
        self.path = path
        self.parts = parts
        self.architecture = architecture
        self.parameters = parameters
        self.quantization = quantization
        self.contextLength = contextLength
        self.hasChatTemplate = hasChatTemplate
        self.architectureSupported = architectureSupported
        self.fileBytes = fileBytes
        self.estimatedBytes = estimatedBytes
        self.fits = fits
        self.defaultParameters = defaultParameters
        self.systemPrompt = systemPrompt
    }
}

/// Why a model name did not resolve to a file on disk. `reason` is what a program acts on.
public struct ModelLookupError: Error, Sendable, CustomStringConvertible {
    public enum Reason: String, Sendable, Codable {
        /// A well-formed name whose model is not on disk: `pullCommand` would get it.
        case notDownloaded
        /// Not a name any form accepts (`hf:` without ORG/REPO, an unknown scheme…).
        case invalidName
        /// On disk but unusable: a split model with a part missing, a file that is not GGUF.
        case incomplete
    }
    public var reason: Reason
    public var name: String
    public var message: String
    /// The closest names on disk.
    public var suggestions: [String]
    /// `parlance models pull …` for a name a pull can get; nil for `lmstudio:` and paths.
    public var pullCommand: String?

    public init(reason: Reason, name: String, message: String, suggestions: [String] = [], pullCommand: String? = nil) {
        self.reason = reason
        self.name = name
        self.message = message
        self.suggestions = suggestions
        self.pullCommand = pullCommand
    }

    public var description: String {
        var s = message
        if !suggestions.isEmpty { s += "; closest on disk: " + suggestions.joined(separator: ", ") }
        if let pullCommand { s += "; to download it: \(pullCommand)" }
        return s
    }
}

/// A pull's progress, reported as bytes arrive (at most a few times a second).
public struct PullProgress: Sendable, Hashable, Codable {
    /// The file being transferred (its name in the repository or its digest).
    public var file: String
    public var completedBytes: Int
    public var totalBytes: Int?
    /// Over the last few seconds.
    public var bytesPerSecond: Double
    /// Bytes that were already on disk from an interrupted pull (resumed, not sent again).
    public var resumedBytes: Int

    public init(file: String, completedBytes: Int, totalBytes: Int?, bytesPerSecond: Double, resumedBytes: Int = 0) {
        self.file = file
        self.completedBytes = completedBytes
        self.totalBytes = totalBytes
        self.bytesPerSecond = bytesPerSecond
        self.resumedBytes = resumedBytes
    }
}

/// What a pull got.
public struct PulledModel: Sendable, Hashable, Codable {
    /// The name it now resolves under (the same form as asked, with the tag or quantization filled in).
    public var name: String
    public var path: String
    public var parts: [String]
    public var bytes: Int
    public var sha256: String
    /// Bytes that were on disk already (a resumed or repeated pull).
    public var resumedBytes: Int
    /// False when every file was already complete on disk (nothing was transferred).
    public var downloaded: Bool

    public init(name: String, path: String, parts: [String], bytes: Int, sha256: String, resumedBytes: Int, downloaded: Bool) {
        self.name = name
        self.path = path
        self.parts = parts
        self.bytes = bytes
        self.sha256 = sha256
        self.resumedBytes = resumedBytes
        self.downloaded = downloaded
    }
}

/// Why a pull failed. `reason` and `data` are what a program acts on.
public struct PullError: Error, Sendable, CustomStringConvertible {
    public enum Reason: String, Sendable, Codable {
        case invalidName       // not hf:ORG/REPO[:QUANT] or ollama:NAME[:TAG]
        case notFound          // no such repository, tag or quantization (`available` lists what exists)
        case unauthorized      // 401/403: a gated or private repository (set HF_TOKEN)
        case network           // connection refused, reset, timed out, a server error, a bad redirect
        case diskFull          // not enough free space (checked before starting, and on write)
        case checksum          // the bytes' sha256 is not the one the server announced
        case insecure          // plain http:// to a host that is not loopback
        case cancelled
    }
    public var reason: Reason
    public var message: String
    /// For notFound: the quantizations or tags that exist. For diskFull: needed and free bytes.
    public var available: [String]
    public var neededBytes: Int?
    public var freeBytes: Int?
    public var url: String?
    public var status: Int?

    public init(_ reason: Reason, _ message: String, available: [String] = [], neededBytes: Int? = nil, freeBytes: Int? = nil,
                url: String? = nil, status: Int? = nil) {
        self.reason = reason
        self.message = message
        self.available = available
        self.neededBytes = neededBytes
        self.freeBytes = freeBytes
        self.url = url
        self.status = status
    }

    public var description: String { message }
}
