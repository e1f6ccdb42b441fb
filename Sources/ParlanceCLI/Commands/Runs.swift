import Foundation
import JSONRPC
import ParlanceInProcess
import ParlanceJSON
import ParlanceMCPServer
import ParlanceProtocol

/// What each command does: build the method's params, send them through the in-process
/// server, render the result (`--json`: the result exactly as JSON-RPC returns it).
enum Runs {
    static func summarize(_ inv: Invocation) async throws -> Int32 {
        let files = inv.positionals
        var code: Int32 = 0
        for (i, file) in files.enumerated() {
            var p = inv.params
            p["text"] = .string(try Input.read(file))
            let r = try await inv.session.request(Summarize.name, p)
            if inv.json {
                inv.session.terminal.out(r.serialized() + "\n")
            } else {
                if files.count > 1 { inv.session.terminal.out((i > 0 ? "\n" : "") + "==> \(file) <==\n") }
                inv.session.terminal.out(Render.summary(r))
            }
            code = max(code, checked(r, inv, label: files.count > 1 ? file : nil))
        }
        return code
    }

    /// `parlance ask FILE QUESTION`: the file's text; `parlance ask FILE FILE... QUESTION`:
    /// each file opened as a document (its file:// uri) and the question asked over their uris.
    static func ask(_ inv: Invocation) async throws -> Int32 {
        var p = inv.params
        let files = Array(inv.positionals.dropLast())
        if files.count == 1 {
            p["text"] = .string(try Input.read(files[0]))
        } else {
            if files.filter({ $0 == "-" }).count > 1 { throw UsageError("ask reads stdin (-) once", command: "ask") }
            var uris: [JSONValue] = []
            for f in files { uris.append(.string(try await open(file: f, inv))) }
            p["uris"] = .array(uris)
        }
        p["question"] = .string(inv.positionals.last!)
        let view = inv.streams ? StreamView(inv.session.terminal) : nil
        let r = try await inv.session.request(AskStream.name, p, view: view)
        if inv.json { inv.session.terminal.out(r.serialized() + "\n"); return checked(r, inv) }
        finish(view, inv, r["answer"]?.stringValue ?? "")
        inv.session.terminal.out(Render.citations(r))
        return checked(r, inv)
    }

    static func rewrite(_ inv: Invocation) async throws -> Int32 {
        var p = inv.params
        let text: String
        if let t = inv.positionals.first, t != "-" { text = t } else if inv.positionals.first == "-" || isatty(STDIN_FILENO) == 0 {
            text = try Input.read("-")
        } else {
            throw UsageError("rewrite needs TEXT, or text on stdin (-)", command: "rewrite")
        }
        p["text"] = .string(text)
        let tones = p["tones"]?.arrayValue?.count ?? 0
        let view = inv.streams && tones <= 1 ? StreamView(inv.session.terminal, parts: true, skip: ["analysis", "prefix"]) : nil
        let r = try await inv.session.request(ComposeVariations.name, p, view: view)
        if inv.json { inv.session.terminal.out(r.serialized() + "\n"); return checked(r, inv) }
        let variations = r["variations"]?.arrayValue ?? []
        if variations.count == 1, tones <= 1 {
            finish(view, inv, variations[0]["text"]?.stringValue ?? "")
        } else {
            inv.session.terminal.out(Render.variations(variations))
        }
        return checked(r, inv)
    }

    static func analyze(_ inv: Invocation) async throws -> Int32 {
        guard let kind = AnalysisKinds.all.first(where: { $0.word == inv.positionals[0] }) else {
            throw UsageError("analyze takes one of \(AnalysisKinds.all.map(\.word).joined(separator: ", ")), got '\(inv.positionals[0])'", command: "analyze")
        }
        var p = inv.params
        p["text"] = .string(try Input.read(inv.positionals[1]))
        let r = try await inv.session.request(kind.method.name, p)
        inv.session.terminal.out(inv.json ? r.serialized() + "\n" : Render.analysis(r))
        return checked(r, inv)
    }

    static func compare(_ inv: Invocation) async throws -> Int32 {
        var p = inv.params
        p["documents"] = .array(try inv.positionals.map { f in
            .object(JSONObject([("text", .string(try Input.read(f))), ("title", .string(f == "-" ? "stdin" : URL(fileURLWithPath: f).lastPathComponent))]))
        })
        let r = try await inv.session.request(AnalyzeCompare.name, p)
        inv.session.terminal.out(inv.json ? r.serialized() + "\n" : Render.fields(r))
        return checked(r, inv)
    }

    /// `parlance segments FILE`: every segment from --offset (one page of --limit when
    /// given), as lines or as document/segments' JSON.
    static func segments(_ inv: Invocation) async throws -> Int32 {
        var p = inv.params
        p["text"] = .string(try Input.read(inv.positionals[0]))
        let onePage = p["limit"] != nil
        if !onePage { p["limit"] = .int(segmentsPage) }
        while true {
            let r = try await inv.session.request(DocumentSegments.name, p, progress: false)
            inv.session.terminal.out(inv.json ? r.serialized() + "\n" : Render.segments(r))
            guard !onePage, let next = r["nextOffset"]?.intValue else { return 0 }
            p["offset"] = .int(next)
            p["includeText"] = false
        }
    }

    /// Opens FILE as a document under its file:// uri (stdin: `stdin:`); the uri.
    static func open(file: String, _ inv: Invocation) async throws -> String {
        let uri = file == "-" ? "stdin:" : URL(fileURLWithPath: file).standardizedFileURL.absoluteString
        _ = try await inv.session.request(DocumentOpen.name, JSONObject([("uri", .string(uri)), ("text", .string(try Input.read(file)))]), progress: false)
        return uri
    }

    /// `parlance cache list [FILE]` and `parlance cache clear FILE | --all | --content-hash H`.
    /// FILE is opened as a document (its file:// uri), so its entries are those of its text.
    static func cache(_ inv: Invocation) async throws -> Int32 {
        var p = inv.params
        let sub = inv.positionals[0]
        guard sub == "list" || sub == "clear" else { throw UsageError("cache takes list or clear, got '\(sub)'", command: "cache") }
        if inv.positionals.count == 2 {
            p["uri"] = .string(try await open(file: inv.positionals[1], inv))
        }
        if sub == "list" {
            if p["all"] != nil { throw UsageError("cache list takes no --all (it lists every entry without FILE)", command: "cache") }
            if let n = inv.own["--limit"] {
                guard let v = Int(n) else { throw UsageError("--limit must be an integer, got '\(n)'", command: "cache") }
                p["limit"] = .int(v)
            }
            let r = try await inv.session.request(AnalysisCacheList.name, p, progress: false)
            inv.session.terminal.out(inv.json ? r.serialized() + "\n" : Render.cacheEntries(r))
            return 0
        }
        if inv.own["--limit"] != nil { throw UsageError("--limit is for cache list", command: "cache") }
        if p["uri"] == nil, p["all"] == nil, p["contentHash"] == nil {
            throw UsageError("cache clear takes FILE, --all or --content-hash HASH", command: "cache")
        }
        let r = try await inv.session.request(AnalysisCacheClear.name, p, progress: false)
        let n = r["removed"]?.intValue ?? 0
        inv.session.terminal.out(inv.json ? r.serialized() + "\n" : "removed \(n) entr\(n == 1 ? "y" : "ies")\n")
        return 0
    }

    /// The largest page document/segments gives (its params' `limit` maximum).
    static let segmentsPage = DocumentSegments.paramsSchema["properties"]?["limit"]?["maximum"]?.intValue ?? 500

    static func models(_ inv: Invocation) async throws -> Int32 {
        let t = inv.session.terminal
        switch inv.positionals.first {
        case "pull":
            guard inv.positionals.count == 2 else { throw UsageError("models pull takes one model: hf:ORG/REPO[:QUANT] or ollama:NAME[:TAG]", command: "models") }
            var lines: (@Sendable (ParlanceProtocol.Progress.Value) -> Void)? = nil
            if inv.json { lines = { (v: ParlanceProtocol.Progress.Value) in t.out(v.json.serialized() + "\n") } }
            let r = try await inv.session.request(ModelPull.name, JSONObject([("model", .string(inv.positionals[1]))]), lines: lines)
            t.out(inv.json ? r.serialized() + "\n" : Render.pulled(r))
            return 0
        case "use":
            guard inv.positionals.count == 2 else { throw UsageError("models use takes one model name", command: "models") }
            return try await ModelsUse.run(inv.positionals[1], inv)
        default:
            guard inv.positionals.count <= 1 else {
                throw UsageError("models takes at most one model name (or pull NAME, use NAME), got \(inv.positionals.count) arguments", command: "models")
            }
        }
        if let name = inv.positionals.first {
            let r = try await inv.session.request(ModelStatus.name, JSONObject([("model", .string(name))]), progress: false)
            t.out(inv.json ? r.serialized() + "\n" : Render.fields(r))
        } else {
            let r = try await inv.session.request(ModelList.name, JSONObject(), progress: false)
            t.out(inv.json ? r.serialized() + "\n" : Render.models(r))
        }
        return 0
    }

    static func chat(_ inv: Invocation) async throws -> Int32 {
        let t = inv.session.terminal
        var schema: JSONValue? = nil
        if let path = inv.own["--schema"] {
            do { schema = try JSONParser.parse(Array(try Input.read(path).utf8)) } catch let e as UsageError { throw e } catch {
                throw UsageError("--schema \(path) is not JSON: \(error)", command: "chat")
            }
        }
        var options = JSONObject()
        if let n = inv.own["--max-tokens"] {
            guard let v = Int(n) else { throw UsageError("--max-tokens must be an integer, got '\(n)'", command: "chat") }
            options["maxTokens"] = .int(v)
        }
        let created = try await inv.session.request(SessionCreate.name, inv.params, progress: false)  // takes no workDoneToken
        guard let id = created["sessionId"]?.stringValue else { throw UsageError("session/create answered no sessionId") }
        let interactive = isatty(STDIN_FILENO) == 1
        while true {
            if interactive { t.err("> ") }
            guard let line = readLine() else { break }
            if line.trimmingCharacters(in: .whitespaces).isEmpty { continue }
            var p = JSONObject([("sessionId", .string(id)), ("prompt", .string(line))])
            if let schema { p["schema"] = schema }
            if !options.isEmpty { p["options"] = .object(options) }
            let view = inv.streams && schema == nil ? StreamView(t) : nil
            do {
                let r = try await inv.session.request(SessionRespond.name, p, view: view)
                if inv.json { t.out(r.serialized() + "\n") } else if schema != nil {
                    t.out((r["content"] ?? .null).serialized(pretty: true) + "\n")
                } else {
                    finish(view, inv, r["text"]?.stringValue ?? "")
                }
            } catch let f as RequestFailure where f.code == -32800 {
                t.out("\n")  // Ctrl-C stopped this answer; the session goes on
            }
        }
        if interactive { t.err("\n") }
        return 0
    }
}

extension Runs {
    /// `parlance mcp`: the MCP server (ParlanceMCPServer) on stdin/stdout, over the daemon's
    /// server in this process, built from the same options and config file.
    static func mcp(_ inv: Invocation) async throws -> Int32 {
        let settings = inv.session.settings
        let log = settings.startLogging()
        let connection = Connection.stdio(maxMessageSize: settings.maxMessage)
        try await MCPServer.serve(on: connection, client: try settings.inProcessClient(log: log), log: log)
        return 0
    }

    /// Says on stderr, one line each, which parts of `r` did not pass their checks (piped or
    /// not, with `--json` too); the exit code: `CLI.notPassed` with `--strict` when one did not.
    static func checked(_ r: JSONValue, _ inv: Invocation, label: String? = nil) -> Int32 {
        let lines = Render.notPassed(r)
        for line in lines { inv.session.terminal.err("parlance: warning: " + (label.map { "\($0): " } ?? "") + line + "\n") }
        for line in Render.languageNotes(r) { inv.session.terminal.err("parlance: note: " + (label.map { "\($0): " } ?? "") + line + "\n") }
        return inv.strict && !lines.isEmpty ? CLI.notPassed : 0
    }

    /// Ends streamed text with the result's own (replacing what was streamed when they
    /// differ), or prints the result's text when nothing streamed.
    static func finish(_ view: StreamView?, _ inv: Invocation, _ text: String) {
        if let view { view.finish(with: text) } else { inv.session.terminal.out(text.hasSuffix("\n") ? text : text + "\n") }
    }
}
