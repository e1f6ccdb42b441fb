import Foundation

/// The Hugging Face cache, read only: `models--ORG--REPO/{blobs,refs,snapshots}`; a
/// snapshot (`snapshots/<commit>/`) holds the repository's files as relative links into
/// `blobs/` (or, where links failed, as the files themselves). The snapshot read is the
/// one `refs/main` names, else the newest. Links to `.incomplete` blobs and dangling links
/// (downloads in progress or removed) are passed over.
enum HFCacheReader {
    /// `$HF_HUB_CACHE` (or the older `$HUGGINGFACE_HUB_CACHE`), else `$HF_HOME/hub`, else
    /// `$XDG_CACHE_HOME/huggingface/hub`, else `~/.cache/huggingface/hub`: the first that is set.
    static func root(_ environment: StoreEnvironment) -> String {
        if let v = environment.variable("HF_HUB_CACHE") ?? environment.variable("HUGGINGFACE_HUB_CACHE") { return environment.expand(v) }
        if let v = environment.variable("HF_HOME") { return environment.expand(v) + "/hub" }
        return environment.cacheHome + "/huggingface/hub"
    }

    /// How deep below a snapshot GGUF files are looked for (repositories keep quantizations
    /// in folders such as `Q4_K_M/`).
    static let snapshotDepth = 3

    /// Every GGUF model in every `models--ORG--REPO` under `root`, named `hf:ORG/REPO:QUANT`.
    static func entries(root: String, source: ModelSource) -> [StoreEntry] {
        var out: [StoreEntry] = []
        for folder in StoreFiles.names(in: root) where folder.hasPrefix("models--") {
            let parts = folder.dropFirst("models--".count).components(separatedBy: "--")
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { continue }
            let repoDir = StoreFiles.join(root, folder)
            guard let snapshot = snapshot(repoDir) else { continue }
            out += entries(snapshot: snapshot, organization: parts[0], repository: parts[1], source: source)
        }
        return out
    }

    /// The snapshot folder `refs/main` names, else the most recently modified one.
    static func snapshot(_ repoDir: String) -> String? {
        let snapshots = StoreFiles.join(repoDir, "snapshots")
        if let ref = StoreFiles.text(StoreFiles.join(repoDir, "refs/main"), limit: 4096)?
            .trimmingCharacters(in: .whitespacesAndNewlines), !ref.isEmpty, !ref.contains("/") {
            let dir = StoreFiles.join(snapshots, ref)
            if StoreFiles.isDirectory(dir) { return dir }
        }
        let all = StoreFiles.names(in: snapshots).compactMap { name -> (String, Int64)? in
            let dir = StoreFiles.join(snapshots, name)
            guard let st = StoreFiles.status(dir), st.isDirectory else { return nil }
            return (dir, st.modified)
        }
        return all.max { ($0.1, $0.0) < ($1.1, $1.0) }?.0
    }

    static func entries(snapshot: String, organization: String, repository: String, source: ModelSource) -> [StoreEntry] {
        // Present, complete files only: ggufFiles follows links, so dangling ones drop out.
        let files = StoreFiles.ggufFiles(under: snapshot, depth: snapshotDepth).filter { path in
            !StoreFiles.isCompanionGGUF(StoreFiles.fileName(path))
                && !(StoreFiles.linkTarget(path)?.hasSuffix(".incomplete") ?? false)
        }
        var taken: Set<String> = []
        var out: [StoreEntry] = []
        for set in SplitFiles.group(files) {
            let fileName = StoreFiles.fileName(set.first)
            var entry = StoreEntry(name: set.first, key: nil, group: (organization + "/" + repository).lowercased(),
                                   source: source, files: set, hint: fileName)
            // The quantization in the file name is the name's tag; a file naming none is
            // tagged with its stem. A second file with the same tag is named by its path.
            let tag = ModelFileNames.quantization(inFileName: fileName)
                ?? (ModelName.validComponent(Substring(set.stem)) ? set.stem : nil)
            if let tag, taken.insert(tag.uppercased()).inserted {
                let key = ModelName.huggingFace(organization: organization, repository: repository, quantization: tag)
                entry.key = key
                entry.name = key.description
            }
            if !set.isComplete {
                entry.problem = "the split model \(fileName) is missing "
                    + set.missing.map(StoreFiles.fileName).joined(separator: ", ")
            }
            out.append(entry)
        }
        return out
    }
}
