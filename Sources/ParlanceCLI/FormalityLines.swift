import Foundation
import ParlanceFeatures

/// `parlance --print-formality`: the formality score of each line of stdin, as the daemon
/// scores a variation's `formalityScore`. A line is `{"text": "…", "language": "es"}`
/// (language optional, default "en"); the reply is one line each, the score, or
/// `error: …` for a line that is no such object (and the exit status is then 1).
enum FormalityLines {
    struct Line: Decodable {
        var text: String
        var language: String?
    }

    static func run() -> Int32 {
        var status: Int32 = 0
        while let line = readLine(strippingNewline: true) {
            if line.trimmingCharacters(in: .whitespaces).isEmpty { continue }
            let reply: String
            if let l = try? JSONDecoder().decode(Line.self, from: Data(line.utf8)) {
                reply = "\(Formality.score(l.text, language: l.language ?? "en"))"
            } else {
                reply = "error: not a JSON object with a string \"text\": \(line.prefix(80))"
                status = 1
            }
            // Unbuffered: the caller waits for each reply before it writes the next line.
            FileHandle.standardOutput.write(Data((reply + "\n").utf8))
        }
        return status
    }
}
