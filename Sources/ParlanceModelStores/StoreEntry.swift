/// One model a store holds, as its reader found it from names and folders alone (no
/// model file read): the catalogue reads the header only for what it lists or resolves.
struct StoreEntry: Sendable, Hashable {
    /// The name to type (`ollama:…`, `hf:…`, `lmstudio:…`, or the path).
    var name: String
    /// The parsed store name; nil for a model named by its path.
    var key: ModelName?
    /// `org/repo` (Hugging Face layouts) or `publisher/repo` (LM Studio), lower-cased: the
    /// models a bare `hf:ORG/REPO` or `lmstudio:PUBLISHER/REPO` chooses among.
    var group: String? = nil
    var source: ModelSource
    var files: GGUFFileSet
    /// Text to guess the quantization and size from when the header does not say (the file
    /// name; for Ollama, `model:tag`).
    var hint: String
    var defaultParameters: String? = nil
    var systemPrompt: String? = nil
    /// Why the entry cannot be used although the store names it (a blob missing, …).
    var problem: String? = nil
}

/// Where each store lives for an environment (see each reader for its rules).
extension StoreEnvironment {
    /// A variable's value, nil when unset or empty.
    func variable(_ name: String) -> String? {
        guard let v = variables[name], !v.isEmpty else { return nil }
        return v
    }

    /// `~/x` and `~` expanded against this environment's home.
    func expand(_ path: String) -> String {
        if path == "~" { return home }
        if path.hasPrefix("~/") { return home + path.dropFirst(1) }
        return path
    }

    /// `$XDG_CACHE_HOME`, else `~/.cache`.
    var cacheHome: String { variable("XDG_CACHE_HOME").map(expand) ?? home + "/.cache" }
    /// `$XDG_DATA_HOME`, else `~/.local/share`.
    var dataHome: String { variable("XDG_DATA_HOME").map(expand) ?? home + "/.local/share" }
}
