import ParlanceJSON

/// Best-effort parse of an incomplete JSON text (a structured output mid-stream): closes
/// open strings, arrays and objects and drops a dangling key, comma or colon.
public enum PartialJSON {
    public static func complete(_ text: String) -> JSONValue? {
        var stack: [Character] = []
        var inString = false
        var escaped = false
        var lastSafe = text.startIndex  // end of the last position where closing is valid
        var i = text.startIndex
        while i < text.endIndex {
            let c = text[i]
            if inString {
                if escaped { escaped = false } else if c == "\\" { escaped = true } else if c == "\"" { inString = false }
            } else {
                switch c {
                case "\"": inString = true
                case "{": stack.append("}")
                case "[": stack.append("]")
                case "}", "]": if !stack.isEmpty { stack.removeLast() }
                default: break
                }
            }
            i = text.index(after: i)
            if !inString { lastSafe = i }
        }
        var candidate = String(text[..<(inString ? text.endIndex : lastSafe)])
        if inString { candidate += escaped ? "\\\"" : "\"" }
        for _ in 0..<3 {
            var attempt = candidate
            while let last = attempt.last, last == "," || last == ":" || last == " " || last == "\n" { attempt.removeLast() }
            attempt += String(stack.reversed())
            if let v = try? JSONParser.parse(attempt) { return v }
            // Drop a dangling object key ("key" or "key": ) and retry.
            if let comma = candidate.lastIndex(where: { $0 == "," || $0 == "{" }) {
                candidate = String(candidate[...comma])
                if candidate.last == "," { candidate.removeLast() }
            } else { break }
        }
        return nil
    }
}
