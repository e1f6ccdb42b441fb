import Foundation

/// llama.cpp's own cache, read only. Where `$LLAMA_CACHE` is set, llama.cpp's `-hf`
/// (common/hf-cache.cpp) writes the Hugging Face layout there (`models--ORG--REPO/…`);
/// older versions, and `-dr` (Docker models), wrote flat files into the same folder,
/// `$LLAMA_CACHE` else `$XDG_CACHE_HOME/llama.cpp` else `~/.cache/llama.cpp`
/// (common.cpp's `fs_get_cache_directory`): `ORG_REPO_FILE.gguf` beside `.json` and
/// `.etag` sidecars, a download in progress ending `.downloadInProgress`. Both are read:
/// the Hugging Face layout named `hf:`, flat files by their path.
enum LlamaCppCacheReader {
    static func root(_ environment: StoreEnvironment) -> String {
        environment.variable("LLAMA_CACHE").map(environment.expand) ?? environment.cacheHome + "/llama.cpp"
    }

    /// `hfRoot`: the Hugging Face cache's folder; when it is this folder too (`LLAMA_CACHE`
    /// pointed at it), the Hugging Face layout here is left to that reader.
    static func entries(root: String, hfRoot: String) -> [StoreEntry] {
        guard StoreFiles.isDirectory(root) else { return [] }
        var out: [StoreEntry] = []
        if StoreFiles.realPath(root) != StoreFiles.realPath(hfRoot) {
            out += HFCacheReader.entries(root: root, source: .llamaCpp)
        }
        let flat = StoreFiles.names(in: root).filter { StoreFiles.isGGUFName($0) && !StoreFiles.isCompanionGGUF($0) }
            .map { StoreFiles.join(root, $0) }
            .filter(StoreFiles.isFile)
        out += FolderReader.entries(files: flat, source: .llamaCpp)
        return out
    }
}
