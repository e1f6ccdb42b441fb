import Foundation

/// Downloads a model: from a Hugging Face repository into the Hugging Face cache (the
/// layout huggingface_hub writes, so other tools share the file), or from an Ollama
/// registry into Parlance's own data folder in Ollama's layout (never into Ollama's store).
///
/// Every file is resumable (an interrupted or cancelled pull leaves its partial file for
/// the next), verified by SHA-256 before it is renamed into place, checked against the
/// free disk space first, and locked so that two pulls of one file do not race.
public enum ModelPuller {
    /// name: hf:ORG/REPO[:QUANT] or ollama:[HOST/][NS/]NAME[:TAG]
    public static func pull(_ name: String, environment: StoreEnvironment, progress: @escaping @Sendable (PullProgress) -> Void) async throws(PullError) -> PulledModel {
        switch try PullName.parse(name) {
        case .huggingFace(let repo):
            return try await HuggingFacePull.pull(repo, environment: environment, progress: progress)
        case .ollama(let ref):
            return try await OllamaPull.pull(ref, environment: environment, progress: progress)
        }
    }
}

/// A name a pull accepts. (The catalogue's `ModelName` parses every form; this is only
/// what a pull needs, with the same defaults.)
enum PullName: Equatable {
    struct HF: Equatable {
        var org: String
        var repo: String
        /// nil: the default (Q4_K_M, else Q8_0, else the first file).
        var quant: String?
        var id: String { "\(org)/\(repo)" }
    }

    struct Ollama: Equatable {
        static let defaultHost = "registry.ollama.ai"
        /// "https" unless the name says `http://` (allowed to a loopback host only).
        var scheme: String
        var host: String
        var namespace: String
        var name: String
        var tag: String

        /// The name a pull of this reference reports: host and namespace only when they
        /// are not the defaults (`ollama:llama3.2:3b`, `ollama:example.com/team/m:latest`).
        var display: String {
            var s = "ollama:"
            if host != Self.defaultHost { s += host + "/" + namespace + "/" } else if namespace != "library" { s += namespace + "/" }
            return s + name + ":" + tag
        }
    }

    case huggingFace(HF)
    case ollama(Ollama)

    static func parse(_ text: String) throws(PullError) -> PullName {
        let s = text.trimmingCharacters(in: .whitespaces)
        func invalid(_ why: String) -> PullError {
            PullError(.invalidName, "'\(text)' is not a name a pull accepts (\(why)); use hf:ORG/REPO[:QUANT] or ollama:[HOST/][NAMESPACE/]NAME[:TAG]")
        }
        if s.lowercased().hasPrefix("hf:") {
            var rest = Substring(s.dropFirst(3))
            var quant: String?
            if let colon = rest.lastIndex(of: ":") {
                quant = String(rest[rest.index(after: colon)...])
                rest = rest[..<colon]
                if quant!.isEmpty { quant = nil }
            }
            let parts = rest.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 2, parts.allSatisfy(isSegment) else { throw invalid("hf: needs ORG/REPO") }
            if let q = quant, !q.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == "." }) {
                throw invalid("'\(q)' is not a quantization")
            }
            return .huggingFace(HF(org: String(parts[0]), repo: String(parts[1]), quant: quant?.uppercased()))
        }
        if s.lowercased().hasPrefix("ollama:") {
            var rest = Substring(s.dropFirst(7))
            var scheme = "https"
            var explicitHost = false
            if let r = rest.range(of: "://") {
                scheme = rest[..<r.lowerBound].lowercased()
                guard scheme == "http" || scheme == "https" else { throw invalid("the scheme must be http:// or https://") }
                rest = rest[r.upperBound...]
                explicitHost = true
            }
            var parts = rest.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            guard (1...3).contains(parts.count), let last = parts.popLast() else { throw invalid("too many '/'") }
            var name = last, tag = "latest"
            if let colon = last.lastIndex(of: ":") {
                name = String(last[..<colon])
                tag = String(last[last.index(after: colon)...])
            }
            var host = Ollama.defaultHost, namespace = "library"
            switch parts.count {
            case 2:
                host = parts[0]
                namespace = parts[1]
            case 1:
                if explicitHost || looksLikeHost(parts[0]) { host = parts[0] } else { namespace = parts[0] }
            default:
                if explicitHost { throw invalid("a URL needs HOST/[NAMESPACE/]NAME") }
            }
            guard isSegment(Substring(name)), isSegment(Substring(namespace)), isTag(tag), isHost(host) else {
                throw invalid("a part is empty or has characters a name cannot")
            }
            // A registry on this machine (a local mirror, the tests') speaks plain http unless
            // the name says https://, as Docker and Ollama treat localhost registries.
            let bare = host.hasPrefix("[") ? String(host.prefix { $0 != "]" }.dropFirst()) : String(host.split(separator: ":").first ?? "")
            if !explicitHost, PullHTTP.isLoopback(bare) { scheme = "http" }
            return .ollama(Ollama(scheme: scheme, host: host, namespace: namespace, name: name, tag: tag))
        }
        throw invalid("it starts with neither hf: nor ollama:")
    }

    private static func isSegment(_ s: Substring) -> Bool {
        !s.isEmpty && s != "." && s != ".." && s.count <= 96 && !s.hasPrefix("-") && !s.hasPrefix(".")
            && s.allSatisfy { ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "-" || $0 == "_" || $0 == "." }
    }

    private static func isTag(_ s: String) -> Bool {
        !s.isEmpty && s.count <= 128 && !s.hasPrefix(".") && !s.hasPrefix("-")
            && s.allSatisfy { ($0.isASCII && ($0.isLetter || $0.isNumber)) || $0 == "-" || $0 == "_" || $0 == "." }
    }

    private static func isHost(_ s: String) -> Bool {
        !s.isEmpty && s.allSatisfy { ($0.isASCII && ($0.isLetter || $0.isNumber)) || "-.:[]".contains($0) }
    }

    /// `example.com`, `127.0.0.1:8080`, `localhost`: a registry, not a namespace.
    private static func looksLikeHost(_ s: String) -> Bool {
        s.contains(".") || s.contains(":") || s == "localhost"
    }
}
