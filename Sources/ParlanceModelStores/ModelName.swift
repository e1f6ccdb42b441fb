import Foundation

/// A model's name as typed: a store name (`ollama:`, `hf:`, `lmstudio:`) or a file's path.
///
/// - `ollama:NAME[:TAG]`, `ollama:NAMESPACE/NAME[:TAG]`, `ollama:HOST/NAMESPACE/NAME[:TAG]`
///   (Ollama's own short names; the tag defaults to `latest`, the host to
///   `registry.ollama.ai`, the namespace to `library`).
/// - `hf:ORG/REPO[:QUANT]` (no quantization: the repository's only model, else Q4_K_M,
///   else Q8_0, else the first in sorted order).
/// - `lmstudio:PUBLISHER/REPO[/FILE]` (no file: the folder's only model).
/// - anything else without a scheme: a path.
public enum ModelName: Sendable, Hashable, CustomStringConvertible {
    case ollama(host: String, namespace: String, model: String, tag: String)
    case huggingFace(organization: String, repository: String, quantization: String?)
    case lmStudio(publisher: String, repository: String, file: String?)
    case path(String)

    public static let ollamaDefaultHost = "registry.ollama.ai"
    public static let ollamaDefaultNamespace = "library"
    public static let ollamaDefaultTag = "latest"
    /// The quantizations a bare `hf:ORG/REPO` prefers, in order (llama.cpp's `-hf` order).
    public static let preferredQuantizations = ["Q4_K_M", "Q8_0"]

    /// Parses `text`; a malformed store name throws `.invalidName` saying what is wrong.
    public init(_ text: String) throws(ModelLookupError) {
        func bad(_ why: String) -> ModelLookupError {
            ModelLookupError(reason: .invalidName, name: text, message: "invalid model name '\(text)': \(why)")
        }
        if text.isEmpty { throw bad("the name is empty") }
        if text.trimmingCharacters(in: .whitespacesAndNewlines) != text {
            throw bad("it begins or ends with white space")
        }
        guard let scheme = ModelName.scheme(of: text) else {
            self = .path(text)
            return
        }
        let rest = String(text.dropFirst(scheme.count + 1))
        switch scheme.lowercased() {
        case "ollama":
            self = try ModelName.parseOllama(rest, bad)
        case "hf":
            self = try ModelName.parseHuggingFace(rest, bad)
        case "lmstudio":
            self = try ModelName.parseLMStudio(rest, bad)
        default:
            // A file whose name merely looks like `word:…` is still a path.
            if FileManager.default.fileExists(atPath: text) {
                self = .path(text)
                return
            }
            throw bad("unknown scheme '\(scheme):' (names are ollama:NAME[:TAG], hf:ORG/REPO[:QUANT], lmstudio:PUBLISHER/REPO[/FILE], or a file's path)")
        }
    }

    /// The scheme of `ollama:…`-like text: letters (then letters, digits, `+.-`) before the
    /// first `:`, with no `/` before it. A path such as `./a:b` or `/x/y:z` has none.
    static func scheme(of text: String) -> String? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let head = text[..<colon]
        guard let first = head.first, first.isASCII, first.isLetter,
              head.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "." || $0 == "-") })
        else { return nil }
        // `model.gguf:x` or `a.b:c` look like file names, not schemes.
        if head.contains(".") { return nil }
        return String(head)
    }

    /// Whether `text` starts with a store scheme this type reads (`ollama:`, `hf:`, `lmstudio:`).
    public static func hasStoreScheme(_ text: String) -> Bool {
        guard let s = scheme(of: text)?.lowercased() else { return false }
        return s == "ollama" || s == "hf" || s == "lmstudio"
    }

    // MARK: Parsing

    static func isNameCharacter(_ c: Character) -> Bool {
        c.isASCII && (c.isLetter || c.isNumber || c == "_" || c == "-" || c == ".")
    }

    /// A component: name characters only, starting with a letter, digit or `_`, no `..`.
    static func validComponent(_ s: Substring) -> Bool {
        guard let f = s.first, f.isASCII, f.isLetter || f.isNumber || f == "_" else { return false }
        return s.allSatisfy(isNameCharacter) && !s.contains("..")
    }

    static func parseOllama(_ rest: String, _ bad: (String) -> ModelLookupError) throws(ModelLookupError) -> ModelName {
        if rest.isEmpty { throw bad("ollama: needs a model name (ollama:NAME[:TAG], e.g. ollama:llama3.2:3b)") }
        // The tag follows the last `:` after the last `/` (a host may carry a port).
        let lastSlash = rest.lastIndex(of: "/")
        let searchFrom = lastSlash.map { rest.index(after: $0) } ?? rest.startIndex
        var path = Substring(rest)
        var tag = ModelName.ollamaDefaultTag
        if let colon = rest[searchFrom...].lastIndex(of: ":") {
            let t = rest[rest.index(after: colon)...]
            guard !t.isEmpty else { throw bad("the tag after ':' is empty") }
            guard t.count <= 128, validComponent(t) else {
                throw bad("the tag '\(t)' may hold only letters, digits, '_', '-' and '.', starting with a letter, digit or '_'")
            }
            tag = String(t)
            path = rest[..<colon]
        }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 3 else {
            throw bad("an Ollama name has at most HOST/NAMESPACE/NAME before the tag; '\(path)' has \(parts.count) parts")
        }
        guard let model = parts.last, !model.isEmpty else { throw bad("the model name is empty") }
        for (i, p) in parts.enumerated() {
            if i == 0 && parts.count == 3 {
                // A host: name characters, and an optional :port.
                let hostOK = !p.isEmpty && p.split(separator: ":", omittingEmptySubsequences: false).enumerated().allSatisfy { j, s in
                    j == 0 ? validComponent(s) : (j == 1 && !s.isEmpty && s.allSatisfy(\.isNumber))
                }
                guard hostOK else { throw bad("'\(p)' is not a host name") }
            } else if !validComponent(p) {
                throw bad(p.isEmpty ? "an empty part between '/'" : "'\(p)' may hold only letters, digits, '_', '-' and '.', starting with a letter, digit or '_'")
            }
        }
        switch parts.count {
        case 1: return .ollama(host: ollamaDefaultHost, namespace: ollamaDefaultNamespace, model: String(model), tag: tag)
        case 2: return .ollama(host: ollamaDefaultHost, namespace: String(parts[0]), model: String(model), tag: tag)
        default: return .ollama(host: String(parts[0]), namespace: String(parts[1]), model: String(model), tag: tag)
        }
    }

    static func parseHuggingFace(_ rest: String, _ bad: (String) -> ModelLookupError) throws(ModelLookupError) -> ModelName {
        var repoPart = Substring(rest)
        var quant: String?
        if let colon = rest.firstIndex(of: ":") {
            let q = rest[rest.index(after: colon)...]
            guard !q.isEmpty else { throw bad("the quantization after ':' is empty (e.g. hf:ORG/REPO:Q4_K_M)") }
            guard q.count <= 128, validComponent(q) else {
                throw bad("the quantization '\(q)' may hold only letters, digits, '_', '-' and '.' (e.g. Q4_K_M)")
            }
            quant = String(q)
            repoPart = rest[..<colon]
        }
        let parts = repoPart.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else {
            throw bad(parts.count < 2 ? "hf: needs ORG/REPO (e.g. hf:bartowski/Llama-3.2-3B-Instruct-GGUF)"
                                      : "hf: takes ORG/REPO[:QUANT], with exactly one '/'; '\(repoPart)' has \(parts.count - 1)")
        }
        for p in parts {
            guard validComponent(p), p.count <= 96, p.last != "-", p.last != "." else {
                throw bad(p.isEmpty ? "the organization or repository is empty"
                                    : "'\(p)' may hold only letters, digits, '_', '-' and '.', not starting or ending with '-' or '.'")
            }
            if p.contains("--") { throw bad("'\(p)' contains '--', which Hugging Face repository names may not") }
        }
        return .huggingFace(organization: String(parts[0]), repository: String(parts[1]), quantization: quant)
    }

    static func parseLMStudio(_ rest: String, _ bad: (String) -> ModelLookupError) throws(ModelLookupError) -> ModelName {
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3 else {
            throw bad("lmstudio: takes PUBLISHER/REPO or PUBLISHER/REPO/FILE; '\(rest)' has \(parts.count) part\(parts.count == 1 ? "" : "s")")
        }
        for p in parts {
            guard !p.isEmpty else { throw bad("an empty part between '/'") }
            guard p != ".", p != "..", !p.contains("\0") else { throw bad("'\(p)' is not a folder or file name") }
        }
        return .lmStudio(publisher: String(parts[0]), repository: String(parts[1]), file: parts.count == 3 ? String(parts[2]) : nil)
    }

    // MARK: Forms

    /// The canonical form: Ollama's short name with the tag, `hf:ORG/REPO[:QUANT]`, …
    public var description: String {
        switch self {
        case let .ollama(host, namespace, model, tag): return "ollama:" + ModelName.ollamaShortName(host: host, namespace: namespace, model: model) + ":" + tag
        case let .huggingFace(org, repo, quant): return "hf:\(org)/\(repo)" + (quant.map { ":" + $0 } ?? "")
        case let .lmStudio(publisher, repo, file): return "lmstudio:\(publisher)/\(repo)" + (file.map { "/" + $0 } ?? "")
        case let .path(p): return p
        }
    }

    /// Ollama's own short form: `NAME` in the default namespace on the default host,
    /// `NAMESPACE/NAME` on the default host, else `HOST/NAMESPACE/NAME`.
    static func ollamaShortName(host: String, namespace: String, model: String) -> String {
        if host == ollamaDefaultHost {
            return namespace == ollamaDefaultNamespace ? model : namespace + "/" + model
        }
        return host + "/" + namespace + "/" + model
    }

    /// `parlance models pull …` for a name a pull can get (nil for `lmstudio:` and paths).
    public var pullCommand: String? {
        switch self {
        case .ollama, .huggingFace: return "parlance models pull " + description
        case .lmStudio, .path: return nil
        }
    }

    public var isStoreName: Bool {
        if case .path = self { return false }
        return true
    }
}
