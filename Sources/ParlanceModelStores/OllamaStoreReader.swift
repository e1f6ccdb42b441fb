import Foundation

/// Ollama's store, read only: `manifests/<host>/<namespace>/<model>/<tag>` (an OCI-style
/// JSON manifest whose `layers[]` name blobs by `mediaType`, `digest` "sha256:<hex>" and
/// `size`) and `blobs/sha256-<hex>`. The model layer (`application/vnd.ollama.image.model`)
/// is a plain GGUF file; the `.params` layer holds sampling defaults as JSON, the `.system`
/// layer a system prompt. Parlance's own `pull ollama:` writes the same layout under its data
/// folder (source `.parlance`).
enum OllamaStoreReader {
    static let modelMediaType = "application/vnd.ollama.image.model"
    static let paramsMediaType = "application/vnd.ollama.image.params"
    static let systemMediaType = "application/vnd.ollama.image.system"

    /// `$OLLAMA_MODELS`, `~/.ollama/models` and `/usr/share/ollama/.ollama/models` (the
    /// Linux service's), each that exists, once.
    static func roots(_ environment: StoreEnvironment) -> [String] {
        var candidates: [String] = []
        if let v = environment.variable("OLLAMA_MODELS") { candidates.append(environment.expand(v)) }
        candidates.append(environment.home + "/.ollama/models")
        candidates.append("/usr/share/ollama/.ollama/models")
        return uniqueDirectories(candidates)
    }

    /// Parlance's own Ollama-layout folder.
    static func parlanceRoot(_ environment: StoreEnvironment) -> String { environment.dataDir + "/models" }

    /// Folders that exist, the first of each real path kept.
    static func uniqueDirectories(_ paths: [String]) -> [String] {
        var seen: Set<String> = []
        return paths.filter { p in
            guard StoreFiles.isDirectory(p), let real = StoreFiles.realPath(p) else { return false }
            return seen.insert(real).inserted
        }
    }

    /// Every manifest under `root` whose model layer is named; models whose blob is missing
    /// or incomplete carry a `problem`.
    static func entries(root: String, source: ModelSource) -> [StoreEntry] {
        let manifests = StoreFiles.join(root, "manifests")
        var out: [StoreEntry] = []
        for host in StoreFiles.names(in: manifests) where !host.hasPrefix(".") {
            let hostDir = StoreFiles.join(manifests, host)
            for namespace in StoreFiles.names(in: hostDir) where !namespace.hasPrefix(".") {
                let nsDir = StoreFiles.join(hostDir, namespace)
                for model in StoreFiles.names(in: nsDir) where !model.hasPrefix(".") {
                    let modelDir = StoreFiles.join(nsDir, model)
                    for tag in StoreFiles.names(in: modelDir) where !tag.hasPrefix(".") {
                        let manifest = StoreFiles.join(modelDir, tag)
                        guard StoreFiles.isFile(manifest),
                              let entry = entry(manifest: manifest, root: root, source: source,
                                                host: host, namespace: namespace, model: model, tag: tag)
                        else { continue }
                        out.append(entry)
                    }
                }
            }
        }
        return out
    }

    struct Layer {
        var mediaType: String
        var digest: String
        var size: Int?
    }

    static func layers(ofManifest path: String) -> [Layer]? {
        guard let text = StoreFiles.text(path, limit: 4 << 20),
              let json = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
              let layers = json["layers"] as? [[String: Any]] else { return nil }
        return layers.compactMap { l in
            guard let type = l["mediaType"] as? String, let digest = l["digest"] as? String else { return nil }
            return Layer(mediaType: type, digest: digest, size: (l["size"] as? NSNumber)?.intValue)
        }
    }

    /// The blob for `digest` ("sha256:<hex>"): `blobs/sha256-<hex>` (older Ollama wrote
    /// `sha256:<hex>`). Nil for a malformed digest; the path is returned even when absent.
    static func blobPath(root: String, digest: String) -> String? {
        let parts = digest.split(separator: ":", maxSplits: 1)
        guard parts.count == 2, parts[0] == "sha256", parts[1].count == 64,
              parts[1].allSatisfy({ $0.isHexDigit }) else { return nil }
        let blobs = StoreFiles.join(root, "blobs")
        let current = StoreFiles.join(blobs, "sha256-\(parts[1])")
        if StoreFiles.isFile(current) { return current }
        let older = StoreFiles.join(blobs, "sha256:\(parts[1])")
        return StoreFiles.isFile(older) ? older : current
    }

    static func entry(manifest: String, root: String, source: ModelSource,
                      host: String, namespace: String, model: String, tag: String) -> StoreEntry? {
        guard let layers = layers(ofManifest: manifest),
              let modelLayer = layers.first(where: { $0.mediaType == modelMediaType }),
              let blob = blobPath(root: root, digest: modelLayer.digest) else { return nil }
        let key = ModelName.ollama(host: host, namespace: namespace, model: model, tag: tag)
        var entry = StoreEntry(name: key.description, key: key, source: source,
                               files: GGUFFileSet(first: blob, parts: [blob], missing: [], stem: model),
                               hint: model + ":" + tag)
        // Only complete blobs count: a download in progress is `sha256-<hex>-partial` and
        // leaves the blob itself absent (or, copied by hand, short).
        if let st = StoreFiles.status(blob), st.isRegular {
            if let want = modelLayer.size, want != st.size {
                entry.problem = "the model blob \(StoreFiles.fileName(blob)) is \(st.size) bytes; the manifest says \(want) (incomplete?)"
            }
        } else {
            entry.files.missing = [blob]
            entry.problem = "the model blob \(StoreFiles.fileName(blob)) named by \(manifest) is missing"
                + (StoreFiles.isFile(blob + "-partial") ? " (a download was interrupted)" : "")
        }
        if let l = layers.first(where: { $0.mediaType == paramsMediaType }), let p = blobPath(root: root, digest: l.digest),
           let text = StoreFiles.text(p, limit: 1 << 20) {
            entry.defaultParameters = text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        if let l = layers.first(where: { $0.mediaType == systemMediaType }), let p = blobPath(root: root, digest: l.digest),
           let text = StoreFiles.text(p, limit: 1 << 20) {
            entry.systemPrompt = text
        }
        return entry
    }
}
