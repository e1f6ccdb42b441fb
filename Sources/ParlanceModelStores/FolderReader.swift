import Foundation

/// The folders named in the config file's `modelDirs`: every `*.gguf` down to `depth`
/// folders below each, named by path.
enum FolderReader {
    static let depth = 4

    static func entries(_ environment: StoreEnvironment) -> [StoreEntry] {
        var seen: Set<String> = []
        var out: [StoreEntry] = []
        for dir in environment.modelDirs {
            let path = StoreFiles.absolute(environment.expand(dir))
            guard let real = StoreFiles.realPath(path), seen.insert(real).inserted else { continue }
            let files = StoreFiles.ggufFiles(under: path, depth: depth).filter { !StoreFiles.isCompanionGGUF(StoreFiles.fileName($0)) }
            out += entries(files: files, source: .folder)
        }
        return out
    }

    /// Path-named entries for `files`, split models grouped.
    static func entries(files: [String], source: ModelSource) -> [StoreEntry] {
        SplitFiles.group(files).map { set in
            let file = StoreFiles.fileName(set.first)
            var entry = StoreEntry(name: set.first, key: nil, source: source, files: set, hint: file)
            if !set.isComplete {
                entry.problem = "the split model \(file) is missing " + set.missing.map(StoreFiles.fileName).joined(separator: ", ")
            }
            return entry
        }
    }
}
