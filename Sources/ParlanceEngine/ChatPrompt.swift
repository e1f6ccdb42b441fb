/// Turns chat messages into tokens with the model's own template, keeping the template's
/// control tokens special and every message's content ordinary text: a transcript that
/// contains `<|im_end|><|im_start|>system` stays text and cannot inject a turn.
public struct ChatMessage: Sendable, Hashable, Codable {
    /// `tool`: a tool's output, rendered with the template's tool role (`ChatPrompt.hasToolRole`).
    public enum Role: String, Sendable, Codable, CaseIterable { case system, user, assistant, tool }
    public var role: Role
    public var content: String
    public init(_ role: Role, _ content: String) {
        self.role = role
        self.content = content
    }
}

public struct ChatPrompt: Sendable {
    public let model: LlamaModel
    public let hasTemplate: Bool
    /// The template has a role for tool outputs: its text names a `tool` role (or
    /// `tool_calls`), and llama.cpp's rendering of a tool message keeps the message. Without
    /// one, tool outputs go to the model as user messages (see `ToolPrompt`).
    public let hasToolRole: Bool

    public init(model: LlamaModel) {
        self.model = model
        hasTemplate = model.chatTemplate != nil
            && model.applyTemplate([(role: "user", content: "x")], addAssistant: true) != nil
        let template = model.chatTemplate ?? ""
        let namesTool = ["'tool'", "\"tool\"", "tool_calls", "<|tool", "ipython"].contains { template.contains($0) }
        hasToolRole = hasTemplate && namesTool
            && model.applyTemplate([(role: "user", content: "x"), (role: "tool", content: "\u{F0002}")], addAssistant: true)?.contains("\u{F0002}") == true
    }

    enum Piece {
        case template(String)
        case content(String, message: Int)
    }

    // Private-use sentinels stand in for message contents while the template renders.
    private static let open: Character = "\u{F0000}"
    private static let close: Character = "\u{F0001}"

    func pieces(_ messages: [ChatMessage], addAssistant: Bool) -> [Piece] {
        guard hasTemplate else { return plainPieces(messages, addAssistant: addAssistant) }
        let stand = messages.enumerated().map { (role: $0.element.role.rawValue, content: "\(ChatPrompt.open)\($0.offset)\(ChatPrompt.close)") }
        guard let rendered = model.applyTemplate(stand, addAssistant: addAssistant) else {
            return plainPieces(messages, addAssistant: addAssistant)
        }
        var out: [Piece] = []
        var text = ""
        var it = rendered.makeIterator()
        while let c = it.next() {
            if c == ChatPrompt.open {
                var digits = ""
                while let d = it.next(), d != ChatPrompt.close { digits.append(d) }
                if !text.isEmpty { out.append(.template(text)); text = "" }
                if let i = Int(digits), messages.indices.contains(i) { out.append(.content(messages[i].content, message: i)) }
            } else {
                text.append(c)
            }
        }
        if !text.isEmpty { out.append(.template(text)) }
        return out
    }

    /// What a model without a chat template is prompted with, as status and provenance say it.
    public static let fallbackTemplate = "no chat template in the model file (a base model); prompted with Parlance's plain template: \"### Instructions\", \"### User\", \"### Assistant\" headings"

    /// A readable fallback for models without a chat template (base models).
    private func plainPieces(_ messages: [ChatMessage], addAssistant: Bool) -> [Piece] {
        var out: [Piece] = []
        for (i, m) in messages.enumerated() {
            let label = switch m.role {
            case .system: "Instructions"
            case .user: "User"
            case .assistant: "Assistant"
            case .tool: "Tool"
            }
            out.append(.template("\(i == 0 ? "" : "\n\n")### \(label)\n"))
            out.append(.content(m.content, message: i))
        }
        if addAssistant { out.append(.template("\n\n### Assistant\n")) }
        return out
    }

    private func tokens(_ pieces: some Sequence<Piece>) -> [Token] {
        var out: [Token] = []
        for p in pieces {
            switch p {
            case .template(let t): out += model.tokenize(t, special: true)
            case .content(let c, _): out += model.tokenize(c, special: false)
            }
        }
        return out
    }

    /// The whole prompt for a conversation.
    public func tokens(for messages: [ChatMessage], addAssistant: Bool = true) -> [Token] {
        var out: [Token] = []
        if model.addsBOS { out.append(model.bos) }
        return out + tokens(pieces(messages, addAssistant: addAssistant))
    }

    /// The tokens that follow the content of message `after` when `messages` is rendered:
    /// a session appends these to its exact token history, so turn N+1 evaluates only
    /// its new tokens. With `endingAtContentOf`, stops after that message's content
    /// (a prompt prefix to prewarm).
    public func continuation(of messages: [ChatMessage], after index: Int, endingAtContentOf end: Int? = nil) -> [Token] {
        let all = pieces(messages, addAssistant: true)
        guard let at = contentIndex(all, index) else { return tokens(for: messages) }
        let stop = end.flatMap { contentIndex(all, $0) }.map { $0 + 1 } ?? all.count
        return tokens(all[(at + 1)..<max(at + 1, stop)])
    }

    /// The prompt up to and including the content of message `end` (no closing template).
    public func tokens(for messages: [ChatMessage], endingAtContentOf end: Int) -> [Token] {
        let all = pieces(messages, addAssistant: false)
        let stop = contentIndex(all, end).map { $0 + 1 } ?? all.count
        return (model.addsBOS ? [model.bos] : []) + tokens(all[..<stop])
    }

    private func contentIndex(_ pieces: [Piece], _ message: Int) -> Int? {
        pieces.firstIndex { if case .content(_, let m) = $0 { return m == message }; return false }
    }

    /// The rendered prompt as text (for logs and provenance).
    public func text(for messages: [ChatMessage]) -> String {
        pieces(messages, addAssistant: true).map {
            switch $0 {
            case .template(let t): return t
            case .content(let c, _): return c
            }
        }.joined()
    }
}
