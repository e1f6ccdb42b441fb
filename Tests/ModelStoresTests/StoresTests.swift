import Foundation
import ParlanceEngine
import ParlanceHash
import XCTest
@testable import ParlanceModelStores

// Every store laid out in a temporary HOME from two real models: SmolLM2-135M-Instruct
// (Q4_1, has a chat template) and Gemma 3 270M (the base model, Q4_K_M, no chat template).
// Model files are hard links to the set-up cache's copies (no 350 MB of copying); the
// Hugging Face cache uses relative links into its blobs as huggingface_hub writes them.

/// The two real models, found or installed once per test run.
struct RealModels: Sendable {
    let smol: String
    let gemma: String
    let smolSHA: String
    let gemmaSHA: String

    static let shared: Result<RealModels, FixtureError> = Result(catching: { () throws(FixtureError) -> RealModels in try RealModels.locate() })

    static func locate() throws(FixtureError) -> RealModels {
        let env = ProcessInfo.processInfo.environment
        func path(_ variable: String, _ script: String) throws(FixtureError) -> String {
            if let p = env[variable], !p.isEmpty { return p }
            return try runScript(script)
        }
        // SmolLM2-135M, the suites' model ($PARLANCE_TEST_MODEL; `make test` also makes it the default).
        let smol = try path("PARLANCE_TEST_MODEL", "setup-test-models.sh smollm2-135m")
        let gemma = try path("PARLANCE_TEST_GEMMA", "setup-test-models.sh")
        for p in [smol, gemma] where !FileManager.default.fileExists(atPath: p) { throw FixtureError("model file missing: \(p)") }
        return RealModels(smol: smol, gemma: gemma, smolSHA: try sha256(ofFile: smol), gemmaSHA: try sha256(ofFile: gemma))
    }

    /// The file's SHA-256: by sha256sum where there is one (a debug build of ParlanceHash
    /// takes tens of seconds over 350 MB), else ParlanceHash.
    static func sha256(ofFile path: String) throws(FixtureError) -> String {
        for tool in ["/usr/bin/sha256sum", "/bin/sha256sum"] where FileManager.default.isExecutableFile(atPath: tool) {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: tool)
            p.arguments = [path]
            let out = Pipe()
            p.standardOutput = out
            guard (try? p.run()) != nil else { continue }
            let data = out.fileHandleForReading.readDataToEndOfFile()
            p.waitUntilExit()
            let hex = String(decoding: data, as: UTF8.self).prefix(64)
            if p.terminationStatus == 0, hex.count == 64 { return String(hex) }
        }
        do { return try SHA256.hexOfFile(atPath: path) } catch { throw FixtureError("hashing \(path): \(error)") }
    }

    /// The repository's root (this file is Tests/ModelStoresTests/StoresTests.swift; links resolved).
    static var repoRoot: String {
        URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }

    static func runScript(_ name: String) throws(FixtureError) -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        let words = name.split(separator: " ").map(String.init)  // the script, then its arguments
        p.arguments = [repoRoot + "/scripts/" + words[0]] + words.dropFirst()
        let out = Pipe()
        p.standardOutput = out
        do { try p.run() } catch { throw FixtureError("running scripts/\(name): \(error)") }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let path = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard p.terminationStatus == 0, !path.isEmpty else { throw FixtureError("scripts/\(name) failed (\(p.terminationStatus))") }
        return path
    }
}

struct FixtureError: Error, CustomStringConvertible, Sendable {
    let description: String
    init(_ d: String) { description = d }
}

/// Builds the stores in a temporary HOME.
struct StoreFixture {
    let home: String
    let models: RealModels
    var environment: StoreEnvironment {
        StoreEnvironment(variables: ["HOME": home], home: home, modelDirs: [home + "/models-folder"], availableBytes: 300_000_000)
    }

    static let smolHFFile = "SmolLM2-135M-Instruct.Q4_1.gguf"
    static let gemmaFile = "gemma-3-270m-Q4_K_M.gguf"
    static let params = #"{"stop":["<|im_end|>"],"temperature":0.6}"#
    static let system = "You answer in one sentence."

    init(models: RealModels, home: String = NSTemporaryDirectory() + "parlance-stores-\(UUID().uuidString)") throws {
        self.models = models
        self.home = home
        try build()
    }

    private init(models: RealModels, emptyHome home: String) {
        self.models = models
        self.home = home
    }

    /// An empty HOME, for a test that lays out its own stores with the helpers below.
    static func bare(models: RealModels, home: String) -> StoreFixture { StoreFixture(models: models, emptyHome: home) }

    /// One fixture for the tests that only read it (each new HOME means reading every
    /// header again), removed when the test class finishes.
    static let sharedHome = NSTemporaryDirectory() + "parlance-stores-shared-\(ProcessInfo.processInfo.processIdentifier)"
    static let shared: Result<StoreFixture, FixtureError> = Result(catching: { () throws(FixtureError) -> StoreFixture in
        let models = try RealModels.shared.get()
        try? FileManager.default.removeItem(atPath: sharedHome)
        do { return try StoreFixture(models: models, home: sharedHome) } catch { throw FixtureError("building the stores: \(error)") }
    })

    func remove() { try? FileManager.default.removeItem(atPath: home) }

    // MARK: Writing

    func mkdir(_ path: String) throws { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }

    func write(_ text: String, _ path: String) throws {
        try mkdir((path as NSString).deletingLastPathComponent)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    func write(_ data: Data, _ path: String) throws {
        try mkdir((path as NSString).deletingLastPathComponent)
        try data.write(to: URL(fileURLWithPath: path))
    }

    /// A hard link to `source` (a copy where the file system refuses).
    func link(_ source: String, _ path: String) throws {
        try mkdir((path as NSString).deletingLastPathComponent)
        do { try FileManager.default.linkItem(atPath: source, toPath: path) } catch { try FileManager.default.copyItem(atPath: source, toPath: path) }
    }

    func symlink(_ target: String, _ path: String) throws {
        try mkdir((path as NSString).deletingLastPathComponent)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
    }

    func setModified(_ path: String, _ date: Date) throws {
        try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: path)
    }

    static func sha(_ text: String) -> String { SHA256.hex(Array(text.utf8)) }

    /// An Ollama-layout store at `root`: blobs named by their content's SHA-256, manifests
    /// naming them. `models`: (host, namespace, model, tag, model blob hex, extra layers).
    func ollamaStore(_ root: String, _ manifests: [(String, String, String, String, String, [(String, String)])]) throws {
        let config = #"{"model_format":"gguf","model_family":"llama"}"#
        try write(config, "\(root)/blobs/sha256-\(Self.sha(config))")
        for (host, ns, model, tag, blob, layers) in manifests {
            var layerJSON = [#"{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:\#(blob)","size":\#(try size(ofBlob: blob, root))}"#]
            for (type, text) in layers {
                let hex = Self.sha(text)
                try write(text, "\(root)/blobs/sha256-\(hex)")
                layerJSON.append(#"{"mediaType":"\#(type)","digest":"sha256:\#(hex)","size":\#(text.utf8.count)}"#)
            }
            let manifest = #"{"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json","config":{"mediaType":"application/vnd.docker.container.image.v1+json","digest":"sha256:\#(Self.sha(config))","size":\#(config.utf8.count)},"layers":[\#(layerJSON.joined(separator: ","))]}"#
            try write(manifest, "\(root)/manifests/\(host)/\(ns)/\(model)/\(tag)")
        }
    }

    func size(ofBlob hex: String, _ root: String) throws -> Int {
        for name in ["sha256-\(hex)", "sha256-\(hex)-partial"] {
            if let s = try? FileManager.default.attributesOfItem(atPath: "\(root)/blobs/\(name)")[.size] as? Int { return s }
        }
        return 1000
    }

    func build() throws {
        let m = models
        // Parlance's own cache (where the index goes) exists beforehand, so that writing the
        // index changes nothing the store check below looks at (not even ~/.cache's time).
        try mkdir(home + "/.cache/parlance")
        // Ollama: two models on the default host (one with params and system layers), one
        // in a user namespace, one from a second host; a non-GGUF model; a download cut short.
        let ollama = home + "/.ollama/models"
        try link(m.smol, "\(ollama)/blobs/sha256-\(m.smolSHA)")
        try link(m.gemma, "\(ollama)/blobs/sha256-\(m.gemmaSHA)")
        let notGGUF = "safetensors-like bytes, not a GGUF file\n"
        try write(notGGUF, "\(ollama)/blobs/sha256-\(Self.sha(notGGUF))")
        let partialHex = Self.sha("a blob still downloading")
        try write("a blob sti", "\(ollama)/blobs/sha256-\(partialHex)-partial")
        try ollamaStore(ollama, [
            ("registry.ollama.ai", "library", "smollm2", "135m", m.smolSHA,
             [("application/vnd.ollama.image.params", Self.params), ("application/vnd.ollama.image.system", Self.system)]),
            ("registry.ollama.ai", "library", "gemma3", "270m", m.gemmaSHA, []),
            ("registry.ollama.ai", "someuser", "smollm2", "latest", m.smolSHA, []),
            ("hf.co", "unsloth", "gemma-3-270m-GGUF", "Q4_K_M", m.gemmaSHA, []),
            ("registry.ollama.ai", "library", "notgguf", "latest", Self.sha(notGGUF), []),
            ("registry.ollama.ai", "library", "partial", "latest", partialHex, []),
        ])

        // Parlance's own Ollama-layout folder: the same smollm2:135m, and one only it has.
        let parlance = home + "/.local/share/parlance/models"
        try link(m.smol, "\(parlance)/blobs/sha256-\(m.smolSHA)")
        try link(m.gemma, "\(parlance)/blobs/sha256-\(m.gemmaSHA)")
        try ollamaStore(parlance, [
            ("registry.ollama.ai", "library", "smollm2", "135m", m.smolSHA, []),
            ("registry.ollama.ai", "library", "onlyparlance", "latest", m.gemmaSHA, []),
        ])

        // The Hugging Face cache, as huggingface_hub writes it.
        let hub = home + "/.cache/huggingface/hub"
        let commit = "0123456789abcdef0123456789abcdef01234567", oldCommit = "89abcdef0123456789abcdef0123456789abcdef"
        let smolRepo = "\(hub)/models--HuggingFaceTB--SmolLM2-135M-Instruct-GGUF"
        try link(m.smol, "\(smolRepo)/blobs/\(m.smolSHA)")
        try write("partial bytes", "\(smolRepo)/blobs/\("f" + String(m.smolSHA.dropFirst())).incomplete")
        try write(commit, "\(smolRepo)/refs/main")
        try symlink("../../blobs/\(m.smolSHA)", "\(smolRepo)/snapshots/\(commit)/\(Self.smolHFFile)")
        try symlink("../../blobs/\("f" + String(m.smolSHA.dropFirst())).incomplete", "\(smolRepo)/snapshots/\(commit)/SmolLM2-135M-Instruct.Q8_0.gguf")
        try write("# SmolLM2\n", "\(smolRepo)/blobs/readme")
        try symlink("../../blobs/readme", "\(smolRepo)/snapshots/\(commit)/README.md")
        // An older snapshot refs/main no longer names: not read.
        try symlink("../../blobs/\(m.smolSHA)", "\(smolRepo)/snapshots/\(oldCommit)/SmolLM2-135M-Instruct.Q2_K.gguf")

        let gemmaRepo = "\(hub)/models--ggml-org--gemma-3-270m-GGUF"
        try link(m.gemma, "\(gemmaRepo)/blobs/\(m.gemmaSHA)")
        try write(commit, "\(gemmaRepo)/refs/main")
        try symlink("../../blobs/\(m.gemmaSHA)", "\(gemmaRepo)/snapshots/\(commit)/\(Self.gemmaFile)")
        try symlink("../../blobs/\(m.gemmaSHA)", "\(gemmaRepo)/snapshots/\(commit)/mmproj-gemma-3-270m-f16.gguf")
        try symlink("../../blobs/0000000000000000000000000000000000000000000000000000000000000000", "\(gemmaRepo)/snapshots/\(commit)/gemma-3-270m-F16.gguf")

        // No refs/main: the newest snapshot.
        let noRefs = "\(hub)/models--someone--norefs-GGUF"
        try link(m.gemma, "\(noRefs)/blobs/\(m.gemmaSHA)")
        try link(m.smol, "\(noRefs)/blobs/\(m.smolSHA)")
        try symlink("../../blobs/\(m.smolSHA)", "\(noRefs)/snapshots/\(oldCommit)/norefs-Q4_1.gguf")
        try symlink("../../blobs/\(m.gemmaSHA)", "\(noRefs)/snapshots/\(commit)/norefs-Q4_K_M.gguf")
        try setModified("\(noRefs)/snapshots/\(oldCommit)", Date(timeIntervalSince1970: 1_700_000_000))
        try setModified("\(noRefs)/snapshots/\(commit)", Date(timeIntervalSince1970: 1_750_000_000))

        // A split model in the cache (blobs named by content, as the Hub names LFS files),
        // and one with its second part not downloaded.
        let splitRepo = "\(hub)/models--someorg--tiny-split-GGUF"
        try write(commit, "\(splitRepo)/refs/main")
        for (file, data) in [("tiny-Q8_0-00001-of-00002.gguf", Self.splitPart(no: 0, count: 2, first: true)),
                             ("tiny-Q8_0-00002-of-00002.gguf", Self.splitPart(no: 1, count: 2, first: false)),
                             ("tiny-Q2_K-00001-of-00002.gguf", Self.splitPart(no: 0, count: 2, first: true) + Data([1]))] {
            let hex = SHA256.hex(data)
            try write(data, "\(splitRepo)/blobs/\(hex)")
            try symlink("../../blobs/\(hex)", "\(splitRepo)/snapshots/\(commit)/\(file)")
        }

        // llama.cpp's cache: a flat file with its sidecars, a download in progress, and the
        // Hugging Face layout newer llama.cpp writes where LLAMA_CACHE points.
        let llama = home + "/.cache/llama.cpp"
        let flat = "HuggingFaceTB_SmolLM2-135M-Instruct-GGUF_SmolLM2-135M-Instruct.Q4_1.gguf"
        try link(m.smol, "\(llama)/\(flat)")
        try write(#"{"url":"https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct-GGUF/resolve/main/SmolLM2-135M-Instruct.Q4_1.gguf"}"#, "\(llama)/\(flat).json")
        try write("\"etag\"", "\(llama)/\(flat).etag")
        try write("GGUF partial", "\(llama)/other.gguf.downloadInProgress")
        let bartowski = "\(llama)/models--bartowski--gemma-3-270m-GGUF"
        try link(m.gemma, "\(bartowski)/blobs/\(m.gemmaSHA)")
        try write(commit, "\(bartowski)/refs/main")
        try symlink("../../blobs/\(m.gemmaSHA)", "\(bartowski)/snapshots/\(commit)/\(Self.gemmaFile)")

        // LM Studio, at the folder its home pointer names (~/.lmstudio is not read then).
        let lms = home + "/lmstudio-home"
        try write(lms + "\n", home + "/.lmstudio-home-pointer")
        try link(m.smol, "\(lms)/models/lmstudio-community/SmolLM2-135M-Instruct-GGUF/\(Self.smolHFFile)")
        try link(m.gemma, "\(lms)/models/lmstudio-community/gemma-3-270m-GGUF/\(Self.gemmaFile)")
        try link(m.smol, "\(lms)/models/lmstudio-community/gemma-3-270m-GGUF/mmproj-model-f16.gguf")
        try link(m.smol, "\(home)/.lmstudio/models/ignored/not-read/ignored-Q4_1.gguf")

        // GPT4All, with a download in progress.
        let gpt4all = home + "/.local/share/nomic.ai/GPT4All"
        try link(m.gemma, "\(gpt4all)/gemma-3-270m-q4_k_m.gguf")
        try write("GGUF", "\(gpt4all)/incomplete-gemma-3-270m-q4_k_m.gguf")

        // A modelDirs folder: a model in a subfolder, a complete split pair, a split missing
        // its second part, a file named .gguf that is not one, and a truncated header.
        let folder = home + "/models-folder"
        try link(m.smol, "\(folder)/sub/smollm2.gguf")
        try write(Self.splitPart(no: 0, count: 2, first: true), "\(folder)/tiny-split-00001-of-00002.gguf")
        try write(Self.splitPart(no: 1, count: 2, first: false), "\(folder)/tiny-split-00002-of-00002.gguf")
        try write(Self.splitPart(no: 0, count: 3, first: true), "\(folder)/broken-00001-of-00003.gguf")
        try write(Self.splitPart(no: 2, count: 3, first: false), "\(folder)/broken-00003-of-00003.gguf")
        try write("not a model\n", "\(folder)/fake.gguf")
        let head = try FileHandle(forReadingFrom: URL(fileURLWithPath: m.smol)).read(upToCount: 1 << 20) ?? Data()
        try write(head, "\(folder)/truncated.gguf")
    }

    // MARK: GGUF

    enum Value {
        case string(String), u16(UInt16), u32(UInt32), i32(Int32)
    }

    /// A minimal valid GGUF (version 3, no tensors) with `kvs`, padded to `size` bytes.
    static func gguf(_ kvs: [(String, Value)], size: Int) -> Data {
        var d = Data("GGUF".utf8)
        func le<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
        func str(_ s: String) { le(UInt64(s.utf8.count)); d.append(contentsOf: Array(s.utf8)) }
        le(UInt32(3)); le(UInt64(0)); le(UInt64(kvs.count))
        for (k, v) in kvs {
            str(k)
            switch v {
            case let .string(s): le(UInt32(8)); str(s)
            case let .u16(n): le(UInt32(2)); le(n)
            case let .u32(n): le(UInt32(4)); le(n)
            case let .i32(n): le(UInt32(5)); le(n)
            }
        }
        if d.count < size { d.append(Data(count: size - d.count)) }
        return d
    }

    /// One part of a split model as llama.cpp's gguf-split writes them: every key in the
    /// first part, only the split keys in the others.
    static func splitPart(no: Int, count: Int, first: Bool) -> Data {
        var kvs: [(String, Value)] = []
        if first {
            kvs = [("general.architecture", .string("llama")), ("general.name", .string("Tiny Split")),
                   ("general.size_label", .string("1M")), ("general.file_type", .u32(7)),
                   ("llama.context_length", .u32(2048)), ("llama.block_count", .u32(2)),
                   ("llama.embedding_length", .u32(64)), ("llama.attention.head_count", .u32(4))]
        }
        kvs += [("split.no", .u16(UInt16(no))), ("split.count", .u16(UInt16(count))), ("split.tensors.count", .i32(0))]
        return gguf(kvs, size: first ? 8192 : 4096)
    }

    // MARK: Checking

    /// Every path under HOME with its kind, size, time and link target, except Parlance's own
    /// cache (the index it may write).
    func snapshot() -> [String: String] {
        var out: [String: String] = [:]
        func walk(_ dir: String) {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? [] {
                let path = dir + "/" + name
                if path == home + "/.cache/parlance" { continue }
                guard let a = try? FileManager.default.attributesOfItem(atPath: path) else { continue }
                let type = a[.type] as? FileAttributeType
                let time = (a[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
                var desc = "\(type?.rawValue ?? "?") \(a[.size] as? Int ?? -1) \(time)"
                if type == .typeSymbolicLink { desc += " -> " + ((try? FileManager.default.destinationOfSymbolicLink(atPath: path)) ?? "?") }
                out[path] = desc
                if type == .typeDirectory { walk(path) }
            }
        }
        walk(home)
        return out
    }
}

final class StoresTests: XCTestCase {
    /// A fixture of this test's own (for tests that change it).
    func fixture() throws -> StoreFixture {
        let f = try StoreFixture(models: RealModels.shared.get())
        addTeardownBlock { f.remove() }
        return f
    }

    /// The shared fixture (for tests that only read).
    func shared() throws -> StoreFixture { try StoreFixture.shared.get() }

    override class func tearDown() {
        try? FileManager.default.removeItem(atPath: StoreFixture.sharedHome)
        super.tearDown()
    }

    // Per model, what the listing must say (from each file's header, checked by hand:
    // SmolLM2 30 layers × 3 KV heads × 64 + 64 dims; Gemma 3 18 × 1 × 256 + 256).
    struct Expected {
        var architecture: String, parameters: String, quantization: String, context: Int, template: Bool
        var kv: Int, compute: Int
    }
    static let smol = Expected(architecture: "llama", parameters: "135M", quantization: "Q4_1", context: 8192, template: true,
                               kv: 4096 * 30 * 3 * (64 + 64) * 2, compute: 512 * 576 * 32 + 512 * 1536 * 8 + (16 << 20))
    static let gemma = Expected(architecture: "gemma3", parameters: "270M", quantization: "Q4_K_M", context: 32768, template: false,
                                kv: 4096 * 18 * 1 * (256 + 256) * 2, compute: 512 * 640 * 32 + 512 * 2048 * 8 + (16 << 20))

    func check(_ m: StoredModel?, _ e: Expected, path: String, bytes: Int, available: Int = 300_000_000,
               file: StaticString = #filePath, line: UInt = #line) {
        guard let m else { return XCTFail("model missing", file: file, line: line) }
        XCTAssertEqual(m.path, path, file: file, line: line)
        XCTAssertEqual(m.parts, [path], file: file, line: line)
        XCTAssertEqual(m.architecture, e.architecture, m.name, file: file, line: line)
        XCTAssertEqual(m.parameters, e.parameters, m.name, file: file, line: line)
        XCTAssertEqual(m.quantization, e.quantization, m.name, file: file, line: line)
        XCTAssertEqual(m.contextLength, e.context, m.name, file: file, line: line)
        XCTAssertEqual(m.hasChatTemplate, e.template, m.name, file: file, line: line)
        XCTAssertEqual(m.architectureSupported, true, m.name, file: file, line: line)
        XCTAssertEqual(m.fileBytes, bytes, m.name, file: file, line: line)
        XCTAssertEqual(m.estimatedBytes, bytes + e.kv + e.compute, m.name, file: file, line: line)
        XCTAssertEqual(m.fits, bytes + e.kv + e.compute <= available, m.name, file: file, line: line)
    }

    func size(_ path: String) -> Int { (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1 }

    // MARK: Listing

    func testListingEveryStore() throws {
        let f = try shared()
        let h = f.home
        let list = ModelCatalogue(f.environment).list().filter { $0.path.hasPrefix(h) }
        let names = list.map { "\($0.source.rawValue) \($0.name)" }
        XCTAssertEqual(names, [
            "ollama ollama:gemma3:270m",
            "ollama ollama:hf.co/unsloth/gemma-3-270m-GGUF:Q4_K_M",
            "ollama ollama:smollm2:135m",
            "ollama ollama:someuser/smollm2:latest",
            "hf hf:HuggingFaceTB/SmolLM2-135M-Instruct-GGUF:Q4_1",
            "hf hf:ggml-org/gemma-3-270m-GGUF:Q4_K_M",
            "hf hf:someone/norefs-GGUF:Q4_K_M",
            "hf hf:someorg/tiny-split-GGUF:Q8_0",
            "llamacpp \(h)/.cache/llama.cpp/HuggingFaceTB_SmolLM2-135M-Instruct-GGUF_SmolLM2-135M-Instruct.Q4_1.gguf",
            "llamacpp hf:bartowski/gemma-3-270m-GGUF:Q4_K_M",
            "lmstudio lmstudio:lmstudio-community/SmolLM2-135M-Instruct-GGUF/SmolLM2-135M-Instruct.Q4_1.gguf",
            "lmstudio lmstudio:lmstudio-community/gemma-3-270m-GGUF/gemma-3-270m-Q4_K_M.gguf",
            "gpt4all \(h)/.local/share/nomic.ai/GPT4All/gemma-3-270m-q4_k_m.gguf",
            "folder \(h)/models-folder/sub/smollm2.gguf",
            "folder \(h)/models-folder/tiny-split-00001-of-00002.gguf",
            "folder \(h)/models-folder/truncated.gguf",
            "parlance ollama:onlyparlance:latest",
            "parlance ollama:smollm2:135m",
        ])
        func find(_ source: ModelSource, _ name: String) -> StoredModel? { list.first { $0.source == source && $0.name == name } }
        let smolBytes = size(f.models.smol), gemmaBytes = size(f.models.gemma)
        let ollama = h + "/.ollama/models/blobs/sha256-"
        let hub = h + "/.cache/huggingface/hub"
        let commit = "0123456789abcdef0123456789abcdef01234567"

        let smollm2 = find(.ollama, "ollama:smollm2:135m")
        check(smollm2, Self.smol, path: ollama + f.models.smolSHA, bytes: smolBytes)
        XCTAssertEqual(smollm2?.defaultParameters, StoreFixture.params)
        XCTAssertEqual(smollm2?.systemPrompt, StoreFixture.system)
        check(find(.ollama, "ollama:gemma3:270m"), Self.gemma, path: ollama + f.models.gemmaSHA, bytes: gemmaBytes)
        XCTAssertNil(find(.ollama, "ollama:gemma3:270m")?.defaultParameters)
        XCTAssertNil(find(.ollama, "ollama:gemma3:270m")?.systemPrompt)
        check(find(.ollama, "ollama:someuser/smollm2:latest"), Self.smol, path: ollama + f.models.smolSHA, bytes: smolBytes)
        check(find(.ollama, "ollama:hf.co/unsloth/gemma-3-270m-GGUF:Q4_K_M"), Self.gemma, path: ollama + f.models.gemmaSHA, bytes: gemmaBytes)
        check(find(.parlance, "ollama:smollm2:135m"), Self.smol, path: h + "/.local/share/parlance/models/blobs/sha256-" + f.models.smolSHA, bytes: smolBytes)
        XCTAssertNil(find(.parlance, "ollama:smollm2:135m")?.defaultParameters)
        check(find(.parlance, "ollama:onlyparlance:latest"), Self.gemma, path: h + "/.local/share/parlance/models/blobs/sha256-" + f.models.gemmaSHA, bytes: gemmaBytes)

        // Hugging Face: the snapshot path (the link), not the blob.
        check(find(.huggingFace, "hf:HuggingFaceTB/SmolLM2-135M-Instruct-GGUF:Q4_1"), Self.smol,
              path: "\(hub)/models--HuggingFaceTB--SmolLM2-135M-Instruct-GGUF/snapshots/\(commit)/SmolLM2-135M-Instruct.Q4_1.gguf", bytes: smolBytes)
        check(find(.huggingFace, "hf:ggml-org/gemma-3-270m-GGUF:Q4_K_M"), Self.gemma,
              path: "\(hub)/models--ggml-org--gemma-3-270m-GGUF/snapshots/\(commit)/gemma-3-270m-Q4_K_M.gguf", bytes: gemmaBytes)
        check(find(.huggingFace, "hf:someone/norefs-GGUF:Q4_K_M"), Self.gemma,
              path: "\(hub)/models--someone--norefs-GGUF/snapshots/\(commit)/norefs-Q4_K_M.gguf", bytes: gemmaBytes)
        check(find(.llamaCpp, "hf:bartowski/gemma-3-270m-GGUF:Q4_K_M"), Self.gemma,
              path: "\(h)/.cache/llama.cpp/models--bartowski--gemma-3-270m-GGUF/snapshots/\(commit)/gemma-3-270m-Q4_K_M.gguf", bytes: gemmaBytes)
        let flat = "\(h)/.cache/llama.cpp/HuggingFaceTB_SmolLM2-135M-Instruct-GGUF_SmolLM2-135M-Instruct.Q4_1.gguf"
        check(find(.llamaCpp, flat), Self.smol, path: flat, bytes: smolBytes)

        let lms = h + "/lmstudio-home/models/lmstudio-community"
        check(find(.lmStudio, "lmstudio:lmstudio-community/SmolLM2-135M-Instruct-GGUF/SmolLM2-135M-Instruct.Q4_1.gguf"), Self.smol,
              path: "\(lms)/SmolLM2-135M-Instruct-GGUF/SmolLM2-135M-Instruct.Q4_1.gguf", bytes: smolBytes)
        check(find(.lmStudio, "lmstudio:lmstudio-community/gemma-3-270m-GGUF/gemma-3-270m-Q4_K_M.gguf"), Self.gemma,
              path: "\(lms)/gemma-3-270m-GGUF/gemma-3-270m-Q4_K_M.gguf", bytes: gemmaBytes)
        let g4a = "\(h)/.local/share/nomic.ai/GPT4All/gemma-3-270m-q4_k_m.gguf"
        check(find(.gpt4all, g4a), Self.gemma, path: g4a, bytes: gemmaBytes)
        let folderSmol = "\(h)/models-folder/sub/smollm2.gguf"
        check(find(.folder, folderSmol), Self.smol, path: folderSmol, bytes: smolBytes)

        // The split pair: one model, parts in order, sizes summed, metadata from part 1.
        let part1 = "\(h)/models-folder/tiny-split-00001-of-00002.gguf", part2 = "\(h)/models-folder/tiny-split-00002-of-00002.gguf"
        let split = try XCTUnwrap(find(.folder, part1))
        XCTAssertEqual(split.path, part1)
        XCTAssertEqual(split.parts, [part1, part2])
        XCTAssertEqual(split.fileBytes, 8192 + 4096)
        XCTAssertEqual(split.architecture, "llama")
        XCTAssertEqual(split.parameters, "1M")
        XCTAssertEqual(split.quantization, "Q8_0")
        XCTAssertEqual(split.contextLength, 2048)
        XCTAssertEqual(split.hasChatTemplate, false)
        XCTAssertEqual(split.architectureSupported, true)
        // f16 KV at 2,048 tokens: 2 layers × 4 heads × (16 + 16) dims × 2 bytes; compute: 64 wide, 256 feed-forward.
        XCTAssertEqual(split.estimatedBytes, 8192 + 4096 + 2048 * 2 * 4 * 32 * 2 + (512 * 64 * 32 + 512 * 256 * 8 + (16 << 20)))
        XCTAssertEqual(split.fits, true)

        let hfSplit = try XCTUnwrap(find(.huggingFace, "hf:someorg/tiny-split-GGUF:Q8_0"))
        let snap = "\(hub)/models--someorg--tiny-split-GGUF/snapshots/\(commit)/"
        XCTAssertEqual(hfSplit.parts, [snap + "tiny-Q8_0-00001-of-00002.gguf", snap + "tiny-Q8_0-00002-of-00002.gguf"])
        XCTAssertEqual(hfSplit.fileBytes, 8192 + 4096)
        XCTAssertEqual(hfSplit.quantization, "Q8_0")

        // A GGUF whose header is cut off: listed, but nothing known from the header.
        let truncated = try XCTUnwrap(find(.folder, "\(h)/models-folder/truncated.gguf"))
        XCTAssertNil(truncated.architecture)
        XCTAssertNil(truncated.architectureSupported)
        XCTAssertNil(truncated.contextLength)
        XCTAssertEqual(truncated.quantization, nil)
        XCTAssertEqual(truncated.fileBytes, 1 << 20)
        XCTAssertEqual(truncated.estimatedBytes, (1 << 20) + (64 << 20))

        // Passed over: a non-GGUF Ollama model, a partial blob, a `.incomplete` blob, dangling
        // links, projector files, the older snapshot, sidecars, GPT4All's incomplete-*, the
        // split with a part missing, fake.gguf, and ~/.lmstudio (the pointer names elsewhere).
        let all = list.map(\.name).joined(separator: "\n")
        for absent in ["notgguf", "partial", "SmolLM2-135M-Instruct-GGUF:Q8_0", "gemma-3-270m-GGUF:F16", "mmproj", "Instruct-GGUF:Q2_K",
                       "tiny-split-GGUF:Q2_K", ".json", ".etag", "incomplete-", "broken-", "fake.gguf", "ignored"] {
            XCTAssertFalse(all.contains(absent), absent)
        }
    }

    func testUnavailableMemoryLeavesFitsUnknown() throws {
        let f = try shared()
        var env = f.environment
        env.availableBytes = nil
        let list = ModelCatalogue(env).list().filter { $0.path.hasPrefix(f.home) }
        XCTAssertFalse(list.isEmpty)
        XCTAssertTrue(list.allSatisfy { $0.fits == nil })
        env.availableBytes = 1 << 40
        XCTAssertTrue(ModelCatalogue(env).list().filter { $0.path.hasPrefix(f.home) }.allSatisfy { $0.fits == true })
    }

    func testBaseModelHasNoChatTemplate() throws {
        let f = try shared()
        let catalogue = ModelCatalogue(f.environment)
        XCTAssertEqual(try catalogue.resolve("ollama:gemma3:270m").hasChatTemplate, false)
        XCTAssertEqual(try catalogue.resolve(f.models.gemma).hasChatTemplate, false)
        XCTAssertEqual(try catalogue.resolve("ollama:smollm2:135m").hasChatTemplate, true)
    }

    // MARK: Resolving

    func testResolvesEveryFormOffline() throws {
        let f = try shared()
        let h = f.home
        let c = ModelCatalogue(f.environment)
        let commit = "0123456789abcdef0123456789abcdef01234567"

        // Ollama's own store wins over Parlance's copy of the same name.
        let smol = try c.resolve("ollama:smollm2:135m")
        XCTAssertEqual(smol.source, .ollama)
        XCTAssertEqual(smol.path, h + "/.ollama/models/blobs/sha256-" + f.models.smolSHA)
        XCTAssertEqual(smol.systemPrompt, StoreFixture.system)
        XCTAssertEqual(try c.resolve("ollama:SmolLM2:135M").name, "ollama:smollm2:135m")
        XCTAssertEqual(try c.resolve("ollama:registry.ollama.ai/library/gemma3:270m").name, "ollama:gemma3:270m")
        XCTAssertEqual(try c.resolve("ollama:library/gemma3:270m").name, "ollama:gemma3:270m")
        XCTAssertEqual(try c.resolve("ollama:someuser/smollm2").name, "ollama:someuser/smollm2:latest")
        XCTAssertEqual(try c.resolve("ollama:hf.co/unsloth/gemma-3-270m-GGUF:Q4_K_M").architecture, "gemma3")
        let only = try c.resolve("ollama:onlyparlance")
        XCTAssertEqual(only.source, .parlance)
        XCTAssertEqual(only.name, "ollama:onlyparlance:latest")

        // Hugging Face: the only model of a repository without a quantization; Q4_K_M by
        // default; case-insensitive; llama.cpp's cache too.
        let hf = try c.resolve("hf:HuggingFaceTB/SmolLM2-135M-Instruct-GGUF")
        XCTAssertEqual(hf.name, "hf:HuggingFaceTB/SmolLM2-135M-Instruct-GGUF:Q4_1")
        XCTAssertEqual(hf.path, "\(h)/.cache/huggingface/hub/models--HuggingFaceTB--SmolLM2-135M-Instruct-GGUF/snapshots/\(commit)/SmolLM2-135M-Instruct.Q4_1.gguf")
        XCTAssertEqual(try c.resolve("hf:huggingfacetb/smollm2-135m-instruct-gguf:q4_1").path, hf.path)
        XCTAssertEqual(try c.resolve("hf:ggml-org/gemma-3-270m-GGUF").name, "hf:ggml-org/gemma-3-270m-GGUF:Q4_K_M")
        let bartowski = try c.resolve("hf:bartowski/gemma-3-270m-GGUF:Q4_K_M")
        XCTAssertEqual(bartowski.source, .llamaCpp)
        XCTAssertEqual(bartowski.quantization, "Q4_K_M")

        // LM Studio, with and without the file.
        let lms = try c.resolve("lmstudio:lmstudio-community/SmolLM2-135M-Instruct-GGUF")
        XCTAssertEqual(lms.name, "lmstudio:lmstudio-community/SmolLM2-135M-Instruct-GGUF/SmolLM2-135M-Instruct.Q4_1.gguf")
        XCTAssertEqual(try c.resolve("lmstudio:lmstudio-community/gemma-3-270m-GGUF/gemma-3-270m-Q4_K_M.gguf").architecture, "gemma3")
        // The gemma folder holds a projector besides the model: still one model.
        XCTAssertEqual(try c.resolve("lmstudio:lmstudio-community/gemma-3-270m-GGUF").name,
                       "lmstudio:lmstudio-community/gemma-3-270m-GGUF/gemma-3-270m-Q4_K_M.gguf")

        // Paths: a file, and a split model by its first part (or any part).
        let byPath = try c.resolve(f.models.smol)
        XCTAssertEqual(byPath.source, .folder)
        XCTAssertEqual(byPath.name, f.models.smol)
        XCTAssertEqual(byPath.architecture, "llama")
        let part1 = "\(h)/models-folder/tiny-split-00001-of-00002.gguf", part2 = "\(h)/models-folder/tiny-split-00002-of-00002.gguf"
        XCTAssertEqual(try c.resolve(part1).parts, [part1, part2])
        XCTAssertEqual(try c.resolve(part2).path, part1)
        XCTAssertEqual(try c.resolve(part1).fileBytes, 8192 + 4096)
    }

    func lookupError(_ c: ModelCatalogue, _ name: String, file: StaticString = #filePath, line: UInt = #line) -> ModelLookupError? {
        do {
            let m = try c.resolve(name)
            XCTFail("\(name) resolved to \(m.path)", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    func testNotDownloadedSuggestsAndNamesThePull() throws {
        let f = try shared()
        let c = ModelCatalogue(f.environment)

        let q8 = try XCTUnwrap(lookupError(c, "hf:HuggingFaceTB/SmolLM2-135M-Instruct-GGUF:Q8_0"))
        XCTAssertEqual(q8.reason, .notDownloaded)
        XCTAssertEqual(q8.suggestions.first, "hf:HuggingFaceTB/SmolLM2-135M-Instruct-GGUF:Q4_1", "the same repository, another quantization")
        XCTAssertLessThanOrEqual(q8.suggestions.count, 3)
        XCTAssertEqual(q8.pullCommand, "parlance models pull hf:HuggingFaceTB/SmolLM2-135M-Instruct-GGUF:Q8_0")
        XCTAssertTrue(q8.message.contains(f.home + "/.cache/huggingface/hub"), q8.message)
        XCTAssertTrue(q8.description.contains("parlance models pull"), q8.description)

        let tag = try XCTUnwrap(lookupError(c, "ollama:smollm2:136m"))
        XCTAssertEqual(tag.reason, .notDownloaded)
        XCTAssertEqual(tag.suggestions.first, "ollama:smollm2:135m")
        XCTAssertEqual(tag.pullCommand, "parlance models pull ollama:smollm2:136m")

        let bare = try XCTUnwrap(lookupError(c, "ollama:llama3.2"))
        XCTAssertEqual(bare.reason, .notDownloaded)
        XCTAssertEqual(bare.pullCommand, "parlance models pull ollama:llama3.2:latest")
        XCTAssertEqual(lookupError(c, "ollama:hf.co/bartowski/Qwen-GGUF:Q4_K_M")?.pullCommand, "parlance models pull ollama:hf.co/bartowski/Qwen-GGUF:Q4_K_M")
        XCTAssertEqual(lookupError(c, "hf:nobody/nothing-GGUF")?.pullCommand, "parlance models pull hf:nobody/nothing-GGUF")
        XCTAssertEqual(lookupError(c, "hf:nobody/nothing-GGUF")?.suggestions, [], "nothing on disk is near")

        let lms = try XCTUnwrap(lookupError(c, "lmstudio:lmstudio-community/SmolLM2-135M-Instruct-GGUF/SmolLM2-135M-Instruct.Q8_0.gguf"))
        XCTAssertEqual(lms.reason, .notDownloaded)
        XCTAssertNil(lms.pullCommand)
        XCTAssertEqual(lms.suggestions.first, "lmstudio:lmstudio-community/SmolLM2-135M-Instruct-GGUF/SmolLM2-135M-Instruct.Q4_1.gguf")

        let path = try XCTUnwrap(lookupError(c, f.home + "/models-folder/smollm3.gguf"))
        XCTAssertEqual(path.reason, .notDownloaded)
        XCTAssertNil(path.pullCommand)
    }

    func testUnusableModelsAreIncomplete() throws {
        let f = try shared()
        let c = ModelCatalogue(f.environment)
        let broken = try XCTUnwrap(lookupError(c, f.home + "/models-folder/broken-00001-of-00003.gguf"))
        XCTAssertEqual(broken.reason, .incomplete)
        XCTAssertTrue(broken.message.contains("broken-00002-of-00003.gguf"), broken.message)
        XCTAssertFalse(broken.message.contains("broken-00003-of-00003.gguf"), broken.message)
        XCTAssertEqual(lookupError(c, f.home + "/models-folder/broken-00003-of-00003.gguf")?.reason, .incomplete)
        let hfBroken = try XCTUnwrap(lookupError(c, "hf:someorg/tiny-split-GGUF:Q2_K"))
        XCTAssertEqual(hfBroken.reason, .incomplete)
        XCTAssertTrue(hfBroken.message.contains("tiny-Q2_K-00002-of-00002.gguf"), hfBroken.message)
        XCTAssertEqual(hfBroken.pullCommand, "parlance models pull hf:someorg/tiny-split-GGUF:Q2_K")
        // The bare name passes over the incomplete quantization.
        XCTAssertEqual(try c.resolve("hf:someorg/tiny-split-GGUF").name, "hf:someorg/tiny-split-GGUF:Q8_0")

        let fake = try XCTUnwrap(lookupError(c, f.home + "/models-folder/fake.gguf"))
        XCTAssertEqual(fake.reason, .incomplete)
        XCTAssertTrue(fake.message.contains("not a GGUF"), fake.message)

        let notGGUF = try XCTUnwrap(lookupError(c, "ollama:notgguf"))
        XCTAssertEqual(notGGUF.reason, .incomplete)
        XCTAssertTrue(notGGUF.message.contains("not a GGUF"), notGGUF.message)

        let partial = try XCTUnwrap(lookupError(c, "ollama:partial:latest"))
        XCTAssertEqual(partial.reason, .incomplete)
        XCTAssertTrue(partial.message.contains("missing") && partial.message.contains("interrupted"), partial.message)

        XCTAssertEqual(lookupError(c, f.home + "/models-folder")?.reason, .invalidName)
    }

    func testInvalidNames() throws {
        let f = try fixture()
        let c = ModelCatalogue(f.environment)
        let cases: [(String, String)] = [
            ("", "empty"),
            (" ollama:x", "white space"),
            ("hf:", "hf: needs ORG/REPO"),
            ("hf:bartowski", "hf: needs ORG/REPO"),
            ("hf:a/b/c", "exactly one '/'"),
            ("hf:org/repo:", "quantization after ':' is empty"),
            ("hf:org/re po", "'re po' may hold only"),
            ("hf:org/repo:Q4 K", "quantization 'Q4 K'"),
            ("hf:org--x/repo", "'--'"),
            ("ollama:", "ollama: needs a model name"),
            ("ollama:a/b/c/d", "at most HOST/NAMESPACE/NAME"),
            ("ollama:llama3:", "tag after ':' is empty"),
            ("ollama:lla ma", "'lla ma' may hold only"),
            ("ollama:x//y", "empty part"),
            ("olama:llama3", "unknown scheme 'olama:'"),
            ("lmstudio:pub", "PUBLISHER/REPO"),
            ("lmstudio:a/b/c/d", "PUBLISHER/REPO"),
            ("lmstudio:a//c", "empty part"),
        ]
        for (name, words) in cases {
            let e = lookupError(c, name)
            XCTAssertEqual(e?.reason, .invalidName, name)
            XCTAssertEqual(e?.name, name)
            XCTAssertTrue(e?.message.contains(words) ?? false, "\(name): \(e?.message ?? "")")
            XCTAssertNil(e?.pullCommand, name)
        }
        // Several models in an LM Studio folder: the bare name is ambiguous; each is suggested.
        let fm = FileManager.default
        let dir = f.home + "/lmstudio-home/models/lmstudio-community/gemma-3-270m-GGUF"
        try fm.linkItem(atPath: f.models.smol, toPath: dir + "/other-Q4_1.gguf")
        let two = try XCTUnwrap(lookupError(c, "lmstudio:lmstudio-community/gemma-3-270m-GGUF"))
        XCTAssertEqual(two.reason, .invalidName)
        XCTAssertEqual(two.suggestions.count, 2)
    }

    // MARK: Names

    func testModelNameForms() throws {
        XCTAssertEqual(try ModelName("ollama:llama3.2"), .ollama(host: "registry.ollama.ai", namespace: "library", model: "llama3.2", tag: "latest"))
        XCTAssertEqual(try ModelName("ollama:llama3.2:3b"), .ollama(host: "registry.ollama.ai", namespace: "library", model: "llama3.2", tag: "3b"))
        XCTAssertEqual(try ModelName("ollama:me/m:q"), .ollama(host: "registry.ollama.ai", namespace: "me", model: "m", tag: "q"))
        XCTAssertEqual(try ModelName("ollama:localhost:5000/me/m"), .ollama(host: "localhost:5000", namespace: "me", model: "m", tag: "latest"))
        XCTAssertEqual(try ModelName("hf:org/repo"), .huggingFace(organization: "org", repository: "repo", quantization: nil))
        XCTAssertEqual(try ModelName("hf:org/repo:UD-Q4_K_XL"), .huggingFace(organization: "org", repository: "repo", quantization: "UD-Q4_K_XL"))
        XCTAssertEqual(try ModelName("lmstudio:p/r"), .lmStudio(publisher: "p", repository: "r", file: nil))
        XCTAssertEqual(try ModelName("lmstudio:p/r/f.gguf"), .lmStudio(publisher: "p", repository: "r", file: "f.gguf"))
        XCTAssertEqual(try ModelName("/models/a.gguf"), .path("/models/a.gguf"))
        XCTAssertEqual(try ModelName("./a:b.gguf"), .path("./a:b.gguf"))
        XCTAssertEqual(try ModelName("model.gguf:x"), .path("model.gguf:x"))
        XCTAssertEqual(try ModelName("ollama:registry.ollama.ai/library/x:1").description, "ollama:x:1")
        XCTAssertEqual(try ModelName("ollama:registry.ollama.ai/me/x").description, "ollama:me/x:latest")
        XCTAssertEqual(try ModelName("ollama:hf.co/a/b:Q8_0").description, "ollama:hf.co/a/b:Q8_0")
        XCTAssertEqual(try ModelName("hf:a/b:Q8_0").pullCommand, "parlance models pull hf:a/b:Q8_0")
        XCTAssertNil(try ModelName("lmstudio:a/b").pullCommand)
        XCTAssertNil(try ModelName("/x.gguf").pullCommand)

        XCTAssertTrue(ModelCatalogue.isStoreName("ollama:x"))
        XCTAssertTrue(ModelCatalogue.isStoreName("hf:a/b"))
        XCTAssertTrue(ModelCatalogue.isStoreName("lmstudio:a/b"))
        XCTAssertTrue(ModelCatalogue.isStoreName("HF:a/b"))
        XCTAssertFalse(ModelCatalogue.isStoreName("/models/ollama:x"))
        XCTAssertFalse(ModelCatalogue.isStoreName("model.gguf"))
        XCTAssertFalse(ModelCatalogue.isStoreName("olama:x"))
    }

    func testFileNameParsing() {
        XCTAssertEqual(ModelFileNames.quantization(inFileName: "Llama-3.2-3B-Instruct-Q4_K_M.gguf"), "Q4_K_M")
        XCTAssertEqual(ModelFileNames.quantization(inFileName: "SmolLM2-135M-Instruct.Q4_1.gguf"), "Q4_1")
        XCTAssertEqual(ModelFileNames.quantization(inFileName: "gemma-3-270m-q4_k_m.gguf"), "Q4_K_M")
        XCTAssertEqual(ModelFileNames.quantization(inFileName: "Qwen3-30B-A3B-UD-Q4_K_XL-00001-of-00002.gguf"), "UD-Q4_K_XL")
        XCTAssertEqual(ModelFileNames.quantization(inFileName: "model-IQ3_XXS.gguf"), "IQ3_XXS")
        XCTAssertEqual(ModelFileNames.quantization(inFileName: "model-bf16.gguf"), "BF16")
        XCTAssertEqual(ModelFileNames.quantization(inFileName: "Qwen3-8B.gguf"), nil)
        XCTAssertEqual(ModelFileNames.parameterLabel(inName: "SmolLM2-135M-Instruct"), "135M")
        XCTAssertEqual(ModelFileNames.parameterLabel(inName: "Mixtral-8x7B-v0.1"), "8x7B")
        XCTAssertEqual(ModelFileNames.parameterLabel(inName: "Qwen2.5-1.5b-instruct"), "1.5B")
        XCTAssertEqual(ModelFileNames.parameterLabel(inName: "Gemma 3 270m"), "270M")

        XCTAssertEqual(SplitFiles.splitName("M-Q4_K_M-00002-of-00003.gguf")?.stem, "M-Q4_K_M")
        XCTAssertEqual(SplitFiles.splitName("M-Q4_K_M-00002-of-00003.gguf")?.index, 2)
        XCTAssertEqual(SplitFiles.splitName("M-Q4_K_M-00002-of-00003.gguf")?.count, 3)
        XCTAssertNil(SplitFiles.splitName("M-00004-of-00003.gguf"))
        XCTAssertNil(SplitFiles.splitName("M-0001-of-0003.gguf"))
        XCTAssertEqual(SplitFiles.partName(stem: "M", index: 2, count: 12), "M-00002-of-00012.gguf")
        let groups = SplitFiles.group(["/d/a-00002-of-00002.gguf", "/d/b.gguf", "/d/a-00001-of-00002.gguf", "/d/c-00001-of-00003.gguf"])
        XCTAssertEqual(groups.map(\.first), ["/d/a-00001-of-00002.gguf", "/d/b.gguf", "/d/c-00001-of-00003.gguf"])
        XCTAssertEqual(groups[0].parts, ["/d/a-00001-of-00002.gguf", "/d/a-00002-of-00002.gguf"])
        XCTAssertTrue(groups[0].isComplete)
        XCTAssertEqual(groups[2].missing, ["/d/c-00002-of-00003.gguf", "/d/c-00003-of-00003.gguf"])
    }

    // MARK: Read only, and the index

    func testNothingIsWrittenToAnyStore() throws {
        let f = try fixture()
        let before = f.snapshot()
        let c = ModelCatalogue(f.environment)
        let first = c.list()
        _ = try? c.resolve("ollama:smollm2:135m")
        _ = try? c.resolve("hf:ggml-org/gemma-3-270m-GGUF")
        _ = try? c.resolve("hf:nobody/nothing")
        _ = try? c.resolve("ollama:partial")
        _ = try? c.resolve(f.home + "/models-folder/broken-00001-of-00003.gguf")
        let second = c.list()
        XCTAssertEqual(first, second, "a listing from the index equals the first")
        let after = f.snapshot()
        XCTAssertEqual(before.count, after.count)
        for (path, was) in before where after[path] != was { XCTFail("\(path) changed: \(was) → \(after[path] ?? "removed")") }
        for path in after.keys where before[path] == nil { XCTFail("\(path) was created") }
        // The one file written: Parlance's own index.
        XCTAssertTrue(FileManager.default.fileExists(atPath: f.home + "/.cache/parlance/model-index.json"))
    }

    func testIndexFollowsChangedFiles() throws {
        let models = try RealModels.shared.get()
        let home = NSTemporaryDirectory() + "parlance-stores-index-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: home) }
        let fm = FileManager.default
        try fm.createDirectory(atPath: home + "/folder", withIntermediateDirectories: true)
        let path = home + "/folder/model.gguf"
        try fm.linkItem(atPath: models.smol, toPath: path)
        let c = ModelCatalogue(StoreEnvironment(variables: ["HOME": home], home: home, modelDirs: [home + "/folder"]))
        let index = home + "/.cache/parlance/model-index.json"
        XCTAssertEqual(c.list().first { $0.path == path }?.architecture, "llama")
        let written = try fm.attributesOfItem(atPath: index)
        /// The index's entries: real path → architecture.
        func indexed() throws -> [String: String] {
            let json = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: index))) as? [String: Any]
            let entries = try XCTUnwrap(json?["entries"] as? [String: [String: Any]])
            return entries.mapValues { (($0["summary"] as? [String: Any])?["architecture"] as? String) ?? "" }
        }
        XCTAssertEqual(try indexed(), [path: "llama"])
        // A warm listing reads the index and writes nothing.
        XCTAssertEqual(c.list().first { $0.path == path }?.architecture, "llama")
        XCTAssertEqual(try fm.attributesOfItem(atPath: index)[.modificationDate] as? Date, written[.modificationDate] as? Date)
        // The file replaced by Gemma: another size and time, so its header is read again.
        try fm.removeItem(atPath: path)
        try fm.linkItem(atPath: models.gemma, toPath: path)
        XCTAssertEqual(c.list().first { $0.path == path }?.architecture, "gemma3")
        // A corrupt index is read as empty, not trusted, and written anew.
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: index))
        XCTAssertEqual(c.list().first { $0.path == path }?.architecture, "gemma3")
        XCTAssertEqual(try indexed(), [path: "gemma3"])
        // Files no longer listed leave the index.
        try fm.removeItem(atPath: path)
        XCTAssertEqual(c.list().filter { $0.path.hasPrefix(home) }, [])
        XCTAssertEqual(try indexed(), [:])
    }

    /// Fifty models in three stores (20 in Ollama's, 20 in the Hugging Face cache, 10 in LM
    /// Studio's; each a hard link to one of the two files, as the bench lays them out, so the
    /// index reads each file's header once), listed cold and warm, and names resolved: the
    /// times are printed, not tested (the bench measures them).
    func testListingFiftyModelsTime() throws {
        let models = try RealModels.shared.get()
        let home = NSTemporaryDirectory() + "parlance-stores-50-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: home) }
        let f = StoreFixture.bare(models: models, home: home)
        var names: [String] = []
        for i in 0..<20 {
            let (file, hex) = i % 2 == 0 ? (models.smol, models.smolSHA) : (models.gemma, models.gemmaSHA)
            let root = home + "/.ollama/models"
            if !FileManager.default.fileExists(atPath: "\(root)/blobs/sha256-\(hex)") { try f.link(file, "\(root)/blobs/sha256-\(hex)") }
            try f.ollamaStore(root, [("registry.ollama.ai", "library", "model\(i)", "latest", hex, [])])
            let repo = "\(home)/.cache/huggingface/hub/models--bench--repo\(i)-GGUF"
            try f.link(file, "\(repo)/blobs/\(hex)")
            try f.write(String(repeating: "a", count: 40), "\(repo)/refs/main")
            try f.symlink("../../blobs/\(hex)", "\(repo)/snapshots/\(String(repeating: "a", count: 40))/repo\(i)-Q4_K_M.gguf")
            names += ["ollama:model\(i)", "hf:bench/repo\(i)-GGUF:Q4_K_M"]
        }
        for i in 0..<10 {
            try f.link(i % 2 == 0 ? models.smol : models.gemma, "\(home)/.lmstudio/models/bench/repo\(i)-GGUF/repo\(i)-Q4_K_M.gguf")
            names.append("lmstudio:bench/repo\(i)-GGUF")
        }
        let c = ModelCatalogue(f.environment)
        func time(_ body: () throws -> Int) rethrows -> (Double, Int) {
            let start = DispatchTime.now().uptimeNanoseconds
            let n = try body()
            return (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6, n)
        }
        let (cold, n) = time { c.list().count }
        XCTAssertEqual(n, 50)
        var warm: [Double] = []
        for _ in 0..<5 { warm.append(time { c.list().count }.0) }
        var resolve: [Double] = []
        for name in names { resolve.append(try time { try c.resolve(name).fileBytes }.0) }
        #if DEBUG
        let build = "debug build"
        #else
        let build = "release build"
        #endif
        func ms(_ xs: [Double]) -> String { xs.map { String(format: "%.1f", $0) }.joined(separator: ", ") }
        print("ModelStoresTests: listing 50 models (\(build)): cold \(String(format: "%.1f", cold)) ms, warm \(ms(warm)) ms; "
              + "resolving a name: median \(String(format: "%.2f", resolve.sorted()[resolve.count / 2])) ms, max \(String(format: "%.2f", resolve.max() ?? 0)) ms")
    }

    // MARK: llama.cpp's architectures

    func testKnownArchitecturesMatchTheLlamaSource() throws {
        // The version the list was copied from is the one the build uses.
        let settings = try String(contentsOfFile: RealModels.repoRoot + "/scripts/llama-build-settings.sh", encoding: .utf8)
        let version = try XCTUnwrap(settings.range(of: #"LLAMA_PY_VERSION:-[0-9.]+"#, options: .regularExpression).map { String(settings[$0].dropFirst("LLAMA_PY_VERSION:-".count)) })
        XCTAssertEqual(KnownArchitectures.llamaCppVersion, "llama-cpp-python \(version)")

        let env = ProcessInfo.processInfo.environment
        let cache = env["PARLANCE_SETUP_CACHE"] ?? ((env["XDG_CACHE_HOME"] ?? NSHomeDirectory() + "/.cache") + "/parlance-setup")
        // scripts/setup-llama.sh keeps it in the build's prefix, beside lib/.
        var candidates = [env["PARLANCE_LLAMA_ARCH_SOURCE"], env["PARLANCE_LLAMA_LIBDIR"].map { $0 + "/../src/llama-arch.cpp" }].compactMap { $0 }
        for d in (try? FileManager.default.contentsOfDirectory(atPath: cache)) ?? [] where d.hasPrefix("llama-\(version)-") {
            candidates.append("\(cache)/\(d)/src/llama-arch.cpp")
        }
        guard let source = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
            throw XCTSkip("llama.cpp's src/llama-arch.cpp for \(version) is not on disk (scripts/setup-llama.sh keeps it)")
        }
        let text = try String(contentsOfFile: source, encoding: .utf8)
        let start = try XCTUnwrap(text.range(of: "LLM_ARCH_NAMES = {"), "LLM_ARCH_NAMES not in \(source)")
        let end = try XCTUnwrap(text.range(of: "\n};", range: start.upperBound..<text.endIndex))
        var names: [String] = []
        for line in text[start.upperBound..<end.lowerBound].split(separator: "\n") {
            // { LLM_ARCH_LLAMA, "llama" },
            guard line.contains("LLM_ARCH_"), let q1 = line.firstIndex(of: "\"") else { continue }
            let rest = line[line.index(after: q1)...]
            guard let q2 = rest.firstIndex(of: "\"") else { continue }
            let name = String(rest[..<q2])
            if name != "(unknown)" { names.append(name) }
        }
        XCTAssertGreaterThan(names.count, 100)
        XCTAssertEqual(KnownArchitectures.names, names, "KnownArchitectures.swift differs from \(source)")
        XCTAssertTrue(KnownArchitectures.supported("llama"))
        XCTAssertTrue(KnownArchitectures.supported("gemma3"))
        XCTAssertFalse(KnownArchitectures.supported("clip"))
        XCTAssertFalse(KnownArchitectures.supported("not-an-architecture"))
    }
}
