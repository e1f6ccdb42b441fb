import Foundation
import ParlanceHash
import XCTest

final class SHA256Tests: XCTestCase {
    func testKnownVectors() {
        XCTAssertEqual(SHA256.hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(SHA256.hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(SHA256.hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
                       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        XCTAssertEqual(
            SHA256.hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1")
    }

    func testOneMillionA() {
        var h = SHA256()
        let block = [UInt8](repeating: 0x61, count: 1000)
        for _ in 0..<1000 { h.update(block) }
        XCTAssertEqual(SHA256.hexString(h.finalize()), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    func testUnevenUpdatesMatchOneShot() {
        let data = (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let expected = SHA256.hex(data)
        for step in [1, 3, 55, 56, 63, 64, 65, 127, 1000] {
            var h = SHA256()
            var i = 0
            while i < data.count {
                let j = min(data.count, i + step)
                data[i..<j].withUnsafeBytes { h.update($0) }
                i = j
            }
            XCTAssertEqual(SHA256.hexString(h.finalize()), expected, "step \(step)")
        }
    }

    func testPaddingBoundaries() {
        // Lengths around the 55/56/64-byte padding edges, checked against sha256sum output.
        XCTAssertEqual(SHA256.hex(String(repeating: "a", count: 55)),
                       "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318")
        XCTAssertEqual(SHA256.hex(String(repeating: "a", count: 56)),
                       "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a")
        XCTAssertEqual(SHA256.hex(String(repeating: "a", count: 64)),
                       "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb")
    }

    func testNonContiguousSequenceAndReuseAfterFinalize() {
        var h = SHA256()
        h.update("ab".utf8)
        h.update(AnySequence("c".utf8))
        XCTAssertEqual(SHA256.hexString(h.finalize()), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(SHA256.hexString(h.finalize()), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    func testHexOfFile() throws {
        let path = NSTemporaryDirectory() + "parlance-sha-\(UUID().uuidString)"
        let data = Data((0..<(3 << 20) + 17).map { UInt8(truncatingIfNeeded: $0 % 251) })
        try data.write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        XCTAssertEqual(try SHA256.hexOfFile(atPath: path), SHA256.hex(Array(data)))
        XCTAssertThrowsError(try SHA256.hexOfFile(atPath: path + "-missing"))
    }
}
