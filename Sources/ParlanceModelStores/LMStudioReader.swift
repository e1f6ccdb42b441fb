import Foundation

/// LM Studio's models folder, read only: `<home>/models/<publisher>/<repo>/*.gguf`, where
/// home is the folder `~/.lmstudio-home-pointer` names, else `~/.lmstudio`, else (older
/// versions) `~/.cache/lm-studio`. Named `lmstudio:PUBLISHER/REPO/FILE`.
enum LMStudioReader {
    static func home(_ environment: StoreEnvironment) -> String? {
        if let pointed = StoreFiles.text(environment.home + "/.lmstudio-home-pointer", limit: 8192)?
            .trimmingCharacters(in: .whitespacesAndNewlines), !pointed.isEmpty {
            let dir = environment.expand(pointed)
            if StoreFiles.isDirectory(dir) { return dir }
        }
        for dir in [environment.home + "/.lmstudio", environment.home + "/.cache/lm-studio"] where StoreFiles.isDirectory(dir) {
            return dir
        }
        return nil
    }

    static func entries(_ environment: StoreEnvironment) -> [StoreEntry] {
        guard let home = home(environment) else { return [] }
        let models = home + "/models"
        var out: [StoreEntry] = []
        for publisher in StoreFiles.names(in: models) where !publisher.hasPrefix(".") {
            let pubDir = StoreFiles.join(models, publisher)
            for repo in StoreFiles.names(in: pubDir) where !repo.hasPrefix(".") {
                let repoDir = StoreFiles.join(pubDir, repo)
                let files = StoreFiles.names(in: repoDir)
                    .filter { StoreFiles.isGGUFName($0) && !StoreFiles.isCompanionGGUF($0) && !$0.hasPrefix(".") }
                    .map { StoreFiles.join(repoDir, $0) }
                    .filter(StoreFiles.isFile)
                for set in SplitFiles.group(files) {
                    let file = StoreFiles.fileName(set.first)
                    let key = ModelName.lmStudio(publisher: publisher, repository: repo, file: file)
                    var entry = StoreEntry(name: key.description, key: key, group: (publisher + "/" + repo).lowercased(),
                                           source: .lmStudio, files: set, hint: file)
                    if !set.isComplete {
                        entry.problem = "the split model \(file) is missing " + set.missing.map(StoreFiles.fileName).joined(separator: ", ")
                    }
                    out.append(entry)
                }
            }
        }
        return out
    }
}
