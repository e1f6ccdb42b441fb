/// How a message was framed on the wire. Replies use the framing of the request.
public enum Framing: String, Sendable {
    /// LSP base protocol: `Content-Length: N\r\n\r\n` + N bytes.
    case lsp
    /// One JSON text per line.
    case ndjson
}

/// A framing problem. The decoder reports it and resynchronises; the connection stays usable.
public struct FramingError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable { case badHeader, missingContentLength, invalidContentLength, tooLarge, truncated }
    public var kind: Kind
    public var message: String
    public var description: String { message }
}

public enum FrameEvent: Sendable, Equatable {
    case message([UInt8], Framing)
    case error(FramingError, Framing)
}

/// A pure, incremental framing decoder: feed it arbitrary chunks, pull whole frames.
///
/// The framing of each message is detected from its first non-blank byte: a byte that can start
/// a JSON text (`{`, `[`, `"`, `-`, a digit) starts an NDJSON line, anything else an LSP header block.
public struct FrameDecoder: Sendable {
    public let maxMessageSize: Int
    public static let maxHeaderSize = 8 * 1024

    private var buf: [UInt8] = []
    private var pos = 0
    /// Bytes of an oversized body still to be skipped, and whether we skip to a newline instead.
    private var skipBytes = 0
    private var skipToNewline = false
    /// While skipping a body: bytes of `Content-Length:` matched so far at a line start.
    private var skipMatched = 0
    private var skipAtLineStart = true
    /// Where the search for an NDJSON line's newline resumes, so a long line arriving in
    /// many chunks is scanned once, not once per chunk.
    private var scanFrom = 0

    public init(maxMessageSize: Int = 64 * 1024 * 1024) {
        self.maxMessageSize = maxMessageSize
    }

    public mutating func push(_ bytes: some Collection<UInt8>) {
        if pos > 0 && pos >= buf.count / 2 {
            buf.removeFirst(pos)
            scanFrom = max(0, scanFrom - pos)
            pos = 0
        }
        buf.append(contentsOf: bytes)
    }

    /// Bytes buffered and not yet consumed.
    public var pending: Int { buf.count - pos }

    /// The next complete frame or framing error, or nil when more input is needed.
    public mutating func next() -> FrameEvent? {
        while true {
            if skipBytes > 0, !skipOversizedBody() { return nil }
            if skipToNewline {
                guard let nl = firstIndex(of: 0x0A, from: pos) else { pos = buf.count; return nil }
                scanFrom = 0
                pos = nl + 1
                skipToNewline = false
            }
            // Skip blank bytes between messages.
            while pos < buf.count, buf[pos] == 0x20 || buf[pos] == 0x0A || buf[pos] == 0x0D || buf[pos] == 0x09 { pos += 1 }
            guard pos < buf.count else { return nil }
            if FrameDecoder.startsJSONLine(buf[pos]) { return nextLine() }
            return nextLSP()
        }
    }

    /// At end of input: reports a message left incomplete, if any.
    public mutating func finish() -> FrameEvent? {
        if let e = next() { return e }
        defer { buf = []; pos = 0 }
        let rest = buf[pos...]
        if rest.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return nil }
        if let first = rest.first, FrameDecoder.startsJSONLine(first) {
            // A last NDJSON line without a newline is still a whole message.
            return .message(Array(rest), .ndjson)
        }
        return .error(FramingError(kind: .truncated, message: "input ended inside a message (\(rest.count) bytes left unparsed)"), .lsp)
    }

    /// Skips what is left of an oversized LSP body. A line starting with `Content-Length:`
    /// cannot occur inside a JSON text (raw newlines are not allowed in strings), so one
    /// that appears means the declared length was a lie (or the body never came): parsing
    /// resumes at that header instead of swallowing the rest of the stream.
    /// Returns false while more input must be skipped.
    private mutating func skipOversizedBody() -> Bool {
        let header = FrameDecoder.resyncHeader
        let end = min(buf.count, pos + skipBytes)
        var i = pos
        while i < end {
            var c = buf[i]
            if c >= 0x41 && c <= 0x5A { c |= 0x20 }
            if c == header[skipMatched], skipMatched > 0 || skipAtLineStart {
                skipMatched += 1
                if skipMatched == header.count {
                    // Resume at the header: put its (possibly already consumed) name back.
                    buf.replaceSubrange(pos...i, with: header)
                    skipBytes = 0
                    skipMatched = 0
                    skipAtLineStart = true
                    return true
                }
            } else {
                skipMatched = 0
            }
            skipAtLineStart = buf[i] == 0x0A
            i += 1
        }
        skipBytes -= end - pos
        pos = end
        if skipBytes == 0 { skipMatched = 0; skipAtLineStart = true }
        return skipBytes == 0
    }

    private static let resyncHeader = Array("content-length:".utf8)

    private func firstIndex(of byte: UInt8, from: Int) -> Int? {
        var i = from
        while i < buf.count { if buf[i] == byte { return i }; i += 1 }
        return nil
    }

    private mutating func nextLine() -> FrameEvent? {
        guard let nl = firstIndex(of: 0x0A, from: max(pos, scanFrom)) else {
            scanFrom = buf.count
            if buf.count - pos > maxMessageSize {
                let size = buf.count - pos
                pos = buf.count
                skipToNewline = true
                return .error(FramingError(kind: .tooLarge, message: "message exceeds the limit of \(maxMessageSize) bytes (more than \(size) bytes without a newline)"), .ndjson)
            }
            return nil
        }
        var end = nl
        if end > pos, buf[end - 1] == 0x0D { end -= 1 }
        // A line that ends in a Content-Length header is no JSON text: it is the tail of an LSP
        // body whose Content-Length was too short, run into the next header. Resume there.
        if let k = FrameDecoder.contentLengthHeader(in: buf[pos..<end]),
           buf[(k + FrameDecoder.resyncHeader.count)..<end].allSatisfy({ $0 == 0x20 || ($0 >= 0x30 && $0 <= 0x39) }) {
            let line = String(decoding: buf[pos..<k].prefix(80), as: UTF8.self)
            pos = k
            scanFrom = 0
            return .error(FramingError(kind: .badHeader, message: "invalid bytes before a header: '\(line)'"), .ndjson)
        }
        let size = end - pos
        defer { pos = nl + 1 }
        if size > maxMessageSize {
            return .error(FramingError(kind: .tooLarge, message: "message of \(size) bytes exceeds the limit of \(maxMessageSize) bytes"), .ndjson)
        }
        return .message(Array(buf[pos..<end]), .ndjson)
    }

    /// `Name: value`, the name made of letters, digits, `-` and `_`.
    static func isHeaderLine(_ line: ArraySlice<UInt8>) -> Bool {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex else { return false }
        return line[..<colon].allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || ((b | 0x20) >= 0x61 && (b | 0x20) <= 0x7A) || b == UInt8(ascii: "-") || b == UInt8(ascii: "_")
        }
    }

    /// Where a `Content-Length:` header (any case) starts inside `line`, after its first byte.
    static func contentLengthHeader(in line: ArraySlice<UInt8>) -> Int? {
        let h = resyncHeader
        guard line.count > h.count else { return nil }
        var i = line.startIndex + 1
        while i + h.count <= line.endIndex {
            var k = 0
            while k < h.count, (line[i + k] >= 0x41 && line[i + k] <= 0x5A ? line[i + k] | 0x20 : line[i + k]) == h[k] { k += 1 }
            if k == h.count { return i }
            i += 1
        }
        return nil
    }

    /// A byte that can start a JSON text other than `true`/`false`/`null` (letters start
    /// header names): such a line is NDJSON, however wrong its content turns out to be.
    static func startsJSONLine(_ b: UInt8) -> Bool {
        b == UInt8(ascii: "{") || b == UInt8(ascii: "[") || b == UInt8(ascii: "\"") || b == UInt8(ascii: "-")
            || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9"))
    }

    private mutating func nextLSP() -> FrameEvent? {
        // A first line that is not a header ("Name: value") is garbage on its own: report it
        // and go on from the next line, so what follows it is not swallowed into a header block.
        // Garbage that runs into a real header on the same line (the tail of a message whose
        // Content-Length was too short) resumes at that header.
        if let nl = firstIndex(of: 0x0A, from: pos), !FrameDecoder.isHeaderLine(buf[pos..<nl]) {
            var end = nl
            if end > pos, buf[end - 1] == 0x0D { end -= 1 }
            let resume = FrameDecoder.contentLengthHeader(in: buf[pos..<end])
            let line = String(decoding: buf[pos..<(resume ?? end)].prefix(80), as: UTF8.self)
            pos = resume ?? nl + 1
            return .error(FramingError(kind: .badHeader, message: "invalid header line '\(line)': expected 'Name: value' or a JSON text"), .lsp)
        }
        // Find the end of the header block (\r\n\r\n, tolerating bare \n\n).
        var i = pos
        var headerEnd: Int? = nil
        var bodyStart = 0
        while i < buf.count {
            if buf[i] == 0x0A {
                if i + 1 < buf.count, buf[i + 1] == 0x0A { headerEnd = i; bodyStart = i + 2; break }
                if i + 2 < buf.count, buf[i + 1] == 0x0D, buf[i + 2] == 0x0A { headerEnd = i; bodyStart = i + 3; break }
            }
            i += 1
        }
        guard let headerEnd else {
            if buf.count - pos > FrameDecoder.maxHeaderSize {
                pos = buf.count
                skipToNewline = true
                return .error(FramingError(kind: .badHeader, message: "header block exceeds \(FrameDecoder.maxHeaderSize) bytes without a blank line"), .lsp)
            }
            return nil
        }
        let headerStart = pos
        var length: Int? = nil
        // Split on bytes: in Swift "\r\n" is a single Character.
        for rawLine in buf[pos..<headerEnd].split(separator: 0x0A, omittingEmptySubsequences: true) {
            let bytes = rawLine.last == 0x0D ? rawLine.dropLast() : rawLine
            let line = Substring(String(decoding: bytes, as: UTF8.self))
            guard let colon = line.firstIndex(of: ":") else {
                pos = bodyStart
                return .error(FramingError(kind: .badHeader, message: "invalid header line '\(line.prefix(80))': expected 'Name: value'"), .lsp)
            }
            let name = line[..<colon].trimmingSpaces().lowercased()
            let value = line[line.index(after: colon)...].trimmingSpaces()
            if name == "content-length" {
                guard let n = Int(value), n >= 0 else {
                    pos = bodyStart
                    return .error(FramingError(kind: .invalidContentLength, message: "invalid Content-Length '\(value.prefix(40))': expected a non-negative integer"), .lsp)
                }
                length = n
            }
        }
        guard let length else {
            pos = bodyStart
            return .error(FramingError(kind: .missingContentLength, message: "header block has no Content-Length"), .lsp)
        }
        if length > maxMessageSize {
            pos = bodyStart
            skipBytes = length; skipMatched = 0; skipAtLineStart = true
            return .error(FramingError(kind: .tooLarge, message: "message of \(length) bytes exceeds the limit of \(maxMessageSize) bytes"), .lsp)
        }
        guard buf.count - bodyStart >= length else {
            pos = headerStart
            return nil
        }
        pos = bodyStart + length
        return .message(Array(buf[bodyStart..<(bodyStart + length)]), .lsp)
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> String {
        var s = self[...]
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}

/// Encodes one frame.
public enum FrameEncoder {
    public static func encode(_ body: [UInt8], _ framing: Framing) -> [UInt8] {
        switch framing {
        case .ndjson:
            return body + [0x0A]
        case .lsp:
            return Array("Content-Length: \(body.count)\r\n\r\n".utf8) + body
        }
    }
}
