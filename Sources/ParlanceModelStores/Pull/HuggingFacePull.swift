import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `hf:ORG/REPO[:QUANT]` into the Hugging Face cache, exactly as huggingface_hub lays it out:
///
///     <cache>/models--ORG--REPO/blobs/<sha256>            the bytes (via <sha256>.incomplete)
///     <cache>/models--ORG--REPO/snapshots/<commit>/<file> -> ../../blobs/<sha256> (relative)
///     <cache>/models--ORG--REPO/refs/main                 the commit
///     <cache>/.locks/models--ORG--REPO/<sha256>.lock      huggingface_hub's lock (flock), shared with it
///
/// The cache is `HF_HUB_CACHE`, else `HF_HOME/hub`, else `$XDG_CACHE_HOME/huggingface/hub`,
/// else `~/.cache/huggingface/hub`; the endpoint `HF_ENDPOINT` (default https://huggingface.co);
/// the token `HF_TOKEN` (else `HF_HOME/token`), sent as `Authorization: Bearer` to the
/// endpoint only (not to the CDN its downloads redirect to).
enum HuggingFacePull {
    struct RepoFile {
        var path: String
        var size: Int
        /// The LFS object's sha256 from the listing (nil: a file kept in git itself).
        var lfsSHA256: String?
        var quant: String?
        var split: (base: String, index: Int, count: Int)?
        /// The quantization's group: the path without a split suffix.
        var group: String { split?.base ?? path }
    }

    /// Lists the repository, chooses the quantization's files, reads each one's metadata,
    /// downloads the blobs and links the snapshot.
    static func pull(_ ref: PullName.HF, environment env: StoreEnvironment, progress: @escaping @Sendable (PullProgress) -> Void) async throws(PullError) -> PulledModel {
        let endpoint = try self.endpoint(env)
        let token = self.token(env)
        let auth = token.map { "Bearer \($0)" }

        // The repository's files (paged by `Link: <…>; rel="next"`).
        let files = try await listFiles(ref, endpoint: endpoint, auth: auth, hasToken: token != nil)
        let ggufs = files.filter { f in
            let base = (f.path as NSString).lastPathComponent.lowercased()
            return base.hasSuffix(".gguf") && !base.hasPrefix("mmproj")
        }
        guard !ggufs.isEmpty else {
            throw PullError(.notFound, "hf:\(ref.id) has no .gguf file (\(files.count) files listed at \(endpoint)/\(ref.id))")
        }
        var available: [String] = []
        for f in ggufs { if let q = f.quant, !available.contains(q) { available.append(q) } }

        let (parts, quant) = try choose(ggufs, ref, available: available)
        let name = "hf:\(ref.id)" + (quant.map { ":\($0)" } ?? "")
        let (plans, commit) = try await plan(parts, ref, endpoint: endpoint, auth: auth, hasToken: token != nil, available: available)
        let cache = cacheDir(env)
        let folder = "models--" + ref.org + "--" + ref.repo
        let outcomes = try await download(plans, ref, commit: commit, endpoint: endpoint, auth: auth, cache: cache, folder: folder, name: name,
                                          progress: progress)
        let paths = try link(plans, commit: commit, in: cache + "/" + folder)
        return PulledModel(name: name, path: paths[0], parts: paths, bytes: plans.reduce(0) { $0 + $1.size }, sha256: outcomes[0].sha256,
                           resumedBytes: outcomes.reduce(0) { $0 + $1.resumedBytes }, downloaded: outcomes.contains { $0.transferred })
    }

    /// `HF_ENDPOINT` without a trailing slash (default https://huggingface.co), checked to be
    /// a URL that a pull may use.
    static func endpoint(_ env: StoreEnvironment) throws(PullError) -> String {
        let endpoint = nonEmpty(env.variables["HF_ENDPOINT"]).map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 } ?? "https://huggingface.co"
        guard let endpointURL = URL(string: endpoint), endpointURL.host != nil else {
            throw PullError(.invalidName, "HF_ENDPOINT '\(endpoint)' is not a URL")
        }
        try PullHTTP.checkSecure(endpointURL)
        return endpoint
    }

    /// The quantization's files: the one asked for (by its label, else by a name the file's
    /// stem ends with), else Q4_K_M, else Q8_0, else the first file's; a split model's parts
    /// in order, every one listed. Returns them with the quantization's label.
    static func choose(_ ggufs: [RepoFile], _ ref: PullName.HF, available: [String]) throws(PullError) -> (parts: [RepoFile], quant: String?) {
        let display = "hf:\(ref.id)"
        let chosen: [RepoFile]
        let quant: String?
        if let asked = ref.quant {
            var matching = ggufs.filter { $0.quant == asked }
            if matching.isEmpty { matching = ggufs.filter { stemHasToken($0, asked) } }
            guard !matching.isEmpty else {
                throw PullError(.notFound, "\(display) has no \(asked) file; its quantizations: \(available.isEmpty ? "none named" : available.joined(separator: ", "))",
                                available: available)
            }
            chosen = matching
            quant = asked
        } else if let q = ["Q4_K_M", "Q8_0"].first(where: available.contains) {
            chosen = ggufs.filter { $0.quant == q }
            quant = q
        } else {
            chosen = ggufs.filter { $0.group == ggufs[0].group }
            quant = ggufs[0].quant
        }
        let group = chosen[0].group
        var parts = chosen.filter { $0.group == group }.sorted { ($0.split?.index ?? 0) < ($1.split?.index ?? 0) }
        if let count = parts[0].split?.count {
            let have = Set(parts.compactMap { $0.split?.index })
            guard have == Set(1...count) else {
                let missing = (1...count).filter { !have.contains($0) }.map(String.init).joined(separator: ", ")
                throw PullError(.notFound, "\(display): the split model \(group) lists \(parts.count) of its \(count) parts (missing \(missing))",
                                available: available)
            }
            parts = parts.filter { $0.split!.index <= count }
        }
        return (parts, quant)
    }

    /// One file to fetch: its blob's name in the cache (the ETag), the SHA-256 to check
    /// (nil: none announced) and its size.
    struct Plan { var file: RepoFile; var etag: String; var sha256: String?; var size: Int }

    /// Each file's metadata, as huggingface_hub reads it: the HEAD of resolve/main (the
    /// headers of the redirect itself, not the CDN's), every file from the same commit.
    static func plan(_ parts: [RepoFile], _ ref: PullName.HF, endpoint: String, auth: String?, hasToken: Bool,
                     available: [String]) async throws(PullError) -> (plans: [Plan], commit: String) {
        var plans: [Plan] = []
        var commit: String?
        for f in parts {
            let head = try await metadata(ref, file: f, endpoint: endpoint, auth: auth, hasToken: hasToken, available: available)
            if let c = commit, c != head.commit {
                throw PullError(.network, "hf:\(ref.id) changed while it was being pulled (commit \(c) then \(head.commit)); pull again")
            }
            commit = head.commit
            var sha = isHex(head.etag, 64) ? head.etag : nil
            if sha == nil, let lfs = f.lfsSHA256, isHex(lfs, 64) { sha = lfs }
            plans.append(Plan(file: f, etag: head.etag, sha256: sha, size: head.size ?? f.size))
        }
        guard let commit else { throw PullError(.notFound, "hf:\(ref.id): nothing to pull") }
        return (plans, commit)
    }

    /// The blobs into `<cache>/<folder>/blobs`, once there is space for what is not on disk yet.
    static func download(_ plans: [Plan], _ ref: PullName.HF, commit: String, endpoint: String, auth: String?, cache: String, folder: String,
                         name: String, progress: @escaping @Sendable (PullProgress) -> Void) async throws(PullError) -> [BlobOutcome] {
        let blobs = cache + "/" + folder + "/blobs"
        try BlobDownloader.makeDirectory(blobs)
        var needed = 0
        for p in plans where BlobDownloader.fileSize(blobs + "/" + p.etag) != p.size {
            needed += p.size - min(p.size, BlobDownloader.fileSize(blobs + "/" + p.etag + ".incomplete") ?? 0)
        }
        try BlobDownloader.ensureSpace(blobs, needed: needed, what: name)

        let fileURL = "\(endpoint)/\(ref.id)/resolve/\(commit)/"
        var outcomes: [BlobOutcome] = []
        for p in plans {
            guard let url = URL(string: fileURL + encodePath(p.file.path)) else {
                throw PullError(.network, "cannot make a URL for \(p.file.path)")
            }
            let target = BlobTarget(label: p.file.path, url: url, authorization: auth, sha256: p.sha256, size: p.size,
                                    destination: blobs + "/" + p.etag, partial: blobs + "/" + p.etag + ".incomplete",
                                    lock: cache + "/.locks/" + folder + "/" + p.etag + ".lock", removeLock: false)
            outcomes.append(try await BlobDownloader.fetch(target, progress: progress))
        }
        return outcomes
    }

    /// The snapshot's relative symlinks to the blobs, then the ref; returns the links' paths.
    static func link(_ plans: [Plan], commit: String, in repoDir: String) throws(PullError) -> [String] {
        var paths: [String] = []
        for p in plans {
            let link = repoDir + "/snapshots/" + commit + "/" + p.file.path
            let depth = p.file.path.split(separator: "/").count - 1
            let target = String(repeating: "../", count: 2 + depth) + "blobs/" + p.etag
            try BlobDownloader.makeDirectory(BlobDownloader.parent(link))
            try symlink(target, at: link)
            paths.append(link)
        }
        try writeAtomically(repoDir + "/refs/main", commit)
        return paths
    }

    // MARK: The API

    static func listFiles(_ ref: PullName.HF, endpoint: String, auth: String?, hasToken: Bool) async throws(PullError) -> [RepoFile] {
        var next = URL(string: "\(endpoint)/api/models/\(ref.id)/tree/main?recursive=true")
        var files: [RepoFile] = []
        var pages = 0
        while let url = next {
            pages += 1
            if pages > 1000 { throw PullError(.network, "\(endpoint): the file list of \(ref.id) does not end (1000 pages)") }
            let (r, body) = try await PullHTTP.fetch(url, headers: ["Accept": "application/json"], authorization: auth)
            guard r.status == 200 else { throw repoError(r, body: body, ref: ref, endpoint: endpoint, hasToken: hasToken, available: []) }
            guard let entries = (try? JSONSerialization.jsonObject(with: body)) as? [[String: Any]] else {
                throw PullError(.network, "\(endpoint) answered the file list of \(ref.id) with something that is not a JSON array", url: url.absoluteString)
            }
            for e in entries where (e["type"] as? String ?? "file") == "file" {
                guard let path = e["path"] as? String else { continue }
                let lfs = e["lfs"] as? [String: Any]
                let size = (lfs?["size"] as? Int) ?? (e["size"] as? Int) ?? 0
                let sha = (lfs?["oid"] as? String) ?? (lfs?["sha256"] as? String)
                files.append(RepoFile(path: path, size: size, lfsSHA256: sha?.lowercased(), quant: quantization(of: path), split: splitInfo(path)))
            }
            next = linkNext(r.header("link"), relativeTo: url)
        }
        return files
    }

    struct Head { var commit: String; var etag: String; var size: Int? }

    /// HEAD of `resolve/main/FILE`: X-Repo-Commit, X-Linked-Etag (the LFS sha256) or ETag,
    /// X-Linked-Size or Content-Length.
    static func metadata(_ ref: PullName.HF, file: RepoFile, endpoint: String, auth: String?, hasToken: Bool, available: [String]) async throws(PullError) -> Head {
        guard let url = URL(string: "\(endpoint)/\(ref.id)/resolve/main/\(encodePath(file.path))") else {
            throw PullError(.network, "cannot make a URL for \(file.path)")
        }
        let r = try await PullHTTP.open(url, method: "HEAD", authorization: auth, redirects: .sameHost)
        guard (200..<400).contains(r.status) else {
            // (A HEAD has no body: the hub's X-Error-Code says what is wrong.)
            throw repoError(r, body: Data(), ref: ref, endpoint: endpoint, hasToken: hasToken, available: available, file: file.path)
        }
        guard let commit = r.header("x-repo-commit")?.lowercased(), isHex(commit, 40) else {
            throw PullError(.network, "\(endpoint) sent no X-Repo-Commit for \(ref.id)/\(file.path) (is HF_ENDPOINT a Hugging Face hub?)",
                            url: url.absoluteString, status: r.status)
        }
        guard let raw = r.header("x-linked-etag") ?? r.header("etag") else {
            throw PullError(.network, "\(endpoint) sent no ETag for \(ref.id)/\(file.path)", url: url.absoluteString, status: r.status)
        }
        var etag = raw.trimmingCharacters(in: .whitespaces)
        if etag.hasPrefix("W/") { etag = String(etag.dropFirst(2)) }
        etag = etag.trimmingCharacters(in: CharacterSet(charactersIn: "\"")).lowercased()
        guard !etag.isEmpty, etag.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
            throw PullError(.network, "\(endpoint) sent an unusable ETag '\(raw.prefix(80))' for \(file.path)", url: url.absoluteString)
        }
        let size = (r.header("x-linked-size") ?? (r.status == 200 ? r.header("content-length") : nil)).flatMap { Int($0) }
        return Head(commit: commit, etag: etag, size: size)
    }

    /// A refusal from the hub, in its words (X-Error-Code: RepoNotFound, GatedRepo, EntryNotFound…).
    static func repoError(_ r: PullResponse, body: Data, ref: PullName.HF, endpoint: String, hasToken: Bool, available: [String], file: String? = nil) -> PullError {
        let code = r.header("x-error-code") ?? ""
        let text = PullHTTP.serverText(body)
        let said = text.isEmpty ? "" : ": \(text)"
        let what = "hf:\(ref.id)" + (file.map { " (\($0))" } ?? "")
        if code == "RepoNotFound" || (r.status == 404 && file == nil) {
            return PullError(.notFound, "no repository \(ref.id) at \(endpoint) (HTTP \(r.status))\(said)" + (hasToken ? "" : "; if it is private, set HF_TOKEN"),
                             url: r.url.absoluteString, status: r.status)
        }
        if r.status == 404 || code == "EntryNotFound" || code == "RevisionNotFound" {
            return PullError(.notFound, "\(what) is listed but \(endpoint) has no such file (HTTP \(r.status))\(said)"
                             + (available.isEmpty ? "" : "; quantizations listed: \(available.joined(separator: ", "))"),
                             available: available, url: r.url.absoluteString, status: r.status)
        }
        if r.status == 401 || r.status == 403 {
            let how = hasToken
                ? "the token in HF_TOKEN was refused: it must belong to an account that accepted the repository's terms at \(endpoint)/\(ref.id)"
                : "set HF_TOKEN to an access token of an account that accepted its terms at \(endpoint)/\(ref.id)"
            return PullError(.unauthorized, "\(what) is a gated or private repository (HTTP \(r.status)\(code.isEmpty ? "" : ", \(code)")): \(how)\(said.isEmpty ? "" : " (\(text))")",
                             url: r.url.absoluteString, status: r.status)
        }
        return PullHTTP.statusError(r.status, body: body, url: r.url, what: what, available: available)
    }

    // MARK: Names of files

    /// `Llama-3.2-3B-Instruct-Q4_K_M.gguf` → Q4_K_M; `model.Q8_0-00001-of-00002.gguf` → Q8_0;
    /// the last `-`/`.`-separated part that is a quantization label.
    static func quantization(of path: String) -> String? {
        var stem = (path as NSString).lastPathComponent
        if stem.lowercased().hasSuffix(".gguf") { stem = String(stem.dropLast(5)) }
        if let s = splitInfo(path) { stem = (s.base as NSString).lastPathComponent }
        for token in stem.split(whereSeparator: { $0 == "-" || $0 == "." }).reversed() {
            let u = token.uppercased()
            if isQuantLabel(u) { return u }
        }
        return nil
    }

    static func isQuantLabel(_ u: String) -> Bool {
        if ["BF16", "F16", "F32", "F64", "FP16", "FP32"].contains(u) { return true }
        var rest = Substring(u)
        if rest.hasPrefix("MXFP4") {
            rest = rest.dropFirst(5)
        } else {
            guard let p = ["IQ", "TQ", "Q"].first(where: { rest.hasPrefix($0) }) else { return false }
            rest = rest.dropFirst(p.count)
            guard let d = rest.first, d.isASCII, d.isNumber else { return false }
            rest = rest.dropFirst()
        }
        if rest.isEmpty { return true }
        guard rest.first == "_" else { return false }
        return rest.dropFirst().split(separator: "_", omittingEmptySubsequences: false).allSatisfy {
            !$0.isEmpty && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
        }
    }

    /// A quantization asked for by a name that is not a plain label (`UD-Q4_K_XL`): the
    /// file's stem ends with it, after a separator.
    static func stemHasToken(_ f: RepoFile, _ asked: String) -> Bool {
        var stem = ((f.split?.base ?? f.path) as NSString).lastPathComponent.uppercased()
        if stem.hasSuffix(".GGUF") { stem = String(stem.dropLast(5)) }
        guard stem.hasSuffix(asked), stem.count > asked.count else { return stem == asked }
        let before = stem[stem.index(stem.endIndex, offsetBy: -asked.count - 1)]
        return before == "-" || before == "." || before == "_"
    }

    /// `…-00002-of-00003.gguf` → (…, 2, 3).
    static func splitInfo(_ path: String) -> (base: String, index: Int, count: Int)? {
        guard path.lowercased().hasSuffix(".gguf") else { return nil }
        let stem = path.dropLast(5)
        guard stem.count > 15 else { return nil }
        let tail = stem.suffix(15)  // -00001-of-00003
        let chars = Array(tail)
        guard chars[0] == "-", String(chars[6...9]) == "-of-",
              let index = Int(String(chars[1...5])), let count = Int(String(chars[10...14])),
              chars[1...5].allSatisfy(\.isNumber), chars[10...14].allSatisfy(\.isNumber),
              index >= 1, count >= 1, index <= count else { return nil }
        return (String(stem.dropLast(15)), index, count)
    }

    // MARK: The environment and the cache

    static func cacheDir(_ env: StoreEnvironment) -> String {
        let v = env.variables
        if let c = nonEmpty(v["HF_HUB_CACHE"]) ?? nonEmpty(v["HUGGINGFACE_HUB_CACHE"]) { return expand(c, env) }
        return hfHome(env) + "/hub"
    }

    static func hfHome(_ env: StoreEnvironment) -> String {
        let v = env.variables
        if let h = nonEmpty(v["HF_HOME"]) { return expand(h, env) }
        return expand(nonEmpty(v["XDG_CACHE_HOME"]) ?? env.home + "/.cache", env) + "/huggingface"
    }

    /// HF_TOKEN (or the older HUGGING_FACE_HUB_TOKEN), else the file `huggingface-cli login` writes.
    static func token(_ env: StoreEnvironment) -> String? {
        let v = env.variables
        if let t = nonEmpty(v["HF_TOKEN"]) ?? nonEmpty(v["HUGGING_FACE_HUB_TOKEN"]) { return t.trimmingCharacters(in: .whitespacesAndNewlines) }
        let path = nonEmpty(v["HF_TOKEN_PATH"]).map { expand($0, env) } ?? hfHome(env) + "/token"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return nonEmpty(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    static func expand(_ path: String, _ env: StoreEnvironment) -> String {
        path == "~" ? env.home : path.hasPrefix("~/") ? env.home + path.dropFirst(1) : path
    }

    static func nonEmpty(_ s: String?) -> String? {
        guard let s, !s.isEmpty else { return nil }
        return s
    }

    static func isHex(_ s: String, _ count: Int) -> Bool {
        s.count == count && s.allSatisfy { $0.isHexDigit && !$0.isUppercase }
    }

    static func encodePath(_ path: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#;")
        return path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path
    }

    /// `<url>; rel="next"` from a Link header.
    static func linkNext(_ header: String?, relativeTo base: URL) -> URL? {
        guard let header else { return nil }
        for part in header.split(separator: ",") {
            let fields = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let first = fields.first, first.hasPrefix("<"), first.hasSuffix(">"),
                  fields.dropFirst().contains(where: { $0.replacingOccurrences(of: "\"", with: "").lowercased() == "rel=next" }) else { continue }
            return URL(string: String(first.dropFirst().dropLast()), relativeTo: base)?.absoluteURL
        }
        return nil
    }

    /// A relative symlink at `path` to `target` (replacing whatever is there unless it is that link already).
    static func symlink(_ target: String, at path: String) throws(PullError) {
        var buf = [CChar](repeating: 0, count: 4096)
        let n = readlink(path, &buf, buf.count - 1)
        if n >= 0 {
            if String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) == target { return }
            unlink(path)
        } else if BlobDownloader.fileSize(path) != nil {
            unlink(path)
        }
        #if canImport(Glibc)
        let made = Glibc.symlink(target, path)
        #else
        let made = Darwin.symlink(target, path)
        #endif
        guard made == 0 else { throw BlobDownloader.fileError("cannot make the symlink \(path)", errno, path: path, remaining: 0) }
    }

    static func writeAtomically(_ path: String, _ text: String) throws(PullError) {
        if (try? String(contentsOfFile: path, encoding: .utf8)) == text { return }
        try BlobDownloader.writeFileAtomically(path, Data(text.utf8))
    }
}
