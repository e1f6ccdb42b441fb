import Foundation
#if canImport(ParlanceJSON)
import ParlanceJSON
#endif

/// One way a value fails a schema. `message` names the field, what was expected and what
/// was got; it goes verbatim into JSON-RPC -32602 errors.
public struct SchemaViolation: Sendable, Equatable, CustomStringConvertible {
    /// Where: `"(root)"`, `"options.temperature"`, `"tones[1]"`. For a missing or unknown
    /// field, the field's own path.
    public var path: String
    /// The failing keyword (`"type"`, `"required"`, `"additionalProperties"`, `"enum"`…).
    public var keyword: String
    public var message: String
    public var description: String { message }

    public init(path: String, keyword: String, message: String) {
        self.path = path
        self.keyword = keyword
        self.message = message
    }
}

/// A JSON Schema validator for the subset Parlance uses.
///
/// Checked: `type` (string or array, `"null"` included; an integral double is an integer),
/// `properties`, `required`, `additionalProperties` (bool or schema), `items` (schema, or
/// an array of schemas applied by position), `minItems`, `maxItems`, `uniqueItems`, `enum`,
/// `const`, `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum` (number, or the
/// draft-4 boolean form), `minLength`, `maxLength` (in Unicode code points), `pattern`
/// (NSRegularExpression, unanchored), `anyOf`, `oneOf`, and boolean schemas.
/// Annotations and every other keyword are ignored.
///
/// A value of the wrong `type` gets only that violation; otherwise every violation is
/// reported, in order: the value's own keywords, then `required`, then properties in
/// schema order, then unknown fields in value order.
public enum SchemaValidator {
    /// Deeper nesting is reported as a violation instead of recursing further.
    public static let maxDepth = 300

    public static func validate(_ value: JSONValue, against schema: JSONValue) -> [SchemaViolation] {
        let run = Run()
        var out: [SchemaViolation] = []
        run.check(value, schema, "(root)", 0, into: &out)
        return out
    }
}

private final class Run {
    /// Bounds work on adversarial schemas (nested `anyOf` multiplies).
    var budget = 2_000_000

    func check(_ value: JSONValue, _ schema: JSONValue, _ path: String, _ depth: Int, into out: inout [SchemaViolation]) {
        budget -= 1
        guard depth <= SchemaValidator.maxDepth, budget > 0 else {
            if budget == 0 || depth == SchemaValidator.maxDepth + 1 {
                out.append(.init(path: path, keyword: "depth", message: "\(path): too deeply nested or too complex to validate"))
            }
            return
        }
        let o: JSONObject
        switch schema {
        case .bool(false):
            out.append(.init(path: path, keyword: "false", message: "\(path): no value is allowed here"))
            return
        case .object(let obj): o = obj
        default: return
        }
        if let names = Self.typeNames(o["type"]), !names.contains(where: { SchemaSupport.isInstance(value, of: $0) }) {
            let got = value.typeName
            out.append(.init(path: path, keyword: "type", message: "\(path): expected \(names.joined(separator: " or ")), got \(got)"))
            return
        }
        if case .array(let e)? = o["enum"], !e.contains(where: { SchemaSupport.equal(value, $0) }) {
            let list = e.prefix(20).map(SchemaSupport.listItem).joined(separator: ", ") + (e.count > 20 ? ", …" : "")
            out.append(.init(path: path, keyword: "enum", message: "\(path): \(SchemaSupport.render(value)) is not one of \(list)"))
        }
        if let c = o["const"], !SchemaSupport.equal(value, c) {
            out.append(.init(path: path, keyword: "const",
                             message: "\(path): expected \(SchemaSupport.render(c)), got \(SchemaSupport.render(value))"))
        }
        switch value {
        case .int, .double: checkNumber(value, o, path, into: &out)
        case .string(let s): checkString(s, o, path, into: &out)
        case .array(let a): checkArray(a, o, path, depth, into: &out)
        case .object(let obj): checkObject(obj, o, path, depth, into: &out)
        default: break
        }
        if case .array(let alts)? = o["anyOf"] { checkAlternatives(value, alts, "anyOf", path, depth, into: &out) }
        if case .array(let alts)? = o["oneOf"] { checkAlternatives(value, alts, "oneOf", path, depth, into: &out) }
    }

    static func typeNames(_ t: JSONValue?) -> [String]? {
        switch t {
        case .string(let s)?: return [s]
        case .array(let a)?:
            let names = a.compactMap(\.stringValue)
            return names.isEmpty ? nil : names
        default: return nil
        }
    }

    func checkNumber(_ v: JSONValue, _ o: JSONObject, _ path: String, into out: inout [SchemaViolation]) {
        let exclusiveMinFlag = o["exclusiveMinimum"] == .bool(true)
        let exclusiveMaxFlag = o["exclusiveMaximum"] == .bool(true)
        func bound(_ keyword: String, _ limit: JSONValue?, _ op: String, _ fails: (ComparisonResult) -> Bool) {
            guard let limit = SchemaSupport.number(limit), let c = SchemaSupport.compare(v, limit), fails(c) else { return }
            out.append(.init(path: path, keyword: keyword,
                             message: "\(path): must be \(op) \(SchemaSupport.format(limit)), got \(SchemaSupport.format(v))"))
        }
        if exclusiveMinFlag {
            bound("minimum", o["minimum"], ">") { $0 != .orderedDescending }
        } else {
            bound("minimum", o["minimum"], "≥") { $0 == .orderedAscending }
        }
        if exclusiveMaxFlag {
            bound("maximum", o["maximum"], "<") { $0 != .orderedAscending }
        } else {
            bound("maximum", o["maximum"], "≤") { $0 == .orderedDescending }
        }
        bound("exclusiveMinimum", o["exclusiveMinimum"], ">") { $0 != .orderedDescending }
        bound("exclusiveMaximum", o["exclusiveMaximum"], "<") { $0 != .orderedAscending }
    }

    func checkString(_ s: String, _ o: JSONObject, _ path: String, into out: inout [SchemaViolation]) {
        let n = s.unicodeScalars.count
        if let min = SchemaSupport.count(o["minLength"]), n < min {
            out.append(.init(path: path, keyword: "minLength",
                             message: "\(path): must be at least \(min) characters long, got \(n)"))
        }
        if let max = SchemaSupport.count(o["maxLength"]), n > max {
            out.append(.init(path: path, keyword: "maxLength",
                             message: "\(path): must be at most \(max) characters long, got \(n)"))
        }
        if case .string(let p)? = o["pattern"] {
            guard let re = try? NSRegularExpression(pattern: p) else {
                out.append(.init(path: path, keyword: "pattern", message: "\(path): the schema's pattern \(p) is not a valid regular expression"))
                return
            }
            if re.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) == nil {
                out.append(.init(path: path, keyword: "pattern",
                                 message: "\(path): \(SchemaSupport.render(.string(s))) does not match the pattern \(p)"))
            }
        }
    }

    func checkArray(_ a: [JSONValue], _ o: JSONObject, _ path: String, _ depth: Int, into out: inout [SchemaViolation]) {
        if let min = SchemaSupport.count(o["minItems"]), a.count < min {
            out.append(.init(path: path, keyword: "minItems", message: "\(path): must have at least \(min) items, got \(a.count)"))
        }
        if let max = SchemaSupport.count(o["maxItems"]), a.count > max {
            out.append(.init(path: path, keyword: "maxItems", message: "\(path): must have at most \(max) items, got \(a.count)"))
        }
        if o["uniqueItems"] == .bool(true) {
            search: for i in a.indices {
                for j in a.indices where j > i && SchemaSupport.equal(a[i], a[j]) {
                    out.append(.init(path: path, keyword: "uniqueItems", message: "\(path): items \(i) and \(j) are equal"))
                    break search
                }
            }
        }
        switch o["items"] {
        case .array(let schemas)?:
            for (i, (v, s)) in zip(a, schemas).enumerated() { check(v, s, Self.index(path, i), depth + 1, into: &out) }
        case let s?:
            for (i, v) in a.enumerated() { check(v, s, Self.index(path, i), depth + 1, into: &out) }
        case nil: break
        }
    }

    func checkObject(_ obj: JSONObject, _ o: JSONObject, _ path: String, _ depth: Int, into out: inout [SchemaViolation]) {
        if case .array(let req)? = o["required"] {
            for case .string(let name) in req where obj[name] == nil {
                let p = Self.child(path, name)
                out.append(.init(path: p, keyword: "required", message: "missing required field '\(p)'"))
            }
        }
        let props = o["properties"]?.objectValue ?? JSONObject()
        for (name, s) in props {
            if let v = obj[name] { check(v, s, Self.child(path, name), depth + 1, into: &out) }
        }
        guard let extra = o["additionalProperties"] else { return }
        for (name, v) in obj where props[name] == nil {
            let p = Self.child(path, name)
            if extra == .bool(false) {
                out.append(.init(path: p, keyword: "additionalProperties", message: "unknown field '\(p)'"))
            } else {
                check(v, extra, p, depth + 1, into: &out)
            }
        }
    }

    func checkAlternatives(_ v: JSONValue, _ alts: [JSONValue], _ keyword: String, _ path: String, _ depth: Int,
                           into out: inout [SchemaViolation])
    {
        var results: [[SchemaViolation]] = []
        for s in alts {
            var r: [SchemaViolation] = []
            check(v, s, path, depth + 1, into: &r)
            results.append(r)
        }
        let matches = results.filter(\.isEmpty).count
        if matches == 1 || (matches > 1 && keyword == "anyOf") { return }
        if matches > 1 {
            out.append(.init(path: path, keyword: keyword, message: "\(path): matches \(matches) alternatives, expected exactly one"))
            return
        }
        // No alternative matched. If some alternative has the value's type, its complaints are
        // the useful ones; if none has, say which types would do.
        let typed = results.enumerated().filter { _, r in !r.contains { $0.keyword == "type" && $0.path == path } }
        if let best = typed.min(by: { $0.element.count < $1.element.count }) {
            out.append(contentsOf: best.element)
            return
        }
        var expected: [String] = []
        for s in alts {
            for name in Self.typeNames(s["type"]) ?? [] where !expected.contains(name) { expected.append(name) }
        }
        let what = expected.isEmpty ? "a value matching one of the alternatives" : expected.joined(separator: " or ")
        out.append(.init(path: path, keyword: "type", message: "\(path): expected \(what), got \(v.typeName)"))
    }

    /// `a.b` for a plain name; `a["b.c"]` (JSON-quoted) for one that is empty or holds other
    /// characters, so every path is non-empty and reads back unambiguously.
    static func child(_ path: String, _ name: String) -> String {
        if isPlain(name) { return path == "(root)" ? name : "\(path).\(name)" }
        let quoted = "[\(JSONValue.string(name).serialized())]"
        return path == "(root)" ? quoted : path + quoted
    }
    static func isPlain(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first == "_" || first == "$" || first.properties.isAlphabetic else { return false }
        return name.unicodeScalars.allSatisfy { $0 == "_" || $0 == "$" || $0 == "-" || $0.properties.isAlphabetic || ("0"..."9").contains($0) }
    }
    static func index(_ path: String, _ i: Int) -> String { path == "(root)" ? "[\(i)]" : "\(path)[\(i)]" }
}
