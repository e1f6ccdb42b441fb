import Foundation

/// `ollama:[HOST/][NS/]NAME[:TAG]` from an Ollama registry (the OCI distribution API) into
/// Parlance's own data folder, in Ollama's layout, never into Ollama's store:
///
///     <dataDir>/models/blobs/sha256-<hex>                       every layer and the config
///     <dataDir>/models/manifests/<host>/<ns>/<name>/<tag>        written last, once every blob is verified
///
/// `ollama:http://HOST/…` asks over plain http (a loopback host only); the default is https.
enum OllamaPull {
    static let manifestType = "application/vnd.docker.distribution.manifest.v2+json"
    static let modelLayerType = "application/vnd.ollama.image.model"

    struct Blob {
        var digest: String
        var hex: String
        var size: Int
        var mediaType: String
    }

    static func modelsDir(_ env: StoreEnvironment) -> String { env.dataDir + "/models" }

    static func pull(_ ref: PullName.Ollama, environment env: StoreEnvironment, progress: @escaping @Sendable (PullProgress) -> Void) async throws(PullError) -> PulledModel {
        let base = "\(ref.scheme)://\(ref.host)/v2/\(ref.namespace)/\(ref.name)"
        guard let manifestURL = URL(string: "\(base)/manifests/\(ref.tag)") else {
            throw PullError(.invalidName, "cannot make a registry URL from \(ref.display)")
        }
        try PullHTTP.checkSecure(manifestURL)
        let (r, body) = try await PullHTTP.fetch(manifestURL, headers: ["Accept": manifestType])
        guard r.status == 200 else {
            if r.status == 404 {
                let tags = await availableTags(base)
                let said = PullHTTP.serverText(body)
                throw PullError(.notFound, "\(ref.host) has no \(ref.namespace)/\(ref.name):\(ref.tag)\(said.isEmpty ? "" : " (\(said))")"
                                + (tags.isEmpty ? "" : "; its tags: \(tags.joined(separator: ", "))"),
                                available: tags, url: manifestURL.absoluteString, status: 404)
            }
            if r.status == 401 || r.status == 403 {
                throw PullError(.unauthorized, "\(ref.host) refused \(ref.namespace)/\(ref.name):\(ref.tag) (HTTP \(r.status)): it needs a signed-in Ollama; use `ollama pull`",
                                url: manifestURL.absoluteString, status: r.status)
            }
            throw PullHTTP.statusError(r.status, body: body, url: r.url, what: "\(ref.namespace)/\(ref.name):\(ref.tag)")
        }
        let blobs = try parseManifest(body, source: manifestURL)
        guard let model = blobs.first(where: { $0.mediaType == modelLayerType }) else {
            throw PullError(.notFound, "\(ref.display) has no model layer (\(modelLayerType)) in its manifest", url: manifestURL.absoluteString)
        }

        let models = modelsDir(env)
        let blobDir = models + "/blobs"
        try BlobDownloader.makeDirectory(blobDir)
        var needed = 0
        for b in blobs where BlobDownloader.fileSize(blobDir + "/sha256-" + b.hex) != b.size {
            needed += b.size - min(b.size, BlobDownloader.fileSize(blobDir + "/sha256-" + b.hex + "-partial") ?? 0)
        }
        try BlobDownloader.ensureSpace(blobDir, needed: needed, what: ref.display)

        var outcomes: [String: BlobOutcome] = [:]
        for b in blobs {
            guard let url = URL(string: "\(base)/blobs/\(b.digest)") else { throw PullError(.network, "cannot make a URL for \(b.digest)") }
            let path = blobDir + "/sha256-" + b.hex
            let target = BlobTarget(label: b.digest, url: url, authorization: nil, sha256: b.hex, size: b.size, destination: path,
                                    partial: path + "-partial", lock: path + "-partial.lock", removeLock: true)
            outcomes[b.digest] = try await BlobDownloader.fetch(target, progress: progress)
        }

        // Last: the manifest, which is what makes the model exist for a reader.
        let manifestPath = [models, "manifests", ref.host, ref.namespace, ref.name, ref.tag].joined(separator: "/")
        try BlobDownloader.writeFileAtomically(manifestPath, body)

        let path = blobDir + "/sha256-" + model.hex
        return PulledModel(name: ref.display, path: path, parts: [path], bytes: model.size, sha256: model.hex,
                           resumedBytes: outcomes.values.reduce(0) { $0 + $1.resumedBytes },
                           downloaded: outcomes.values.contains { $0.transferred })
    }

    /// The config and the layers, each once.
    static func parseManifest(_ body: Data, source: URL) throws(PullError) -> [Blob] {
        guard let obj = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any], let layers = obj["layers"] as? [[String: Any]] else {
            throw PullError(.network, "\(source.host ?? "?") answered with a manifest that is not an image manifest", url: source.absoluteString)
        }
        var all = layers
        if let config = obj["config"] as? [String: Any] { all.insert(config, at: 0) }
        var blobs: [Blob] = []
        for l in all {
            guard let digest = l["digest"] as? String, digest.hasPrefix("sha256:"), let size = l["size"] as? Int, size >= 0 else {
                throw PullError(.network, "\(source.host ?? "?") sent a manifest layer without a sha256 digest and a size", url: source.absoluteString)
            }
            let hex = String(digest.dropFirst(7))
            guard HuggingFacePull.isHex(hex, 64) else {
                throw PullError(.network, "\(source.host ?? "?") sent a malformed digest '\(digest.prefix(80))'", url: source.absoluteString)
            }
            if !blobs.contains(where: { $0.digest == digest }) {
                blobs.append(Blob(digest: digest, hex: hex, size: size, mediaType: l["mediaType"] as? String ?? ""))
            }
        }
        return blobs
    }

    /// The repository's tags (OCI `tags/list`), for a not-found message; [] when it cannot say.
    static func availableTags(_ base: String) async -> [String] {
        guard let url = URL(string: "\(base)/tags/list"),
              let fetched = try? await PullHTTP.fetch(url, headers: ["Accept": "application/json"]), fetched.0.status == 200,
              let obj = (try? JSONSerialization.jsonObject(with: fetched.1)) as? [String: Any], let tags = obj["tags"] as? [String]
        else { return [] }
        return tags
    }
}
