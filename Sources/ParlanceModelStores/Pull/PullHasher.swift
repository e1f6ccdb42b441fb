#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ParlanceHash

/// SHA-256 of a download as its bytes arrive. The pure-Swift `ParlanceHash.SHA256` does
/// about 190 MB/s in a release build (7 MB/s in a debug one): slower than a loopback or
/// LAN transfer, so the hash would set the pull's rate. Where the process has OpenSSL's
/// libcrypto (on Linux FoundationNetworking links it, through libcurl), its SHA-256 (SHA-NI
/// or AVX2, ~1.7 GB/s here) is used instead, found with dlsym and checked against
/// `ParlanceHash.SHA256` on a known input once; otherwise `ParlanceHash.SHA256`.
final class PullHasher {
    private var swift: SHA256?
    private var ctx: OpaquePointer?
    private let ssl: OpenSSLDigest?

    init(allowOpenSSL: Bool = true) {
        if allowOpenSSL, let ssl = OpenSSLDigest.shared, let c = ssl.new() {
            if ssl.initEx(c, ssl.sha256(), nil) == 1 {
                self.ssl = ssl
                self.ctx = c
                self.swift = nil
                return
            }
            ssl.free(c)
        }
        self.ssl = nil
        self.ctx = nil
        self.swift = SHA256()
    }

    deinit {
        if let ctx, let ssl { ssl.free(ctx) }
    }

    /// Which implementation this hasher uses ("openssl" or "swift").
    var implementation: String { ssl == nil ? "swift" : "openssl" }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        if let ssl, let ctx {
            _ = ssl.update(ctx, base, bytes.count)
        } else {
            swift!.update(bytes)
        }
    }

    /// The digest as lower-case hex; the hasher is spent.
    func finalizeHex() -> String {
        if let ssl, let ctx {
            var out = [UInt8](repeating: 0, count: 32)
            var n: UInt32 = 0
            _ = out.withUnsafeMutableBufferPointer { ssl.finalEx(ctx, $0.baseAddress, &n) }
            return SHA256.hexString(out)
        }
        return SHA256.hexString(swift!.finalize())
    }
}

/// OpenSSL's EVP digest calls, looked up once in the libcrypto already loaded (or loadable).
struct OpenSSLDigest: @unchecked Sendable {
    typealias New = @convention(c) () -> OpaquePointer?
    typealias Free = @convention(c) (OpaquePointer?) -> Void
    typealias MD = @convention(c) () -> OpaquePointer?
    typealias InitEx = @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?) -> Int32
    typealias Update = @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int) -> Int32
    typealias FinalEx = @convention(c) (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt32>?) -> Int32

    let new: New
    let free: Free
    let sha256: MD
    let initEx: InitEx
    let update: Update
    let finalEx: FinalEx

    static let shared: OpenSSLDigest? = {
        #if os(Linux)
        let names = ["libcrypto.so.3", "libcrypto.so.1.1", "libcrypto.so"]
        #else
        let names: [String] = []
        #endif
        for name in names {
            // Already in the process (RTLD_NOLOAD), else loaded now if the system has it.
            guard let handle = dlopen(name, RTLD_NOW | RTLD_NOLOAD) ?? dlopen(name, RTLD_NOW) else { continue }
            func sym<T>(_ s: String, _: T.Type) -> T? { dlsym(handle, s).map { unsafeBitCast($0, to: T.self) } }
            guard let new = sym("EVP_MD_CTX_new", New.self), let free = sym("EVP_MD_CTX_free", Free.self),
                  let sha = sym("EVP_sha256", MD.self), let initEx = sym("EVP_DigestInit_ex", InitEx.self),
                  let update = sym("EVP_DigestUpdate", Update.self), let finalEx = sym("EVP_DigestFinal_ex", FinalEx.self)
            else { continue }
            let d = OpenSSLDigest(new: new, free: free, sha256: sha, initEx: initEx, update: update, finalEx: finalEx)
            if d.selfCheck() { return d }
        }
        return nil
    }()

    /// Hashes a known input with both implementations; any difference (or failure) means
    /// this libcrypto is not used.
    private func selfCheck() -> Bool {
        let input = [UInt8]((0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        var reference = SHA256()
        reference.update(input)
        let expected = SHA256.hexString(reference.finalize())
        guard let c = new() else { return false }
        defer { free(c) }
        guard initEx(c, sha256(), nil) == 1 else { return false }
        let ok = input.withUnsafeBytes { update(c, $0.baseAddress, $0.count) } == 1
        var out = [UInt8](repeating: 0, count: 32)
        var n: UInt32 = 0
        guard ok, out.withUnsafeMutableBufferPointer({ finalEx(c, $0.baseAddress, &n) }) == 1, n == 32 else { return false }
        return SHA256.hexString(out) == expected
    }
}
