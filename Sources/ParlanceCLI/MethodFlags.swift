import ParlanceJSON

/// A command's flags for a method's params, derived from the params' JSON Schema (itself
/// derived from the method's Swift types): `maxTokens` becomes `--max-tokens N`, an enum
/// lists its values, an array of strings is a repeatable flag named in the singular
/// (`tones` → `--tone T`), a boolean is `--verify` / `--no-verify`. The values are checked
/// by the router against the same schema, so the command line can never accept what the
/// method would refuse, nor refuse what it accepts.
struct MethodFlag {
    let property: String
    let name: String
    let type: String   // string, integer, number, boolean
    let isArray: Bool
    let choices: [String]
    let help: String

    var value: String? {
        if type == "boolean" { return nil }
        if !choices.isEmpty { return choices.joined(separator: "|") }
        return type == "string" ? property.uppercased().filter(\.isLetter) : "N"
    }
    var kind: ValueKind { choices.isEmpty ? (type == "boolean" ? .none : .text) : .choices(choices) }

    /// The flags of a params schema, but `skip` (the command binds those itself).
    static func flags(_ schema: JSONValue, skip: Set<String>) -> [MethodFlag] {
        guard let props = schema["properties"]?.objectValue else { return [] }
        return props.keys.compactMap { key -> MethodFlag? in
            guard !skip.contains(key), key != "workDoneToken", key != "model", let p = props[key] else { return nil }
            var item = p
            var isArray = false
            if p["type"]?.stringValue == "array" {
                guard let i = p["items"] else { return nil }
                item = i
                isArray = true
            }
            guard let type = item["type"]?.stringValue, ["string", "integer", "number", "boolean"].contains(type) else { return nil }
            var words = kebab(key)
            if isArray, words.hasSuffix("s") { words.removeLast() }
            let choices = item["enum"]?.arrayValue?.compactMap(\.stringValue) ?? []
            var help = p["description"]?.stringValue ?? item["description"]?.stringValue ?? ""
            let lo = item["minimum"].map { $0.serialized() }, hi = item["maximum"].map { $0.serialized() }
            if let lo, let hi { help += (help.isEmpty ? "" : " ") + "(\(lo) to \(hi))" }
            if isArray { help += (help.isEmpty ? "" : " ") + "Repeatable." }
            return MethodFlag(property: key, name: "--" + words, type: type, isArray: isArray, choices: choices, help: help)
        }
    }

    static func kebab(_ s: String) -> String {
        var out = ""
        for c in s {
            if c.isUppercase { out += "-" + c.lowercased() } else { out.append(c) }
        }
        return out
    }

    /// Parses `args[i]` if it is one of `flags` (`--no-X` for booleans) into `params`.
    static func take(_ flags: [MethodFlag], _ args: [String], _ i: inout Int, into params: inout JSONObject) throws -> Bool {
        let (name, inline) = DaemonSettings.split(args[i])
        if name.hasPrefix("--no-"), let f = flags.first(where: { $0.type == "boolean" && $0.name == "--" + name.dropFirst(5) }) {
            params[f.property] = false
            i += 1
            return true
        }
        guard let f = flags.first(where: { $0.name == name }) else { return false }
        if f.type == "boolean" {
            params[f.property] = true
            i += 1
            return true
        }
        let raw: String
        if let inline { raw = inline } else {
            guard i + 1 < args.count else { throw UsageError("\(name) needs a value (\(f.value ?? ""))") }
            raw = args[i + 1]
            i += 1
        }
        i += 1
        let v: JSONValue
        switch f.type {
        case "integer":
            guard let n = Int(raw) else { throw UsageError("\(name) must be an integer, got '\(raw)'") }
            v = .int(n)
        case "number":
            guard let d = Double(raw) else { throw UsageError("\(name) must be a number, got '\(raw)'") }
            v = .double(d)
        default:
            if !f.choices.isEmpty && !f.choices.contains(raw) {
                throw UsageError("\(name) must be one of \(f.choices.joined(separator: ", ")), got '\(raw)'")
            }
            v = .string(raw)
        }
        if f.isArray {
            params[f.property] = .array((params[f.property]?.arrayValue ?? []) + [v])
        } else {
            params[f.property] = v
        }
        return true
    }
}
