import Foundation
import ParlanceJSON

/// Human-readable text for each result (one small renderer per result type; `fields` for
/// the analyses, whose results are lists of named things). Plain text: the same on a
/// terminal and in a pipe, and the text beside an MCP tool's structured result.
public enum Render {
    /// Result fields that say how a result was made, not what it says (kept for --json).
    static let bookkeeping: Set<String> = ["usage", "provenance", "verification", "cached", "chunks", "language", "fallbackFrom", "uri"]

    /// One line for each part of a result that did not pass its checks (the result's own
    /// `verification`, each variation's), saying which checks failed; empty when all passed.
    /// The command line prints these on stderr, `parlance mcp` after the tool's text, so a
    /// result that did not pass is never shown as if it had.
    public static func notPassed(_ r: JSONValue) -> [String] {
        var lines: [String] = []
        func note(_ label: String, _ v: JSONValue?) {
            guard let v, v["passed"]?.boolValue == false else { return }
            let open = (v["issues"]?.arrayValue ?? []).filter { $0["repaired"]?.boolValue != true }
            let what = open.compactMap { $0["message"]?.stringValue }.joined(separator: "; ")
            let attempts = v["attempts"]?.intValue.map { " after \($0) attempt\($0 == 1 ? "" : "s")" } ?? ""
            lines.append("\(label) did not pass its checks\(attempts)" + (what.isEmpty ? "" : ": " + what))
        }
        note("the result", r["verification"])
        for v in r["variations"]?.arrayValue ?? [] {
            note("the \(v["tone"]?.stringValue ?? "") rewrite", v["verification"])
        }
        return lines
    }

    /// What a result says of its language, for people: the fallback it took (`fallbackFrom`)
    /// or the risk it kept (`provenance.languageRisk`); empty when it wrote as asked.
    public static func languageNotes(_ r: JSONValue) -> [String] {
        if let risk = r["provenance"]?["languageRisk"]?["message"]?.stringValue { return [risk] }
        guard let from = r["fallbackFrom"]?.stringValue, let used = r["language"]?.stringValue else { return [] }
        return ["written in \(used), not \(from), which the model does not write well (--language-fallback keep writes \(from) anyway)"]
    }

    public static func summary(_ r: JSONValue) -> String {
        var s = (r["summary"]?.stringValue ?? "") + "\n"
        s += list("Main topics", r["mainTopics"], bullet: "•")
        s += list("Key takeaways", r["keyTakeaways"], bullet: "-")
        if let a = r["targetAudience"]?.stringValue, !a.isEmpty { s += "\nAudience: \(a)\n" }
        if let e = r["engagementLevel"]?.stringValue { s += "Engagement: \(e)\n" }
        return s
    }

    static func list(_ title: String, _ v: JSONValue?, bullet: String) -> String {
        guard let items = v?.arrayValue, !items.isEmpty else { return "" }
        return "\n\(title):\n" + items.map { "  \(bullet) \(text($0))\n" }.joined()
    }

    /// The citations after an answer: `[01:23-01:31] Speaker: text`.
    public static func citations(_ r: JSONValue) -> String {
        guard let cites = r["citations"]?.arrayValue, !cites.isEmpty else { return "" }
        return "\nSources:\n" + cites.map { c in
            var line = "  "
            if let uri = c["uri"]?.stringValue { line += documentName(uri) + " " }
            if let start = c["start"]?.doubleValue {
                line += "[\(time(start))" + (c["end"]?.doubleValue.map { "-" + time($0) } ?? "") + "] "
            } else if let id = c["segmentId"]?.intValue {
                line += "[segment \(id)] "
            }
            if let sp = c["speaker"]?.stringValue { line += sp + ": " }
            return line + (c["text"]?.stringValue ?? "") + "\n"
        }.joined()
    }

    /// A cited document as a person knows it: a file's name, else its uri.
    static func documentName(_ uri: String) -> String {
        guard let url = URL(string: uri), url.isFileURL, !url.lastPathComponent.isEmpty else { return uri }
        return url.lastPathComponent
    }

    static func time(_ seconds: Double) -> String { clock(wholeSeconds: Int(seconds), padMinutes: true) }

    /// `h:mm:ss`, or `m:ss` under an hour (`mm:ss` with `padMinutes`, as transcripts write times).
    public static func clock(wholeSeconds s: Int, padMinutes: Bool = false) -> String {
        s >= 3600 ? String(format: "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60) : String(format: padMinutes ? "%02d:%02d" : "%d:%02d", s / 60, s % 60)
    }

    public static func variations(_ vs: [JSONValue]) -> String {
        vs.enumerated().map { i, v in
            let score = v["formalityScore"]?.doubleValue.map { String(format: ", formality %.2f", $0) } ?? ""
            let missing = v["keyPointsMissing"]?.arrayValue?.count ?? 0
            let note = missing > 0 ? ", \(missing) key point\(missing == 1 ? "" : "s") missing" : ""
            return (i > 0 ? "\n" : "") + "[\(v["tone"]?.stringValue ?? "?")\(score)\(note)]\n" + (v["text"]?.stringValue ?? "") + "\n"
        }.joined()
    }

    public static func models(_ r: JSONValue) -> String {
        let rows = (r["models"]?.arrayValue ?? []).map { m -> [String] in
            let size = m["fileBytes"]?.intValue.map { bytes($0) } ?? (m["remote"] != nil ? "remote" : "-")
            let state = m["state"]?.stringValue ?? "?"
            let reason = m["reason"]?.stringValue.map { " (\($0))" } ?? ""
            return [(m["isDefault"]?.boolValue == true ? "* " : "  ") + (m["name"]?.stringValue ?? ""), state + reason, size, m["path"]?.stringValue ?? ""]
        }
        var out = table([["  NAME", "STATE", "SIZE", "PATH"]] + rows)
        let available = r["available"]?.arrayValue ?? []
        let sources: [(key: String, title: String)] = [
            ("ollama", "Ollama"), ("parlance", "Pulled by Parlance"), ("hf", "Hugging Face cache"), ("llamacpp", "llama.cpp cache"),
            ("lmstudio", "LM Studio"), ("gpt4all", "GPT4All"), ("folder", "Model folders (modelDirs)"),
        ]
        for (key, title) in sources {
            let group = available.filter { $0["source"]?.stringValue == key }
            guard !group.isEmpty else { continue }
            out += "\n\(title):\n"
            out += table([["  NAME", "ARCH", "PARAMS", "QUANT", "CTX", "SIZE", "MEMORY", "FITS", "NOTES"]] + group.map { m in
                var notes: [String] = []
                if m["chatTemplate"]?.boolValue == false { notes.append("no chat template (base model)") }
                if m["supported"]?.boolValue == false { notes.append("architecture not supported by this llama.cpp") }
                if let n = m["parts"]?.intValue, n > 1 { notes.append("\(n) parts") }
                let fits = m["fits"]?.boolValue.map { $0 ? "yes" : "no" } ?? "?"
                return ["  " + (m["name"]?.stringValue ?? ""), m["architecture"]?.stringValue ?? "?", m["parameters"]?.stringValue ?? "-",
                        m["quantization"]?.stringValue ?? "-", m["contextLength"]?.intValue.map(String.init) ?? "-",
                        m["fileBytes"]?.intValue.map { bytes($0) } ?? "-", m["estimatedBytes"]?.intValue.map { bytes($0) } ?? "-", fits,
                        notes.joined(separator: "; ")]
            })
        }
        if available.isEmpty {
            out += "\nNo models found in Ollama's store, the Hugging Face cache, llama.cpp's cache, LM Studio or GPT4All.\n"
        }
        out += "\nUse one: --model NAME, or `parlance models use NAME`; get one: `parlance models pull hf:ORG/REPO[:QUANT]` or `ollama:NAME[:TAG]`.\n"
        return out
    }

    /// A `model/pull` result.
    public static func pulled(_ r: JSONValue) -> String {
        let name = r["name"]?.stringValue ?? "?"
        let size = r["bytes"]?.intValue.map { bytes($0) } ?? "?"
        let how = r["downloaded"]?.boolValue == false ? "already complete on disk"
            : (r["resumedBytes"]?.intValue ?? 0) > 0 ? "downloaded (resumed after \(bytes(r["resumedBytes"]!.intValue!)))" : "downloaded"
        return "\(name): \(size), \(how)\n  path: \(r["path"]?.stringValue ?? "?")\n  sha256: \(r["sha256"]?.stringValue ?? "?")\n"
            + "  use it: --model \(name)\n"
    }

    static func table(_ rows: [[String]]) -> String {
        guard let n = rows.first?.count else { return "" }
        let widths = (0..<n).map { c in rows.map { $0[c].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { c, cell in c == n - 1 ? cell : cell.padding(toLength: widths[c] + 2, withPad: " ", startingAt: 0) }.joined() + "\n"
        }.joined()
    }

    static func bytes(_ n: Int) -> String {
        n >= 1 << 30 ? String(format: "%.1f GB", Double(n) / 1e9) : n >= 1 << 20 ? String(format: "%.0f MB", Double(n) / 1e6) : "\(n) B"
    }

    /// Any result: each field that is not bookkeeping, titled from its name, lists as
    /// bullets, objects as `name: value` lines.
    public static func fields(_ r: JSONValue) -> String {
        guard let o = r.objectValue else { return text(r) + "\n" }
        var out = ""
        for key in o.keys where !bookkeeping.contains(key) {
            guard let v = o[key] else { continue }
            let title = words(key)
            switch v {
            case .array(let items):
                if items.isEmpty { continue }
                out += "\(title):\n" + items.map { "  - " + text($0) + "\n" }.joined()
            case .object(let inner):
                out += "\(title):\n" + inner.keys.compactMap { k in
                    if k == "endpoints", let eps = inner[k]?.arrayValue { return poolEndpoints(eps) }
                    return inner[k].map { "  \(words(k)): \(text($0))\n" }
                }.joined()
            case .null: continue
            default:
                out += "\(title): \(text(v))\n"
            }
        }
        return out
    }

    /// A pool's endpoints (`model/status` `remote.endpoints`), one line each.
    static func poolEndpoints(_ eps: [JSONValue]) -> String {
        "  Endpoints:\n" + eps.map { e in
            func n(_ k: String) -> Int { e[k]?.intValue ?? 0 }
            var line = "    \(e["endpoint"]?.stringValue ?? "?") (\(e["url"]?.stringValue ?? "")): \(e["health"]?.stringValue ?? "?"), circuit \(e["circuit"]?.stringValue ?? "?"), "
                + "\(n("inFlight"))/\(n("capacity")) in flight, \(n("requestsServed")) served, \(n("prefixCacheHits")) prefix-cache hits, \(n("failures")) failures"
            if n("othersInFlight") > 0 { line += ", \(n("othersInFlight")) more from other clients" }
            if let w = e["weight"]?.doubleValue, w != 1 { line += String(format: ", weight %g", w) }
            if let l = e["lastError"]?.stringValue { line += "; last error: \(l)" }
            return line + "\n"
        }.joined()
    }

    /// One value on one line: strings as they are, an object as its most telling fields.
    static func text(_ v: JSONValue) -> String {
        switch v {
        case .string(let s): return s
        case .int(let n): return String(n)
        case .double(let d): return String(format: "%g", d)
        case .bool(let b): return b ? "yes" : "no"
        case .null: return "-"
        case .array(let a): return a.map(text).joined(separator: ", ")
        case .object(let o):
            let main = ["name", "text", "title", "quote", "moment", "item", "theme", "insight", "question"].first { o[$0] != nil }
            let head = main.flatMap { o[$0] }.map(text) ?? ""
            let rest = o.keys.filter { $0 != main && !bookkeeping.contains($0) }.compactMap { k -> String? in
                guard let x = o[k], x != .null else { return nil }
                if case .array(let a) = x, a.isEmpty { return nil }
                return "\(words(k)): \(text(x))"
            }
            return ([head].filter { !$0.isEmpty } + (rest.isEmpty ? [] : ["(" + rest.joined(separator: "; ") + ")"])).joined(separator: " ")
        }
    }

    /// `keyTakeaways` → `Key takeaways`.
    static func words(_ key: String) -> String {
        let w = kebab(key).replacingOccurrences(of: "-", with: " ")
        return w.prefix(1).uppercased() + w.dropFirst()
    }

    /// `keyTakeaways` → `key-takeaways`: a field's name as words (titles here, and the
    /// command line's options for a method's params).
    public static func kebab(_ s: String) -> String {
        var out = ""
        for c in s {
            if c.isUppercase { out += "-" + c.lowercased() } else { out.append(c) }
        }
        return out
    }
}

extension Render {
    /// document/segments' page, one line per segment: `[12] 00:03:14 MAYA: text` (a timed
    /// transcript), `[12] MAYA: text` (plain text). The time is always `hh:mm:ss`, so the
    /// lines of a long recording line up and sort.
    public static func segments(_ r: JSONValue) -> String {
        (r["segments"]?.arrayValue ?? []).map { s in
            var line = "[\(s["id"]?.intValue ?? 0)] "
            if let start = s["start"]?.doubleValue {
                let t = Int(start)
                line += String(format: "%02d:%02d:%02d ", t / 3600, t / 60 % 60, t % 60)
            }
            if let sp = s["speaker"]?.stringValue { line += sp + ": " }
            return line + (s["text"]?.stringValue ?? "") + "\n"
        }.joined()
    }
}

extension Render {
    /// analysis/chapters' result as a video description's chapter list, one `00:00 Title`
    /// line per chapter (`1:02:03` past an hour). The first line is 00:00, as YouTube wants
    /// it, whenever the transcript starts; a plain-text document, without times, gets its
    /// first segment's number instead (`[12] Title`).
    public static func chapters(_ r: JSONValue) -> String {
        (r["chapters"]?.arrayValue ?? []).enumerated().map { i, c in
            let title = c["title"]?.stringValue ?? ""
            guard let start = c["start"]?.doubleValue else { return "[\(c["startSegmentId"]?.intValue ?? 0)] \(title)\n" }
            return clock(wholeSeconds: i == 0 ? 0 : Int(start), padMinutes: true) + " " + title + "\n"
        }.joined()
    }

    /// Any analysis's result as text: chapters as their list, others field by field.
    public static func analysis(_ r: JSONValue) -> String { r["chapters"] != nil ? chapters(r) : fields(r) }
}

extension Render {
    /// analysis/cache/list's entries as a table, newest first: when, what, which model and
    /// language, the document (its uri, else the start of its content hash), and a mark on
    /// entries of other checks versions (never served).
    public static func cacheEntries(_ r: JSONValue) -> String {
        let entries = r["entries"]?.arrayValue ?? []
        let total = r["total"]?.intValue ?? entries.count
        var rows = [["CREATED", "METHOD", "MODEL", "LANG", "SIZE", "DOCUMENT"]]
        for e in entries {
            let document = e["uri"]?.stringValue
                ?? (e["contentHashes"]?.arrayValue ?? []).compactMap { $0.stringValue.map { String($0.prefix(12)) } }.joined(separator: ",")
            let stale = e["current"]?.boolValue == false ? " (checks \(e["checksVersion"]?.intValue ?? 0), not served)" : ""
            rows.append([String((e["createdAt"]?.stringValue ?? "").prefix(19)).replacingOccurrences(of: "T", with: " "),
                         (e["method"]?.stringValue ?? "?") + stale, e["model"]?.stringValue ?? "-", e["language"]?.stringValue ?? "-",
                         bytes(e["bytes"]?.intValue ?? 0), document])
        }
        var out = entries.isEmpty ? "" : table(rows)
        let shown = entries.count < total ? "\(entries.count) of \(total) entries" : "\(total) entr\(total == 1 ? "y" : "ies")"
        out += "\(shown), \(bytes(r["totalBytes"]?.intValue ?? 0))"
        if let u = r["unlabelled"]?.intValue, u > 0 { out += "; \(u) older entr\(u == 1 ? "y" : "ies") not listed (cache clear --all removes them)" }
        return out + "\n"
    }
}
