import Foundation

/// GPT4All's downloads (Linux): `$XDG_DATA_HOME/nomic.ai/GPT4All/*.gguf`, else under
/// `~/.local/share`; a download in progress is `incomplete-*.gguf`. Named by path.
enum GPT4AllReader {
    static func folder(_ environment: StoreEnvironment) -> String { environment.dataHome + "/nomic.ai/GPT4All" }

    static func entries(_ environment: StoreEnvironment) -> [StoreEntry] {
        let dir = folder(environment)
        let files = StoreFiles.names(in: dir)
            .filter { StoreFiles.isGGUFName($0) && !$0.hasPrefix("incomplete-") && !$0.hasPrefix(".") && !StoreFiles.isCompanionGGUF($0) }
            .map { StoreFiles.join(dir, $0) }
            .filter(StoreFiles.isFile)
        return FolderReader.entries(files: files, source: .gpt4all)
    }
}
