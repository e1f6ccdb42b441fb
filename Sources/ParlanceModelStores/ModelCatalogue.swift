import Foundation

/// Every model on disk in the stores Parlance reads (Ollama's, the Hugging Face cache,
/// llama.cpp's cache, LM Studio's, GPT4All's, the config file's folders and Parlance's own),
/// and the one a name means. Reads only: nothing in another tool's store is created or
/// changed; the one file written is Parlance's own header index (see `ModelIndex`).
public struct ModelCatalogue: Sendable {
    public let environment: StoreEnvironment

    public init(_ environment: StoreEnvironment) {
        self.environment = environment
    }

    /// Whether `s` is a store name (`ollama:`, `hf:` or `lmstudio:`) rather than a path.
    public static func isStoreName(_ s: String) -> Bool { ModelName.hasStoreScheme(s) }

    /// Every usable model, sorted by source (in `ModelSource`'s order) then name. A split
    /// model with a part missing and a file that is not GGUF are left out; a GGUF file whose
    /// header does not parse is listed with its architecture nil. Never throws.
    public func list() -> [StoredModel] {
        var index = ModelIndex(environment: environment)
        var models: [StoredModel] = []
        var storeFiles: Set<String> = []
        for entry in entries(.all) where entry.problem == nil {
            let real = StoreFiles.realPath(entry.files.first) ?? entry.files.first
            // A config folder that overlaps a store lists its files under the store's names.
            if entry.source == .folder, storeFiles.contains(real) { continue }
            guard let model = model(entry, index: &index) else { continue }
            if entry.source != .folder { storeFiles.insert(real) }
            models.append(model)
        }
        index.save(prune: true)
        let order = Dictionary(uniqueKeysWithValues: ModelSource.allCases.enumerated().map { ($1, $0) })
        return models.sorted { (order[$0.source] ?? 0, $0.name) < (order[$1.source] ?? 0, $1.name) }
    }

    /// The model `name` means, from disk only (no network). Throws `.invalidName` for a
    /// malformed name, `.notDownloaded` (with the closest names on disk and the pull command)
    /// when no store holds it, `.incomplete` when it is there but unusable (a split model
    /// with a part missing, a file that is not GGUF).
    public func resolve(_ name: String) throws(ModelLookupError) -> StoredModel {
        let parsed = try ModelName(name)
        var index = ModelIndex(environment: environment)
        defer { index.save(prune: false) }
        if case let .path(p) = parsed { return try resolvePath(p, name: name, index: &index) }

        let scope: Scope = switch parsed {
        case .ollama: .ollama
        case .huggingFace: .huggingFace
        default: .lmStudio
        }
        let candidates = matches(parsed, in: entries(scope))
        if candidates.isEmpty {
            throw notDownloaded(parsed, name: name, scope: scope)
        }
        var firstProblem: String?
        for entry in candidates {
            if let problem = entry.problem {
                firstProblem = firstProblem ?? problem
                continue
            }
            guard let (summary, _) = index.summary(of: entry.files.first) else {
                firstProblem = firstProblem ?? "\(entry.files.first) cannot be read"
                continue
            }
            if summary.state == .notGGUF {
                firstProblem = firstProblem ?? "\(entry.name) is not a GGUF model (\(entry.files.first) has no GGUF magic number)"
                continue
            }
            if let model = model(entry, index: &index) { return model }
        }
        throw ModelLookupError(reason: .incomplete, name: name, message: "\(parsed) is on disk but unusable: " + (firstProblem ?? "unreadable"),
                               pullCommand: parsed.pullCommand)
    }

    // MARK: Stores

    enum Scope { case all, ollama, huggingFace, lmStudio }

    /// Every store's entries for `scope`, in the order a name prefers them: Ollama's own
    /// store before Parlance's copy, the Hugging Face cache before llama.cpp's.
    func entries(_ scope: Scope) -> [StoreEntry] {
        var out: [StoreEntry] = []
        if scope == .all || scope == .ollama {
            for root in OllamaStoreReader.roots(environment) { out += OllamaStoreReader.entries(root: root, source: .ollama) }
        }
        let hfRoot = HFCacheReader.root(environment)
        if scope == .all || scope == .huggingFace {
            out += HFCacheReader.entries(root: hfRoot, source: .huggingFace)
            out += LlamaCppCacheReader.entries(root: LlamaCppCacheReader.root(environment), hfRoot: hfRoot)
                .filter { scope == .all || $0.key != nil || $0.group != nil }
        }
        if scope == .all || scope == .lmStudio { out += LMStudioReader.entries(environment) }
        if scope == .all {
            out += GPT4AllReader.entries(environment)
            out += FolderReader.entries(environment)
        }
        if scope == .all || scope == .ollama {
            out += OllamaStoreReader.entries(root: OllamaStoreReader.parlanceRoot(environment), source: .parlance)
        }
        return out
    }

    /// Where `scope`'s stores are, for messages.
    func locations(_ scope: Scope) -> String {
        switch scope {
        case .ollama:
            let roots = OllamaStoreReader.roots(environment)
            return "Ollama's store" + (roots.isEmpty ? " (none found)" : " at " + roots.joined(separator: ", "))
                + " and Parlance's at \(OllamaStoreReader.parlanceRoot(environment))"
        case .huggingFace:
            return "the Hugging Face cache at \(HFCacheReader.root(environment)) and llama.cpp's at \(LlamaCppCacheReader.root(environment))"
        case .lmStudio:
            return LMStudioReader.home(environment).map { "LM Studio's models at \($0)/models" } ?? "LM Studio's models (no LM Studio folder found)"
        case .all:
            return "the model stores"
        }
    }

    /// The entries `name` means, best first.
    func matches(_ name: ModelName, in entries: [StoreEntry]) -> [StoreEntry] {
        switch name {
        case let .ollama(host, namespace, model, tag):
            return entries.filter { e in
                guard case let .ollama(h, n, m, t)? = e.key else { return false }
                return h.lowercased() == host.lowercased() && n.lowercased() == namespace.lowercased()
                    && m.lowercased() == model.lowercased() && t.lowercased() == tag.lowercased()
            }
        case let .huggingFace(org, repo, quant):
            let group = (org + "/" + repo).lowercased()
            let inRepo = entries.filter { $0.group == group }
            if let quant {
                let q = quant.uppercased()
                let named = inRepo.filter { if case let .huggingFace(_, _, t?)? = $0.key { return t.uppercased() == q } else { return false } }
                if !named.isEmpty { return named }
                // As llama.cpp's -hf matches a tag: the file name holds "TAG." or "TAG-".
                return inRepo.filter { e in
                    let f = StoreFiles.fileName(e.files.first).uppercased()
                    return f.contains(q + ".") || f.contains(q + "-")
                }
            }
            return ModelCatalogue.preferred(inRepo)
        case let .lmStudio(publisher, repo, file):
            let group = (publisher + "/" + repo).lowercased()
            let inFolder = entries.filter { $0.group == group }
            if let file {
                let exact = inFolder.filter { StoreFiles.fileName($0.files.first) == file }
                return exact.isEmpty ? inFolder.filter { StoreFiles.fileName($0.files.first).lowercased() == file.lowercased() } : exact
            }
            // The folder's only model (a split model counts once).
            return Set(inFolder.map { StoreFiles.fileName($0.files.first) }).count == 1 ? inFolder : []
        case .path:
            return []
        }
    }

    /// A repository's model a bare `hf:ORG/REPO` means: its only one, else Q4_K_M, else
    /// Q8_0, else the first by tag (then file name). Entries from every source, in their
    /// order, for the model chosen.
    static func preferred(_ inRepo: [StoreEntry]) -> [StoreEntry] {
        func tag(_ e: StoreEntry) -> String {
            if case let .huggingFace(_, _, t?)? = e.key { return t.uppercased() }
            return StoreFiles.fileName(e.files.first).uppercased()
        }
        let usable = inRepo.filter { $0.problem == nil }
        let pool = usable.isEmpty ? inRepo : usable
        let tags = Set(pool.map(tag))
        guard !tags.isEmpty else { return [] }
        let chosen = ModelName.preferredQuantizations.first(where: tags.contains) ?? tags.sorted()[0]
        return pool.filter { tag($0) == chosen }
    }

    // MARK: Paths

    func resolvePath(_ path: String, name: String, index: inout ModelIndex) throws(ModelLookupError) -> StoredModel {
        let abs = StoreFiles.absolute(environment.expand(path))
        guard let st = StoreFiles.status(abs) else {
            let dangling = StoreFiles.isSymbolicLink(abs) ? " (a link to \(StoreFiles.linkTarget(abs) ?? "?"), which does not exist)" : ""
            throw ModelLookupError(reason: .notDownloaded, name: name, message: "no model file at \(abs)\(dangling)",
                                   suggestions: closest(to: .path(abs), among: entries(.all)))
        }
        guard st.isRegular else {
            throw ModelLookupError(reason: .invalidName, name: name,
                                   message: "\(abs) is \(st.isDirectory ? "a folder" : "not a regular file"), not a GGUF model file")
        }
        var files = GGUFFileSet(first: abs, parts: [abs], missing: [], stem: StoreFiles.fileName(abs))
        if let split = SplitFiles.splitName(StoreFiles.fileName(abs)), split.count > 1 {
            let dir = StoreFiles.directory(abs)
            let names = (1...split.count).map { StoreFiles.join(dir, SplitFiles.partName(stem: split.stem, index: $0, count: split.count)) }
            files = SplitFiles.group(names.filter(StoreFiles.isFile) + [abs]).first { $0.stem == split.stem && $0.parts.count == split.count } ?? files
            if !files.isComplete {
                throw ModelLookupError(reason: .incomplete, name: name,
                                       message: "the split model \(StoreFiles.fileName(files.first)) has \(files.parts.count) parts; missing: "
                                        + files.missing.joined(separator: ", "))
            }
        }
        let entry = StoreEntry(name: abs, key: nil, source: .folder, files: files, hint: StoreFiles.fileName(files.first))
        guard let (summary, _) = index.summary(of: files.first) else {
            throw ModelLookupError(reason: .notDownloaded, name: name, message: "no model file at \(files.first)")
        }
        if summary.state == .notGGUF {
            throw ModelLookupError(reason: .incomplete, name: name, message: "\(files.first) is not a GGUF model file (no GGUF magic number)")
        }
        guard let model = model(entry, index: &index) else {
            throw ModelLookupError(reason: .incomplete, name: name, message: "\(files.first) cannot be read")
        }
        return model
    }

    // MARK: Not found

    func notDownloaded(_ parsed: ModelName, name: String, scope: Scope) -> ModelLookupError {
        let everything = entries(.all)
        let message = "\(parsed) is not on disk (looked in \(locations(scope)))"
        if case .lmStudio(let publisher, let repo, nil) = parsed {
            let inFolder = everything.filter { $0.group == (publisher + "/" + repo).lowercased() && $0.source == .lmStudio }
            if Set(inFolder.map { $0.files.first }).count > 1 {
                return ModelLookupError(reason: .invalidName, name: name,
                                        message: "lmstudio:\(publisher)/\(repo) holds \(inFolder.count) models; name one with lmstudio:PUBLISHER/REPO/FILE",
                                        suggestions: inFolder.map(\.name).sorted())
            }
        }
        return ModelLookupError(reason: .notDownloaded, name: name, message: message,
                                suggestions: closest(to: parsed, among: everything), pullCommand: parsed.pullCommand)
    }

    /// Up to three names on disk closest to `name`: the same repository or model with
    /// another quantization or tag first, then by edit distance (when near enough).
    func closest(to name: ModelName, among entries: [StoreEntry]) -> [String] {
        let usable = entries.filter { $0.problem == nil }
        let target: String
        var group: String?
        switch name {
        case let .ollama(h, n, m, _): target = name.description.lowercased(); group = "ollama:" + ModelName.ollamaShortName(host: h, namespace: n, model: m).lowercased()
        case let .huggingFace(o, r, _): target = name.description.lowercased(); group = (o + "/" + r).lowercased()
        case let .lmStudio(p, r, _): target = name.description.lowercased(); group = (p + "/" + r).lowercased()
        case let .path(p): target = StoreFiles.fileName(p).lowercased()
        }
        var scored: [(Int, Int, String)] = []
        var seen: Set<String> = []
        for e in usable where seen.insert(e.name).inserted {
            let candidate: String
            if case .path = name { candidate = StoreFiles.fileName(e.name).lowercased() } else { candidate = e.name.lowercased() }
            let d = ModelCatalogue.editDistance(target, candidate)
            let sameGroup = group != nil && (e.group == group || ollamaGroup(e) == group)
            if sameGroup || d <= max(3, target.count / 3) { scored.append((sameGroup ? 0 : 1, d, e.name)) }
        }
        return scored.sorted { ($0.0, $0.1, $0.2) < ($1.0, $1.1, $1.2) }.prefix(3).map(\.2)
    }

    func ollamaGroup(_ e: StoreEntry) -> String? {
        guard case let .ollama(h, n, m, _)? = e.key else { return nil }
        return "ollama:" + ModelName.ollamaShortName(host: h, namespace: n, model: m).lowercased()
    }

    /// Levenshtein distance over characters (inputs past 160 characters are cut there).
    static func editDistance(_ a: String, _ b: String) -> Int {
        let x = Array(a.prefix(160)), y = Array(b.prefix(160))
        if x.isEmpty { return y.count }
        if y.isEmpty { return x.count }
        var previous = Array(0...y.count)
        var current = [Int](repeating: 0, count: y.count + 1)
        for i in 1...x.count {
            current[0] = i
            for j in 1...y.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x[i - 1] == y[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[y.count]
    }

    // MARK: Models

    /// The listing's view of `entry`: its header (from the index, or read now) and sizes.
    /// Nil when the file is gone or is not GGUF.
    func model(_ entry: StoreEntry, index: inout ModelIndex) -> StoredModel? {
        guard let (summary, status) = index.summary(of: entry.files.first), summary.state != .notGGUF else { return nil }
        var bytes = status.size
        for part in entry.files.parts.dropFirst() { bytes += StoreFiles.status(part)?.size ?? 0 }
        let quantization = summary.fileType.flatMap { ModelFileNames.fileTypes[$0] }
            ?? ModelFileNames.quantization(inFileName: entry.hint)
        let parameters = summary.sizeLabel
            ?? summary.generalName.flatMap(ModelFileNames.parameterLabel(inName:))
            ?? ModelFileNames.parameterLabel(inName: entry.hint)
        let estimated = bytes + (summary.kvBytes ?? 0) + (summary.computeBytes ?? 64 << 20)
        return StoredModel(
            name: entry.name, source: entry.source, path: entry.files.first, parts: entry.files.parts,
            architecture: summary.architecture, parameters: parameters, quantization: quantization,
            contextLength: summary.contextLength, hasChatTemplate: summary.hasChatTemplate,
            architectureSupported: summary.architecture.map(KnownArchitectures.supported),
            fileBytes: bytes, estimatedBytes: estimated, fits: environment.availableBytes.map { estimated <= $0 },
            defaultParameters: entry.defaultParameters, systemPrompt: entry.systemPrompt)
    }
}
