import ParlanceInProcess
import ParlanceJSON

/// A command's options for its method's params, derived from the params' JSON Schema
/// (itself derived from the method's Swift types): `maxTokens` becomes `--max-tokens N`, an
/// enum lists its values, an array of strings is a repeatable option named in the singular
/// (`tones` → `--tone T`), a boolean is `--verify` / `--no-verify`. The values are checked
/// by the router against the same schema, so the command line can never accept what the
/// method would refuse, nor refuse what it accepts.
enum MethodOptions {
    /// The options of a params schema, but `skip` (the command binds those itself).
    static func options(_ schema: JSONValue, skip: Set<String>) -> [Option] {
        guard let props = schema["properties"]?.objectValue else { return [] }
        return props.keys.compactMap { key -> Option? in
            guard !skip.contains(key), key != "workDoneToken", key != "model", let p = props[key] else { return nil }
            let isArray = p["type"]?.stringValue == "array"
            guard let item = isArray ? p["items"] : p else { return nil }
            guard let type = item["type"]?.stringValue, ["string", "integer", "number", "boolean"].contains(type) else { return nil }
            var words = Render.kebab(key)
            if isArray, words.hasSuffix("s") { words.removeLast() }
            let choices = item["enum"]?.arrayValue?.compactMap(\.stringValue) ?? []
            var help = p["description"]?.stringValue ?? item["description"]?.stringValue ?? ""
            let lo = item["minimum"].map { $0.serialized() }, hi = item["maximum"].map { $0.serialized() }
            if let lo, let hi { help += (help.isEmpty ? "" : " ") + "(\(lo) to \(hi))" }
            if isArray { help += (help.isEmpty ? "" : " ") + "Repeatable." }
            let name = "--" + words
            if type == "boolean" {
                return Option(name, nil, .none, help + " (--no-\(words) for false)", inline: .ignored,
                              negate: { $0.params[key] = false }, set: { v, _ in v.params[key] = true })
            }
            let value = !choices.isEmpty ? choices.joined(separator: "|") : type == "string" ? key.uppercased().filter(\.isLetter) : "N"
            return Option(name, value, choices.isEmpty ? .text : .choices(choices), help) { v, raw in
                let x = try parse(raw, name: name, type: type, choices: choices)
                v.params[key] = isArray ? .array((v.params[key]?.arrayValue ?? []) + [x]) : x
            }
        }
    }

    /// A value as its schema type has it; a usage error when it is not one.
    static func parse(_ raw: String, name: String, type: String, choices: [String]) throws -> JSONValue {
        switch type {
        case "integer":
            guard let n = Int(raw) else { throw UsageError("\(name) must be an integer, got '\(raw)'") }
            return .int(n)
        case "number":
            guard let d = Double(raw) else { throw UsageError("\(name) must be a number, got '\(raw)'") }
            return .double(d)
        default:
            if !choices.isEmpty && !choices.contains(raw) {
                throw UsageError("\(name) must be one of \(choices.joined(separator: ", ")), got '\(raw)'")
            }
            return .string(raw)
        }
    }
}
