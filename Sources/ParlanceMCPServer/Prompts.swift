import JSONRPC
import ParlanceInProcess
import ParlanceJSON
import ParlanceMCP

/// `prompts/get`: the prompt, and its arguments' values as text.
struct GetPromptParams: MCPParams {
    /// The prompt's name as sent (an unknown one is echoed in the error).
    var name: JSONValue?
    /// Each argument as text: a string as it is, anything else serialized.
    var arguments: [String: String] = [:]
    enum CodingKeys: String, CodingKey { case name, arguments }
    init() {}
    init(from decoder: any Decoder) throws {
        let c = decoder.fields(CodingKeys.self)
        name = c?.sent(.name)
        for (k, v) in c?.sent(.arguments)?.objectValue ?? JSONObject() { arguments[k] = v.stringValue ?? v.serialized() }
    }
}

/// `parlance mcp`'s prompts: templates a host fills in and gives its own model.
struct MCPPrompts: Sendable {
    let name: String
    let title: String
    let description: String
    let arguments: [(name: String, description: String, required: Bool)]
    let text: @Sendable ([String: String]) throws -> String

    var listing: JSONValue {
        ["name": .string(name), "title": .string(title), "description": .string(description),
         "arguments": .array(arguments.map { ["name": .string($0.name), "description": .string($0.description), "required": .bool($0.required)] })]
    }

    static let all: [MCPPrompts] = [
        MCPPrompts(name: "rewrite", title: "Rewrite in a tone",
                   description: "Asks for a rewrite of text in a tone, keeping every fact: Parlance's rewrite rules as a prompt for the host's model.",
                   arguments: [("text", "The text to rewrite.", true), ("tone", "formal, casual, empathetic, direct or diplomatic (default formal).", false),
                               ("audience", "Who reads it (default: as the text implies).", false)]) { a in
            let tone = a["tone"] ?? "formal"
            guard let text = a["text"], !text.isEmpty else { throw ResponseError.invalidParams("the rewrite prompt needs text", data: ["path": "/arguments/text"]) }
            let audience = a["audience"].map { " for \($0)" } ?? ""
            return """
                Rewrite the text below in a \(tone) tone\(audience). Keep every fact exactly as written: names, numbers, amounts, dates and places. \
                Add nothing that is not in the text. Reply with the rewrite only.

                \(text)
                """
        },
        MCPPrompts(name: "summary", title: "Summarize a transcript",
                   description: "Asks for a summary of a transcript or document (from a file path or text): a short summary, the main topics and the key takeaways, each said in the text.",
                   arguments: [("path", "A file to summarize (SRT, WebVTT or plain text).", false), ("text", "The text, instead of path.", false)]) { a in
            let body: String
            if let path = a["path"], !path.isEmpty {
                do { body = try Input.read(path) } catch { throw ResponseError.invalidParams("\(error)", data: ["path": "/arguments/path"]) }
            } else if let t = a["text"], !t.isEmpty {
                body = t
            } else {
                throw ResponseError.invalidParams("the summary prompt needs path or text", data: ["path": "/arguments"])
            }
            return """
                Summarize the transcript below: a summary of two or three sentences, its main topics, and three to five key takeaways. \
                Use only what the transcript says.

                \(body)
                """
        },
    ]

    static func get(_ params: GetPromptParams) -> Result<JSONValue, ResponseError> {
        guard let name = params.name?.stringValue, let prompt = all.first(where: { $0.name == name }) else {
            return .failure(.invalidParams("unknown prompt \(params.name?.serialized() ?? "(none)"); prompts: \(all.map(\.name).joined(separator: ", "))",
                                           data: ["error": "unknownPrompt"]))
        }
        do {
            let text = try prompt.text(params.arguments)
            return .success(["description": .string(prompt.description), "messages": [["role": "user", "content": MCPWire.text(text)]]])
        } catch let e as ResponseError {
            return .failure(e)
        } catch {
            return .failure(.invalidParams("\(error)"))
        }
    }
}
