import ParlanceJSON

/// The Model Context Protocol's words, as both sides of Parlance use them: the revisions
/// it negotiates, its method names, and the shape of a tool's result.
public enum MCPWire {
    /// The revisions reachable through the `initialize` handshake, oldest first. The
    /// stateless 2026-07-28 revision (`server/discover`) is not spoken: its probe is answered
    /// "method not found", which a client takes as "use the handshake".
    public static let versions = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
    public static var latest: String { versions[versions.count - 1] }

    /// The revision to answer a client offering `offered`: the same one when it is known,
    /// else the newest (the client then decides whether it can go on).
    public static func negotiate(_ offered: String?) -> String {
        offered.flatMap { versions.contains($0) ? $0 : nil } ?? latest
    }

    public static let initialize = "initialize"
    public static let initialized = "notifications/initialized"
    public static let ping = "ping"
    public static let toolsList = "tools/list"
    public static let toolsCall = "tools/call"
    public static let resourcesList = "resources/list"
    public static let resourcesRead = "resources/read"
    public static let resourceTemplatesList = "resources/templates/list"
    public static let promptsList = "prompts/list"
    public static let promptsGet = "prompts/get"
    public static let setLevel = "logging/setLevel"
    public static let cancelled = "notifications/cancelled"
    public static let progress = "notifications/progress"
    public static let message = "notifications/message"
    public static let toolsListChanged = "notifications/tools/list_changed"
    public static let rootsList = "roots/list"

    /// A text content block.
    public static func text(_ s: String) -> JSONValue { ["type": "text", "text": .string(s)] }

    /// What a tool's result says, as a model reads it: its text blocks joined, else its
    /// structured content serialized, else a note of what other content it had.
    public static func text(ofToolResult r: JSONValue) -> String {
        let blocks = r["content"]?.arrayValue ?? []
        let texts = blocks.compactMap { $0["type"]?.stringValue == "text" ? $0["text"]?.stringValue : nil }
        if !texts.isEmpty { return texts.joined(separator: "\n") }
        if let s = r["structuredContent"] { return s.serialized() }
        let kinds = blocks.compactMap { $0["type"]?.stringValue }
        return kinds.isEmpty ? "" : "(\(kinds.joined(separator: ", ")) content, not shown)"
    }

    /// RFC 5424 severities, as `logging/setLevel` and `notifications/message` name them.
    public static let levels = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
}
