// libFuzzer entry for the transport: arbitrary bytes, fed in arbitrary chunk sizes, through
// FrameDecoder (LSP + NDJSON) → JSONParser → Message.decode; every produced message is
// re-encoded and must decode back to itself.
// Built as one module with the sources of ParlanceJSON and JSONRPC (see scripts/fuzz.sh).
#if canImport(ParlanceJSON)
import ParlanceJSON
#endif

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard !bytes.isEmpty else { return 0 }
    // The first byte picks the chunk size, so the decoder sees every split.
    let chunk = Int(bytes[0] % 64) + 1
    var decoder = FrameDecoder(maxMessageSize: 4096)
    var i = 1
    var events: [FrameEvent] = []
    while i < bytes.count {
        decoder.push(bytes[i..<min(i + chunk, bytes.count)])
        i += chunk
        while let e = decoder.next() { events.append(e) }
    }
    if let e = decoder.finish() { events.append(e) }
    for case .message(let body, let framing) in events {
        precondition(body.count <= 4096, "a frame larger than the limit was delivered")
        // Re-framing the body must give the same body back.
        var again = FrameDecoder(maxMessageSize: 4096)
        again.push(FrameEncoder.encode(body, framing))
        if framing == .lsp { precondition(again.next() == .message(body, .lsp), "LSP re-frame mismatch") }
        guard let value = try? JSONParser.parse(body) else { continue }
        precondition((try? JSONParser.parse(value.serialized())) == value, "JSON round trip mismatch")
        if case .success(let m) = Message.decode(value) {
            guard case .success(let back) = Message.decode(m.json) else { preconditionFailure("re-encoded message does not decode") }
            precondition(back == m, "message round trip mismatch")
        }
    }
    return 0
}
