#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// SHA-256 (FIPS 180-4) in pure Swift, because CryptoKit is not available on Linux.
///
/// Whole 64-byte blocks are compressed straight from the caller's buffer; only a partial
/// trailing block is copied into the 64-byte internal buffer. Nothing allocates per byte.
public struct SHA256: Sendable {
    private struct State: Sendable {
        var h0: UInt32 = 0x6a09_e667, h1: UInt32 = 0xbb67_ae85, h2: UInt32 = 0x3c6e_f372, h3: UInt32 = 0xa54f_f53a
        var h4: UInt32 = 0x510e_527f, h5: UInt32 = 0x9b05_688c, h6: UInt32 = 0x1f83_d9ab, h7: UInt32 = 0x5be0_cd19
    }
    private var state = State()
    /// Pending bytes of an incomplete block (always fewer than 64 after `update` returns).
    private var buffer = [UInt8](repeating: 0, count: 64)
    private var buffered = 0
    /// Total message length in bytes (the padding stores it in bits, modulo 2^64).
    private var length: UInt64 = 0

    public init() {}

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        var p = base
        var n = bytes.count
        length &+= UInt64(n)
        if buffered > 0 {
            let have = buffered
            let take = min(64 - have, n)
            let src = p
            buffer.withUnsafeMutableBytes { b in
                (b.baseAddress! + have).copyMemory(from: src, byteCount: take)
            }
            buffered += take
            p += take
            n -= take
            if buffered < 64 { return }
            buffer.withUnsafeBytes { SHA256.compress(&state, $0.baseAddress!, blocks: 1) }
            buffered = 0
        }
        let whole = n / 64
        if whole > 0 {
            SHA256.compress(&state, p, blocks: whole)
            p += whole * 64
            n -= whole * 64
        }
        if n > 0 {
            let src = p, count = n
            buffer.withUnsafeMutableBytes { b in b.baseAddress!.copyMemory(from: src, byteCount: count) }
            buffered = n
        }
    }

    public mutating func update(_ bytes: some Sequence<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { update(UnsafeRawBufferPointer($0)) }
        if done != nil { return }
        var chunk = [UInt8]()
        chunk.reserveCapacity(4096)
        for b in bytes {
            chunk.append(b)
            if chunk.count == 4096 {
                chunk.withUnsafeBytes { update($0) }
                chunk.removeAll(keepingCapacity: true)
            }
        }
        if !chunk.isEmpty { chunk.withUnsafeBytes { update($0) } }
    }

    /// Pads, compresses the final block(s) and returns the 32-byte digest. The hasher is
    /// reset afterwards, so it can be reused for a new message.
    public mutating func finalize() -> [UInt8] {
        let bitLength = length &* 8
        var tail = [UInt8](repeating: 0, count: buffered < 56 ? 64 : 128)
        for i in 0..<buffered { tail[i] = buffer[i] }
        tail[buffered] = 0x80
        for i in 0..<8 { tail[tail.count - 1 - i] = UInt8(truncatingIfNeeded: bitLength >> (8 * UInt64(i))) }
        tail.withUnsafeBytes { SHA256.compress(&state, $0.baseAddress!, blocks: $0.count / 64) }
        var out = [UInt8]()
        out.reserveCapacity(32)
        let s = state
        for word in [s.h0, s.h1, s.h2, s.h3, s.h4, s.h5, s.h6, s.h7] {
            out.append(UInt8(truncatingIfNeeded: word >> 24))
            out.append(UInt8(truncatingIfNeeded: word >> 16))
            out.append(UInt8(truncatingIfNeeded: word >> 8))
            out.append(UInt8(truncatingIfNeeded: word))
        }
        self = SHA256()
        return out
    }

    // MARK: Conveniences

    /// SHA-256 of `data` as 64 lowercase hex digits.
    public static func hex(_ data: some Sequence<UInt8>) -> String {
        var h = SHA256()
        h.update(data)
        return hexString(h.finalize())
    }

    /// SHA-256 of the UTF-8 bytes of `s` as 64 lowercase hex digits.
    public static func hex(_ s: String) -> String {
        hex(s.utf8)
    }

    /// SHA-256 of a file's contents, read in 1 MB pieces, as 64 lowercase hex digits.
    public static func hexOfFile(atPath path: String) throws -> String {
        guard let f = fopen(path, "rb") else { throw HashError.cannotOpen(path: path, errno: errno) }
        defer { fclose(f) }
        var h = SHA256()
        let size = 1 << 20
        let chunk = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        defer { chunk.deallocate() }
        while true {
            let n = fread(chunk, 1, size, f)
            if n > 0 { h.update(UnsafeRawBufferPointer(start: chunk, count: n)) }
            if n < size {
                if ferror(f) != 0 { throw HashError.readFailed(path: path) }
                break
            }
        }
        return hexString(h.finalize())
    }

    public static func hexString(_ bytes: [UInt8]) -> String {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: Compression

    private static let k: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    @inline(__always)
    private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 &- n)) }

    /// Compresses `blocks` consecutive 64-byte blocks starting at `p` into the state.
    private static func compress(_ st: inout State, _ p: UnsafeRawPointer, blocks: Int) {
        var a0 = st.h0, b0 = st.h1, c0 = st.h2, d0 = st.h3, e0 = st.h4, f0 = st.h5, g0 = st.h6, hh0 = st.h7
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
            SHA256.k.withUnsafeBufferPointer { k in
                for block in 0..<blocks {
                    let bp = p + block * 64
                    for i in 0..<16 {
                        w[i] = UInt32(bigEndian: bp.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self))
                    }
                    for i in 16..<64 {
                        let x = w[i - 15], y = w[i - 2]
                        let s0 = SHA256.rotr(x, 7) ^ SHA256.rotr(x, 18) ^ (x >> 3)
                        let s1 = SHA256.rotr(y, 17) ^ SHA256.rotr(y, 19) ^ (y >> 10)
                        w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
                    }
                    var a = a0, b = b0, c = c0, d = d0, e = e0, f = f0, g = g0, h = hh0
                    for i in 0..<64 {
                        let s1 = SHA256.rotr(e, 6) ^ SHA256.rotr(e, 11) ^ SHA256.rotr(e, 25)
                        let ch = (e & f) ^ (~e & g)
                        let t1 = h &+ s1 &+ ch &+ k[i] &+ w[i]
                        let s0 = SHA256.rotr(a, 2) ^ SHA256.rotr(a, 13) ^ SHA256.rotr(a, 22)
                        let maj = (a & b) ^ (a & c) ^ (b & c)
                        let t2 = s0 &+ maj
                        h = g; g = f; f = e; e = d &+ t1
                        d = c; c = b; b = a; a = t1 &+ t2
                    }
                    a0 = a0 &+ a; b0 = b0 &+ b; c0 = c0 &+ c; d0 = d0 &+ d
                    e0 = e0 &+ e; f0 = f0 &+ f; g0 = g0 &+ g; hh0 = hh0 &+ h
                }
            }
        }
        st = State(h0: a0, h1: b0, h2: c0, h3: d0, h4: e0, h5: f0, h6: g0, h7: hh0)
    }
}

public enum HashError: Error, Sendable, Equatable {
    case cannotOpen(path: String, errno: Int32)
    case readFailed(path: String)
}
