import ParlanceEngine
import ParlanceJSON
import ParlanceProtocol
import ParlanceSchema

/// What the model reads about tools: how to call them (in the system message) and each
/// tool's output (the template's tool role, or a user message saying whose output it is).
enum ToolPrompt {
    /// Appended to the session's instructions; nil without tools.
    static func instructions(for tools: [ToolDefinition]) -> String? {
        guard !tools.isEmpty else { return nil }
        let example = tools[0]
        var lines = [
            "You can call tools. To call one, reply with only this, and nothing before or after it:",
            ToolCallFormat.open + #"{"name":"\#(example.name)","arguments":{…}}"# + ToolCallFormat.close,
            "Then wait: the tool's output comes in the next message. Use it to answer the user. Call a tool only when its output helps.",
            "Tools:",
        ]
        for t in tools {
            let args = t.argumentsSchema.serialized()
            lines.append("- \(t.name): \(t.description ?? "(no description)") Arguments: \(args)")
        }
        return lines.joined(separator: "\n")
    }

    /// The message that gives the model one tool's outcome.
    static func output(of record: ToolCallRecord, toolRole: Bool) -> ChatMessage {
        let body: String
        if let e = record.error {
            body = "Error: the tool failed: \(e.message)"
        } else {
            body = text(of: record.output ?? .null)
        }
        if toolRole { return ChatMessage(.tool, body) }
        // Without a tool role the output arrives as a user message; saying what to do with
        // it keeps a small model from echoing it back as its answer.
        return ChatMessage(.user, "Output of the tool \(record.name) (\(record.callId)):\n\(body)\n\nUse this output to answer my question in plain words.")
    }

    /// A string output as it is; any other JSON serialized.
    static func text(of content: JSONValue) -> String {
        if case .string(let s) = content { return s }
        return content.serialized()
    }
}
