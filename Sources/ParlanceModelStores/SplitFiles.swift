/// One model's files in one folder: a single GGUF, or every part of a split model
/// (`NAME-00001-of-00003.gguf`, as llama.cpp's gguf-split writes them). A split model is
/// one model, usable only when every part is present.
struct GGUFFileSet: Sendable, Hashable {
    /// The first part (the file llama.cpp opens), present or not.
    var first: String
    /// Every part in order, present or missing.
    var parts: [String]
    /// The parts that are not on disk.
    var missing: [String]
    /// The file name without the split suffix and `.gguf` (`Model-Q4_K_M`).
    var stem: String
    var isComplete: Bool { missing.isEmpty }
    var isSplit: Bool { parts.count > 1 }
}

enum SplitFiles {
    /// The stem, the part's number and the part count of `STEM-00001-of-00003.gguf`; nil
    /// for any other name.
    static func splitName(_ fileName: String) -> (stem: String, index: Int, count: Int)? {
        let lower = fileName.lowercased()
        guard lower.hasSuffix(".gguf") else { return nil }
        let base = Array(fileName.utf8.dropLast(5))
        // "-00001-of-00003" is 15 bytes.
        guard base.count > 15 else { return nil }
        let tail = base.suffix(15)
        let t = Array(tail)
        func digits(_ r: Range<Int>) -> Int? {
            var n = 0
            for i in r {
                guard t[i] >= 0x30, t[i] <= 0x39 else { return nil }
                n = n * 10 + Int(t[i] - 0x30)
            }
            return n
        }
        guard t[0] == UInt8(ascii: "-"), t[6] == UInt8(ascii: "-"),
              t[7] | 0x20 == UInt8(ascii: "o"), t[8] | 0x20 == UInt8(ascii: "f"), t[9] == UInt8(ascii: "-"),
              let index = digits(1..<6), let count = digits(10..<15), count >= 1, count <= 1000, index >= 1, index <= count
        else { return nil }
        return (String(decoding: base.dropLast(15), as: UTF8.self), index, count)
    }

    /// The name of part `index` of `count` with `stem` (llama.cpp's `%s-%05d-of-%05d.gguf`).
    static func partName(stem: String, index: Int, count: Int) -> String {
        func five(_ n: Int) -> String { String(repeating: "0", count: max(0, 5 - String(n).count)) + String(n) }
        return "\(stem)-\(five(index))-of-\(five(count)).gguf"
    }

    /// GGUF paths grouped into models: each split model's parts together (in order, with
    /// the missing ones named), every other file alone. Sorted by the first part's path.
    static func group(_ paths: [String]) -> [GGUFFileSet] {
        var singles: [GGUFFileSet] = []
        // (folder, stem, count) → part number → path
        struct Key: Hashable { var folder: String; var stem: String; var count: Int }
        var splits: [Key: [Int: String]] = [:]
        for path in paths {
            let name = StoreFiles.fileName(path)
            if let s = splitName(name), s.count > 1 {
                splits[Key(folder: StoreFiles.directory(path), stem: s.stem, count: s.count), default: [:]][s.index] = path
            } else {
                let stem = splitName(name)?.stem ?? String(name.dropLast(5))
                singles.append(GGUFFileSet(first: path, parts: [path], missing: [], stem: stem))
            }
        }
        for (key, found) in splits {
            var parts: [String] = []
            var missing: [String] = []
            for i in 1...key.count {
                if let p = found[i] {
                    parts.append(p)
                } else {
                    let p = StoreFiles.join(key.folder, partName(stem: key.stem, index: i, count: key.count))
                    parts.append(p)
                    missing.append(p)
                }
            }
            singles.append(GGUFFileSet(first: parts[0], parts: parts, missing: missing, stem: key.stem))
        }
        return singles.sorted { $0.first < $1.first }
    }
}
