import Foundation
#if canImport(ParlanceJSON)
import ParlanceJSON
#endif

/// How a model writes tool calls, defined once: the grammar that lets it write either its
/// answer or calls (never anything else), and the parser that reads the calls back.
///
/// A call is `<tool_call>\n{"name":"get_weather","arguments":{…}}\n</tool_call>` (the
/// Hermes/Qwen convention many instruction-tuned GGUF models were trained on); one output
/// holds one or several calls separated by a newline, and nothing else. The `arguments`
/// object is generated under the grammar of that tool's `parameters` schema, so it is valid
/// for it by construction (up to the gaps `GrammarBuilder` lists, which the validator
/// catches), written compactly (no whitespace between JSON tokens: fewer tokens, and only one
/// way to write a call). An answer is free text that does not begin with `<` nor imitate a call,
/// or JSON valid for the turn's schema.
public enum ToolCallFormat {
    public static let open = "<tool_call>\n"
    public static let close = "\n</tool_call>"
    public static let separator = "\n"
    static let marker = "<tool_call>"

    public struct Tool: Sendable {
        public var name: String
        public var parameters: JSONValue
        public init(name: String, parameters: JSONValue) {
            self.name = name
            self.parameters = parameters
        }
    }

    /// What the model may write at one step.
    public enum Answer: Sendable {
        /// Text (not beginning with `<`, never containing the call marker).
        case text
        /// JSON valid for the schema.
        case schema(JSONValue)
        /// No answer: the step must call.
        case callOnly
    }

    /// The JSON Schema of one call object: `{"name": <one of the tools>, "arguments": <its parameters>}`.
    public static func callSchema(_ tools: [Tool]) -> JSONValue {
        let alternatives: [JSONValue] = tools.map { t in
            ["type": "object", "properties": ["name": ["const": .string(t.name)], "arguments": nonEmptyRequiredStrings(t.parameters)],
             "required": ["name", "arguments"], "additionalProperties": false]
        }
        return alternatives.count == 1 ? alternatives[0] : ["anyOf": .array(alternatives)]
    }

    /// `schema` with `minLength: 1` on every required string property that sets no length,
    /// value list or pattern of its own, at any depth. A small model that does not know an
    /// argument writes `""` for it, and a tool answers an empty required argument with an
    /// error the model then repeats; a required argument is something, so the call grammar
    /// asks for at least one character.
    static func nonEmptyRequiredStrings(_ schema: JSONValue) -> JSONValue {
        guard case .object(var o) = schema else { return schema }
        if case .object(var properties)? = o["properties"] {
            let required = Set(o["required"]?.arrayValue?.compactMap(\.stringValue) ?? [])
            for key in properties.keys {
                guard case .object(var p)? = properties[key] else { continue }
                let own = ["minLength", "enum", "const", "pattern", "format"]
                if required.contains(key), p["type"] == "string", !own.contains(where: { p[$0] != nil }) {
                    p["minLength"] = 1
                }
                properties[key] = nonEmptyRequiredStrings(.object(p))
            }
            o["properties"] = .object(properties)
        }
        if let items = o["items"] { o["items"] = nonEmptyRequiredStrings(items) }
        for k in ["anyOf", "oneOf", "allOf"] {
            if let alts = o[k]?.arrayValue { o[k] = .array(alts.map(nonEmptyRequiredStrings)) }
        }
        return .object(o)
    }

    /// GBNF for one step: 1...`maxCalls` calls to `tools`, or the answer. With no tools or
    /// `maxCalls` 0, the answer alone (text that does not begin with a call, or the schema).
    public static func gbnf(tools: [Tool], maxCalls: Int, answer: Answer) throws(SchemaGrammarError) -> String {
        var b = Builder()
        b.rules.compact = true
        var alternatives: [String] = []
        if !tools.isEmpty && maxCalls > 0 {
            let json = try b.visit(callSchema(tools), "#", "call-json", 0)
            let call = b.rules.add("tool-call", "\(GrammarRules.literal(open)) \(json) \(GrammarRules.literal(close))")
            let more = b.rules.add("tool-call-more", "\(GrammarRules.literal(separator)) \(call)")
            alternatives.append(maxCalls > 1 ? b.rules.add("tool-calls", "\(call) \(NumberGrammar.repeated(more, 0, maxCalls - 1))") : call)
        }
        switch answer {
        case .text: alternatives.append(textWithoutCall(&b.rules))
        case .schema(let s): alternatives.append(try b.visit(s, "#", "answer", 0))
        case .callOnly:
            guard !alternatives.isEmpty else { throw .invalidSchema("a step that must call needs at least one tool and one call left") }
        }
        b.rules.finish(top: alternatives.count == 1 ? alternatives[0] : b.rules.add("step", alternatives.joined(separator: " | ")))
        return b.rules.text
    }

    /// What an answer may never contain, in any case: a small model that may not call any more
    /// imitates a call rather than answer (`<tool_call]`, `<TOOL_CALL>`, a `[tool_call]` block
    /// after a sentence), and a client would show that as the answer.
    static let imitations = ["<tool", "tool_call"]

    /// Text of at least one character that does not begin with `<` and never contains one of
    /// `imitations` (ignoring case). An answer of a session with tools never begins with `<`
    /// (an answer that is HTML begins with a word or a space instead).
    ///
    /// "Contains none of them" is a small automaton (Aho-Corasick's, written as grammar
    /// rules): a state is the longest end of the text so far that begins one of the patterns;
    /// a character that would complete a pattern has no transition; a character in no
    /// pattern goes back to the empty state; the text may end in any state.
    static func textWithoutCall(_ rules: inout GrammarRules) -> String {
        let patterns = imitations.map { Array($0.lowercased()) }
        var states: [[Character]] = [[]]
        for p in patterns {
            for n in 1..<p.count where !states.contains(Array(p[..<n])) { states.append(Array(p[..<n])) }
        }
        var alphabet: [Character] = []
        for c in patterns.joined() where !alphabet.contains(c) { alphabet.append(c) }
        let names = states.indices.map { "text-s\($0)" }
        /// Where `state` goes on `c`, or nil when that would complete a pattern.
        func next(_ state: [Character], _ c: Character) -> Int? {
            let t = state + [c]
            if patterns.contains(where: { t.count >= $0.count && Array(t.suffix($0.count)) == $0 }) { return nil }
            for drop in 0...t.count {
                if let i = states.firstIndex(of: Array(t.dropFirst(drop))) { return i }
            }
            return 0
        }
        func charClass(_ c: Character) -> String {
            c.isLetter ? "[\(c.lowercased())\(c.uppercased())]" : "[\(classEscape(c))]"
        }
        let others = "[^" + alphabet.map { c in c.isLetter ? c.lowercased() + c.uppercased() : classEscape(c) }.joined() + "\\x00]"
        func transitions(from state: [Character], excluding: Character? = nil) -> [String] {
            alphabet.filter { $0 != excluding }.compactMap { c in next(state, c).map { "\(charClass(c)) \(names[$0])" } } + ["\(others) \(names[0])"]
        }
        for (i, state) in states.enumerated() {
            _ = rules.define(names[i], ([""] + transitions(from: state)).joined(separator: " | "))
        }
        return rules.add("answer-text", transitions(from: [], excluding: "<").joined(separator: " | "))
    }

    /// A character for a GBNF class: letters and digits as they are, anything else as `\xHH`
    /// (llama.cpp's parser knows no `\^` or `\-`).
    static func classEscape(_ c: Character) -> String {
        guard let a = c.asciiValue else { return String(c) }
        if c.isLetter || c.isNumber { return String(c) }
        let h = String(a, radix: 16, uppercase: true)
        return "\\x" + (h.count < 2 ? "0" + h : h)
    }

    /// A call read back from the model's output.
    public struct ParsedCall: Sendable, Equatable {
        public var name: String
        public var arguments: JSONValue
        public init(name: String, arguments: JSONValue) {
            self.name = name
            self.arguments = arguments
        }
    }

    /// Whether `text` is (so far) a call rather than an answer: it begins with `<`, which
    /// an answer never does under this format's grammar.
    public static func beginsWithCall(_ text: String) -> Bool { text.hasPrefix("<") }

    /// The calls in an output the call grammar produced, or nil when it is an answer. Throws
    /// when it begins like a call but is not whole (cut off by maxTokens).
    public static func parse(_ text: String) throws(SchemaGrammarError) -> [ParsedCall]? {
        guard text.hasPrefix(marker) else { return nil }
        var calls: [ParsedCall] = []
        var rest = Substring(text)
        while !rest.isEmpty {
            guard rest.hasPrefix(open), let end = rest.range(of: close) else {
                throw .invalidSchema("the tool call is incomplete: \(String(rest.prefix(80)))")
            }
            let body = String(rest[rest.index(rest.startIndex, offsetBy: open.count)..<end.lowerBound])
            guard let json = try? JSONParser.parse(body), let name = json["name"]?.stringValue, let args = json["arguments"] else {
                throw .invalidSchema("the tool call is not {\"name\", \"arguments\"} JSON: \(String(body.prefix(80)))")
            }
            calls.append(ParsedCall(name: name, arguments: args))
            rest = rest[end.upperBound...]
            if rest.hasPrefix(separator) { rest = rest.dropFirst(separator.count) }
        }
        return calls
    }
}
