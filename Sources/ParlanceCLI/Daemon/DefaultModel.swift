import Foundation

/// Where the embedded default model is found: the one lookup, used when neither `--model`,
/// the config file nor `$PARLANCE_MODEL` names a model.
///   1. `$PARLANCE_DEFAULT_MODEL` (the development set-up exports it);
///   2. beside the installed binary: `<bin>/../share/parlance/models/` (symlinks resolved,
///      so `make install`, the archive and the .deb all work wherever they are put): the
///      default's file, else the one GGUF a packager put there in its place;
///   3. the development set-up cache (`$PARLANCE_SETUP_CACHE`, else
///      `$XDG_CACHE_HOME/parlance-setup`, else `~/.cache/parlance-setup`).
/// The first file that exists wins; when none does, the first place is reported and the
/// error lists every place tried.
public enum DefaultModel {
    /// Qwen2.5-Coder-1.5B-Instruct Q4_K_M (scripts/setup-model.sh), chosen by measurement:
    /// README, "Per model".
    public static let fileName = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    /// Its folder in the set-up cache (scripts/setup-test-models.sh).
    static let setupFolder = "model-qwen2.5-coder-1.5b-instruct-q4km"

    public static func search(env: [String: String], executable: String = executablePath()) -> (path: String, tried: [String]) {
        var tried: [String] = []
        if let p = env["PARLANCE_DEFAULT_MODEL"], !p.isEmpty { tried.append(p) }
        let bin = URL(fileURLWithPath: executable).resolvingSymlinksInPath().deletingLastPathComponent()
        let beside = bin.deletingLastPathComponent().appendingPathComponent("share/parlance/models").standardizedFileURL
        tried.append(beside.appendingPathComponent(fileName).path)
        let ggufs = ((try? FileManager.default.contentsOfDirectory(atPath: beside.path)) ?? [])
            .filter { $0.hasSuffix(".gguf") && $0 != fileName }.sorted()
        if ggufs.count == 1 { tried.append(beside.appendingPathComponent(ggufs[0]).path) }
        let home = env["HOME"] ?? NSHomeDirectory()
        let cache = env["PARLANCE_SETUP_CACHE"] ?? (env["XDG_CACHE_HOME"] ?? "\(home)/.cache") + "/parlance-setup"
        tried.append(cache + "/\(setupFolder)/\(fileName)")
        let found = tried.first { FileManager.default.fileExists(atPath: $0) }
        return (found ?? tried[0], tried)
    }

    /// This process's executable (Linux: /proc/self/exe; elsewhere argv[0] made absolute).
    public static func executablePath() -> String {
        #if os(Linux)
        if let p = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return p }
        #endif
        return URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.path
    }
}
