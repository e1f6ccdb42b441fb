// libFuzzer entry for ParlanceDocuments. Built as ONE module together with the sources of
// ParlanceHash and ParlanceDocuments (so no imports of either):
//
//   swiftc -sanitize=fuzzer,address -parse-as-library -module-name ParlanceDocuments \
//     Sources/ParlanceHash/*.swift Sources/ParlanceDocuments/*.swift fuzz/documents/entry.swift \
//     -o /tmp/fuzz-documents
//   /tmp/fuzz-documents -max_total_time=30 /tmp/corpus-docs fuzz/corpus/documents
//
// Besides "no crash", it checks the parser's and chunker's invariants and traps when one
// is broken, so libFuzzer reports the input.

/// Words × 1.3, rounded up: the chunker tests' fake tokenizer.
private func fuzzTokens(_ s: String) -> Int {
    var words = 0
    var inWord = false
    for b in s.utf8 {
        let space = b == 0x20 || b == 0x0A || b == 0x09
        if !space, !inWord { words += 1 }
        inWord = !space
    }
    return (words * 13 + 9) / 10
}

private func check(_ t: ParsedTranscript) {
    let scalars = Array(t.plainText.unicodeScalars)
    for (k, s) in t.segments.enumerated() {
        precondition(s.id == k + 1, "segment ids must be 1...n in order")
        precondition(!s.text.isEmpty, "empty segment")
        precondition(s.startOffset >= 0 && s.startOffset <= s.endOffset && s.endOffset <= scalars.count, "offsets out of range")
        precondition(String(String.UnicodeScalarView(scalars[s.startOffset..<s.endOffset])) == s.text, "offsets do not match text")
        if let a = s.start, let b = s.end { precondition(a.isFinite && b.isFinite && a >= 0 && a <= b, "bad time range") }
    }
    for w in t.warnings { precondition(w.line >= 0, "bad warning line") }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var budget = 1
    if let first = bytes.first { budget = Int(first % 64) + 1 }
    for format in [TranscriptFormat.srt, .vtt, .text, nil] as [TranscriptFormat?] {
        guard let t = try? TranscriptParser.parse(bytes: bytes, format: format) else { continue }
        check(t)
        let chunks = Chunker.chunk(t.segments, budget: budget, tokenCount: fuzzTokens)
        for c in chunks {
            precondition(c.tokenCount <= budget || c.text.count == 1 || fuzzTokens(c.text) <= budget, "chunk over budget")
            precondition(c.contentHash.utf8.count == 64, "bad hash")
        }
        precondition(chunks.map(\.index) == Array(chunks.indices), "chunk indices")
        // The rest does not depend on how the input was parsed: once, for the detected format.
        guard format == nil else { continue }
        _ = Chunker.promptText(for: t.segments)
        _ = LanguageDetector.detect(t.plainText)
        if let s = t.segments.first {
            let quote = s.text
            let hits = TextMatch.segmentsContaining(quote, in: t.segments)
            precondition(TextMatch.normalize(quote).isEmpty || hits.contains(s.id), "a segment's own text must match")
            _ = TextMatch.occurrences(of: String(s.text.prefix(8)), in: t.segments)
            _ = BM25Index(documents: t.segments.map(\.text)).search(quote, limit: 3)
        }
    }
    fuzzTextBuffer(bytes)
    if let s = String(validating: bytes, as: UTF8.self) {
        _ = TranscriptParser.detectFormat(s)
        _ = LanguageSupport.resolve(String(s.prefix(32)))
    }
    return 0
}

/// The editor buffer: the first half of the input is the text, the rest a series of edits
/// at LSP positions (line, character, encoding from the bytes). After each edit the text
/// must equal the naive replacement and the line starts those of the text parsed afresh;
/// every position must map to an offset and back.
private func fuzzTextBuffer(_ bytes: [UInt8]) {
    let half = bytes.count / 2
    var text = Array(String(decoding: bytes[..<half], as: UTF8.self).utf8)
    var buffer = TextBuffer(String(decoding: text, as: UTF8.self))
    var i = half
    while i + 5 <= bytes.count {
        let enc = PositionEncoding.allCases[Int(bytes[i]) % 3]
        let (l1, c1, l2, c2) = (Int(bytes[i + 1]) % 8, Int(bytes[i + 2]) % 40, Int(bytes[i + 3]) % 8, Int(bytes[i + 4]) % 40)
        let length = Int(bytes[i]) / 3 % 6
        let insert = String(decoding: bytes[(i + 5)..<min(bytes.count, i + 5 + length)], as: UTF8.self)
        i += 5 + length
        var a = buffer.offset(line: l1, character: c1, encoding: enc), b = buffer.offset(line: l2, character: c2, encoding: enc)
        if a > b { swap(&a, &b) }
        let p = buffer.position(of: a, encoding: enc)
        precondition(buffer.offset(line: p.line, character: p.character, encoding: enc) == a, "position round trip")
        buffer.replace(a..<b, with: insert)
        text.replaceSubrange(a..<b, with: Array(insert.utf8))
        precondition(buffer.bytes == text, "buffer text differs from the naive edit")
        precondition(buffer.lineStarts == TextBuffer(String(decoding: text, as: UTF8.self)).lineStarts, "line starts differ")
    }
}
