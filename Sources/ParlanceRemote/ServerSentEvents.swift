/// Splits a `text/event-stream` body into events (the WHATWG rules the OpenAI API streams
/// by): lines end with LF, CRLF or CR; `data:` lines of one event are joined with LF; a
/// blank line ends the event; comments (`:`) and other fields are skipped.
public struct ServerSentEvents: Sendable {
    private var line: [UInt8] = []
    private var data: [String] = []
    private var hasData = false
    private var lastWasCR = false

    public init() {}

    /// Feeds bytes; returns the events they completed (each one's data).
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [String] {
        var out: [String] = []
        for b in bytes {
            if lastWasCR {
                lastWasCR = false
                if b == 0x0A { continue }
            }
            if b == 0x0A || b == 0x0D {
                lastWasCR = b == 0x0D
                if let e = endLine() { out.append(e) }
            } else {
                line.append(b)
            }
        }
        return out
    }

    /// Bytes of a line not yet ended (a stream that ends here was cut mid-event).
    public var hasPartialEvent: Bool { !line.isEmpty || hasData }

    private mutating func endLine() -> String? {
        defer { line.removeAll(keepingCapacity: true) }
        if line.isEmpty {
            guard hasData else { return nil }
            let event = data.joined(separator: "\n")
            data.removeAll()
            hasData = false
            return event
        }
        if line.first == UInt8(ascii: ":") { return nil }
        let text = String(decoding: line, as: UTF8.self)
        let field: Substring, value: Substring
        if let colon = text.firstIndex(of: ":") {
            field = text[..<colon]
            var v = text[text.index(after: colon)...]
            if v.first == " " { v = v.dropFirst() }
            value = v
        } else {
            field = text[...]
            value = ""
        }
        if field == "data" {
            data.append(String(value))
            hasData = true
        }
        return nil
    }
}
